"""Neighbour search (dpaudit.audit.search.audit_pairs) against the peers' fixed pair (not part of the test suite).

    python -m benchmarks run neighbour_search [--samples 1000000] [--seeds 0] [--only NAME ...] [--json]

For the rows of the peers benchmark (benchmarks/peers/) whose outputs depend on a vector of queries (report noisy max,
SVT1-4, SVT6, the numerical SVT), the exact loss of each of StatDP's 16 patterns (`statdp_patterns`:
Ding et al. CCS 2018, Sec. 5.1, as DP-Sniper uses them) is computed first where benchmarks.peers.exact has it
(quadrature: noisy max, SVT1, 2, 3, 4); the rows where some pattern is worse than the peers' own pair,
and the rows without an exact loss, are audited per seed at `--samples` runs per side, confidence 0.95:
- `fixed`: the peers' pair, as in the peers benchmark;
- `search`: `audit_pairs(target, statdp_patterns(n), ...)`, pilots of samples/10 runs per pattern on
  their own seeds, then the pilot-best pair audited on fresh runs (no correction needed: the choice is
  made on independent runs, see dpaudit.audit.search).
Columns: the pair, its exact loss, ε_lower and wall time for each; `best pattern` is the pattern with
the largest exact loss (what an ideal search would pick).  The other rows of the peers benchmark are left out:
their input is one scalar (RAPPOR, Laplace, the geometric and float mechanisms), or they are run on one
fixed pair by definition (NoisyHist: histogram neighbours; LaplaceParallel, PrefixSum: every pattern
moving all entries by one has the same loss as the peers' pair).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks.peers.exact import noisy_max_pmf, pair_loss, svt3_loss, svt_pmf
from benchmarks.peers.mechanisms import noisy_max, numerical_svt, svt
from benchmarks.peers.rows import rows
from dpaudit.audit import audit
from dpaudit.audit.search import audit_pairs, statdp_patterns


def _name(pair) -> str:
    return "/".join("".join(f"{v:g}" for v in np.asarray(x)) for x in pair)


def _pmf_loss(pmf):
    return lambda a, b: pair_loss(pmf(np.asarray(a, float)), pmf(np.asarray(b, float)))


ROWS = {
    # name: (target factory, exact loss of a pair or None, dimensions)
    "ReportNoisyMax1": (lambda: noisy_max("laplace", False), _pmf_loss(lambda q: noisy_max_pmf(q, "laplace")), 5),
    "ReportNoisyMax2": (lambda: noisy_max("exponential", False), _pmf_loss(lambda q: noisy_max_pmf(q, "exp")), 5),
    "SVT1": (lambda: svt(1, c=1, t=0.5), _pmf_loss(lambda q: svt_pmf(q, 1, t=0.5)[1]), 10),
    "SVT2": (lambda: svt(2, c=1, t=1.0), _pmf_loss(lambda q: svt_pmf(q, 2)[1]), 10),
    "SVT3": (lambda: svt(3, c=1, t=1.0), lambda a, b: svt3_loss(a, b), 10),
    "SVT4": (lambda: svt(4, c=1, t=1.0), _pmf_loss(lambda q: svt_pmf(q, 4)[1]), 10),
    "SVT6": (lambda: svt(6, c=1, t=1.0), None, 10),
    "NumericalSVT": (lambda: numerical_svt(c=2, t=1.0), None, 10),
}


def _f(v) -> str:
    return "   —  " if v is None else f"{v:.4f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    by_name = {r.name: r for r in rows()}
    out = []
    for name, (make, loss, dims) in ROWS.items():
        if args.only and name not in args.only:
            continue
        row = by_name[name]
        pairs = statdp_patterns(dims)
        exact = [loss(a, b) for a, b in pairs] if loss else [None] * len(pairs)
        fixed_exact = loss(row.d0, row.d1) if loss else None
        best = int(np.argmax(exact)) if loss else None
        rec = {
            "algorithm": name,
            "claim": row.claim,
            "fixed_pair": _name((row.d0, row.d1)),
            "fixed_exact": fixed_exact,
            "best_pattern": None if best is None else _name(pairs[best]),
            "best_exact": None if best is None else exact[best],
            "pattern_exact": exact,
            "runs": [],
        }
        if loss and not exact[best] > fixed_exact + 1e-9:
            rec["note"] = "the peers' pair is already a worst pattern"
            out.append(rec)
            if not args.json:
                print(
                    f"{name:<16} fixed {rec['fixed_pair']} exact {fixed_exact:.4f}: already a worst pattern "
                    f"(best {exact[best]:.4f}); not audited",
                    flush=True,
                )
            continue
        for seed in args.seeds:
            t0 = time.perf_counter()
            fixed = audit(
                make(),
                np.asarray(row.d0, float),
                np.asarray(row.d1, float),
                claim_epsilon=row.claim,
                samples=args.samples,
                seed=seed,
                progress=False,
                executor="serial",
            )
            t1 = time.perf_counter()
            found = audit_pairs(
                make(),
                pairs,
                claim_epsilon=row.claim,
                samples=args.samples,
                seed=seed,
                progress=False,
                executor="serial",
            )
            t2 = time.perf_counter()
            run = {
                "seed": seed,
                "fixed_lower": fixed.epsilon_lower,
                "fixed_seconds": t1 - t0,
                "search_pair": _name((found.d0, found.d1)),
                "search_exact": exact[found.pair_index],
                "search_lower": found.result.epsilon_lower,
                "search_seconds": t2 - t1,
                "pilot_best": max(found.pilot_lower),
            }
            rec["runs"].append(run)
            if not args.json:
                print(
                    f"{name:<13} claim {row.claim:.3f} | fixed {rec['fixed_pair']:<21} exact {_f(fixed_exact)} "
                    f"lower {fixed.epsilon_lower:.4f} {t1 - t0:5.1f}s | search {run['search_pair']:<21} exact "
                    f"{_f(run['search_exact'])} lower {run['search_lower']:.4f} {t2 - t1:5.1f}s | best pattern "
                    f"{rec['best_pattern']} exact {_f(rec['best_exact'])} (seed {seed})",
                    flush=True,
                )
        out.append(rec)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
