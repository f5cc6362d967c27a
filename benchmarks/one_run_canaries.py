"""Canaries for one-run audits of bandits: the earlier catalog sizes against one canary per release, thousands.

    python -m benchmarks run one_run_canaries [--seeds 8] [--json]

A canary enters exactly one released noisy sum (`dpaudit.algorithms.mab.canaries`).  When two canaries
share a release, each one's guess sees the other's bit as noise; with one canary per release each
guess reads a sum that moves by the canary alone, and the bound tightens with the number of guesses
(about 1/sqrt(m)).  For DP-SE, Dist-DP-SE and Anytime-Lazy-UCB at epsilon = 1 this runs the earlier
catalog sizes (1000-2000 canaries on 100-700 arms; DP-SE's 1000 canaries shared its 700 releases) and
the catalog's sizes now (`dpaudit.audits.mab.one_run_entries`: one canary per release, 5000-8000 of
them on 500-5000 arms), `--seeds` one-run audits each (seeds 0, 1, ...; 95%, the default guess
grid, Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1), and at the catalog's sizes also with the one
guess pair fixed from the claim (`tail_guesses`), on the same runs.  Printed per row: the horizon,
arms, canaries, releases of the placement's dry run, and epsilon_lower's mean and range over the
seeds (its ratio to epsilon = 1 is the pin).  About 3 minutes at the defaults on one core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from dpaudit.algorithms.mab import AnytimeLazyUCB, BatchSE, one_run_target, released_block_count, tail_guesses
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.audit import one_run
from dpaudit.audits.mab.one_run_entries import DIST_SIZE, DPSE_SIZE, LAZY_SIZE


def cases() -> list[tuple[str, str, object, tuple[int, int, int], bool]]:
    """(algorithm, placement, algorithm object, (horizon, arms, canaries), guesses fixed from the claim)."""
    rows = []
    for name, algo, size, earlier in (
        ("dp-se", DPSE(1.0, 0.5), DPSE_SIZE, (1_000_000, 700, 1_000)),
        ("dist-dp-se", BatchSE("dist-dp", 1.0), DIST_SIZE, (1_000_000, 200, 2_000)),
        ("anytime-lazy-ucb", AnytimeLazyUCB(1.0), LAZY_SIZE, (1_000_000, 100, 1_000)),
    ):
        rows += [
            (name, "earlier sizes", algo, earlier, False),
            (name, "one per release", algo, size, False),
            (name, "+ tail guesses", algo, size, True),
        ]
    return rows


def measure(algo: object, size: tuple[int, int, int], fixed: bool, seeds: int) -> dict:
    horizon, arms, m = size
    releases = released_block_count(algo, horizon, arms)
    target = one_run_target(algo, horizon, m, n_arms=arms)
    guesses = tail_guesses(m, 1.0) if fixed else None
    start = time.perf_counter()
    bounds = np.array(
        [one_run(*target, claim_epsilon=1.0, seed=s, guesses=guesses).epsilon_lower for s in range(seeds)]
    )
    return {
        "horizon": horizon,
        "arms": arms,
        "canaries": m,
        "releases": releases,
        "mean": float(bounds.mean()),
        "min": float(bounds.min()),
        "max": float(bounds.max()),
        "seconds_per_run": (time.perf_counter() - start) / seeds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print one JSON object per row instead of a table")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    if not args.json:
        print(f"epsilon = 1, {args.seeds} seeds per row; epsilon_lower: mean [min, max]")
        print(
            "algorithm         placement       horizon     arms  canaries  releases | eps_lower mean [min, max] | s/run"
        )
    for name, placement, algo, size, fixed in cases():
        row = {"algorithm": name, "placement": placement, **measure(algo, size, fixed, args.seeds)}
        if args.json:
            print(json.dumps(row))
            continue
        print(
            f"{name:<17} {placement:<15} {row['horizon']:>10,} {row['arms']:>6} {row['canaries']:>9} "
            f"{row['releases']:>9} | {row['mean']:.3f} [{row['min']:.3f}, {row['max']:.3f}]       | "
            f"{row['seconds_per_run']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
