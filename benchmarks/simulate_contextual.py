"""Wall time of LinUCB-SDP-Amp at d = 10, T = 10^5, 50 runs, and where the time goes (not a test).

    python -m benchmarks run simulate_contextual [--horizon T] [--runs R] [--dim d] [--json]

Chowdhury & Zhou's (ICML 2022, §5) instances (K = 100 fixed arms per run, unit-norm features), batch B = 20, epsilon = 1,
delta = 0.1, the authors' noise constant (the cost does not depend on sigma). Two passes: one timed
as is (wall time), one under cProfile to split the time into
- linear algebra: the batched solve of the stacked (R, d, d) systems at batch ends
  (np.linalg.solve, pinv fallback) and the UCB indices x^T V^{-1} x (`_actions`);
- the shuffle protocol (`AmpSums.release`: building phi*y, phi phi^T and
  `GaussianShuffleProtocol.run`, including its input checks);
- the rest (contexts, rewards, regret bookkeeping).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time

from dpaudit.algorithms.linear.linucb import simulate_linear
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp


def _cumulative(stats: pstats.Stats, predicate) -> float:
    return sum(v[3] for k, v in stats.stats.items() if predicate(k))


def measure(horizon: int, runs: int, dim: int, batch: int = 20) -> dict:
    alg = LinUCBSDPAmp(batch=batch, epsilon=1.0, delta=0.1, noise="code")
    t0 = time.perf_counter()
    curves = simulate_linear(alg, horizon, runs, seed=0, dim=dim, n_arms=100)
    wall = time.perf_counter() - t0

    prof = cProfile.Profile()
    prof.enable()
    simulate_linear(alg, horizon, runs, seed=0, dim=dim, n_arms=100)
    prof.disable()
    st = pstats.Stats(prof)
    total = _cumulative(st, lambda k: k[2] == "run_batched_linucb")
    solve = _cumulative(st, lambda k: k[2] in ("solve", "pinv") and "linalg" in k[0])
    index = _cumulative(st, lambda k: k[2] == "_actions")
    protocol = _cumulative(st, lambda k: k[2] == "release" and k[0].endswith("shuffle_linucb.py"))
    checks = _cumulative(st, lambda k: k[2] == "_check_inputs")
    return {
        "algorithm": alg.name,
        "horizon": horizon,
        "runs": runs,
        "dim": dim,
        "arms": 100,
        "batch": batch,
        "wall_seconds": round(wall, 2),
        "profiled_seconds": round(total, 2),
        "share_linear_algebra": round((solve + index) / total, 3),
        "share_batched_solve": round(solve / total, 3),
        "share_ucb_index": round(index / total, 3),
        "share_shuffle_protocol": round(protocol / total, 3),
        "share_protocol_input_checks": round(checks / total, 3),
        "share_other": round(1 - (solve + index + protocol) / total, 3),
        "final_regret_mean": round(curves.final_mean, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    row = measure(args.horizon, args.runs, args.dim)
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        for k, v in row.items():
            print(f"{k:30s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
