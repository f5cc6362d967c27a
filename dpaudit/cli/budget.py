"""`dpaudit budget`: the guarantee of a named mechanism composed `--count` times, of a whole algorithm
run over `--horizon` rounds, or of a plan of several releases, under every accountant; `--json` for scripts.

    dpaudit budget MECHANISM [--sigma ...] [--count N] [--delta D | --epsilon E]
    dpaudit budget ALGORITHM [its parameters] --horizon T [--at-delta D | --at-epsilon E]
    dpaudit budget --plan FILE [--at-delta D | --at-epsilon E]

An algorithm (any in `dpaudit.registry.ALGORITHMS`, a user's own plugin included) is reported with
its trust model and neighbouring relation, the paper's claim, the corrected guarantee and why it
differs, and every accountant's answer for the event it declares (`dpaudit.budgets`). Its own
`--epsilon`/`--delta` are its parameters, hence `--at-delta`/`--at-epsilon` for the point at which
the guarantee is reported. With no mechanism it runs the embedded default: Gaussian noise sigma = 10
on a sensitivity-1 query, released 100 times, epsilon at delta = 1e-5.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Collection
from typing import TypedDict

from dpaudit.cli._types import help_text, int_at_least, integer, real, real_in
from dpaudit.cli.budget_text import (
    best_line,
    comparison,
    guarantee_text,
    num,
    params_text,
    row_printer,
    sensitivity_text,
    short_numbers,
)

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "budget"
HELP = (
    "epsilon (at delta) or delta (at epsilon) of a mechanism, a whole algorithm run, or a plan of "
    "releases, under every accountant"
)


class _Default(TypedDict):
    mechanism: str
    params: dict[str, float]
    count: int
    delta: float


DEFAULT: _Default = {"mechanism": "gaussian", "params": {"sigma": 10.0}, "count": 100, "delta": 1e-5}


def integer_or_word(text: str) -> int | str:
    """`--users`: an integer for the mechanisms, a word (unique, returning) for the shuffle LinUCBs."""
    try:
        return integer(text)
    except argparse.ArgumentTypeError:
        if text.replace("-", "").isalpha():
            return text
        raise


# every parameter any named mechanism takes: option name -> type (ranges are checked by the mechanism)
PARAM_TYPES = {
    "sigma": real,
    "scale": real,
    "sensitivity": real,
    "variance": real,
    "l1": real,
    "l2": real,
    "epsilon0": real,
    "delta0": real,
    "buckets": integer,
    "users": integer_or_word,
    "trials": real,
    "probability": real,
}
_UNIT = real_in(0.0, 1.0, low_open=False, high_open=True)


def _delta(text: str) -> float:
    """A privacy parameter delta in [0, 1): 0 or at least the smallest normal double (2.2e-308), below which
    a float keeps fewer digits than typed and 1/delta overflows."""
    value = _UNIT(text)
    if 0.0 < value < sys.float_info.min:
        raise argparse.ArgumentTypeError(
            f"must be 0 or at least {sys.float_info.min:g} (the smallest normal double: "
            f"below it delta loses precision and 1/delta overflows), got {text}"
        )
    return value


DELTA = _delta
_POSITIVE = real_in(0.0, math.inf, low_open=True, high_open=True)


def _epsilon(text: str) -> float:
    """A privacy parameter epsilon: a finite real of at least the smallest normal double (2.2e-308); below it
    a float keeps fewer digits than typed and 1/epsilon (a noise scale) overflows, so no bound can be sound."""
    value = _POSITIVE(text)
    if value < sys.float_info.min:
        raise argparse.ArgumentTypeError(
            f"must be at least {sys.float_info.min:g} (the smallest normal double: "
            f"below it epsilon loses precision and 1/epsilon overflows), got {text}"
        )
    return value


EPSILON = _epsilon
# options of budget/calibrate/tradeoff themselves: an algorithm parameter of the same name is not added twice
OWN = {
    "mechanism",
    "count",
    "json",
    "delta",
    "epsilon",
    "horizon",
    "plan",
    "at_delta",
    "at_epsilon",
    "accountant",
    "target_epsilon",
    "target_delta",
    "regret_runs",
    "seed",
    "help",
    "epsilons",
    "runs",
    "plot",
}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """The mechanism or algorithm, and their parameters (shared with `dpaudit calibrate`). Loads the
    plugins, so that every registered algorithm's parameters are options."""
    from dpaudit.accounting.named import MECHANISMS

    lines = [f"{m.name}: {m.summary} ({', '.join('--' + p for p in m.params)})" for m in MECHANISMS.values()]
    parser.add_argument(
        "mechanism",
        nargs="?",
        metavar="MECHANISM|ALGORITHM",
        help=help_text("a mechanism, one of: " + "; ".join(lines) + "; or an algorithm of `dpaudit regret --list`"),
    )
    for name, typ in PARAM_TYPES.items():
        helps = sorted({f"{m.name}: {m.params[name][1]}" for m in MECHANISMS.values() if name in m.params})
        parser.add_argument(f"--{name}", type=typ, default=None, help=help_text("; ".join(helps)))
    parser.add_argument(
        "--count",
        type=int_at_least(1),
        default=None,
        help="number of releases composed, e.g. 100 or 1e12 (default 1; 100 for the embedded default)",
    )
    parser.add_argument(
        "--horizon", type=int_at_least(1), default=None, help="an algorithm's horizon T (rounds or users)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_algorithm_arguments(parser, skip=set(PARAM_TYPES))


def add_algorithm_arguments(parser: argparse.ArgumentParser, skip: Collection[str] = frozenset()) -> None:
    """Every registered algorithm's parameters as `--name VALUE` (dest `param_name`, read by the algorithm)."""
    from dpaudit.registry import ALGORITHMS, load_plugins

    load_plugins()
    owners: dict[str, list[str]] = {}
    for name in ALGORITHMS:
        for p in ALGORITHMS.get(name).params:
            owners.setdefault(p.name, []).append(name)
    group = parser.add_argument_group("algorithm parameters (each algorithm takes its own; see dpaudit regret --list)")
    for pname in sorted(set(owners).difference(OWN, skip)):
        group.add_argument(
            flag(pname),
            dest=f"param_{pname}",
            default=argparse.SUPPRESS,
            metavar="VALUE",
            help=help_text(f"[{', '.join(sorted(owners[pname]))}]"),
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit budget` on its subparser."""
    add_mechanism_arguments(parser)
    parser.add_argument(
        "--delta",
        type=DELTA,
        default=None,
        help="mechanism: report epsilon at this delta in [0, 1) (default 1e-5); algorithm: its delta parameter",
    )
    parser.add_argument(
        "--epsilon",
        type=EPSILON,
        default=None,
        help="mechanism: report delta at this epsilon > 0; algorithm: its epsilon parameter",
    )
    at = parser.add_mutually_exclusive_group()
    at.add_argument(
        "--at-delta",
        type=DELTA,
        default=None,
        help="algorithm or plan: report epsilon at this delta (default: the claim's delta; 1e-5 for "
        "zCDP/RDP claims and plans)",
    )
    at.add_argument("--at-epsilon", type=EPSILON, default=None, help="algorithm or plan: report delta at this epsilon")
    parser.add_argument(
        "--plan",
        metavar="FILE",
        default=None,
        help="a TOML or JSON file listing the releases and algorithm runs one user takes part in "
        "(with counts): one epsilon per user under each accountant",
    )


def is_mechanism(name: str | None) -> bool:
    from dpaudit.accounting.named import MECHANISMS

    return name is None or name in MECHANISMS


def check_target(name: str) -> None:
    """`name` is a mechanism or a registered algorithm; ValueError listing both otherwise."""
    from dpaudit.accounting.named import MECHANISMS
    from dpaudit.registry import ALGORITHMS

    if name not in MECHANISMS and name not in ALGORITHMS:
        raise ValueError(
            f"unknown MECHANISM|ALGORITHM {name!r}; mechanisms: {', '.join(MECHANISMS)}; "
            f"algorithms: {', '.join(ALGORITHMS.names())}"
        )


def given_algorithm_params(args: argparse.Namespace, *, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The `--name VALUE` algorithm options given, as text, plus the shared options named in `extra`
    (`epsilon`, `delta`, `users`) when given."""
    given = {k[len("param_") :]: v for k, v in vars(args).items() if k.startswith("param_")}
    for name in extra:
        value = getattr(args, name, None)
        if value is not None:
            given[name] = value if isinstance(value, str) else repr(value)
    return given


def reject_mechanism_params(args: argparse.Namespace) -> None:
    """Mechanism parameters given with an algorithm (other than the shared --users): a usage error."""
    given = [f"--{n}" for n in PARAM_TYPES if n != "users" and getattr(args, n, None) is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)} {'is a mechanism parameter' if len(given) == 1 else 'are mechanism parameters'}"
            f"; the algorithm {args.mechanism!r} does not take it"
        )


def algorithm_params(name: str, given: dict[str, str]) -> dict:
    """Convert the given options with the algorithm's own parameter types; ValueError naming the flag."""
    from dpaudit.registry import ALGORITHMS

    own = {p.name: p for p in ALGORITHMS.get(name).params}
    foreign = sorted(set(given) - set(own))
    if foreign:
        raise ValueError(
            f"{name} does not take {', '.join(flag(f) for f in foreign)}; "
            f"its parameters: {', '.join(flag(p) for p in own) or 'none'}"
        )
    params = {}
    for pname, text in given.items():
        p = own[pname]
        try:
            value = p.type(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{flag(pname)}: cannot read {text!r} ({exc})") from None
        if p.choices is not None and value not in p.choices:
            raise ValueError(f"{flag(pname)} must be one of {', '.join(map(str, p.choices))}, got {text!r}")
        if pname == "arms" and value is not None and value < 2:  # the library's own check names n_arms
            raise ValueError(f"--arms must be an integer >= 2 (a bandit needs two arms to choose from), got {text!r}")
        params[pname] = value
    return params


def mechanism_params(args: argparse.Namespace) -> dict:
    from dpaudit.accounting.named import MECHANISMS

    mech = MECHANISMS[args.mechanism]
    algo_flags = [flag(k[len("param_") :]) for k in vars(args) if k.startswith("param_")]
    if algo_flags or getattr(args, "horizon", None) is not None:
        raise ValueError(
            f"mechanism {args.mechanism!r} takes no {', '.join(algo_flags) or '--horizon'} "
            "(algorithm parameters need an ALGORITHM)"
        )
    params = {}
    for name in PARAM_TYPES:
        value = getattr(args, name)
        if value is None:
            continue
        if name not in mech.params:
            raise ValueError(
                f"mechanism {args.mechanism!r} takes no parameter --{name}; it takes "
                + ", ".join("--" + p for p in mech.params)
            )
        if PARAM_TYPES[name] is integer_or_word and isinstance(value, str):
            raise ValueError(f"--{name}: expected an integer, got {value!r}")
        params[name] = value
    return params


def json_number(x: float) -> float | str:
    """JSON has no infinity: inf is written as the string "inf"."""
    return "inf" if math.isinf(x) else x


def _no_answer(mechanism: str, params: dict, count: int, rows: list[dict]) -> str:
    """Why no accountant answered: the ones that failed (a number beyond the doubles, memory) with the
    parameters that drove them there, else that none supports the mechanism."""
    failed = [r for r in rows if r.get("failed")]
    given = ", ".join(
        [f"--{k} {v:g}" if isinstance(v, float) else f"--{k} {v}" for k, v in params.items()] + [f"--count {count}"]
    )
    if not failed:
        return f"no accountant supports mechanism {mechanism!r} ({given})"
    reasons = "; ".join(f"{r['accountant']}: {r['reason']}" for r in failed)
    return (
        f"every accountant that applies to {mechanism!r} failed at {given} ({reasons}); "
        "these values are beyond what they can compute"
    )


def compute(
    mechanism: str,
    params: dict,
    count: int,
    delta: float | None,
    epsilon: float | None,
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """The budget table as a dict (what --json prints); `on_row` sees each row as soon as it is computed.

    An accountant that runs out of memory or range on this event gives a row without a number
    (supported False, with the reason), never a guessed one.
    """
    import dp_accounting

    from dpaudit.accounting.named import event_for
    from dpaudit.budgets import accountant_rows

    event = dp_accounting.SelfComposedDpEvent(event_for(mechanism, params), count)
    rows = accountant_rows(event, delta, epsilon, on_row)
    key = "epsilon" if epsilon is None else "delta"
    supported = [r for r in rows if r["supported"]]
    if not supported:
        raise ValueError(_no_answer(mechanism, params, count, rows))
    best = min(supported, key=lambda r: r[key])
    extra: dict[str, float | None] = {}
    if mechanism == "shuffle" and count == 1 and epsilon is None and delta is not None and delta > 0:
        from dpaudit.accounting import shuffle

        e0, n = float(params["epsilon0"]), int(params["users"])
        extra["fmt_numerical"] = shuffle.numerical_epsilon(e0, n, delta)
        extra["fmt_closed_form"] = (
            shuffle.closed_form_epsilon(e0, n, delta) if shuffle.closed_form_applies(e0, n, delta) else None
        )
    out = {
        "mechanism": mechanism,
        "params": params,
        "count": count,
        ("delta" if epsilon is None else "epsilon"): delta if epsilon is None else epsilon,
        "results": rows,
        "best": {"accountant": best["accountant"], key: best[key]},
    }
    if extra:
        out["shuffle_bounds"] = extra
    return out


def _point(delta: float | None, epsilon: float | None) -> str:
    return f"delta = {num(delta)}" if epsilon is None else f"epsilon = {num(epsilon)}"


def _print_header(mechanism: str, params: dict, count: int, delta: float | None, epsilon: float | None) -> None:
    key = "epsilon" if epsilon is None else "delta"
    print(f"{mechanism}({params_text(params)}) x {count}: {key} at {_point(delta, epsilon)}")
    print(f"sensitivity: {sensitivity_text(mechanism, params)}")
    _print_rows_header(key)


_print_row = row_printer()


def _print_footer(out: dict) -> None:
    key = "epsilon" if "epsilon" in out["best"] else "delta"
    print(best_line(out["best"], key, _point(out.get("delta"), out.get("epsilon"))))
    if "shuffle_bounds" in out:
        b = out["shuffle_bounds"]
        cf = (
            "does not apply (needs epsilon0 <= log(n/(16 log(2/delta))))"
            if b["fmt_closed_form"] is None
            else num(b["fmt_closed_form"])
        )
        print(f"FMT 2021 numerical bound {num(b['fmt_numerical'])}; closed form (Thm 3.1) {cf}")


def _at(args: argparse.Namespace) -> tuple[float | None, float | None]:
    return args.at_delta, args.at_epsilon


def _print_rows_header(key: str) -> None:
    print(f"{'accountant':<10}  {key:>14}  note", flush=True)


def run_algorithm(args: argparse.Namespace) -> int:
    """An algorithm's budget: claim, corrected guarantee with the reason, every accountant's answer."""
    from dpaudit import budgets

    if args.count is not None:
        raise ValueError("--count applies to mechanisms; for repeated algorithm runs use --plan")
    if args.horizon is None:
        raise ValueError(f"--horizon is required for the algorithm {args.mechanism!r}")
    reject_mechanism_params(args)
    params = algorithm_params(args.mechanism, given_algorithm_params(args, extra=("epsilon", "delta", "users")))
    at_delta, at_epsilon = _at(args)
    privacy = budgets.declared_privacy(args.mechanism, args.horizon, params)
    if args.json:
        out = {
            "algorithm": args.mechanism,
            "horizon": args.horizon,
            "params": params,
            **budgets.privacy_budget(privacy, delta=at_delta, epsilon=at_epsilon),
        }
        print(json.dumps(budgets.json_number(out), indent=1))
        return 0
    declared = privacy.to_json()
    print(f"{args.mechanism}({params_text(params)}) over T = {args.horizon}")
    print(f"trust model: {declared['trust_model']} ({declared['trust_model_text']})")
    print(f"neighbours:  {declared['relation']} ({declared['relation_text']}): the sensitivity the guarantees assume")
    # a guarantee is called pure DP only where the pure accountant can say so for the declared event: the table
    # below never contradicts the kind printed here
    pure_ok = privacy.event is not None and budgets.cannot_answer("pure", privacy.event, 0.0) is None
    claim, corrected = declared["claim"], declared["corrected"]
    print(f"paper claim: {guarantee_text(claim, pure_word=pure_ok)}")
    pure_note = None
    if corrected is not None:
        relation = comparison(claim, corrected)
        words = {
            "tighter": "tighter than the paper's claim",
            "looser": "looser than the paper's claim",
            "equal": "the paper's claim",
            "different": "in place of the paper's claim",
        }[relation]
        print(f"corrected:   {guarantee_text(corrected, pure_word=pure_ok, remark=words)}")
        label = "why:" if relation in ("looser", "different") else "basis:"
        print(f"{label:<12} {short_numbers(budgets.correction_reason(privacy) or '')}")
    if not pure_ok and any(g is not None and g.get("notion") == "pure" for g in (claim, corrected)):
        pure_note = (
            "not supported: basic composition of pure-DP releases cannot derive the ε at δ = 0 above from "
            "the declared event (its source does)"
        )
    key = "epsilon" if at_epsilon is None else "delta"
    point = _point(budgets.default_delta(privacy) if at_delta is None else at_delta, at_epsilon)
    print(f"declared event, {key} at {point}:")
    _print_rows_header(key)
    out = budgets.privacy_budget(privacy, delta=at_delta, epsilon=at_epsilon, on_row=row_printer(pure_note))
    print(best_line(out["best"], key, point))
    return 0


def run_plan(args: argparse.Namespace) -> int:
    """A plan's budget: every release composed sequentially, one answer per accountant."""
    from dpaudit import budgets
    from dpaudit.cli._types import FlagError

    if args.mechanism is not None or args.count is not None or args.horizon is not None:
        raise ValueError("--plan takes no MECHANISM|ALGORITHM, --count or --horizon (the file lists them)")
    try:
        releases = budgets.load_plan(args.plan)
    except ValueError as exc:
        raise FlagError("--plan", str(exc)) from None
    at_delta, at_epsilon = _at(args)
    if args.json:
        print(
            json.dumps(budgets.json_number(budgets.plan_budget(releases, delta=at_delta, epsilon=at_epsilon)), indent=1)
        )
        return 0
    key = "epsilon" if at_epsilon is None else "delta"
    point = _point(budgets.DEFAULT_DELTA if at_delta is None else at_delta, at_epsilon)
    print(f"plan {args.plan}: {len(releases)} lines composed per user, {key} at {point}")
    width = max(len(f"{r.count} x {r.label}") for r in releases)
    print(f"  {'line':<{width}}  {key + ' of the line alone (best)'}", flush=True)

    def part(line: dict) -> None:
        own = line["best"]
        alone = "-" if own is None else f"{num(own[key])} ({own['accountant']})"
        name = f"{line['count']} x {line['label']}"
        print(f"  {name:<{width}}  {alone}", flush=True)

    heading = [f"all lines together, {key} at {point}:"]

    def first_row(row: dict) -> None:
        while heading:
            print(heading.pop())
            _print_rows_header(key)
        _print_row(row)

    out = budgets.plan_budget(releases, delta=at_delta, epsilon=at_epsilon, on_row=first_row, on_part=part)
    print(best_line(out["best"], key, point))
    return 0


def run(args: argparse.Namespace) -> int:
    """Rows are printed as each accountant finishes, so a slow accountant never hides the others."""
    if args.plan is not None:
        return run_plan(args)
    if args.mechanism is not None:
        check_target(args.mechanism)
        if not is_mechanism(args.mechanism):
            return run_algorithm(args)
    if args.at_delta is not None or args.at_epsilon is not None:
        raise ValueError(
            "--at-delta and --at-epsilon apply to algorithms and plans; for a mechanism use --delta or --epsilon"
        )
    if args.delta is not None and args.epsilon is not None:
        raise ValueError("argument --epsilon: not allowed with argument --delta")
    if args.mechanism is None:
        if (
            any(getattr(args, n) is not None for n in PARAM_TYPES)
            or args.horizon is not None
            or any(k.startswith("param_") for k in vars(args))
        ):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit budget gaussian --sigma 2)")
        mechanism, params = DEFAULT["mechanism"], dict(DEFAULT["params"])
        count = DEFAULT["count"] if args.count is None else args.count
        print(
            f"dpaudit budget: no mechanism given, running the embedded default: gaussian --sigma 10 --count {count}",
            file=sys.stderr,
        )
    else:
        mechanism, params, count = args.mechanism, mechanism_params(args), 1 if args.count is None else args.count
    from dpaudit.accounting.named import event_for

    event_for(mechanism, params)  # checks the parameters before any output
    eps = args.epsilon
    delta = None if eps is not None else (DEFAULT["delta"] if args.delta is None else args.delta)
    if args.json:
        out = compute(mechanism, params, count, delta, eps)
        for r in out["results"]:
            for k in ("epsilon", "delta"):
                if k in r:
                    r[k] = json_number(r[k])
        for k in ("epsilon", "delta"):
            if k in out["best"]:
                out["best"][k] = json_number(out["best"][k])
        print(json.dumps(out, indent=1))
    else:
        _print_header(mechanism, params, count, delta, eps)
        _print_footer(compute(mechanism, params, count, delta, eps, on_row=_print_row))
    return 0
