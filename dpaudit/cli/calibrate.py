"""`dpaudit calibrate`: the smallest noise (or largest local epsilon) of a named mechanism such
that `--count` releases meet a target (--epsilon, --delta), under every accountant that supports it.

With no mechanism it runs the embedded default: Gaussian noise for 100 releases at (1, 1e-5).
"""

from __future__ import annotations

import argparse
import json
import sys

from dpaudit.cli.budget import DELTA, EPSILON, PARAM_TYPES, add_mechanism_arguments, mechanism_params

NAME = "calibrate"
HELP = "smallest noise (or largest local epsilon) meeting a target (epsilon, delta) under every accountant"

DEFAULT = {"mechanism": "gaussian", "count": 100, "epsilon": 1.0, "delta": 1e-5}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_mechanism_arguments(parser)
    parser.add_argument("--epsilon", type=EPSILON, default=None, help="target epsilon > 0 (default 1)")
    parser.add_argument("--delta", type=DELTA, default=None, help="target delta in [0, 1) (default 1e-5)")
    parser.add_argument("--accountant", default=None, help="only this accountant (default: every one that applies)")


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
        at_extreme = accounting.epsilon(dp_accounting.SelfComposedDpEvent(
            event_for(mechanism, {**params, mech.tuned: extreme}), count), delta, accountant)
    except (ValueError, ArithmeticError, MemoryError):
        at_extreme = float("inf")
    if at_extreme > eps:
        return (f"no {flag} meets the target under this accountant: even {mech.tuned}={extreme:g} gives "
                f"epsilon {at_extreme:.4g} > {eps:g} at delta {delta:g}")
    word = "larger" if mech.larger_is_private else "smaller"
    return f"needs a {word} {flag} than the searched range reaches"


def run(args: argparse.Namespace) -> int:
    from dpaudit import accounting
    from dpaudit.accounting.calibration import calibrate_parameter
    from dpaudit.accounting.named import MECHANISMS, event_for
    from dpaudit.validation import check_choice

    if args.mechanism is None:
        if any(getattr(args, n) is not None for n in PARAM_TYPES):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit calibrate laplace --count 10)")
        mechanism, params = DEFAULT["mechanism"], {}
        count = DEFAULT["count"] if args.count is None else args.count
        print(f"dpaudit calibrate: no mechanism given, running the embedded default: gaussian --count {count}"
              " --epsilon 1 --delta 1e-5", file=sys.stderr)
    else:
        mechanism, params, count = args.mechanism, mechanism_params(args), 1 if args.count is None else args.count
    eps = DEFAULT["epsilon"] if args.epsilon is None else args.epsilon
    delta = DEFAULT["delta"] if args.delta is None else args.delta
    mech = MECHANISMS[mechanism]
    if mech.tuned in params:
        raise ValueError(f"--{mech.tuned} is what calibrate computes for {mechanism}; do not give it "
                         f"(to check a given --{mech.tuned}, use `dpaudit budget {mechanism} --{mech.tuned} ...`)")
    # which accountants apply: probe with a mid-range value of the tuned parameter
    probe = event_for(mechanism, {**params, mech.tuned: 1.0})
    names = accounting.supporting_accountants(probe)
    if args.accountant is not None:
        check_choice(args.accountant, accounting.ACCOUNTANTS, "accountant")
        if args.accountant not in names:
            raise accounting.UnsupportedEventError(args.accountant, probe, "see `dpaudit budget`", names)
        names = [args.accountant]
    rows = []
    for name in names:
        print(f"calibrating under {name} ...", file=sys.stderr)
        try:
            rows.append({"accountant": name, mech.tuned: calibrate_parameter(
                mechanism, eps, delta, count=count, params=params, accountant=name)})
        except ValueError:
            rows.append({"accountant": name, mech.tuned: None,
                         "reason": _explain(mechanism, params, count, eps, delta, name)})
    found = [r for r in rows if r[mech.tuned] is not None]
    if not found:
        raise ValueError(f"no accountant reaches (epsilon={eps:g}, delta={delta:g}) for {mechanism}: "
                         + "; ".join(f"{r['accountant']}: {r['reason']}" for r in rows))
    pick = min if mech.larger_is_private else max
    best = pick(found, key=lambda r: r[mech.tuned])
    out = {"mechanism": mechanism, "params": params, "count": count, "epsilon": eps, "delta": delta,
           "tuned": mech.tuned, "results": rows, "best": best}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    word = "smallest" if mech.larger_is_private else "largest"
    print(f"{mechanism} x {count}: {word} {mech.tuned} meeting (epsilon={eps:g}, delta={delta:g})")
    print(f"{'accountant':<10}  {mech.tuned:>14}  note")
    for r in rows:
        if r[mech.tuned] is None:
            print(f"{r['accountant']:<10}  {'-':>14}  {r['reason']}")
        else:
            print(f"{r['accountant']:<10}  {r[mech.tuned]:>14.6g}  {'best' if r is best else ''}")
    return 0
