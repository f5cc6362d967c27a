"""Where the auditor loses power on a row of the peers benchmark (benchmarks/peers/): the family, or its threshold.

    python -m benchmarks run selection_gap SVT3 [--seed 0] [--samples 1000000] [--selection-fraction 0.1]

Not part of the test suite and not an audit: a diagnostic.  It draws the row's runs as the auditor
does (a selection split of `--selection-fraction` of the runs, its first half to fit the learned
families, its second half to choose their events; the rest to estimate), and prints, for every
default family (`fit_scores`, `fit_feature_scores`, and `fit_chain_scores`, which the auditor fits
and thresholds on the whole selection split, and so does this script) and direction:

- `chosen`: the Clopper-Pearson epsilon bound of the event `choose_events` picks from the selection
  split alone (what an audit restricted to that family would report, before the refit step);
- `best`: the largest bound over 400 quantile thresholds of the same score computed on the
  estimation split itself.  This is *not* a valid lower bound (the threshold is chosen on the runs
  it is evaluated on); it is the reference "this family with a perfect threshold".

`best` far above `chosen` says the threshold choice loses the power; `best` itself below the claim
says the family does.  Both use the one-sided level 0.05 / 4 of the peers benchmark's oracle column.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from benchmarks.peers.rows import rows
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.chain import fit_chain_scores
from dpaudit.audit.features import fit_feature_scores
from dpaudit.audit.scores import fit_scores
from dpaudit.audit.selection import DIRECTIONS, choose_events

LEVEL = 0.05 / 4


def _eps(k0: np.ndarray, k1: np.ndarray, n: int) -> np.ndarray:
    """log(CP lower of k0/n / CP upper of k1/n), -inf where the lower bound is 0."""
    low = cp_lower(k0, n, LEVEL)
    with np.errstate(divide="ignore"):
        return np.where(low > 0, np.log(np.maximum(low, 1e-300) / cp_upper(k1, n, LEVEL)), -np.inf)


def _best(u0: np.ndarray, u1: np.ndarray) -> float:
    """Largest bound of {sign * score > t} over 400 quantiles t of the first sample (both signs)."""
    n = len(u0)
    best = -np.inf
    for sign in (1, -1):
        v0, v1 = np.sort(sign * u0), np.sort(sign * u1)
        t = np.unique(np.quantile(v0, np.linspace(0.0025, 0.9975, 400)))
        k0 = n - np.searchsorted(v0, t, side="right")
        k1 = len(v1) - np.searchsorted(v1, t, side="right")
        best = max(best, float(np.max(_eps(k0, k1, n))))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("row", help="a row name of the peers benchmark (benchmarks/peers/rows.py)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--selection-fraction", type=float, default=0.1)
    args = ap.parse_args(argv)
    if not 0 < args.selection_fraction < 1:
        ap.error(f"--selection-fraction must be in (0, 1), got {args.selection_fraction!r}")
    matches = [r for r in rows() if r.name == args.row]
    if not matches:
        ap.error(f"row must be one of {[r.name for r in rows()]}, got {args.row!r}")
    row = matches[0]
    target = row.make()
    rng = np.random.default_rng(args.seed)
    n_sel = round(args.selection_fraction * args.samples)
    n_est = args.samples - n_sel
    d0, d1 = np.asarray(row.d0), np.asarray(row.d1)
    sel0, sel1 = target(d0, rng, n_sel), target(d1, rng, n_sel)
    est0, est1 = target(d0, rng, n_est), target(d1, rng, n_est)
    half = n_sel // 2
    print(f"{row.name} claim {row.claim} seed {args.seed} samples {args.samples} selection {n_sel}")
    whole = fit_chain_scores(sel0, sel1)  # fitted and thresholded on the whole selection split, as the auditor does
    for sc in fit_scores(sel0[:half], sel1[:half]) + fit_feature_scores(sel0[:half], sel1[:half]) + whole:
        a, b = (sel0[half:], sel1[half:]) if sc.learned and sc not in whole else (sel0, sel1)
        plans = choose_events([(sc, sc(a), sc(b))], n_est, 0.0, LEVEL, 16)
        x0, x1 = sc(est0), sc(est1)
        cells = []
        for d in DIRECTIONS:
            u0, u1 = (x0, x1) if d == DIRECTIONS[0] else (x1, x0)
            plan = plans[d]
            k0 = np.count_nonzero(plan.sign * u0 > plan.threshold)
            k1 = np.count_nonzero(plan.sign * u1 > plan.threshold)
            cells.append(f"{d} chosen {float(_eps(np.array(k0), np.array(k1), n_est)):7.4f} best {_best(u0, u1):7.4f}")
        print(f"  {sc.name:<34} " + "   ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
