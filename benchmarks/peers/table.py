"""dpaudit's auditor on the benchmark of StatDP and DP-Sniper (not part of the test suite).

    python -m benchmarks run peers [--quick] [--samples N] [--seeds 0 1] [--only NAME ...] [--json]
                                   [--selection-fraction F] [--crossfit] [--no-exact]
                                   [--selection-extension F] [--direction-share F] [--events-per-direction N]
                                   [--workers N]

The audits run with the auditor's defaults: `direction_share=0.9`, `events_per_direction=3` and the
automatic `selection_extension` (20% more of the runs go to the selection split when the pilot's
strongest event predicts less than 4 selection standard errors: SVT1, SVT2, SVT3, NumericalSVT,
LaplaceParallel and SVT34Parallel on both seeds, SVT6 on seed 0; 150-220 s in all with 2 workers,
benchmarks/figures/peers_1e6_default.txt).  `--selection-extension 0` turns it off.  What the
extension is worth row by row, over fresh selection draws: benchmarks/extension_policy.py.

The algorithms (benchmarks.peers.mechanisms), written from their papers and the peers' published definitions:
- report noisy max with Laplace / exponential noise returning the index (correct) or the noisy value
  (incorrect): Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy" (CCS 2018),
  Algs. 5-8 (StatDP);
- SVT1-SVT6: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy" (PVLDB
  2017), Algs. 1-6; the numerical SVT and prefix sums of Wang, Ding, Wang, Kifer, Zhang, "Proving
  Differential Privacy with Shadow Execution" (PLDI 2019);
- NoisyHist1/2 (Ding et al. CCS 2018, Algs. 9-10); RAPPOR and one-time RAPPOR (Erlingsson, Pihur,
  Korolova, CCS 2014, steps 1-3 and 1-2; Bloom bits by MurmurHash3 as in DP-Sniper's code); Laplace;
  the truncated geometric mechanism GeoSample (Balcer, Vadhan, "Differential Privacy on Finite
  Computers", ITCS 2018, Alg. 4.8); 20 Laplace mechanisms in parallel; SVT3 and SVT4 in parallel;
- numpy's floating-point Laplace (the textbook sampler whose low-order bits leak: Mironov, "On
  Significance of the Least Significant Bits for Differential Privacy", CCS 2012) and Mironov's
  snapping mechanism (his Sec. 5), audited with float-bit features.
Parameters and input pairs are those of DP-Sniper's evaluation (Bichsel, Steffen, Bogunovic, Vechev,
"DP-Sniper: Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE S&P 2021;
its repository eth-sri/dp-sniper, exp_default.py), i.e. StatDP's patterns; the pair of each row is the
one the peers' best witness used.  Claimed epsilon 0.1 unless the row says otherwise.

Columns: `exact` is the privacy loss of the row's input pair, sup over outputs of |log p0/p1| (closed
form, or 1-D quadrature over the threshold noise for the SVT and noisy-max rows: benchmarks.peers.exact), inf
when some output has probability zero on one side; `oracle` is the bound an audit would reach with
the exact likelihood-ratio events at the pilot's estimation size (1 - selection fraction of the runs)
and the even Bonferroni budget 0.05 / 4 per proportion, or about 0.05 / 2 for the ratio of the two by the
thinned ratio test, whichever gives more (`benchmarks.peers.oracle`; the auditor's finite-sample ceiling with that
budget; with the uneven direction split, `direction_share`, a clearly stronger direction is tested at
0.9 * 0.05 / 2 and can exceed it, with `selection_extension` the estimation split may be shorter);
`>=` before exact or oracle marks a lower bound (SVT34Parallel's exact loss: its 'above' patterns
only, see `svt34_loss_lower`); `ceiling` is the ceiling of ANY event-based audit at `--samples` runs per
side and confidence 0.95:
every run used for estimation, one event fixed in advance (the exact likelihood-ratio event best at
the expected counts), its two proportions bounded at the one-sided level 1 - sqrt(0.95) each (they come
from independent samples) or their ratio by the thinned ratio test at 0.95 (`dpaudit.audit.ratio`), whichever
gives more, no other multiple-testing cost; the summary line gives the mean of ceiling /
exact over the finite rows (1 for a finite row without a computed ceiling), an upper bound on the
mean ratio any such audit can reach in expectation; `statdp` and `dpsniper` are
the peers' published lower bounds (DP-Sniper's reference results, eval_sp2021/reference-results of
eth-sri/dp-sniper: StatDP (best of its two runs) and DP-Sniper (best of logistic regression and the
neural network), both at 2*10^8 runs per side and 90% confidence); `dpaudit` is our bound at
`--samples` runs per side and 95% confidence; `peers` says whether the smaller of our bounds over
the seeds is at least every peer bound below the row's ceiling (`above`), is not (`below`: listed in
the summary's `below_a_peer`), or every peer bound is above the ceiling (`ceiling`), where a row
without a computed ceiling (an infinite loss) takes the ceiling of any event (`any_event_ceiling`:
12.7 at 10^6 runs, above which SVT5's StatDP bound 14.3 lies).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from concurrent.futures import Future

import numpy as np

from benchmarks.peers.oracle import CEILING_LEVEL, any_event_ceiling
from benchmarks.peers.rows import Row, rows
from dpaudit.audit import audit
from dpaudit.audit.workers import process_pool


class _Here:
    """`submit` runs the call at once (one worker: no process pool)."""

    def submit(self, fn, *args):
        done = Future()
        done.set_result(fn(*args))
        return done

    def shutdown(self) -> None:
        pass


def _run_named(name: str, samples: int, seed: int, extra: dict) -> dict:
    """`run_row` for the row called `name` (rows hold lambdas: a worker process rebuilds them)."""
    return run_row(next(r for r in rows() if r.name == name), samples, seed, extra)


def run_row(row: Row, samples: int, seed: int, extra: dict) -> dict:
    start = time.perf_counter()
    opts = {**row.options, **extra}
    res = audit(
        row.make(),
        np.asarray(row.d0),
        np.asarray(row.d1),
        claim_epsilon=row.claim,
        samples=samples,
        confidence=0.95,
        seed=seed,
        progress=False,
        executor="serial",
        **opts,
    )
    return {
        "epsilon_lower": res.epsilon_lower,
        "verdict": res.verdict,
        "seconds": time.perf_counter() - start,
        "selection_samples": res.selection_samples,
        "event": res.directions[0].event if res.direction == "d0>d1" else res.directions[1].event,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^5 runs per side, one seed")
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--selection-fraction", type=float, default=None)
    ap.add_argument("--no-exact", action="store_true", help="skip the quadratures and oracles")
    ap.add_argument("--crossfit", action="store_true", help="audit with crossfit=True (see dpaudit.audit)")
    ap.add_argument(
        "--selection-extension",
        type=float,
        default=None,
        help="audit with selection_extension=F (see dpaudit.audit; default: automatic, 0.2)",
    )
    ap.add_argument(
        "--direction-share",
        type=float,
        default=None,
        help="audit with direction_share=F (see dpaudit.audit; default 0.9)",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes running the audits (default: 2, or 1 on one core)",
    )
    ap.add_argument(
        "--events-per-direction",
        type=int,
        default=None,
        help="audit with events_per_direction=N (see dpaudit.audit; default 3)",
    )
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error(f"--workers must be at least 1, got {args.workers}")
    if args.selection_extension is not None and not 0.0 <= args.selection_extension < 0.9:
        ap.error(f"--selection-extension must be in [0, 0.9), got {args.selection_extension}")
    if args.events_per_direction is not None and args.events_per_direction < 1:
        ap.error(f"--events-per-direction must be at least 1, got {args.events_per_direction}")
    samples = 100_000 if args.quick else args.samples
    extra = {}
    if args.selection_fraction is not None:
        extra["selection_fraction"] = args.selection_fraction
    if args.crossfit:
        extra["crossfit"] = True
    if args.selection_extension is not None:
        extra["selection_extension"] = args.selection_extension
    if args.direction_share is not None:
        extra["direction_share"] = args.direction_share
    if args.events_per_direction is not None:
        extra["events_per_direction"] = args.events_per_direction
    level = 0.05 / 4
    table = []
    total = time.perf_counter()
    chosen = [row for row in rows() if not args.only or row.name in args.only]
    # one BLAS thread per core among the workers (dpaudit.audit.workers.worker_init)
    pool = process_pool(args.workers) if args.workers > 1 else _Here()
    # every audit is submitted first; the quadratures and oracles run here meanwhile
    audits = {row.name: [pool.submit(_run_named, row.name, samples, s, extra) for s in args.seeds] for row in chosen}
    for row in chosen:
        rec = {
            "algorithm": row.name,
            "claim": row.claim,
            "known_violation": row.known_violation,
            "statdp": row.statdp,
            "dpsniper": row.dpsniper,
            "note": row.note,
            "exact_lower": row.exact_lower,
            "oracle_lower": row.oracle_lower,
        }
        if not args.no_exact:
            rec["exact"] = row.exact() if row.exact else None
            n_est = samples if args.crossfit else samples - round(extra.get("selection_fraction", 0.1) * samples)
            rec["oracle"] = row.oracle(n_est, level) if row.oracle else None
            rec["ceiling"] = row.oracle(samples, CEILING_LEVEL) if row.oracle else None
        runs = [f.result() for f in audits[row.name]]
        rec["dpaudit"] = [r["epsilon_lower"] for r in runs]
        rec["verdicts"] = [r["verdict"] for r in runs]
        rec["seconds"] = sum(r["seconds"] for r in runs)
        rec["event"] = runs[0]["event"]
        rec["selection_share"] = [r["selection_samples"] / samples for r in runs]
        caught = [v == "violation" for v in rec["verdicts"]]
        rec["ok"] = all(caught) if row.known_violation else not any(caught)
        rec["versus_peers"] = versus_peers(rec, samples)
        table.append(rec)
        if not args.json:
            _print_row(rec)
            sys.stdout.flush()
    pool.shutdown()
    wall = time.perf_counter() - total
    finite = [r for r in table if r.get("exact") not in (None, math.inf) and not r["exact_lower"]]
    ratios = [min(r["dpaudit"]) / r["exact"] for r in finite]
    ceil = [r["ceiling"] / r["exact"] for r in finite if r.get("ceiling") is not None]
    summary = {
        "samples_per_side": samples,
        "seeds": args.seeds,
        "wall_seconds": wall,
        # the largest resident set of this process and of any worker process (joined by then)
        "peak_rss_mb": max(
            resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        / 1024,
        # the mean of ceiling / exact over the finite rows, 1 for the rows without a ceiling
        # computed (SVT3): what any event-based audit could reach at most, in expectation
        "ceiling_mean_ratio_to_exact": float((sum(ceil) + len(finite) - len(ceil)) / len(finite)) if finite else None,
        "ceiling_rows": len(ceil),
        "all_ok": all(r["ok"] for r in table),
        "below_a_peer": [r["algorithm"] for r in table if r["versus_peers"] == "below"],
        "mean_ratio_to_exact": float(np.mean(ratios)) if ratios else None,
        "min_ratio_to_exact": float(np.min(ratios)) if ratios else None,
    }
    if args.json:
        print(json.dumps({"rows": table, "summary": summary}, indent=1, default=str))
    else:
        print(json.dumps(summary))
    return 0


def versus_peers(rec: dict, samples: int) -> str:
    """'above' when the smaller of dpaudit's bounds over the seeds is at least every published peer
    bound below the row's ceiling (`any_event_ceiling` where the row has none), 'below' when not,
    'ceiling' when every peer bound is above the ceiling, '' without peer bounds."""
    peers = [b for b in (rec["statdp"], rec["dpsniper"]) if b is not None]
    if not peers:
        return ""
    ceiling = rec.get("ceiling")
    reachable = [b for b in peers if b < (ceiling if ceiling is not None else any_event_ceiling(samples))]
    if not reachable:
        return "ceiling"
    return "above" if min(rec["dpaudit"]) >= max(reachable) else "below"


def _fmt(v, lower: bool = False) -> str:
    if v is None:
        return "—"
    if v == math.inf:
        return "inf"
    return f"{'>=' if lower else ''}{v:.4f}"


def _print_row(r: dict) -> None:
    low = "/".join(f"{v:.4f}" for v in r["dpaudit"])
    print(
        f"{r['algorithm']:<19} claim {r['claim']:.4f} exact {_fmt(r.get('exact'), r['exact_lower']):>7} oracle "
        f"{_fmt(r.get('oracle'), r['oracle_lower']):>7} ceiling {_fmt(r.get('ceiling')):>7} statdp {_fmt(r['statdp']):>7} "
        f"dpsniper {_fmt(r['dpsniper']):>7} dpaudit {low:>15} {'/'.join(r['verdicts'])} {'OK' if r['ok'] else 'FAIL'} "
        f"peers {r['versus_peers'] or '—'} "
        f"{r['seconds']:.1f}s sel {'/'.join(f'{v:.2f}' for v in r['selection_share'])}  "
        f"[{r['event'][:50]}]"
    )


if __name__ == "__main__":
    sys.exit(main())
