"""The two analyses of a one-run audit side by side on the same runs (not part of the test suite).

    python -m benchmarks run one_run_fdp [--canaries 1000 10000] [--repeat 20] [--json]

Gaussian canaries (canary i adds 1 to coordinate i, N(0, sigma^2) noise: mu = 1/sigma-GDP per canary)
at mu = 1 and at the sigma whose epsilon at delta = 1e-5 is 2 (sigma = 1.994), audited at 95% with the
default guess grid.  Each seed runs the mechanism once; `analysis="epsilon"` (Steinke, Nasr, Jagielski,
NeurIPS 2023, Thm 3.1) and `analysis="fdp"` (Mahloujifar, Melis, Chaudhuri, ICML 2025, Alg. 3) read the
same output (same seed, same coins and noise).  Printed per (sigma, m): the true epsilon(1e-5), the mean,
standard deviation and range of epsilon_lower at delta = 1e-5 under each analysis, the mean mu_lower,
and the wall time per audit.  About two minutes at the defaults on one core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.audit import one_run

DELTA = 1e-5
SIGMAS = (1.0, 1.994)


def gaussian_canaries(sigma: float):
    def mechanism(inclusion, rng):
        return inclusion + rng.normal(0.0, sigma, inclusion.size)

    return mechanism


def identity(output):
    return output


def measure(sigma: float, canaries: int, repeat: int) -> dict:
    mu = 1.0 / sigma
    true_eps = gaussian_epsilon(mu, DELTA)
    mech = gaussian_canaries(sigma)
    rows: dict[str, list[float]] = {"epsilon": [], "fdp": [], "mu_lower": [], "t_epsilon": [], "t_fdp": []}
    for seed in range(repeat):
        start = time.perf_counter()
        a = one_run(mech, canaries, identity, true_eps, DELTA, seed=seed)
        mid = time.perf_counter()
        b = one_run(mech, canaries, identity, claim_delta=DELTA, seed=seed, analysis="fdp", claim_mu=mu)
        end = time.perf_counter()
        rows["epsilon"].append(a.epsilon_lower)
        rows["fdp"].append(b.epsilon_lower)
        rows["mu_lower"].append(float(b.mu_lower or 0.0))
        rows["t_epsilon"].append(mid - start)
        rows["t_fdp"].append(end - mid)
    out: dict = {"sigma": sigma, "mu": mu, "canaries": canaries, "repeat": repeat, "true_epsilon": true_eps}
    for name in ("epsilon", "fdp"):
        v = np.array(rows[name])
        out[name] = {"mean": v.mean(), "sd": v.std(ddof=1), "min": v.min(), "max": v.max()}
    out["mu_lower_mean"] = float(np.mean(rows["mu_lower"]))
    out["seconds_epsilon"] = float(np.mean(rows["t_epsilon"]))
    out["seconds_fdp"] = float(np.mean(rows["t_fdp"]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canaries", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON object per row instead of a table")
    args = parser.parse_args(argv)
    if min(args.canaries) < 1 or args.repeat < 2:
        parser.error("--canaries must be >= 1 and --repeat >= 2")
    if not args.json:
        print(
            "sigma  mu     m      eps(1e-5) | epsilon: mean  sd    [min, max]   | fdp: mean  sd    [min, max]"
            "   | mu_lower | s/audit eps, fdp"
        )
    for sigma in SIGMAS:
        for m in args.canaries:
            row = measure(sigma, m, args.repeat)
            if args.json:
                print(json.dumps(row))
                continue
            e, f = row["epsilon"], row["fdp"]
            print(
                f"{sigma:<6.3f} {row['mu']:<6.3f} {m:<6d} {row['true_epsilon']:<9.3f} | "
                f"{e['mean']:.3f} {e['sd']:.3f} [{e['min']:.3f}, {e['max']:.3f}] | "
                f"{f['mean']:.3f} {f['sd']:.3f} [{f['min']:.3f}, {f['max']:.3f}] | "
                f"{row['mu_lower_mean']:.3f}    | {row['seconds_epsilon']:.2f}, {row['seconds_fdp']:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
