"""`dpaudit calibrate`: the smallest noise (or largest local epsilon) of a named mechanism such
that `--count` releases meet a target (--epsilon, --delta), under every accountant that supports it.

With no mechanism it runs the embedded default: Gaussian noise for 100 releases at (1, 1e-5).
"""

from __future__ import annotations

import argparse
import json
import sys

from dpaudit.cli.budget import PARAM_TYPES, add_mechanism_arguments, mechanism_params

NAME = "calibrate"
HELP = "smallest noise (or largest local epsilon) meeting a target (epsilon, delta) under every accountant"

DEFAULT = {"mechanism": "gaussian", "count": 100, "epsilon": 1.0, "delta": 1e-5}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_mechanism_arguments(parser)
    parser.add_argument("--epsilon", type=float, default=None, help="target epsilon (default 1)")
    parser.add_argument("--delta", type=float, default=None, help="target delta (default 1e-5)")
    parser.add_argument("--accountant", default=None, help="only this accountant (default: every one that applies)")


def run(args: argparse.Namespace) -> int:
    from dpaudit import accounting
    from dpaudit.accounting.calibration import calibrate_parameter
    from dpaudit.accounting.named import MECHANISMS, event_for
    from dpaudit.validation import check_choice, check_delta, check_epsilon, check_positive_int

    if args.mechanism is None:
        if any(getattr(args, n) is not None for n in PARAM_TYPES):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit calibrate laplace --count 10)")
        mechanism, params, count = DEFAULT["mechanism"], {}, DEFAULT["count"] if args.count == 1 else args.count
        print(f"dpaudit calibrate: no mechanism given, running the embedded default: gaussian --count {count}"
              " --epsilon 1 --delta 1e-5", file=sys.stderr)
    else:
        mechanism, params, count = args.mechanism, mechanism_params(args), args.count
    count = check_positive_int(count, "count")
    eps = check_epsilon(DEFAULT["epsilon"] if args.epsilon is None else args.epsilon, "epsilon")
    delta = check_delta(DEFAULT["delta"] if args.delta is None else args.delta, "delta")
    mech = MECHANISMS[mechanism]
    params.pop(mech.tuned, None)
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
        except ValueError as exc:
            rows.append({"accountant": name, mech.tuned: None, "reason": str(exc)})
    found = [r for r in rows if r[mech.tuned] is not None]
    if not found:
        raise ValueError(f"no accountant reaches (epsilon={eps}, delta={delta}) for {mechanism}")
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
