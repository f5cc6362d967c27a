"""What the selection extension is worth, by how well the pilot resolved its event (not part of the tests).

    python -m benchmarks run extension_policy --rows SVT1 SVT3 [--draws 6] [--truth 1000000]

For each row of the peers benchmark (benchmarks/peers/) and each draw k (seed 6000 + k), 3 * 10^5 selection
runs per side are drawn at the auditor's settings for 10^6 runs.  The pilot is the auditor's choice on the first
10^5 of them; its ratio is the one `dpaudit.audit.candidates.resolved` compares with `RESOLVED_SE`
(predicted bound over the selection standard error of the lead event's log ratio).  The extended
choice is made on all 3 * 10^5 (the auditor's default extension, 0.2 of the runs).  Each choice's
expected bound is computed as in benchmarks/selection_draws.py (events' probabilities read off
`--truth` runs per side, seed 777; Clopper-Pearson at the level of one direction, the lead at 3/4 of
it and two alternates at 1/8) on 9 * 10^5 estimation runs for the pilot, 7 * 10^5 for the extended
choice.  `policy` is what the auditor gives: the extended choice when the ratio is below
`_RESOLVED_SE`, the pilot's otherwise.  The spread over draws is the selection split's alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import numpy as np

from benchmarks.selection_draws import chosen_rows, event_rates, scheme_bound, truth_sample
from dpaudit.audit.candidates import RESOLVED_SE as _RESOLVED_SE
from dpaudit.audit.candidates import choose as _choose
from dpaudit.audit.candidates import pilot_ratio as _pilot_ratio
from dpaudit.audit.options import AUTO_EXTENSION as _AUTO_EXTENSION
from dpaudit.audit.options import AuditOptions
from dpaudit.audit.options import plan_audit as _validate


def expected_bound(plans, n_est: int, truth0: np.ndarray, truth1: np.ndarray) -> float:
    """The auditor's scheme: the lead at 3/4 of the level, two alternates at 1/8."""
    return scheme_bound(n_est, event_rates(plans, truth0, truth1), 3, 0.75)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", required=True)
    ap.add_argument("--draws", type=int, default=6)
    ap.add_argument("--truth", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    for row in chosen_rows(ap, args):
        name, target = row.name, row.make()
        truth0, truth1 = truth_sample(row, args.truth)
        opts = AuditOptions.create(row.claim, samples=1_000_000, seed=0, **row.options)
        plan = _validate(target, opts)
        extra = round(_AUTO_EXTENSION * opts.samples)
        big = dataclasses.replace(plan, n_sel=plan.n_sel + extra, n_est=plan.n_est - extra)
        got = {"off": [], "extended": [], "policy": []}
        for k in range(args.draws):
            start = time.perf_counter()
            r = np.random.default_rng(6000 + k)
            s0, s1 = target(np.asarray(row.d0), r, big.n_sel), target(np.asarray(row.d1), r, big.n_sel)
            p0, p1 = s0[: plan.n_sel], s1[: plan.n_sel]
            pilot = _choose(None, p0, p1, opts, plan, plan.n_est, opts.events_per_direction)
            z = _pilot_ratio(pilot, p0, p1)
            got["off"].append(expected_bound(pilot, plan.n_est, truth0, truth1))
            extended = _choose(None, s0, s1, opts, big, big.n_est, opts.events_per_direction)
            got["extended"].append(expected_bound(extended, big.n_est, truth0, truth1))
            got["policy"].append(got["extended"][-1] if z < _RESOLVED_SE else got["off"][-1])
            print(
                f"{name:<15} draw {k}  ratio {z:5.2f}  "
                + "  ".join(f"{s} {v[-1]:.4f}" for s, v in got.items())
                + f"  ({time.perf_counter() - start:.0f}s)",
                flush=True,
            )
        print(
            f"{name:<15} mean             "
            + "  ".join(f"{s} {np.mean(v):.4f}" for s, v in got.items())
            + "   worst "
            + "  ".join(f"{np.min(v):.4f}" for v in got.values()),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
