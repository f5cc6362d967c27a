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
from typing import Callable

from dpaudit.cli._types import int_at_least, integer, real, real_in

NAME = "budget"
HELP = "epsilon (at delta) or delta (at epsilon) of a mechanism under every accountant"

DEFAULT = {"mechanism": "gaussian", "params": {"sigma": 10.0}, "count": 100, "delta": 1e-5}

# every parameter any named mechanism takes: option name -> type (ranges are checked by the mechanism)
PARAM_TYPES = {
    "sigma": real, "scale": real, "sensitivity": real, "variance": real, "l1": real, "l2": real,
    "epsilon0": real, "delta0": real, "buckets": integer, "users": integer, "trials": real, "probability": real,
}
DELTA = real_in(0.0, 1.0, low_open=False, high_open=True)
EPSILON = real_in(0.0, math.inf, low_open=True, high_open=True)


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """The mechanism and its parameters (shared with `dpaudit calibrate`)."""
    from dpaudit.accounting.named import MECHANISMS

    lines = [f"{m.name}: {m.summary} ({', '.join('--' + p for p in m.params)})" for m in MECHANISMS.values()]
    parser.add_argument("mechanism", nargs="?", choices=list(MECHANISMS), metavar="MECHANISM",
                        help="one of: " + "; ".join(lines))
    for name, typ in PARAM_TYPES.items():
        helps = sorted({f"{m.name}: {m.params[name][1]}" for m in MECHANISMS.values() if name in m.params})
        parser.add_argument(f"--{name}", type=typ, default=None, help="; ".join(helps))
    parser.add_argument("--count", type=int_at_least(1), default=None,
                        help="number of releases composed, e.g. 100 or 1e12 (default 1; 100 for the embedded default)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_mechanism_arguments(parser)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--delta", type=DELTA, default=None, help="report epsilon at this delta in [0, 1) (default 1e-5)")
    target.add_argument("--epsilon", type=EPSILON, default=None, help="report delta at this epsilon > 0")


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


def compute(mechanism: str, params: dict, count: int, delta: float | None, epsilon: float | None,
            on_row: Callable[[dict], None] | None = None) -> dict:
    """The budget table as a dict (what --json prints); `on_row` sees each row as soon as it is computed.

    An accountant that runs out of memory or range on this event gives a row without a number
    (supported False, with the reason), never a guessed one.
    """
    import dp_accounting

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
        except (MemoryError, OverflowError) as exc:
            row["supported"] = False
            row["reason"] = f"this accountant failed on {count} releases ({type(exc).__name__})"
            row["failed"] = True
        rows.append(row)
        if on_row is not None:
            on_row(row)
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


def _print_header(mechanism: str, params: dict, count: int, delta: float | None, epsilon: float | None) -> None:
    key = "epsilon" if epsilon is None else "delta"
    at = f"delta = {delta:g}" if epsilon is None else f"epsilon = {epsilon:g}"
    shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())
    print(f"{mechanism}({shown}) x {count}: {key} at {at}")
    print(f"{'accountant':<10}  {key:>14}  note", flush=True)


def _print_row(row: dict) -> None:
    key = "epsilon" if "epsilon" in row else "delta"
    if row["supported"]:
        print(f"{row['accountant']:<10}  {row[key]:>14.6g}", flush=True)
    else:
        note = row["reason"] if row.get("failed") else f"not supported: {row['reason']}"
        print(f"{row['accountant']:<10}  {'-':>14}  {note}", flush=True)


def _print_footer(out: dict) -> None:
    key = "epsilon" if "epsilon" in out["best"] else "delta"
    print(f"best: {out['best']['accountant']} ({key} {out['best'][key]:.6g})")
    if "shuffle_bounds" in out:
        b = out["shuffle_bounds"]
        cf = "does not apply (needs epsilon0 <= log(n/(16 log(2/delta))))" if b["fmt_closed_form"] is None else f"{b['fmt_closed_form']:.6g}"
        print(f"FMT 2021 numerical bound {b['fmt_numerical']:.6g}; closed form (Thm 3.1) {cf}")


def run(args: argparse.Namespace) -> int:
    """Rows are printed as each accountant finishes, so a slow accountant never hides the others."""
    if args.mechanism is None:
        if any(getattr(args, n) is not None for n in PARAM_TYPES):
            raise ValueError("parameters need a MECHANISM (e.g. dpaudit budget gaussian --sigma 2)")
        mechanism, params = DEFAULT["mechanism"], dict(DEFAULT["params"])
        count = DEFAULT["count"] if args.count is None else args.count
        print(f"dpaudit budget: no mechanism given, running the embedded default: gaussian --sigma 10 "
              f"--count {count}", file=sys.stderr)
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
