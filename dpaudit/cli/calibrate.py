"""`dpaudit calibrate`: the smallest noise (or largest local epsilon) of a named mechanism such that
`--count` releases meet a target (--epsilon, --delta), or the largest epsilon input of an algorithm
such that its run over `--horizon` rounds meets (--target-epsilon, --target-delta), under every
accountant that supports it (or `--accountant`). Every value printed was evaluated by that accountant
and meets the target; `--regret-runs N` adds the simulated regret of an algorithm at the value found.

    dpaudit calibrate MECHANISM [--count N] [--epsilon E] [--delta D]
    dpaudit calibrate ALGORITHM --target-epsilon E [--target-delta D] --horizon T [--accountant A] [--regret-runs N]

With no mechanism it runs the embedded default: Gaussian noise for 100 releases at (1, 1e-5).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TypedDict

from dpaudit.cli._types import FlagError, int_at_least, seed
from dpaudit.cli.budget import (
    DELTA,
    EPSILON,
    PARAM_TYPES,
    add_mechanism_arguments,
    algorithm_params,
    check_target,
    given_algorithm_params,
    is_mechanism,
    mechanism_params,
    reject_mechanism_params,
)
from dpaudit.cli.budget_text import num, params_text, sensitivity_text, short_numbers

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "calibrate"
HELP = (
    "smallest noise (or largest local epsilon) of a mechanism, or largest epsilon input of an algorithm, "
    "meeting a target (epsilon, delta) under every accountant"
)


class _Default(TypedDict):
    mechanism: str
    count: int
    epsilon: float
    delta: float


DEFAULT: _Default = {"mechanism": "gaussian", "count": 100, "epsilon": 1.0, "delta": 1e-5}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit calibrate` on its subparser."""
    add_mechanism_arguments(parser)
    parser.add_argument("--epsilon", type=EPSILON, default=None, help="mechanism: target epsilon > 0 (default 1)")
    parser.add_argument(
        "--delta",
        type=DELTA,
        default=None,
        help="mechanism: target delta in [0, 1) (default 1e-5); algorithm: its delta parameter",
    )
    parser.add_argument(
        "--target-epsilon",
        type=EPSILON,
        default=None,
        help="target epsilon > 0 (required for an algorithm; for a mechanism the same as --epsilon)",
    )
    parser.add_argument(
        "--target-delta",
        type=DELTA,
        default=None,
        help="target delta in [0, 1) (algorithm default: the claim's delta, 1e-5 for zCDP/RDP claims)",
    )
    parser.add_argument("--accountant", default=None, help="only this accountant (default: every one that applies)")
    parser.add_argument(
        "--regret-runs",
        type=int_at_least(2, " (the 95% interval needs two runs)"),
        default=None,
        help="algorithm: simulate this many runs at the calibrated value and report the final regret",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of the regret simulation (default 0)")


def _explain(mechanism: str, params: dict, count: int, eps: float, delta: float, accountant: str) -> str:
    """Why calibration found no value: either no value of the tuned parameter can meet the target
    (the guarantee at an extreme far past the searched range still misses it), or the needed value
    lies beyond the searched range."""
    import dp_accounting

    from dpaudit import accounting
    from dpaudit.accounting.named import MECHANISMS, event_for

    mech = MECHANISMS[mechanism]
    flag = "--" + mech.tuned
    extreme = 1e12 if mech.larger_is_private else 1e-12
    try:
        at_extreme = accounting.epsilon(
            dp_accounting.SelfComposedDpEvent(event_for(mechanism, {**params, mech.tuned: extreme}), count),
            delta,
            accountant,
        )
    except (ValueError, ArithmeticError, MemoryError):
        at_extreme = float("inf")
    if at_extreme > eps:
        return (
            f"no {flag} meets the target under this accountant: even {mech.tuned}={extreme:g} gives "
            f"epsilon {at_extreme:.4g} > {eps:g} at delta {delta:g}"
        )
    word = "larger" if mech.larger_is_private else "smaller"
    return f"needs a {word} {flag} than the searched range reaches"


def _meets_beyond(
    mechanism: str, params: dict, count: int, value: float, eps: float, delta: float, accountant: str
) -> bool:
    """Whether a tenth (or ten times, for a local epsilon) of the calibrated `value`, less private, still
    meets the target: then `value` is only the end of the searched range, not the least noise needed."""
    import dp_accounting

    from dpaudit import accounting
    from dpaudit.accounting.named import MECHANISMS, event_for

    mech = MECHANISMS[mechanism]
    beyond = value / 10 if mech.larger_is_private else value * 10
    try:
        event = dp_accounting.SelfComposedDpEvent(event_for(mechanism, {**params, mech.tuned: beyond}), count)
        return accounting.epsilon(event, delta, accountant) <= eps
    except (ValueError, ArithmeticError, MemoryError):
        return False


def _skipped(names: list[str], event: object, delta: float, tuned: str) -> list[dict]:
    """Rows for the accountants that cannot answer for `event` (the mechanism or algorithm at a probe value of
    its tuned parameter) at `delta`, found before any search: at delta 0 those that give no finite epsilon
    (RDP, zCDP, a composed PLD, ...), so calibration spends no time on them."""
    from dpaudit import budgets

    if delta != 0:
        return []  # every accountant of `names` supports the event; at delta > 0 each answers
    rows = []
    for name in names:
        why = budgets.cannot_answer(name, event, delta)
        if why is not None:
            rows.append({"accountant": name, tuned: None, "reason": f"skipped: {why}"})
    return rows


def _failed(exc: BaseException) -> str:
    what = "ran out of memory" if isinstance(exc, MemoryError) else "overflowed (a number beyond the doubles)"
    return f"this accountant {what} during the search ({type(exc).__name__}: {exc})"


def _note(row: dict, best: dict, mechanism: str) -> str:
    """The table's note of a calibrated row: best, and where the value is only the searched range's end."""
    from dpaudit.accounting.named import MECHANISMS

    mech = MECHANISMS[mechanism]
    notes = ["best"] if row is best else []
    if row.get("range_end"):
        word = "smaller" if mech.larger_is_private else "larger"
        notes.append(f"end of the searched range: a {word} --{mech.tuned} meets the target too")
    return "; ".join(notes)


def _target(args: argparse.Namespace, name: str, default: float) -> float:
    """--target-X, or its mechanism synonym --X; both given is a usage error."""
    plain, target = getattr(args, name), getattr(args, f"target_{name}")
    if plain is not None and target is not None:
        raise ValueError(f"argument --target-{name}: not allowed with argument --{name}")
    return default if plain is None and target is None else (target if target is not None else plain)


def run_algorithm(args: argparse.Namespace) -> int:
    """The largest epsilon input of an algorithm meeting the target, per accountant, each evaluated."""
    from dpaudit import accounting, budgets
    from dpaudit.validation import check_choice

    name = args.mechanism
    if args.count is not None:
        raise ValueError("--count applies to mechanisms; an algorithm's releases follow from --horizon")
    if args.horizon is None:
        raise ValueError(f"--horizon is required for the algorithm {name!r}")
    if args.target_epsilon is None:
        raise ValueError(f"--target-epsilon is required for the algorithm {name!r}")
    reject_mechanism_params(args)
    entry = budgets.algorithm_entry(name)
    params = algorithm_params(name, given_algorithm_params(args, extra=("epsilon", "delta", "users")))
    privacy = budgets.declared_privacy(name, args.horizon, {k: v for k, v in params.items() if k != entry.tuned})
    eps = args.target_epsilon
    delta = budgets.default_delta(privacy) if args.target_delta is None else args.target_delta
    if entry.tuned is None:
        raise ValueError(f"{name} is not private: it has no privacy parameter to calibrate")
    if entry.tuned in params:
        raise FlagError(
            f"--{entry.tuned}",
            f"is what calibrate computes for {name}; do not give it (to check a "
            f"given value, use `dpaudit budget {name} --{entry.tuned} ...`)",
        )
    names = accounting.supporting_accountants(privacy.event)
    if args.accountant is not None:
        check_choice(args.accountant, accounting.ACCOUNTANTS, "accountant")
        if args.accountant not in names:
            raise accounting.UnsupportedEventError(args.accountant, privacy.event, "see `dpaudit budget`", names)
        names = [args.accountant]
    rows = _skipped(names, privacy.event, delta, entry.tuned)
    for acct in names:
        if any(r["accountant"] == acct for r in rows):
            continue
        print(f"calibrating under {acct} ...", file=sys.stderr)
        try:
            rows.append(budgets.calibrate_algorithm(name, args.horizon, eps, delta, params, accountant=acct))
        except ValueError as exc:
            rows.append({"accountant": acct, entry.tuned: None, "reason": str(exc)})
        except (OverflowError, MemoryError) as exc:
            rows.append({"accountant": acct, entry.tuned: None, "reason": _failed(exc)})
    rows.sort(key=lambda r: names.index(r["accountant"]))
    found = [r for r in rows if r[entry.tuned] is not None]
    if not found:
        raise FlagError(
            "--target-epsilon",
            f"no accountant reaches (epsilon={eps:g}, delta={delta:g}) for {name} "
            f"over T={args.horizon}: " + "; ".join(r["reason"] for r in rows),
        )
    best = max(found, key=lambda r: r[entry.tuned])
    out = {
        "algorithm": name,
        "horizon": args.horizon,
        "params": params,
        "tuned": entry.tuned,
        "target_epsilon": eps,
        "target_delta": delta,
        "results": rows,
        "best": best,
    }
    if args.regret_runs is not None:
        print(f"simulating {args.regret_runs} runs at {entry.tuned}={best[entry.tuned]:.6g} ...", file=sys.stderr)
        from dpaudit.cli.regret import simulate

        curves = simulate(
            entry,
            args.horizon,
            args.regret_runs,
            args.seed,
            {**params, entry.tuned: best[entry.tuned]},
            runs_flag="--regret-runs",
        )
        summary = curves.to_json()
        out["regret"] = {
            "runs": summary["runs"],
            "seed": args.seed,
            "final_mean": summary["final_mean"],
            "final_ci": summary["final_ci"],
        }
    if args.json:
        print(json.dumps(budgets.json_number(out), indent=1))
        return 0
    print(
        f"{name}({params_text(params)}) over T = {args.horizon}: largest {entry.tuned} meeting "
        f"(epsilon={num(eps)}, delta={num(delta)})"
    )
    print(f"{'accountant':<10}  {entry.tuned:>14}  {'achieved eps':>14}  note")
    for r in rows:
        if r[entry.tuned] is None:
            print(f"{r['accountant']:<10}  {'-':>14}  {'-':>14}  {short_numbers(r['reason'])}")
        else:
            print(
                f"{r['accountant']:<10}  {num(r[entry.tuned]):>14}  {num(r['achieved_epsilon']):>14}  "
                f"{'best' if r is best else ''}"
            )
    print(
        f"best: {entry.tuned} {num(best[entry.tuned])} ({best['accountant']}): the largest value any accountant "
        "certifies; each row meets the target under its own accountant (a valid bound), so the largest does too"
    )
    if "regret" in out:
        g = out["regret"]
        print(
            f"final regret at {entry.tuned}={num(best[entry.tuned])}: {num(g['final_mean'])} "
            f"(95% interval [{num(g['final_ci'][0])}, {num(g['final_ci'][1])}], {g['runs']} runs, seed {g['seed']})"
        )
    return 0


def run(args: argparse.Namespace) -> int:
    """Calibrate the named mechanism under every accountant that supports it (an algorithm goes to
    `run_algorithm`) and print the values found; returns the exit code.
    """
    from dpaudit import accounting
    from dpaudit.accounting.calibration import calibrate_parameter
    from dpaudit.accounting.named import MECHANISMS, event_for
    from dpaudit.validation import check_choice

    if args.mechanism is not None:
        check_target(args.mechanism)
        if not is_mechanism(args.mechanism):
            return run_algorithm(args)
    if args.regret_runs is not None:
        raise ValueError("--regret-runs applies to algorithms, not mechanisms")
    if args.mechanism is None:
        if (
            any(getattr(args, n) is not None for n in PARAM_TYPES)
            or args.horizon is not None
            or any(k.startswith("param_") for k in vars(args))
        ):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit calibrate laplace --count 10)")
        mechanism, params = DEFAULT["mechanism"], {}
        count = DEFAULT["count"] if args.count is None else args.count
        print(
            f"dpaudit calibrate: no mechanism given, running the embedded default: gaussian --count {count}"
            " --epsilon 1 --delta 1e-5",
            file=sys.stderr,
        )
    else:
        mechanism, params, count = args.mechanism, mechanism_params(args), 1 if args.count is None else args.count
    eps = _target(args, "epsilon", DEFAULT["epsilon"])
    delta = _target(args, "delta", DEFAULT["delta"])
    mech = MECHANISMS[mechanism]
    if mech.tuned in params:
        raise ValueError(
            f"--{mech.tuned} is what calibrate computes for {mechanism}; do not give it "
            f"(to check a given --{mech.tuned}, use `dpaudit budget {mechanism} --{mech.tuned} ...`)"
        )
    # which accountants apply: probe with a mid-range value of the tuned parameter
    probe = event_for(mechanism, {**params, mech.tuned: 1.0})
    names = accounting.supporting_accountants(probe)
    if args.accountant is not None:
        check_choice(args.accountant, accounting.ACCOUNTANTS, "accountant")
        if args.accountant not in names:
            raise accounting.UnsupportedEventError(args.accountant, probe, "see `dpaudit budget`", names)
        names = [args.accountant]
    import dp_accounting

    rows = _skipped(names, dp_accounting.SelfComposedDpEvent(probe, count), delta, mech.tuned)
    for name in names:
        if any(r["accountant"] == name for r in rows):
            continue
        print(f"calibrating under {name} ...", file=sys.stderr)
        try:
            rows.append(
                {
                    "accountant": name,
                    mech.tuned: calibrate_parameter(mechanism, eps, delta, count=count, params=params, accountant=name),
                }
            )
        except ValueError:
            rows.append(
                {"accountant": name, mech.tuned: None, "reason": _explain(mechanism, params, count, eps, delta, name)}
            )
        except (OverflowError, MemoryError) as exc:
            rows.append({"accountant": name, mech.tuned: None, "reason": _failed(exc)})
    rows.sort(key=lambda r: names.index(r["accountant"]))
    found = [r for r in rows if r[mech.tuned] is not None]
    if not found:
        raise ValueError(
            f"no accountant reaches (epsilon={eps:g}, delta={delta:g}) for {mechanism}: "
            + "; ".join(f"{r['accountant']}: {r['reason']}" for r in rows)
        )
    for r in found:
        r["range_end"] = _meets_beyond(mechanism, params, count, r[mech.tuned], eps, delta, r["accountant"])
    pick = min if mech.larger_is_private else max
    best = pick(found, key=lambda r: r[mech.tuned])
    out = {
        "mechanism": mechanism,
        "params": params,
        "count": count,
        "epsilon": eps,
        "delta": delta,
        "tuned": mech.tuned,
        "results": rows,
        "best": best,
    }
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    word = "smallest" if mech.larger_is_private else "largest"
    print(
        f"{mechanism}({params_text(params)}) x {count}: {word} {mech.tuned} meeting "
        f"(epsilon={num(eps)}, delta={num(delta)})"
    )
    print(f"sensitivity: {sensitivity_text(mechanism, params)}")
    print(f"{'accountant':<10}  {mech.tuned:>14}  note")
    for r in rows:
        if r[mech.tuned] is None:
            print(f"{r['accountant']:<10}  {'-':>14}  {short_numbers(r['reason'])}")
        else:
            print(f"{r['accountant']:<10}  {num(r[mech.tuned]):>14}  {_note(r, best, mechanism)}")
    print(
        f"best: {mech.tuned} {num(best[mech.tuned])} ({best['accountant']}): the {word} value any accountant "
        "certifies; each row meets the target under its own accountant (a valid bound), so the best does too"
    )
    return 0
