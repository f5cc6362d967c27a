"""Wall time of Sarmasarkar's (shuffle/joint DP GLM bandits) GLM bandits (Algs. 1-2) at the size of
the paper's §8 experiments (not part of the test suite).

    python -m benchmarks run simulate_glm [--runs 10] [--horizon 5000] [--epsilon 4] [--json]
        [--pgd-sampler bits|uniform] [--shuffle-only]

Instance: probit, d = 3, K = 20, S = 2, the authors' generator with env seed 109832 (Table 2's first
column). ShuffleGLM at the paper's own parameters (batches, λ, γ, eq. 127's bit-sum protocol and Alg. 7's
T_it P_GD rounds); Private-GLM with the authors' experiment constants. Times include the privacy noise;
"seconds" is wall time, "cpu_seconds" this process's CPU time (steadier on a shared machine). --pgd-sampler uniform
runs P_GD on the generic stream (one float64 uniform per rounding, the link everywhere: the pre-table loop) for
before/after comparisons; the default "bits" sampler uses the link table, and the numba kernel when installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from dpaudit.algorithms.glm.environment import paper_glm_environment
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, run_private_glm
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams, run_shuffle_glm
from dpaudit.mechanisms import shuffle_gd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--horizon", type=int, default=5000)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pgd-sampler", choices=("bits", "uniform"), default="bits")
    ap.add_argument("--shuffle-only", action="store_true", help="skip Private-GLM")
    ap.add_argument("--no-numba", action="store_true", help="the numpy path even where numba is installed")
    args = ap.parse_args(argv)
    if args.no_numba:
        shuffle_gd.table_round = None  # the module-level kernel P_GD looks up on every round
    env = paper_glm_environment(np.random.default_rng(109832), 3, 20, args.horizon, 2.0, "probit")
    data = env.sample(np.random.default_rng(1), args.runs)
    rows = []
    t0, c0 = time.perf_counter(), time.process_time()
    sh = run_shuffle_glm(
        env, data, ShuffleGLMParams(epsilon=args.epsilon, pgd_sampler=args.pgd_sampler), np.random.default_rng(2)
    )
    rows.append(
        {
            "algorithm": "shuffle-glm",
            "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0,
            "pgd_sampler": args.pgd_sampler,
            "numba": shuffle_gd.table_round is not None,
            "final_regret": float(sh.regret[:, -1].mean()),
            "batch_ends": sh.batch_ends.tolist(),
            "pgd_iterations": list(sh.iterations),
        }
    )
    print(f"shuffle-glm done in {rows[-1]['seconds']:.1f} s", file=sys.stderr)
    if not args.shuffle_only:
        t0, c0 = time.perf_counter(), time.process_time()
        pg = run_private_glm(env, data, PrivateGLMParams(epsilon=args.epsilon), np.random.default_rng(3))
        rows.append(
            {
                "algorithm": "private-glm",
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
                "final_regret": float(pg.regret[:, -1].mean()),
            }
        )
    out = {"runs": args.runs, "horizon": args.horizon, "epsilon": args.epsilon, "rows": rows}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"d=3 K=20 T={args.horizon} probit S=2, {args.runs} runs, eps={args.epsilon}, delta=0.02")
        for r in rows:
            extra = (
                f" batches {r['batch_ends']} P_GD rounds {r['pgd_iterations']} sampler {r['pgd_sampler']}"
                f"{' (numba)' if r['numba'] and r['pgd_sampler'] == 'bits' else ''}"
                if "batch_ends" in r
                else ""
            )
            print(
                f"{r['algorithm']:12s} {r['seconds']:8.1f} s ({r['cpu_seconds']:.1f} s CPU)  mean regret {r['final_regret']:8.1f}{extra}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
