"""Expected bound of the events the auditor chooses, over independent selection splits (not part of the tests).

    python -m benchmarks run selection_draws --rows SVT3 NumericalSVT [--draws 6] [--truth 2000000]
                                             [--selection-extension F]

For each row of the peers benchmark (benchmarks/peers/) and each draw k, a selection split of the size the auditor
uses at 10^6 runs per side (10^5) is drawn (seed 5000 + k) and the auditor's choice made on it
(`_choose`, with up to 6 events per direction).  Each chosen event's probabilities under d0 and d1
are then read off a large fixed sample (`--truth` runs per side, seed 777, the same for every draw
and scheme), and the Clopper-Pearson bound it would give on 9 * 10^5 estimation runs at the level
0.0125 of one direction's proportions (alpha = 0.05 split over two directions and two proportions)
is computed for each way of testing the events of a direction:

- `lead`: the lead event alone (events_per_direction=1);
- `k=3 even`: the lead and two runner-ups, each at a third of the level;
- `k=3 half`: the lead at half the level, the runner-ups at a quarter each;
- `k=3 3/4`: the lead at 3/4 of the level, the runner-ups at 1/8 each (the auditor's default).

With `--selection-extension F` every draw's selection split has F * 10^6 more runs and the estimation
split F * 10^6 fewer, as the auditor's `selection_extension` does when the pilot is unresolved (here
always, whatever the pilot).

The larger of the two directions' bounds is reported per draw, and the mean and worst over draws.
The bound on a draw is what the estimation split would give with its expected counts, so the
spread over draws is the selection split's alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import numpy as np

from benchmarks.peers.rows import rows
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.candidates import choose as _choose
from dpaudit.audit.options import AuditOptions
from dpaudit.audit.options import plan_audit as _validate

LEVEL = 0.0125
#: scheme name -> (events per direction, share of the lead; None: equal shares)
SCHEMES = {"lead": (1, None), "k=3 even": (3, None), "k=3 half": (3, 0.5), "k=3 3/4": (3, 0.75)}


def _bound(p_first: float, p_second: float, n: int, level: float) -> float:
    low, upp = cp_lower(round(p_first * n), n, level), cp_upper(round(p_second * n), n, level)
    return float(np.log(low / upp)) if low > 0 and upp > 0 else 0.0


def draw_rates(row, draw: int, truth0: np.ndarray, truth1: np.ndarray, extension: float = 0.0) -> tuple[int, dict]:
    """(estimation size, per direction the [first, second] probabilities of its lead and alternates)."""
    opts = AuditOptions.create(row.claim, samples=1_000_000, seed=0, **row.options)
    plan = _validate(row.make(), opts)
    extra = round(extension * opts.samples)
    plan = dataclasses.replace(plan, n_sel=plan.n_sel + extra, n_est=plan.n_est - extra)
    rng = np.random.default_rng(5000 + draw)
    target = row.make()
    s0, s1 = target(np.asarray(row.d0), rng, plan.n_sel), target(np.asarray(row.d1), rng, plan.n_sel)
    return plan.n_est, event_rates(_choose(None, s0, s1, opts, plan, plan.n_est, 6), truth0, truth1)


def event_rates(plans: dict, truth0: np.ndarray, truth1: np.ndarray) -> dict:
    """Per direction, the [first, second] probabilities of its lead and alternates on the truth samples."""
    out = {}
    for d, p in plans.items():
        rates = []
        for q in (p, *p.alternates):
            e0 = float(np.mean(q.sign * q.score(truth0) > q.threshold))
            e1 = float(np.mean(q.sign * q.score(truth1) > q.threshold))
            rates.append((e0, e1) if d == "d0>d1" else (e1, e0))
        out[d] = rates
    return out


def chosen_rows(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """The rows named by --rows, after checking --draws and --truth (exit 2 naming the flag)."""
    if args.draws < 1 or args.truth < 1000:
        ap.error(f"--draws must be at least 1 and --truth at least 1000, got {args.draws} and {args.truth}")
    table = {r.name: r for r in rows()}
    unknown = [r for r in args.rows if r not in table]
    if unknown:
        ap.error(f"--rows: unknown rows {unknown}; known: {sorted(table)}")
    return [table[name] for name in args.rows]


def truth_sample(row, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n runs per side of the row's pair (seed 777, the same for every draw and scheme)."""
    rng = np.random.default_rng(777)
    target = row.make()
    return target(np.asarray(row.d0), rng, n), target(np.asarray(row.d1), rng, n)


def scheme_bound(n: int, rates: dict, events: int, lead_share: float | None) -> float:
    best = 0.0
    for evs in rates.values():
        evs = evs[:events]
        m = len(evs)
        for i, (a, b) in enumerate(evs):
            if m == 1:
                level = LEVEL
            elif lead_share is None:
                level = LEVEL / m
            else:
                level = LEVEL * (lead_share if i == 0 else (1 - lead_share) / (m - 1))
            best = max(best, _bound(a, b, n, level))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", required=True)
    ap.add_argument("--draws", type=int, default=6)
    ap.add_argument("--truth", type=int, default=2_000_000)
    ap.add_argument("--selection-extension", type=float, default=0.0)
    args = ap.parse_args(argv)
    if not 0.0 <= args.selection_extension < 0.9:
        ap.error(f"--selection-extension must be in [0, 0.9), got {args.selection_extension}")
    for row in chosen_rows(ap, args):
        name = row.name
        start = time.perf_counter()
        truth0, truth1 = truth_sample(row, args.truth)
        got = {s: [] for s in SCHEMES}
        for k in range(args.draws):
            n, rates = draw_rates(row, k, truth0, truth1, args.selection_extension)
            for s, (events, share) in SCHEMES.items():
                got[s].append(scheme_bound(n, rates, events, share))
            print(f"{name:<14} draw {k}  " + "  ".join(f"{s} {v[-1]:.4f}" for s, v in got.items()), flush=True)
        print(
            f"{name:<14} mean    "
            + "  ".join(f"{s} {np.mean(v):.4f}" for s, v in got.items())
            + "   worst "
            + "  ".join(f"{np.min(v):.4f}" for v in got.values())
            + f"   ({time.perf_counter() - start:.0f}s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
