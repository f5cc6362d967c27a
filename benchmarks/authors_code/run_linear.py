"""Run Chowdhury & Zhou's (ICML 2022, §5 fn. 7) public linear-bandit code unchanged on its own instances; one JSON line per run.

    python -m benchmarks run authors_linear --code PATH/LinBanditPrivate.py --alg SDPLinUCBPAmp --epsilon 1 \
        --dim 5 --runs 0-9 >> benchmarks/authors_code/linear_chowdhury_zhou_2022.jsonl

PATH is a checkout of github.com/sayakrc/Differentially-Private-Bandits (LinBanditPrivate.py, commit ea7503b). The
script does what the file's `__main__` block does and nothing else: `np.random.seed(2)`, then for run = 0..49 in
order the arm set X (K = 100; randn, rows normalised, a 1 appended, the first d rows replaced by the "basis") and
theta (randn scaled to norm 0.5, 0.5 appended), environment LinBandit(noise="bernoulli", seed=run), delta = 0.1,
batch 20, T = 20000; the module-level `d` the algorithms read is set as the block sets it. The privacy noise comes
from the global numpy stream (continuing after the instances), as in the original. Regret: the code's realised regret
sum_t (r_t[a*] - r_t[a_t]) at T.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import sys
import time

import numpy as np


def instances(dim: int, n_arms: int = 100, runs: int = 50) -> list[tuple[np.ndarray, np.ndarray]]:
    """(X, theta) of runs 0..runs-1 exactly as the authors' __main__ block draws them after np.random.seed(2)."""
    np.random.seed(2)
    out = []
    for _ in range(runs):
        basis = np.eye(dim)
        basis[:, -1] = 1
        X = np.random.randn(n_arms, dim - 1)
        X /= np.sqrt(np.square(X).sum(axis=1))[:, np.newaxis]
        X = np.hstack((X, np.ones((n_arms, 1))))
        X[: basis.shape[0], :] = basis
        theta = np.random.randn(dim - 1)
        theta *= 0.5 / np.sqrt(np.square(theta).sum())
        theta = np.append(theta, [0.5])
        out.append((X, theta))
    return out


def _runs(text: str) -> list[int]:
    if "-" in text:
        lo, hi = (int(v) for v in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", required=True, help="path of the authors' LinBanditPrivate.py")
    ap.add_argument(
        "--alg", required=True, choices=("LinUCB", "LDPLinUCB", "JDPLinUCB", "SDPLinUCBPAmp", "SDPLinUCBPVec")
    )
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--dim", type=int, default=5)
    ap.add_argument("--horizon", type=int, default=20000)
    ap.add_argument("--runs", default="0-49", help="run indices: 'a-b' or comma-separated")
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("LinBanditPrivate", args.code)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    code.d = args.dim  # the algorithms read the __main__ block's global d
    envs = instances(args.dim)  # leaves the global stream where the original leaves it before the algorithms run
    for run in _runs(args.runs):
        X, theta = envs[run]
        env = code.LinBandit(X, theta, args.epsilon, 0.1, 20, noise="bernoulli", sigma=0, seed=run)
        env.reset_random()
        t0 = time.time()
        with contextlib.redirect_stdout(sys.stderr):
            regret, _ = code.evaluate_one(getattr(code, args.alg), {}, env, args.horizon, args.horizon)
        print(
            json.dumps(
                {
                    "alg": args.alg,
                    "epsilon": args.epsilon,
                    "dim": args.dim,
                    "horizon": args.horizon,
                    "run": run,
                    "regret": float(regret.sum()),
                    "seconds": round(time.time() - t0, 1),
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
