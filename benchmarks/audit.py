"""Speed and tightness of `dpaudit.audit.audit` (not part of the test suite).

    python -m benchmarks run audit [--sizes 1000000 10000000] [--repeat 3] [--skip-speed]
                                   [--skip-tightness] [--coverage AUDITS] [--json]

1. Speed: a Laplace target (true epsilon = 1) audited with `samples` runs per side, against the
   time to just draw those 2*samples Laplace variates with numpy in the same chunks; ratio =
   audit wall time / draw time (target: <= 1.5).  The audit runs in this process
   ("serial") and in a local process pool with 1 and 2 workers (speed-up = 1 worker / 2 workers).
   Best of `--repeat` (the machine is shared).  On a machine whose cores are busy with other work
   the CPU-bound speed-up cannot show, so the same 1 vs 2 workers comparison is also made on a
   target that waits 20 ms per call (chunk overlap, independent of free cores).
2. Tightness at 95% confidence: epsilon_lower / epsilon_true at 10^5 and 10^6 runs per side for
   Laplace, randomized response and discrete Laplace at epsilon = 1 (mean over 3 seeds), and
   mu_lower / mu for a Gaussian mechanism (mu = 1) at 10^6.
3. Clopper-Pearson bounds at large n (with --bounds): cp_lower(k, n, 0.0125) / (k/n) for k = 1000
   at n = 1e6 ... 1e10 (statsmodels' proportion_confint(method="beta"), i.e. scipy's betaincinv,
   for comparison: above 1 is a "lower" bound above the observed rate), and the time to bound all
   k = 0..n-1 step 7 at n = 1e6 and 1e5 counts at n = 2e8 (where the bisection fallback runs).
4. Coverage (with --coverage N): N audits per mechanism (Laplace, randomized response, discrete
   Laplace at epsilon = 1, and the Gaussian with mu = 1 against its exact (1, delta(1))) at 2000 and
   20000 runs per side; how many gave epsilon_lower > the true epsilon (nominal: at most 5%).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from dpaudit.audit import audit

CHUNK = 250_000


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def randomized_response(data, rng, size):
    keep = rng.random(size) < np.e / (1 + np.e)
    return np.where(keep, data, 1 - data)


def discrete_laplace(data, rng, size):
    q = np.exp(-1.0)
    return data + (rng.geometric(1 - q, size) - rng.geometric(1 - q, size))


def gaussian(data, rng, size):
    return data + rng.normal(0.0, 1.0, size)


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def draw_only(samples: int) -> None:
    rng = np.random.default_rng(0)
    for _side in range(2):
        left = samples
        while left > 0:
            n = min(CHUNK, left)
            laplace(1.0, rng, n)
            left -= n


def speed(sizes: list[int], repeat: int) -> list[dict]:
    rows = []
    for n in sizes:
        opts = dict(claim_epsilon=1.0, samples=n, seed=0, chunk_size=CHUNK, progress=False)
        draw = _best(lambda: draw_only(n), repeat)  # noqa: B023 (called within this iteration)
        serial = _best(lambda: audit(laplace, 1.0, 0.0, executor="serial", **opts), repeat)  # noqa: B023 (called within this iteration)
        one = _best(lambda: audit(laplace, 1.0, 0.0, executor="process", workers=1, **opts), repeat)  # noqa: B023 (called within this iteration)
        two = _best(lambda: audit(laplace, 1.0, 0.0, executor="process", workers=2, **opts), repeat)  # noqa: B023 (called within this iteration)
        rows.append(
            {
                "samples_per_side": n,
                "draw_s": draw,
                "audit_serial_s": serial,
                "audit_1_worker_s": one,
                "audit_2_workers_s": two,
                "ratio_serial": serial / draw,
                "ratio_2_workers": two / draw,
                "speedup_1_to_2_workers": one / two,
            }
        )
    return rows


def sleepy_laplace(data, rng, size):
    """Laplace target that also waits 20 ms per call: shows chunk overlap without needing free cores."""
    time.sleep(0.02)
    return laplace(data, rng, size)


def overlap(repeat: int) -> dict:
    """1 vs 2 workers on a target dominated by waiting (10^6 runs/side, 25000-run chunks: 82 calls)."""
    opts = dict(claim_epsilon=1.0, samples=10**6, seed=0, chunk_size=25_000, progress=False, executor="process")
    one = _best(lambda: audit(sleepy_laplace, 1.0, 0.0, workers=1, **opts), repeat)
    two = _best(lambda: audit(sleepy_laplace, 1.0, 0.0, workers=2, **opts), repeat)
    return {"one_worker_s": one, "two_workers_s": two, "speedup": one / two}


def tightness() -> list[dict]:
    rows = []
    for name, target in (
        ("laplace", laplace),
        ("randomized_response", randomized_response),
        ("discrete_laplace", discrete_laplace),
    ):
        for n in (10**5, 10**6):
            lows = [
                audit(target, 1, 0, claim_epsilon=1.0, samples=n, seed=s, progress=False).epsilon_lower
                for s in range(3)
            ]
            rows.append(
                {"target": name, "samples_per_side": n, "ratio": float(np.mean(lows)), "min": float(np.min(lows))}
            )
    mus = [
        audit(gaussian, 1.0, 0.0, claim_epsilon=1.0, claim_delta=0.1, samples=10**6, seed=s, progress=False).mu_lower
        for s in range(3)
    ]
    rows.append(
        {"target": "gaussian mu", "samples_per_side": 10**6, "ratio": float(np.mean(mus)), "min": float(np.min(mus))}
    )
    return rows


def coverage(audits: int) -> list[dict]:
    from scipy import stats

    delta1 = float(stats.norm.cdf(-0.5) - np.e * stats.norm.cdf(-1.5))  # exact delta(1) of 1-GDP
    rows = []
    for name, target, delta in (
        ("laplace", laplace, 0.0),
        ("randomized_response", randomized_response, 0.0),
        ("discrete_laplace", discrete_laplace, 0.0),
        ("gaussian mu=1", gaussian, delta1),
    ):
        for n in (2_000, 20_000):
            lows = np.array(
                [
                    audit(
                        target,
                        1,
                        0,
                        claim_epsilon=1.0,
                        claim_delta=delta,
                        samples=n,
                        seed=10**6 + s,
                        executor="serial",
                        progress=False,
                    ).epsilon_lower
                    for s in range(audits)
                ]
            )
            rows.append(
                {
                    "target": name,
                    "samples_per_side": n,
                    "audits": audits,
                    "exceed": int(np.sum(lows > 1.0)),
                    "mean_lower": float(lows.mean()),
                }
            )
    return rows


def bounds() -> dict:
    from statsmodels.stats.proportion import proportion_confint

    from dpaudit.audit.bounds import cp_lower, cp_upper

    ratios = []
    for n in (10**6, 10**8, 1.3e8, 2e8, 10**9, 10**10):
        low, _ = proportion_confint(1000, n, alpha=0.025, method="beta")
        ratios.append(
            {"n": n, "dpaudit": float(cp_lower(1000, n, 0.0125)) * n / 1000, "statsmodels": float(low) * n / 1000}
        )
    timings = {}
    for name, k, n in (
        ("n=1e6, 142858 counts", np.arange(0, 10**6, 7), 10**6),
        ("n=2e8, 1e5 counts", np.arange(10**5), 2 * 10**8),
    ):
        start = time.perf_counter()
        cp_lower(k, n, 0.0125)
        cp_upper(k, n, 0.0125)
        timings[name] = time.perf_counter() - start
    return {"ratio_to_rate": ratios, "seconds": timings}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-tightness", action="store_true")
    parser.add_argument("--coverage", type=int, default=0, metavar="AUDITS")
    parser.add_argument("--bounds", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = {}
    if args.bounds:
        out["bounds"] = bounds()
    if not args.skip_speed:
        out["speed"] = speed(args.sizes, args.repeat)
        out["overlap"] = overlap(args.repeat)
    if not args.skip_tightness:
        out["tightness"] = tightness()
    if args.coverage:
        out["coverage"] = coverage(args.coverage)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    if "bounds" in out:
        for r in out["bounds"]["ratio_to_rate"]:
            print(
                f"cp_lower(1000, {r['n']:.1e}, 0.0125) / rate: dpaudit {r['dpaudit']:.6f} | "
                f"statsmodels {r['statsmodels']:.6f}"
            )
        for name, sec in out["bounds"]["seconds"].items():
            print(f"cp_lower + cp_upper, {name}: {sec:.2f}s")
    for r in out.get("speed", []):
        print(
            f"Laplace, {r['samples_per_side']:.0e} runs/side: draw {r['draw_s']:.3f}s | audit serial "
            f"{r['audit_serial_s']:.3f}s (x{r['ratio_serial']:.2f}) | 1 worker {r['audit_1_worker_s']:.3f}s | "
            f"2 workers {r['audit_2_workers_s']:.3f}s (x{r['ratio_2_workers']:.2f}) | "
            f"speed-up 1->2 workers {r['speedup_1_to_2_workers']:.2f}"
        )
    if "overlap" in out:
        r = out["overlap"]
        print(
            f"waiting target (20 ms per call), 10^6 runs/side: 1 worker {r['one_worker_s']:.3f}s | "
            f"2 workers {r['two_workers_s']:.3f}s | speed-up {r['speedup']:.2f}"
        )
    for r in out.get("tightness", []):
        print(
            f"tightness {r['target']:>20} {r['samples_per_side']:.0e}/side: mean {r['ratio']:.4f}  min {r['min']:.4f}"
        )
    for r in out.get("coverage", []):
        print(
            f"coverage {r['target']:>20} {r['samples_per_side']:>6}/side: {r['exceed']}/{r['audits']} audits above "
            f"the true epsilon (mean lower bound {r['mean_lower']:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
