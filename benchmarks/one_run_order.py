"""The three analyses of a one-run audit on the same runs of the paper's canaries (not part of the test suite).

    python -m benchmarks run one_run_order [--canaries 1000 10000] [--repeat 5] [--out benchmarks/figures/one_run_order.txt]

The setting of the experiments of Xiang, Wang, Xiao, Tian, Wang, "Tight Privacy Audit in One Run" (arXiv
2509.08704, 2025): canaries that do not interfere, canary i released through its own noise - Gaussian (canary
adds 1 to coordinate i, N(0, 1) noise: 1-GDP, epsilon(1e-5) = 4.38), Laplace (Laplace(1/2) noise: 2-DP) and
randomized response (bit flipped with probability 1/(1 + e^2): 2-DP) - audited at 95% with the default guess grid.
Each seed runs the mechanism once and the three analyses read the same output: "epsilon" (Steinke, Nasr,
Jagielski, NeurIPS 2023, Thm 3.1), "fdp" (Mahloujifar, Melis, Chaudhuri, ICML 2025, Alg. 3) and
"order-statistics" (Xiang et al.; `dpaudit.audit.one_run_order`).  Printed per (mechanism, m): the true epsilon,
the mean [min, max] of epsilon_lower under each analysis (at delta = 1e-5 for the Gaussian, delta = 0 for the
pure mechanisms), the mean mu_lower of the two f-DP analyses (Gaussian), and the seconds per audit.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from benchmarks.tables import write_lines
from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.audit import one_run

ANALYSES = ("epsilon", "fdp", "order-statistics")
FLIP = 1.0 / (1.0 + math.exp(2.0))


def gaussian(inclusion, rng):
    return inclusion + rng.normal(0.0, 1.0, inclusion.size)


def laplace(inclusion, rng):
    return inclusion + rng.laplace(0.0, 0.5, inclusion.size)


def randomized_response(inclusion, rng):
    return (inclusion ^ (rng.random(inclusion.size) < FLIP)).astype(float)


MECHANISMS = (
    ("gaussian mu=1", gaussian, gaussian_epsilon(1.0, 1e-5), 1e-5),
    ("laplace eps=2", laplace, 2.0, 0.0),
    ("rr eps=2", randomized_response, 2.0, 0.0),
)


def identity(output):
    return output


def measure(name: str, mechanism, true_eps: float, delta: float, m: int, repeat: int) -> dict:
    rows: dict[str, list[float]] = {a: [] for a in ANALYSES}
    mus: dict[str, list[float]] = {"fdp": [], "order-statistics": []}
    seconds: dict[str, float] = dict.fromkeys(ANALYSES, 0.0)
    for seed in range(repeat):
        for analysis in ANALYSES:
            start = time.perf_counter()
            res = one_run(mechanism, m, identity, true_eps, delta, seed=seed, analysis=analysis)
            seconds[analysis] += time.perf_counter() - start
            rows[analysis].append(res.epsilon_lower)
            if res.mu_lower is not None:
                mus[analysis].append(res.mu_lower)
    return {
        "name": name,
        "m": m,
        "true": true_eps,
        "delta": delta,
        "eps": {a: (float(np.mean(v)), float(np.min(v)), float(np.max(v))) for a, v in rows.items()},
        "mu": {a: float(np.mean(v)) for a, v in mus.items()},
        "seconds": {a: s / repeat for a, s in seconds.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canaries", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    if min(args.canaries) < 1 or args.repeat < 1:
        parser.error("--canaries must be >= 1 and --repeat >= 1")
    lines = [
        (
            f"# One-run audits at 95%, default guess grid, seeds 0..{args.repeat - 1}; epsilon_lower mean [min, max] "
            "at the delta shown; mu_lower means (Gaussian, true mu = 1)."
        ),
        "# Measured with `python -m benchmarks run one_run_order --canaries "
        + " ".join(str(m) for m in args.canaries)
        + f" --repeat {args.repeat}`.",
        (
            f"{'mechanism':<14} {'m':>6} {'delta':>6} {'true':>5} | {'epsilon':<19} | {'fdp':<19} | "
            f"{'order-statistics':<19} | mu fdp, order | s/audit eps, fdp, order"
        ),
    ]
    print("\n".join(lines), flush=True)
    for name, mechanism, true_eps, delta in MECHANISMS:
        for m in args.canaries:
            row = measure(name, mechanism, true_eps, delta, m, args.repeat)
            cells = " | ".join(f"{e[0]:.2f} [{e[1]:.2f}, {e[2]:.2f}]".ljust(19) for e in row["eps"].values())
            mu = row["mu"]
            mu_text = f"{mu['fdp']:.2f}, {mu['order-statistics']:.2f}" if name.startswith("gaussian") else "-"
            sec = row["seconds"]
            line = (
                f"{name:<14} {m:>6} {delta:>6g} {true_eps:>5.2f} | {cells} | {mu_text:<13} | "
                f"{sec['epsilon']:.2f}, {sec['fdp']:.2f}, {sec['order-statistics']:.2f}"
            )
            lines.append(line)
            print(line, flush=True)
    if args.out:
        write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
