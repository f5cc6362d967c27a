"""`dpaudit tradeoff`: the privacy-utility frontier of one or several algorithms on the same instance.

    dpaudit tradeoff ALGORITHM [ALGORITHM ...] --epsilons 0.1,0.5,1,2 --horizon T --runs N [--plot FILE] [--json]

For each algorithm and each value of its epsilon input (`AlgorithmEntry.tuned`): the final pseudo-regret
over `--runs` independent runs (mean and 95% normal interval, `dpaudit.regret.RegretCurves`) and the
corrected epsilon of the run (the best accountant's epsilon of its declared event at `--at-delta`, default
the claim's delta), next to the paper's claim. Regret against corrected epsilon is the picture Hu, Huang &
Mehta plot in their Fig. 5 (regret vs epsilon), with the epsilon the implementation really has. A
non-private algorithm is simulated once, as the baseline. Same `--seed`: same instance for every algorithm
of a family.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from dpaudit.cli._types import FlagError, int_at_least, plot_file, seed
from dpaudit.validation import shorten

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "tradeoff"
HELP = "final regret (mean, 95% interval) against the corrected epsilon of one or several algorithms"


def _epsilons(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {shorten(text)}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"every epsilon must be a finite number > 0, got {shorten(text)}")
    return tuple(sorted(set(values)))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit tradeoff` on its subparser."""
    from dpaudit.cli.budget import DELTA, add_algorithm_arguments

    parser.add_argument(
        "algorithms", nargs="+", metavar="ALGORITHM", help="one or more algorithms of `dpaudit regret --list`"
    )
    parser.add_argument(
        "--epsilons", type=_epsilons, required=True, help="values of the epsilon input, e.g. 0.1,0.5,1,2"
    )
    parser.add_argument("--horizon", type=int_at_least(1), required=True, help="horizon T (rounds or users)")
    parser.add_argument(
        "--runs",
        type=int_at_least(2, " (the 95% interval needs two runs)"),
        default=20,
        help="independent runs per point (default 20)",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of numpy.random.SeedSequence, >= 0 (default 0)")
    parser.add_argument(
        "--at-delta",
        type=DELTA,
        default=None,
        help="report the corrected epsilon at this delta (default: each claim's delta; 1e-5 for zCDP/RDP)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="FILE", help="write regret against corrected epsilon to FILE (PNG/PDF/SVG)")
    parser.add_argument(
        "--delta",
        dest="param_delta",
        default=argparse.SUPPRESS,
        metavar="VALUE",
        help="the algorithms' delta parameter (those that take one)",
    )
    add_algorithm_arguments(parser)


def _params_per_algorithm(args: argparse.Namespace) -> dict[str, dict]:
    """The given algorithm options, each applied to the algorithms that take it; an option none of them
    takes is a usage error."""
    from dpaudit.cli.budget import algorithm_params, flag, given_algorithm_params
    from dpaudit.registry import ALGORITHMS

    given = given_algorithm_params(args)
    unused = set(given)
    out = {}
    for name in args.algorithms:
        own = {p.name for p in ALGORITHMS.get(name).params}
        mine = {k: v for k, v in given.items() if k in own}
        unused -= set(mine)
        out[name] = algorithm_params(name, mine)
    if unused:
        raise ValueError(f"none of {', '.join(args.algorithms)} takes {', '.join(flag(u) for u in sorted(unused))}")
    return out


def _point(
    name: str, horizon: int, params: dict, tuned: str | None, value: float | None, at_delta: float | None
) -> dict[str, Any]:
    """The privacy of one setting: the claim and the corrected epsilon (best accountant) at delta."""
    from dpaudit import accounting, budgets

    full = dict(params) if tuned is None else {**params, tuned: value}
    privacy = budgets.declared_privacy(name, horizon, full)
    delta = budgets.default_delta(privacy) if at_delta is None else at_delta
    event = privacy.event
    if event is None:
        corrected, acct = math.inf, None
    else:
        rows = budgets.accountant_rows(event, delta, None, accountants=accounting.supporting_accountants(event))
        best = budgets.best_row(rows)
        corrected, acct = (math.inf, None) if best is None else (best["epsilon"], best["accountant"])
    return {
        "algorithm": name,
        "tuned": tuned,
        "value": value,
        "params": full,
        "claim": privacy.claim.to_json(),
        "delta": delta,
        "corrected_epsilon": corrected,
        "accountant": acct,
    }


def run(args: argparse.Namespace) -> int:
    """Account for and simulate every algorithm at every epsilon input, then print (or plot) the
    frontier; returns the exit code.
    """
    from dpaudit import budgets
    from dpaudit.cli.regret import simulate
    from dpaudit.registry import ALGORITHMS, load_plugins

    load_plugins()
    for name in args.algorithms:
        ALGORITHMS.get(name)  # unknown algorithm: ValueError naming the known ones
    if len(set(args.algorithms)) != len(args.algorithms):
        raise ValueError(f"ALGORITHM: each algorithm once, got {', '.join(args.algorithms)}")
    if args.plot:
        plot_file(args.plot)
    params = _params_per_algorithm(args)
    # every setting's privacy first (cheap, and it checks the parameters and the horizon before any simulation)
    points = []
    for name in args.algorithms:
        entry = budgets.algorithm_entry(name)
        if entry.tuned is not None and entry.tuned in params[name]:
            raise FlagError(f"--{entry.tuned}", f"is swept by --epsilons; do not give it for {name}")
        values = [None] if entry.tuned is None else list(args.epsilons)
        points += [_point(name, args.horizon, params[name], entry.tuned, v, args.at_delta) for v in values]
    if args.plot and not any(math.isfinite(p["corrected_epsilon"]) and p["tuned"] for p in points):
        raise FlagError("--plot", "no setting has a finite corrected epsilon to plot against")
    curves = {}
    for p in points:
        setting = "" if p["value"] is None else f" {p['tuned']}={p['value']:g}"
        print(
            f"dpaudit tradeoff: simulating {p['algorithm']}{setting}, T={args.horizon}, {args.runs} runs",
            file=sys.stderr,
        )
        c = simulate(ALGORITHMS.get(p["algorithm"]), args.horizon, args.runs, args.seed, p["params"])
        curves[id(p)] = c
        lo, hi = c.final_ci
        p.update({"final_mean": c.final_mean, "final_ci": [lo, hi]})
    flat = {
        name: why for name in args.algorithms if (why := flat_reason([p for p in points if p["algorithm"] == name]))
    }
    if args.plot:
        _plot(points, curves, args, flat)
    out = {"horizon": args.horizon, "runs": args.runs, "seed": args.seed, "points": points, "flat": flat}
    if args.plot:
        out["plot"] = args.plot
    if args.json:
        print(json.dumps(budgets.json_number(out), indent=1))
        return 0
    print(
        f"{'algorithm':<18} {'epsilon in':>10} {'claim':>18} {'corrected eps':>14} {'(accountant)':<10} "
        f"{'regret R(T)':>12}  95% interval"
    )
    for p in points:
        c = p["claim"]
        claim = (
            "none"
            if c["notion"] == "none"
            else " ".join(
                f"{k}={c[k]:.3g}" if isinstance(c[k], float) else f"{k}={c[k]}"
                for k in ("epsilon", "delta", "rho")
                if k in c
            )
        )
        print(
            f"{p['algorithm']:<18} {'-' if p['value'] is None else format(p['value'], 'g'):>10} {claim:>18} "
            f"{p['corrected_epsilon']:>14.6g} {'(' + (p['accountant'] or '-') + ')':<10} {p['final_mean']:>12.6g}  "
            f"[{p['final_ci'][0]:.6g}, {p['final_ci'][1]:.6g}]"
        )
    for name, why in flat.items():
        print(
            f"{name}: flat: {why}; ε does not change the regret at T = {args.horizon} here. Typically the "
            "algorithm never leaves its exploration phase (e.g. eliminates no arm) within T at any of these ε, so "
            "the noise changes no decision: a longer --horizon, an instance with larger gaps or smaller "
            "--epsilons shows the trade-off"
        )
    if args.plot:
        print(f"plot: {args.plot}")
    return 0


FLAT_SPREAD = 0.01
"""A change of the final regret below this fraction of it, across the grid, counts as none (runs with identical
regret have intervals of width 0, which a change of 0.7% would otherwise separate)."""


def flat_reason(points: list[dict[str, Any]]) -> str | None:
    """Why the regret of one algorithm's swept points does not change with epsilon (None when it does, or with
    fewer than two swept points): every 95% interval shares a common value, or the means spread less than
    FLAT_SPREAD of the largest."""
    swept = [p for p in points if p["tuned"] is not None and "final_mean" in p]
    if len(swept) < 2:
        return None
    means = [p["final_mean"] for p in swept]
    lows, highs = [p["final_ci"][0] for p in swept], [p["final_ci"][1] for p in swept]
    spread, top = max(means) - min(means), max(abs(m) for m in means)
    if max(lows) <= min(highs):
        return (
            f"the regret's 95% intervals all overlap across --epsilons (means {_num(min(means))} to {_num(max(means))})"
        )
    if spread <= FLAT_SPREAD * top:
        return (
            f"the regret moves by {_num(spread)} across --epsilons, below {FLAT_SPREAD:.0%} of it "
            f"({_num(min(means))} to {_num(max(means))})"
        )
    return None


def _num(x: float) -> str:
    return f"{x:.6g}"


def _plot(points: list[dict], curves: dict, args: argparse.Namespace, flat: dict[str, str]) -> None:
    """Final regret with 95% intervals against the corrected epsilon, one series per private algorithm
    (settings with an infinite corrected epsilon cannot be placed on the axis and are left out)."""
    from dpaudit.regret import plot_final

    series = {}
    for name in args.algorithms:
        mine = [p for p in points if p["algorithm"] == name and p["tuned"] and math.isfinite(p["corrected_epsilon"])]
        if mine:
            series[name] = ([p["corrected_epsilon"] for p in mine], [curves[id(p)] for p in mine])
    title = f"privacy-utility frontier, T={args.horizon}, {args.runs} runs"
    if flat:
        title += f"\nflat for {', '.join(flat)}: regret does not change with ε here"
    plot_final(series, args.plot, title=title, xlabel="corrected epsilon (best accountant)")
