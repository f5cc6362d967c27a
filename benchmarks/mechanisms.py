"""Samples per second of every dpaudit sampler next to numpy's own continuous Laplace.

    python -m benchmarks run mechanisms [--size 1000000] [--repeat 7] [--json]

Each sampler draws `--size` samples per call; every round times numpy's `Generator.laplace` and
then each sampler, and the figure kept is the best of `--repeat` rounds (the machine is shared, so
the best round is the least disturbed one). The ratio column is (sampler time per sample) /
(numpy Laplace time per sample, same round structure); the exact discrete samplers (discrete
Laplace, discrete Gaussian) are meant to stay within 5x. Also timed: one secure-aggregation
release of Chowdhury & Zhou (ICLR 2023, Alg. 1 with Thm 1's Pólya shares) (n = 1024 users) user by user against its
fast path, and Chowdhury & Zhou's (ICLR 2023, App. D.2, Thm 3) shuffle protocol P_Shuffle (n = 64, every bit message shuffled) against its binomial-count fast path.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

import dpaudit.mechanisms as mech
from dpaudit.mechanisms.secagg import PolyaSecAgg, SkellamSecAgg
from dpaudit.mechanisms.shuffle_sum import ShuffleSum

POLYA_THETA = float(np.exp(-1 / 32))  # LocalSecAgg's total noise at eps = 1, n = 1024 (g = 32)


def samplers(size: int) -> dict[str, Callable[[np.random.Generator], object]]:
    return {
        "numpy laplace (reference)": lambda r: r.laplace(0.0, 3.0, size),
        "laplace": lambda r: mech.laplace(r, 3.0, size),
        "gaussian": lambda r: mech.gaussian(r, 3.0, size),
        "discrete_laplace scale=3 (exact)": lambda r: mech.discrete_laplace(r, 3, size),
        "discrete_laplace scale=0.5 (exact)": lambda r: mech.discrete_laplace(r, Fraction(1, 2), size),
        "discrete_laplace scale=1000/3 (exact)": lambda r: mech.discrete_laplace(r, Fraction(1000, 3), size),
        "discrete_gaussian sigma=3 (exact)": lambda r: mech.discrete_gaussian(r, 3, size),
        "discrete_gaussian sigma=0.5 (exact)": lambda r: mech.discrete_gaussian(r, Fraction(1, 2), size),
        "discrete_gaussian sigma=1000 (exact)": lambda r: mech.discrete_gaussian(r, 1000, size),
        "geometric p=0.1 (exact)": lambda r: mech.geometric(r, Fraction(1, 10), size),
        "poisson lam=5 (exact)": lambda r: mech.poisson(r, 5, size),
        "numpy poisson lam=5 (float)": lambda r: r.poisson(5.0, size),
        "poisson lam=250 (exact)": lambda r: mech.poisson(r, 250, size),
        "numpy poisson lam=250 (float)": lambda r: r.poisson(250.0, size),
        "skellam variance=10 (exact)": lambda r: mech.skellam(r, 10.0, size),
        "numpy skellam variance=10 (float)": lambda r: r.poisson(5.0, size) - r.poisson(5.0, size),
        "skellam variance=1e5 (exact)": lambda r: mech.skellam(r, 100_000, size),
        "polya r=1/64 theta=0.9 (exact)": lambda r: mech.polya(r, 1 / 64, 0.9, size),
        "numpy negative_binomial r=1/64 p=0.1 (float)": lambda r: r.negative_binomial(1 / 64, 0.1, size),
        "polya r=1024 theta=e^-1/32 (exact)": lambda r: mech.polya(r, 1024, POLYA_THETA, size),
        "numpy negative_binomial r=1024 (float)": lambda r: r.negative_binomial(1024, 1 - POLYA_THETA, size),
        "binomial n=100 p=0.3": lambda r: mech.binomial(r, 100, 0.3, size),
        "randomized_response eps=1": lambda r: mech.randomized_response(r, np.ones(size, dtype=np.int8), 1.0),
        "k_randomized_response k=10 eps=1": lambda r: mech.k_randomized_response(
            r, np.zeros(size, dtype=np.int64), 10, 1.0
        ),
    }


def release_rows(proto, x: np.ndarray, repeat: int) -> list[dict]:
    """Best-of-`repeat` seconds of `proto.run` and `proto.run_fast` on rewards x (releases, users);
    round i draws from default_rng(i)."""
    releases, users = x.shape
    rows = []
    for path in ("run", "run_fast"):
        fn = getattr(proto, path)
        best = float("inf")
        for i in range(repeat):
            rng = np.random.default_rng(i)
            t0 = time.perf_counter()
            fn(rng, x)
            best = min(best, time.perf_counter() - t0)
        rows.append(
            {
                "protocol": type(proto).__name__,
                "path": path,
                "releases": releases,
                "users_per_release": users,
                "seconds": best,
                "releases_per_second": releases / best,
            }
        )
    return rows


def secagg_rows(repeat: int) -> list[dict]:
    x = np.random.default_rng(0).random((1000, 1024))
    rows = []
    for proto in (PolyaSecAgg(1.0, 1024, p=1e-6), SkellamSecAgg(1.0, 1024, p=1e-6, s=10)):
        rows += release_rows(proto, x, repeat)
    xs = np.random.default_rng(0).random((200, 64))
    shuffled = ShuffleSum(1.0, 64, horizon=10**6)  # d = m - 1 = 500 bit messages per user
    return rows + release_rows(shuffled, xs, repeat)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    fns = samplers(args.size)
    best = {name: float("inf") for name in fns}
    rng = np.random.default_rng(12345)
    for fn in fns.values():
        fn(rng)  # warm-up
    for _ in range(args.repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(rng)
            best[name] = min(best[name], time.perf_counter() - t0)
    ref = best["numpy laplace (reference)"]
    rows = [
        {"sampler": name, "samples_per_second": args.size / t, "ratio_to_numpy_laplace": t / ref}
        for name, t in best.items()
    ]
    sec = secagg_rows(max(1, args.repeat // 2))
    if args.json:
        json.dump({"size": args.size, "repeat": args.repeat, "samplers": rows, "secagg": sec}, sys.stdout, indent=2)
        print()
        return 0
    print(f"{'sampler':46s} {'samples/s':>14s} {'x numpy laplace':>16s}")
    for r in rows:
        print(f"{r['sampler']:46s} {r['samples_per_second']:14.3e} {r['ratio_to_numpy_laplace']:16.2f}")
    print()
    print(f"{'protocol (releases x users)':50s} {'seconds':>10s} {'releases/s':>12s}")
    for r in sec:
        name = f"{r['protocol']}.{r['path']} ({r['releases']} x {r['users_per_release']})"
        print(f"{name:50s} {r['seconds']:10.3f} {r['releases_per_second']:12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
