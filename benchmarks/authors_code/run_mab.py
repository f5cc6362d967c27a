"""Run Chowdhury & Zhou's (ICLR 2023, Sec. 7 fn. 5) public MAB code unchanged on its own instances; one JSON line per run.

    python -m benchmarks run authors_mab --code PATH/MABPrivate.py --alg distdp --epsilon 1 \
        --instance easy --horizon 1000000 --runs 0,1,2,3 >> benchmarks/authors_code/mab_chowdhury_zhou_2023.jsonl

PATH is a checkout of github.com/sayakrc/Differentially-Private-Bandits (MABPrivate.py as of commit ea7503b, the file
its README says generates the paper's Figs. 1-3). This script only imports that file and calls its own
`evaluate_one` with the classes and parameters of its `__main__` block: run r draws its instance with
`np.random.seed(r); mu = gap * np.random.rand(10) + (0.5 - gap/2)` and its rewards from `RandomState(r)`; the
privacy noise comes from the file's unseeded `default_rng()`. The regret is the code's realised regret
sum_t (r_t[a*] - r_t[a_t]) at the horizon. About 1 min per run at T = 10^6 in CPython.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import sys
import time

import numpy as np

GAPS = {"easy": 0.5, "hard": 0.1}
# The `algorithms` list of the authors' __main__ block.
ALGS = {
    "dpse": ("DPSE", {"crs": 1, "delta": 0.1, "dc": 2}),
    "distdp": ("BatchSEDistDP", {"crs": 1, "delta": 0.1, "dc": 4}),
    "distrdp": ("BatchSEDistRDP", {"crs": 1, "delta": 0.1, "scale": 10, "dc": 4}),
    "distrdp100": ("BatchSEDistRDP", {"crs": 1, "delta": 0.1, "scale": 100, "dc": 4}),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", required=True, help="path of the authors' MABPrivate.py")
    ap.add_argument("--alg", choices=tuple(ALGS), required=True)
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--instance", choices=tuple(GAPS), default="easy")
    ap.add_argument("--horizon", type=int, default=10**6)
    ap.add_argument("--runs", default="0,1,2,3", help="comma-separated run indices (instance and reward seeds)")
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("MABPrivate", args.code)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    cls_name, params = ALGS[args.alg]
    gap = GAPS[args.instance]
    for run in (int(r) for r in args.runs.split(",")):
        np.random.seed(run)
        mu = gap * np.random.rand(10) + (0.5 - gap / 2)
        with contextlib.redirect_stdout(sys.stderr):  # the code prints "Best arm = ..."
            env = code.GaussBandit(mu, args.epsilon, seed=run)
        env.reset_random()
        t0 = time.time()
        regret, _ = code.evaluate_one(getattr(code, cls_name), params, env, args.horizon, args.horizon)
        print(
            json.dumps(
                {
                    "alg": args.alg,
                    "epsilon": args.epsilon,
                    "instance": args.instance,
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
