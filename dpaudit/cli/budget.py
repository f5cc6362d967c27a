"""`dpaudit budget`: the guarantee of a named mechanism, composed `--count` times, under every
accountant (epsilon at --delta, or delta at --epsilon); `--json` for scripts.

With no mechanism it runs the embedded default: Gaussian noise sigma = 10 on a sensitivity-1
query, released 100 times, epsilon at delta = 1e-5.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import dp_accounting

NAME = "budget"
HELP = "epsilon (at delta) or delta (at epsilon) of a mechanism under every accountant"

DEFAULT = {"mechanism": "gaussian", "params": {"sigma": 10.0}, "count": 100, "delta": 1e-5}

# every parameter any named mechanism takes: option name -> type
PARAM_TYPES = {
    "sigma": float, "scale": float, "sensitivity": float, "variance": float, "l1": float, "l2": float,
    "epsilon0": float, "delta0": float, "buckets": int, "users": int, "trials": int, "probability": float,
}


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """The mechanism and its parameters (shared with `dpaudit calibrate`)."""
    from dpaudit.accounting.named import MECHANISMS

    lines = [f"{m.name}: {m.summary} ({', '.join('--' + p for p in m.params)})" for m in MECHANISMS.values()]
    parser.add_argument("mechanism", nargs="?", choices=list(MECHANISMS), metavar="MECHANISM",
                        help="one of: " + "; ".join(lines))
    for name, typ in PARAM_TYPES.items():
        helps = sorted({f"{m.name}: {m.params[name][1]}" for m in MECHANISMS.values() if name in m.params})
        parser.add_argument(f"--{name}", type=typ, default=None, help="; ".join(helps))
    parser.add_argument("--count", type=int, default=1, help="number of releases composed (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_mechanism_arguments(parser)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--delta", type=float, default=None, help="report epsilon at this delta (default 1e-5)")
    target.add_argument("--epsilon", type=float, default=None, help="report delta at this epsilon")


def mechanism_params(args: argparse.Namespace) -> dict:
    from dpaudit.accounting.named import MECHANISMS

    mech = MECHANISMS[args.mechanism]
    params = {}
    for name in PARAM_TYPES:
        value = getattr(args, name)
        if value is None:
            continue
        if name not in mech.params:
            raise ValueError(f"mechanism {args.mechanism!r} takes no parameter --{name}; it takes "
                             + ", ".join("--" + p for p in mech.params))
        params[name] = value
    return params


def json_number(x: float) -> float | str:
    """JSON has no infinity: inf is written as the string "inf"."""
    return "inf" if math.isinf(x) else x


def compute(mechanism: str, params: dict, count: int, delta: float | None, epsilon: float | None) -> dict:
    """The budget table as a dict (what --json prints)."""
    from dpaudit import accounting
    from dpaudit.accounting.named import event_for

    event = dp_accounting.SelfComposedDpEvent(event_for(mechanism, params), count)
    rows = []
    for name in accounting.ACCOUNTANTS:
        row = {"accountant": name}
        try:
            if epsilon is None:
                row["epsilon"] = accounting.epsilon(event, delta, name)
            else:
                row["delta"] = accounting.delta(event, epsilon, name)
            row["supported"] = True
        except accounting.UnsupportedEventError as exc:
            row["supported"] = False
            row["reason"] = exc.reason
        rows.append(row)
    key = "epsilon" if epsilon is None else "delta"
    supported = [r for r in rows if r["supported"]]
    if not supported:
        raise ValueError(f"no accountant supports mechanism {mechanism!r}")
    best = min(supported, key=lambda r: r[key])
    extra = {}
    if mechanism == "shuffle" and count == 1 and epsilon is None and delta > 0:
        from dpaudit.accounting import shuffle

        e0, n = float(params["epsilon0"]), int(params["users"])
        extra["fmt_numerical"] = shuffle.numerical_epsilon(e0, n, delta)
        extra["fmt_closed_form"] = (shuffle.closed_form_epsilon(e0, n, delta)
                                    if shuffle.closed_form_applies(e0, n, delta) else None)
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


def _print_table(out: dict) -> None:
    key = "epsilon" if "delta" not in out["results"][0] and "epsilon" in out["best"] else "delta"
    at = f"delta = {out['delta']:g}" if key == "epsilon" else f"epsilon = {out['epsilon']:g}"
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in out["params"].items())
    print(f"{out['mechanism']}({params}) x {out['count']}: {key} at {at}")
    print(f"{'accountant':<10}  {key:>14}  note")
    for r in out["results"]:
        if r["supported"]:
            mark = "best" if r["accountant"] == out["best"]["accountant"] else ""
            print(f"{r['accountant']:<10}  {r[key]:>14.6g}  {mark}")
        else:
            print(f"{r['accountant']:<10}  {'-':>14}  not supported: {r['reason']}")
    if "shuffle_bounds" in out:
        b = out["shuffle_bounds"]
        cf = "does not apply (needs epsilon0 <= log(n/(16 log(2/delta))))" if b["fmt_closed_form"] is None else f"{b['fmt_closed_form']:.6g}"
        print(f"FMT 2021 numerical bound {b['fmt_numerical']:.6g}; closed form (Thm 3.1) {cf}")


def run(args: argparse.Namespace) -> int:
    from dpaudit.validation import check_delta, check_epsilon, check_positive_int

    if args.mechanism is None:
        if any(getattr(args, n) is not None for n in PARAM_TYPES):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit budget gaussian --sigma 2)")
        mechanism, params = DEFAULT["mechanism"], dict(DEFAULT["params"])
        count = DEFAULT["count"] if args.count == 1 else args.count
        print(f"dpaudit budget: no mechanism given, running the embedded default: gaussian --sigma 10 "
              f"--count {count}", file=sys.stderr)
    else:
        mechanism, params, count = args.mechanism, mechanism_params(args), args.count
    count = check_positive_int(count, "count")
    eps = None if args.epsilon is None else check_epsilon(args.epsilon, "epsilon")
    delta = None if eps is not None else check_delta(DEFAULT["delta"] if args.delta is None else args.delta, "delta")
    out = compute(mechanism, params, count, delta, eps)
    if args.json:
        for r in out["results"]:
            for k in ("epsilon", "delta"):
                if k in r:
                    r[k] = json_number(r[k])
        for k in ("epsilon", "delta"):
            if k in out["best"]:
                out["best"][k] = json_number(out["best"][k])
        print(json.dumps(out, indent=1))
    else:
        _print_table(out)
    return 0
