"""Speed and bounds of `dpaudit.audit.one_run` (not part of the test suite).

    python -m benchmarks run one_run [--canaries 100000] [--repeat 3] [--json]

One run of a per-canary Laplace mechanism (canary i adds 1 to coordinate i, Laplace(1/eps) noise,
so eps-DP per canary) with true eps = 1 and 2, audited at 95% with the default guess grid
(Bonferroni), at claim_delta = 0 and 1e-5: wall time (best of `--repeat`; the machine is shared),
the time to just draw the noise, epsilon_lower and the chosen guesses.  Also the largest bound any
attacker can reach with r guesses all correct (delta = 0, closed form of Steinke, Nasr, Jagielski,
NeurIPS 2023, Thm 3.1: eps = log(p / (1 - p)), p = 0.05^(1/r)).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from dpaudit.audit import one_run
from dpaudit.audit.one_run_bound import one_run_epsilon


def laplace_canaries(epsilon: float):
    def mechanism(inclusion, rng):
        return inclusion + rng.laplace(0.0, 1.0 / epsilon, inclusion.size)

    return mechanism


def _best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canaries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    if args.canaries < 1:
        parser.error(f"--canaries must be >= 1, got {args.canaries}")
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")

    m = args.canaries
    rows = []
    for true_eps in (1.0, 2.0):
        draw, _ = _best(lambda: np.random.default_rng(0).laplace(0.0, 1.0 / true_eps, m), args.repeat)  # noqa: B023 (called within this iteration)
        for delta in (0.0, 1e-5):
            wall, res = _best(
                lambda: one_run(
                    laplace_canaries(true_eps),  # noqa: B023 (called within this iteration)
                    m,
                    lambda out: out,
                    claim_epsilon=1.0,
                    claim_delta=delta,  # noqa: B023 (called within this iteration)
                    seed=0,
                ),
                args.repeat,
            )
            rows.append(
                dict(
                    true_epsilon=true_eps,
                    claim_delta=delta,
                    seconds=wall,
                    draw_seconds=draw,
                    epsilon_lower=res.epsilon_lower,
                    verdict=res.verdict,
                    k_plus=res.k_plus,
                    k_minus=res.k_minus,
                    correct=res.correct,
                    grid_size=res.grid_size,
                )
            )
    ceiling = {int(r): float(one_run_epsilon(m, r, r, 0.0, 0.05)[0]) for r in (100, 1_000, 10_000, 100_000)}
    if args.json:
        print(json.dumps(dict(canaries=m, runs=rows, all_correct_ceiling=ceiling), indent=2))
        return 0
    print(f"one run, {m} canaries, 95% confidence, claim epsilon 1 (default guess grid)")
    print(
        f"{'true eps':>8} {'delta':>7} {'seconds':>8} {'draw s':>7} {'eps_lower':>9} {'verdict':>10} "
        f"{'k+':>6} {'k-':>6} {'correct':>7} {'grid':>4}"
    )
    for r in rows:
        print(
            f"{r['true_epsilon']:8.1f} {r['claim_delta']:7.0e} {r['seconds']:8.3f} {r['draw_seconds']:7.4f} "
            f"{r['epsilon_lower']:9.4f} {r['verdict']:>10} {r['k_plus']:6d} {r['k_minus']:6d} "
            f"{r['correct']:7d} {r['grid_size']:4d}"
        )
    print(
        "largest bound with r guesses all correct (delta = 0, 95%):",
        ", ".join(f"r={r}: {e:.4f}" for r, e in ceiling.items()),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
