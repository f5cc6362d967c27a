"""`dpaudit regret`: simulate an algorithm's pseudo-regret over independent runs.

    dpaudit regret ALGORITHM [--param VALUE ...] --horizon T --runs R --seed S [--json] [--plot FILE]
    dpaudit regret --list [--json]

Algorithms come from `dpaudit.registry.ALGORITHMS` (filled by plugins); each declares its own
parameters (`AlgorithmEntry.params`), which become `--name VALUE` options here. Options of
another algorithm are rejected (exit 2) rather than silently ignored.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from dpaudit.cli._types import FlagError, help_text, int_at_least, plot_file, seed

__all__ = ["HELP", "NAME", "add_arguments", "run"]

if TYPE_CHECKING:
    from dpaudit.registry import Param

NAME = "regret"
HELP = "simulate an algorithm's mean cumulative pseudo-regret with a 95% interval"

_FIXED = {"algorithm", "horizon", "runs", "seed", "json", "plot", "list", "time_average", "help"}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _all_params() -> dict[str, list[tuple[str, Param]]]:
    from dpaudit.registry import ALGORITHMS

    found: dict[str, list[tuple[str, Param]]] = {}
    for name in ALGORITHMS:
        for p in ALGORITHMS.get(name).params:
            found.setdefault(p.name, []).append((name, p))
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fixed options, and every registered algorithm's parameters (so this loads the plugins)."""
    from dpaudit.registry import load_plugins

    load_plugins()
    parser.add_argument("algorithm", nargs="?", help="algorithm name (see --list)")
    parser.add_argument("--list", action="store_true", help="list the algorithms and their parameters")
    parser.add_argument("--horizon", type=int_at_least(1), help="horizon T (rounds)")
    parser.add_argument(
        "--runs",
        type=int_at_least(1),
        default=100,
        help="independent runs (default 100; the 95%% interval needs at least 2)",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of numpy.random.SeedSequence, >= 0 (default 0)")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    parser.add_argument("--plot", metavar="FILE", help="write the regret curve with its band to FILE (PNG/PDF/SVG)")
    parser.add_argument("--time-average", action="store_true", help="plot R(t)/t instead of R(t) (needs --plot)")
    group = parser.add_argument_group("algorithm parameters (each algorithm accepts its own; see --list)")
    for pname, owners in sorted(_all_params().items()):
        if pname in _FIXED:
            continue
        helps = "; ".join(sorted({f"{p.help}" for _, p in owners}))
        users = ", ".join(sorted({o for o, _ in owners}))
        group.add_argument(
            _flag(pname),
            dest=f"param_{pname}",
            default=argparse.SUPPRESS,
            metavar="VALUE",
            help=help_text(f"{helps} [{users}]"),
        )


# numpy's ValueErrors for an array or index range beyond what the machine can address
_TOO_LARGE = ("array is too big", "iterator is too large", "Maximum allowed", "maximum supported dimension")


def simulate(entry: Any, horizon: int, runs: int, seed: int, params: dict, runs_flag: str = "--runs") -> Any:
    """`entry.simulate(...)`; a simulation too large for this machine (MemoryError, an index beyond
    numpy's integers, an array numpy cannot address) is a usage error naming --horizon and `runs_flag`."""
    try:
        return entry.simulate(horizon=horizon, runs=runs, seed=seed, **params)
    except (MemoryError, OverflowError, ValueError) as exc:
        if isinstance(exc, ValueError) and not any(s in str(exc) for s in _TOO_LARGE):
            raise
        raise FlagError(
            "--horizon",
            f"{runs} runs ({runs_flag}) of {horizon} rounds are too large to simulate on "
            f"this machine ({type(exc).__name__}: {exc}); use a smaller --horizon or "
            f"{runs_flag}",
        ) from None


def _convert(p: Param, text: str) -> Any:
    try:
        value = p.type(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_flag(p.name)}: cannot read {text!r} ({exc})") from None
    if p.choices is not None and value not in p.choices:
        raise ValueError(f"{_flag(p.name)} must be one of {', '.join(map(str, p.choices))}, got {text!r}")
    return value


def _listing() -> list[dict[str, Any]]:
    from dpaudit.registry import ALGORITHMS

    out = []
    for name in ALGORITHMS:
        e = ALGORITHMS.get(name)
        params = [
            {
                "name": p.name,
                "default": p.default if isinstance(p.default, (int, float, str, type(None))) else str(p.default),
                "help": p.help,
                "choices": list(p.choices) if p.choices is not None else None,
            }
            for p in e.params
        ]
        out.append({"name": name, "summary": e.summary, "params": params})
    return out


def _claim_text(privacy: Any) -> str:
    """One line for the table: the claim, and the corrected guarantee where one is declared.

    Plugins may describe a guarantee as a dict (notion, epsilon, delta, rho) or as free text.
    """

    def one(g: Any) -> str:
        if not isinstance(g, dict):
            return str(g)
        if g.get("notion") == "none":
            return "none"
        parts = [str(g.get("notion", "claim"))] + [f"{k}={g[k]}" for k in ("epsilon", "delta", "rho") if k in g]
        return " ".join(parts)

    if not isinstance(privacy, dict):
        return str(privacy) if privacy else "none"
    claim, corrected = privacy.get("claim"), privacy.get("corrected")
    text = one(claim) if claim else "none"
    if corrected:
        text += f" (corrected: {one(corrected)})"
    return text


def _check_flags(args: argparse.Namespace) -> None:
    """Reject flags that do not apply, and a --plot that could not be written, before any work."""
    if args.list:
        given = [
            f
            for f, on in (
                ("ALGORITHM", args.algorithm),
                ("--horizon", args.horizon is not None),
                ("--plot", args.plot),
                ("--time-average", args.time_average),
            )
            if on
        ]
        given += [_flag(k[len("param_") :]) for k in vars(args) if k.startswith("param_")]
        if given:
            raise ValueError(f"--list takes no {', '.join(given)}")
        return
    if args.time_average and not args.plot:
        raise FlagError("--time-average", "applies to the plot only; give --plot FILE too")
    if args.plot:
        plot_file(args.plot)


def run(args: argparse.Namespace) -> int:
    """Simulate the algorithm's regret and print its summary (or list the algorithms with `--list`);
    returns the exit code, 2 when ALGORITHM or --horizon is missing.
    """
    from dpaudit.registry import ALGORITHMS, load_plugins

    load_plugins()
    _check_flags(args)
    if args.list:
        listing = _listing()
        if args.json:
            print(json.dumps(listing, indent=2))
        else:
            for item in listing:
                print(f"{item['name']}: {item['summary']}")
                for p in item["params"]:
                    choices = f" {{{','.join(map(str, p['choices']))}}}" if p["choices"] else ""
                    print(f"    {_flag(p['name'])}{choices} (default {p['default']}): {p['help']}")
        return 0
    if not args.algorithm:
        print("dpaudit regret: error: ALGORITHM is required (or --list)", file=sys.stderr)
        return 2
    if args.horizon is None:
        print("dpaudit regret: error: --horizon is required", file=sys.stderr)
        return 2
    entry = ALGORITHMS.get(args.algorithm)
    own = {p.name: p for p in entry.params}
    given = {k[len("param_") :]: v for k, v in vars(args).items() if k.startswith("param_")}
    foreign = sorted(set(given) - set(own))
    if foreign:
        raise ValueError(
            f"{args.algorithm} does not take {', '.join(_flag(f) for f in foreign)}; "
            f"its parameters: {', '.join(_flag(p) for p in own) or 'none'}"
        )
    params = {name: _convert(own[name], text) for name, text in given.items()}
    if params.get("arms") is not None and params["arms"] < 2:  # the library's own check names n_arms
        raise FlagError(
            "--arms", f"must be an integer >= 2 (a bandit needs two arms to choose from), got {params['arms']}"
        )
    print(f"dpaudit regret: simulating {args.algorithm}, T={args.horizon}, {args.runs} runs", file=sys.stderr)
    curves = simulate(entry, args.horizon, args.runs, args.seed, params)
    if args.plot:
        from dpaudit.regret import plot_curves

        plot_curves(
            [curves],
            args.plot,
            time_average=args.time_average,
            title=f"{args.algorithm}, T={args.horizon}, {args.runs} runs",
        )
    summary = curves.to_json()
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        ci = summary["final_ci"]
        rows = [
            ("algorithm", summary["algorithm"]),
            ("horizon", summary["horizon"]),
            ("runs", summary["runs"]),
            ("final regret (mean)", f"{summary['final_mean']:.6g}"),
            ("95% interval", f"[{ci[0]:.6g}, {ci[1]:.6g}]" if ci is not None else "none: needs --runs >= 2"),
            ("time-average regret", f"{summary['final_time_average']:.6g}"),
            ("privacy claim", _claim_text(summary["privacy"])),
        ]
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k:<{width}}  {v}")
        if args.plot:
            print(f"{'plot':<{width}}  {args.plot}")
    return 0
