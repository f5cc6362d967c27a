"""False-flag rate of `dpaudit audit --baseline` on unchanged code (not part of the tests).

    python -m benchmarks run baseline_rule [--repeats 200] [--targets laplace gaussian vector]
                                           [--sizes 20000 100000 1000000] [--noise-factor 1.0]
                                           [--out benchmarks/figures/baseline_rule.txt [--append]]

For each target and repeat k: a baseline audit at 2 * 10^4 runs per input (suite seed k), then one
new run per size n of `--sizes` (suite seed 10^4 * (i + 1) + k for the i-th size) that counts the
baseline's chosen event on fresh runs, as `dpaudit audit --baseline` does
(`dpaudit.user_audits.UserAuditEntry.run(baseline_events=...)`), and `dpaudit.baseline.compare` at
confidence 0.95 (one claim: alpha = 0.05).  The code is unchanged, so every flag is false; the rule
promises a rate <= 1 - confidence.  The table gives, per target and size, the flags, their rate
and its one-sided 95% Clopper-Pearson upper bound, and for contrast the rate of the rule it replaced
(the new epsilon_lower above the baseline's `epsilon_upper`, an interval for another event).
With `--noise-factor F` the new runs' noise scale is F times the baseline's (a real change: the
rate is then the rule's power, the upper bound meaningless).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from dpaudit.audit.bounds import cp_upper
from dpaudit.baseline import compare
from dpaudit.user_audits import UserAuditEntry, UserClaim

CONFIDENCE = 0.95
BASELINE_SAMPLES = 20_000


def laplace(factor: float = 1.0):
    """Laplace count, scale 1: true epsilon 1."""

    def target(data, rng, size):
        return data.sum() + rng.laplace(0.0, factor, size)

    return target


def gaussian(factor: float = 1.0):
    """Sum of clipped values + N(0, 4): tail events leak more the further out (the nightly recipe's case)."""

    def target(data, rng, size):
        return np.clip(data, 0.0, 1.0).sum() + rng.normal(0.0, 2.0 * factor, size)

    return target


def vector(factor: float = 1.0):
    """x + Lap(2) on 3 coordinates, one differing between the inputs: true epsilon 1/2."""

    def target(data, rng, size):
        return data + rng.laplace(0.0, 2.0 * factor, (size, 3))

    return target


TARGETS = {
    "laplace": (laplace, np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0]), 2.0, 0.0),
    "gaussian": (gaussian, np.zeros(10), np.r_[1.0, np.zeros(9)], 5.0, 1e-5),
    "vector": (vector, np.zeros(3), np.r_[1.0, 0.0, 0.0], 2.0, 0.0),
}


def entry(name: str, factor: float = 1.0) -> UserAuditEntry:
    make, d0, d1, eps, delta = TARGETS[name]
    return UserAuditEntry(
        name=f"bench.{name}",
        target=make(factor),
        d0=d0,
        d1=d1,
        claim=UserClaim(delta=delta, epsilon=eps),
        samples=BASELINE_SAMPLES,
        algorithm="benchmark",
    )


def one_repeat(name: str, k: int, sizes: list[int], factor: float = 1.0) -> list[tuple[bool, bool]]:
    """(the rule flags, the replaced rule flags) at each size, for repeat k."""
    e, changed = entry(name), entry(name, factor)
    old = e.run(samples=BASELINE_SAMPLES, confidence=CONFIDENCE, seed=k, executor="serial")
    events = {e.name: {c["label"]: c["event"] for c in old["claims"]}}
    out = []
    for i, n in enumerate(sizes):
        new = changed.run(
            samples=n, confidence=CONFIDENCE, seed=10_000 * (i + 1) + k, executor="serial", baseline_events=events
        )
        comparison = compare({"entries": [old]}, {"entries": [new], "settings": {"confidence": CONFIDENCE}})
        replaced = new["claims"][0]["epsilon_lower"] > old["claims"][0]["epsilon_upper"]
        out.append((bool(comparison["regressions"]), bool(replaced)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=["laplace", "gaussian", "vector"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[20_000, 100_000, 1_000_000])
    parser.add_argument("--noise-factor", type=float, default=1.0, help="new runs' noise scale / the baseline's")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument("--append", action="store_true", help="append to --out rather than replace it")
    args = parser.parse_args(argv)
    factor = args.noise_factor
    what = (
        "False flags of `dpaudit audit --baseline` on unchanged code"
        if factor == 1.0
        else f"Flags of `dpaudit audit --baseline` when the new runs' noise scale is {factor:g} x the baseline's "
        "(power)"
    )
    lines = [
        f"# {what}: {args.repeats} repeats per target, baseline at {BASELINE_SAMPLES} runs per input (seed k),",
        f"# new runs at each size (seed 10^4 (i + 1) + k), confidence {CONFIDENCE} (promised false-flag rate <= "
        f"{1 - CONFIDENCE:.2f}); 'upper': one-sided 95% Clopper-Pearson bound on the rate.",
        f"# Measured with `python -m benchmarks run baseline_rule --repeats {args.repeats} --targets "
        f"{' '.join(args.targets)} --sizes {' '.join(map(str, args.sizes))}"
        + (f" --noise-factor {factor:g}`." if factor != 1.0 else "`."),
        f"{'target':<9} {'new runs':>9} {'flags':>6} {'rate':>7} {'upper':>7}   {'replaced rule':>13}",
    ]
    print("\n".join(lines), flush=True)
    for name in args.targets:
        start = time.perf_counter()
        # (repeats, sizes, 2)
        results = np.array([one_repeat(name, k, args.sizes, factor) for k in range(args.repeats)])
        for i, n in enumerate(args.sizes):
            flags, replaced = int(results[:, i, 0].sum()), int(results[:, i, 1].sum())
            upper = float(cp_upper(flags, args.repeats, 0.05))
            line = (
                f"{name:<9} {n:>9} {flags:>6} {flags / args.repeats:>7.3f} {upper:>7.3f}   "
                f"{replaced / args.repeats:>13.3f}"
            )
            lines.append(line)
            print(line, flush=True)
        print(f"# {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "a" if args.append else "w", encoding="utf-8") as f:
            f.write(("\n" if args.append else "") + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
