"""Coverage of the auditor's new score families and of cross-fitting (not part of the test suite).

    python -m benchmarks run power_coverage [--audits 1000] [--samples 2000] [--json] [--only-sequential]
                                            [--only LABEL ...]

For each family, `--audits` audits (seeds 0..audits-1) of a mechanism whose true epsilon is known,
with the candidate families restricted to that one family (the auditor's `families` option), claim = the true
epsilon;
the count of audits with epsilon_lower > true epsilon must be at most 5% (nominal 1 - confidence).
Reported with the tolerance c (P[Binomial(audits, 0.05) > c] <= 0.005) and the mean bound.

Families and mechanisms (true epsilon between d0 and d1):
- coordinate-log-ratio: flag + value, the value released only with the flag (sentinel -1000
  otherwise): flag = randomized response of the bit x at eps 0.5, value x + Lap(2); x = 1 vs 0:
  0.5 + 1/2 = 1;
- atom-pattern-log-ratio-1 / -4 and pattern-value-log-ratio (all its variants): the same mechanism;
- whitened-coordinate-log-ratio: prefix sums of (x_j + Lap(4)), x = (1, 1, 1, 1) vs 0: 4/4 = 1;
- float-bit-log-ratio: discrete Laplace (eps 1 per unit) on the grid 0.25 Z, in floats: every bit
  feature is a function of the value, so the true epsilon stays 1 (here 4 grid steps per unit);
- chain-log-ratio: four randomized responses of the bit x at eps 1/4, the run halting (-1 for the rest)
  after the second 1 reported: every reported bit adds +-1/4 to the log ratio, so the loss is 4/4 = 1
  (four 0s);
- logistic-regression (dpaudit.audit.classifier; all its variants): the flag + value mechanism
  (per-coordinate features with atoms), x + Lap(4) released 4 times, x = 1 vs 0: 4/4 = 1 (the pooled
  and whitened-pooled variants), and the grid mechanism with float bits (bit features);
- masked-value-log-ratio (dpaudit.audit.masked): the flag + value mechanism, and four queries each
  released as x + Lap(8) with randomized response at eps 1/8 (else the sentinel 0): 4 (1/8 + 1/8) = 1;
- group-count-log-ratio (dpaudit.audit.grouped): randomized response of the bit x on five coordinates at eps
  0.15 and five more at eps 0.05: 5 (0.15 + 0.05) = 1; also with all families;
- cross-fitting (all families): Laplace(1) scalar, 1 vs 0: 1, and the flag + value mechanism;
- sequential audits (dpaudit.audit.sequential, alpha spending over three stages): Laplace(1);
- selection extension (`selection_extension=0.2`, all families): Laplace(1), flag + value, the
  halting randomized responses and the prefix sums above;
- the uneven direction split (`direction_share`, default 0.9; all families): the halting randomized
  responses, and one bit with P[1] = 0.2 vs 0.1 (true epsilon log 2);
- three epsilon events per direction (`events_per_direction`, default 3; all families): flag + value,
  the repeated Laplace releases and the prefix sums;
- the lead's twin (`dpaudit.audit.selection`; all families): a three-valued release whose best event is a rare
  outcome (true epsilon log(0.0044 / 0.0029) = 0.417), with `--samples 200000`.

Every case runs with the auditor's defaults otherwise (three events per direction included).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy import stats

from dpaudit.audit import audit

CONFIDENCE = 0.95


def flag_value(data, rng, size):
    """(flag, value): flag = randomized response of the bit x at eps 0.5; value = x + Lap(2) if flag else -1000."""
    keep = rng.random(size) < np.exp(0.5) / (1 + np.exp(0.5))
    flag = keep == bool(data)
    value = float(data) + rng.laplace(0.0, 2.0, size)
    return np.stack([flag.astype(float), np.where(flag, value, -1000.0)], axis=1)


def prefix_sums(data, rng, size):
    """Prefix sums of x_j + Lap(4), j = 1..4; x = data * (1, 1, 1, 1)."""
    return np.cumsum(float(data) + rng.laplace(0.0, 4.0, (size, 4)), axis=1)


def grid_laplace(data, rng, size):
    """x + 0.25 (G1 - G2), G geometric with q = exp(-0.25): discrete Laplace, eps 1 per unit of x."""
    q = np.exp(-0.25)
    return float(data) + 0.25 * (rng.geometric(1 - q, size) - rng.geometric(1 - q, size)).astype(float)


def rr_halting(data, rng, size):
    """Four randomized responses of the bit x at eps 1/4 (report x w.p. e^(1/4) / (1 + e^(1/4))); after the
    second reported 1 the rest is -1 (halted), like the sparse vector technique with c = 2."""
    keep = rng.random((size, 4)) < np.exp(0.25) / (1 + np.exp(0.25))
    bits = (keep == bool(data)).astype(np.int64)
    before = np.cumsum(bits, axis=1) - bits
    return np.where(before >= 2, -1, bits)


def repeated_laplace(data, rng, size):
    """x + Lap(4) released 4 times independently: true epsilon 4/4 = 1 between x = 1 and 0."""
    return float(data) + rng.laplace(0.0, 4.0, (size, 4))


def sentinel_values(data, rng, size):
    """Four queries: each released, as x + Lap(8), with probability e^(1/8) / (1 + e^(1/8)) if x = 1 and
    1 / (1 + e^(1/8)) if x = 0 (randomized response at eps 1/8), else the sentinel 0; queries independent:
    true epsilon 4 (1/8 + 1/8) = 1 between x = 1 and 0 (all four released, values beyond 0 and 1)."""
    keep = rng.random((size, 4)) < np.exp(0.125) / (1 + np.exp(0.125))
    released = keep == bool(data)
    return np.where(released, float(data) + rng.laplace(0.0, 8.0, (size, 4)), 0.0)


def one_sided_rr(data, rng, size):
    """One bit, 1 with probability 0.2 on x = 1 and 0.1 on x = 0: the log ratios are log 2 (output 1) and
    log(0.9 / 0.8) = 0.118 (output 0), so the true epsilon is log 2 and the direction x = 1 first is
    clearly the stronger: the uneven direction split (`direction_share`) is the one used."""
    return (rng.random(size) < (0.2 if data else 0.1)).astype(np.int64)


def laplace(data, rng, size):
    return float(data) + rng.laplace(0.0, 1.0, size)


def two_groups(data, rng, size):
    """Randomized response of the bit x on 5 coordinates at eps 0.15 and 5 more at eps 0.05: two groups of
    coordinates that behave alike."""
    keep_a = rng.random((size, 5)) < np.exp(0.15) / (1 + np.exp(0.15))
    keep_b = rng.random((size, 5)) < np.exp(0.05) / (1 + np.exp(0.05))
    return (np.concatenate([keep_a, keep_b], axis=1) == bool(data)).astype(np.int64)


def rare_outcome(data, rng, size):
    """Three values: a rare one (probability 0.0044 on x = 1, 0.0029 on x = 0: log ratio 0.417, the true
    epsilon), a common one (0.051 vs 0.0366: 0.331) and the rest.  Beyond 10^5 runs per side the single
    rare outcome is the best event and the charged selection often prefers the union: the lead's twin."""
    p = [0.9446, 0.051, 0.0044] if data else [0.9605, 0.0366, 0.0029]
    return rng.choice(3, size=size, p=p).astype(np.float64)


CASES = [
    # (label, family (None: all), target, true epsilon, options)
    ("coordinate-log-ratio", "coordinate-log-ratio", flag_value, 1.0, {}),
    ("atom-pattern-log-ratio", "atom-pattern-log-ratio", flag_value, 1.0, {}),
    ("whitened-coordinate-log-ratio", "whitened-coordinate-log-ratio", prefix_sums, 1.0, {}),
    ("float-bit-log-ratio", "float-bit-log-ratio", grid_laplace, 1.0, {"float_bits": True}),
    ("pattern-value-log-ratio", "pattern-value-log-ratio", flag_value, 1.0, {}),
    ("chain-log-ratio", "chain-log-ratio", rr_halting, 1.0, {}),
    ("logistic-regression (flag+value)", "logistic-regression", flag_value, 1.0, {}),
    ("logistic-regression (repeated laplace)", "logistic-regression", repeated_laplace, 1.0, {}),
    ("logistic-regression (grid, float bits)", "logistic-regression", grid_laplace, 1.0, {"float_bits": True}),
    ("masked-value-log-ratio (flag+value)", "masked-value-log-ratio", flag_value, 1.0, {}),
    ("masked-value-log-ratio (sentinel values)", "masked-value-log-ratio", sentinel_values, 1.0, {}),
    ("group-count-log-ratio", "group-count-log-ratio", two_groups, 1.0, {}),
    ("all families (two groups of bits)", None, two_groups, 1.0, {}),
    ("cross-fitting (laplace)", None, laplace, 1.0, {"crossfit": True}),
    ("cross-fitting (flag+value)", None, flag_value, 1.0, {"crossfit": True}),
    ("selection extension (laplace)", None, laplace, 1.0, {"selection_extension": 0.2}),
    ("selection extension (flag+value)", None, flag_value, 1.0, {"selection_extension": 0.2}),
    ("selection extension (halting rr)", None, rr_halting, 1.0, {"selection_extension": 0.2}),
    ("selection extension (prefix sums)", None, prefix_sums, 1.0, {"selection_extension": 0.2}),
    ("direction share (halting rr)", None, rr_halting, 1.0, {}),
    ("direction share (one-sided rr)", None, one_sided_rr, float(np.log(2.0)), {}),
    ("three events per direction (flag+value)", None, flag_value, 1.0, {}),
    ("three events per direction (repeated laplace)", None, repeated_laplace, 1.0, {}),
    ("three events per direction (prefix sums)", None, prefix_sums, 1.0, {}),
    ("the lead's twin (rare outcome)", None, rare_outcome, float(np.log(0.0044 / 0.0029)), {}),
]


def tolerance(audits: int, rate: float = 1 - CONFIDENCE, false_failure: float = 0.005) -> int:
    """Smallest c with P[Binomial(audits, rate) > c] <= false_failure."""
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def coverage(label, family, target, true_eps, options, audits: int, samples: int, seed0: int = 0) -> dict:
    start = time.perf_counter()
    kw = {"claim_epsilon": true_eps, "samples": samples, "confidence": CONFIDENCE, "executor": "serial"}
    kw.update(progress=False, families=None if family is None else (family,), **options)
    results = [audit(target, 1.0, 0.0, seed=seed0 + s, **kw) for s in range(audits)]
    lows = np.array([r.epsilon_lower for r in results])
    # the audits whose reported bound is the thinned ratio test's (`dpaudit.audit.ratio`)
    by_ratio = sum(next(d for d in r.directions if d.direction == r.direction).bound == "ratio" for r in results)
    over = int(np.sum(lows > true_eps))
    return {
        "family": label,
        "true_epsilon": true_eps,
        "audits": audits,
        "samples_per_side": samples,
        "exceedances": over,
        "rate": over / audits,
        "tolerance": tolerance(audits),
        "ok": over <= tolerance(audits),
        "mean_lower": float(lows.mean()),
        "ratio_share": by_ratio / audits,
        "seconds": time.perf_counter() - start,
    }


def sequential_coverage(audits: int) -> dict:
    """`audit_sequential` (stages 1000, 4000, 16000 runs, never stopping early for closeness) on
    Laplace(1), true epsilon 1."""
    from dpaudit.audit.sequential import audit_sequential

    start = time.perf_counter()
    lows = np.array(
        [
            audit_sequential(
                laplace,
                1.0,
                0.0,
                claim_epsilon=1.0,
                stages=(1_000, 4_000, 16_000),
                close=0.0,
                seed=31 * s,
                executor="serial",
                progress=False,
            ).epsilon_lower
            for s in range(audits)
        ]
    )
    over = int(np.sum(lows > 1.0))
    return {
        "family": "sequential (laplace)",
        "true_epsilon": 1.0,
        "audits": audits,
        "samples_per_side": 21_000,
        "exceedances": over,
        "rate": over / audits,
        "tolerance": tolerance(audits),
        "ok": over <= tolerance(audits),
        "mean_lower": float(lows.mean()),
        "seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only-sequential", action="store_true")
    ap.add_argument("--only", nargs="+", default=None, help="labels of CASES to run (no sequential run)")
    args = ap.parse_args(argv)
    labels = [c[0] for c in CASES]
    if args.only and not set(args.only) <= set(labels):
        ap.error(f"--only must name cases among {labels}, got {args.only!r}")
    rows = []
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    jobs = (
        []
        if args.only_sequential
        else [lambda c=c: coverage(*c, audits=args.audits, samples=args.samples) for c in cases]
    )
    if not args.only:
        jobs.append(lambda: sequential_coverage(args.audits))
    for job in jobs:
        r = job()
        rows.append(r)
        if not args.json:
            print(
                f"{r['family']:<32} {r['exceedances']:>4}/{r['audits']} over the true epsilon (tolerance "
                f"{r['tolerance']}) {'OK' if r['ok'] else 'FAIL'}  mean lower {r['mean_lower']:.3f}  "
                + (f"ratio test {r['ratio_share']:.0%}  " if "ratio_share" in r else "")
                + f"{r['seconds']:.0f}s",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
