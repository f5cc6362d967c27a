"""dpaudit's auditor on the benchmark of StatDP and DP-Sniper (not part of the test suite).

    python benchmarks/peers.py [--quick] [--samples N] [--seeds 0 1] [--only NAME ...] [--json]
                               [--selection-fraction F] [--crossfit] [--no-exact]
                               [--selection-extension F] [--direction-share F] [--events-per-direction N]
                               [--workers N]

The audits run with the auditor's defaults: `direction_share=0.9`, `events_per_direction=3` and the
automatic `selection_extension` (20% more of the runs go to the selection split when the pilot's
strongest event predicts less than 4 selection standard errors: SVT1, SVT2, SVT3, NumericalSVT,
LaplaceParallel and SVT34Parallel on both seeds, SVT6 on seed 0; 220 s in all with 2 workers,
benchmarks/figures/peers_1e6_default.txt).  `--selection-extension 0` turns it off.  What the
extension is worth row by row, over fresh selection draws: benchmarks/extension_policy.py.

The algorithms, written here from their papers and the peers' published definitions:
- report noisy max with Laplace / exponential noise returning the index (correct) or the noisy value
  (incorrect): Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy" (CCS 2018),
  Algs. 5-8 (StatDP);
- SVT1-SVT6: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy" (PVLDB
  2017), Algs. 1-6; the numerical SVT and prefix sums of Wang, Ding, Wang, Kifer, Zhang, "Proving
  Differential Privacy with Shadow Execution" (PLDI 2019);
- NoisyHist1/2 (Ding et al. CCS 2018, Algs. 9-10); RAPPOR and one-time RAPPOR (Erlingsson, Pihur,
  Korolova, CCS 2014, steps 1-3 and 1-2; Bloom bits by MurmurHash3 as in DP-Sniper's code); Laplace;
  the truncated geometric mechanism GeoSample (Balcer, Vadhan, "Differential Privacy on Finite
  Computers", ITCS 2018, Alg. 4.8); 20 Laplace mechanisms in parallel; SVT3 and SVT4 in parallel;
- numpy's floating-point Laplace (the textbook sampler whose low-order bits leak: Mironov, "On
  Significance of the Least Significant Bits for Differential Privacy", CCS 2012) and Mironov's
  snapping mechanism (his Sec. 5), audited with float-bit features.
Parameters and input pairs are those of DP-Sniper's evaluation (Bichsel, Steffen, Bogunovic, Vechev,
"DP-Sniper: Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE S&P 2021;
its repository eth-sri/dp-sniper, exp_default.py), i.e. StatDP's patterns; the pair of each row is the
one the peers' best witness used.  Claimed epsilon 0.1 unless the row says otherwise.

Columns: `exact` is the privacy loss of the row's input pair, sup over outputs of |log p0/p1| (closed
form, or 1-D quadrature over the threshold noise for the SVT and noisy-max rows: `exact_loss`), inf
when some output has probability zero on one side; `oracle` is the bound an audit would reach with
the exact likelihood-ratio events at the pilot's estimation size (1 - selection fraction of the runs)
and the even Bonferroni budget 0.05 / 4 per proportion (the auditor's finite-sample ceiling with that
budget; with the uneven direction split, `direction_share`, a clearly stronger direction is tested at
0.9 * 0.05 / 2 and can exceed it, with `selection_extension` the estimation split may be shorter);
`>=` before exact or oracle marks a lower bound (SVT34Parallel's exact loss: its 'above' patterns
only, see `svt34_loss_lower`); `ceiling` is the ceiling of ANY event-based audit at `--samples` runs per
side and confidence 0.95:
every run used for estimation, one event fixed in advance (the exact likelihood-ratio event best at
the expected counts), its two proportions bounded at the one-sided level 1 - sqrt(0.95) each (they come
from independent samples), no other multiple-testing cost; the summary line gives the mean of ceiling /
exact over the finite rows (1 for a finite row without a computed ceiling), an upper bound on the
mean ratio any such audit can reach in expectation; `statdp` and `dpsniper` are
the peers' published lower bounds (DP-Sniper's reference results, eval_sp2021/reference-results of
eth-sri/dp-sniper: StatDP (best of its two runs) and DP-Sniper (best of logistic regression and the
neural network), both at 2*10^8 runs per side and 90% confidence); `dpaudit` is our bound at
`--samples` runs per side and 95% confidence; `peers` says whether the smaller of our bounds over
the seeds is at least every peer bound below the row's ceiling (`above`), is not (`below`: listed in
the summary's `below_a_peer`), or every peer bound is above the ceiling (`ceiling`), where a row
without a computed ceiling (an infinite loss) takes the ceiling of any event (`any_event_ceiling`:
12.5 at 10^6 runs, above which SVT5's StatDP bound 14.3 lies).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import stats

from dpaudit.audit import audit
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.execution import process_pool

EPS = 0.1
#: One-sided level of each Clopper-Pearson bound of the `ceiling` column: one event, both proportions
#: from independent samples, (1 - level)^2 = 0.95.
CEILING_LEVEL = 1.0 - math.sqrt(0.95)


# ----------------------------------------------------------------------------------------------
# Algorithms: target(data, rng, size) -> size runs (first axis)
# ----------------------------------------------------------------------------------------------

def _lap(rng, scale, shape):
    return rng.laplace(0.0, scale, shape)


def noisy_max(noise: str, value: bool, eps: float = EPS):
    """Report noisy max (Ding et al. CCS 2018, Algs. 5-8): argmax (correct) or max value (incorrect) of
    q + noise, noise Laplace(2/eps) or Exponential(2/eps)."""
    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        z = _lap(rng, 2 / eps, (size, len(q))) if noise == "laplace" else rng.exponential(2 / eps, (size, len(q)))
        m = q + z
        return m.max(axis=1) if value else m.argmax(axis=1)
    return target


def _abort_after(above: np.ndarray, c: int) -> np.ndarray:
    """Per run, True at the queries answered after the c-th 'above' (the SVT aborts there)."""
    count = np.cumsum(above, axis=1)
    before = np.concatenate([np.zeros((len(above), 1), dtype=count.dtype), count[:, :-1]], axis=1)
    return before >= c


def svt(variant: int, c: int = 1, t: float = 1.0, eps: float = EPS):
    """SVT variants 1-6 of Lyu, Su, Li (PVLDB 2017), Algs. 1-6 (DP-Sniper's encodings).

    1, 2, 4: 1 above / 0 below / -1 aborted; 3: the noisy query value when above, -1000 below, -2000
    aborted; 5, 6: 1 / 0 for every query, no abort.  Noise scales: 1: rho 1/eps1, nu 2c/eps2; 2: rho
    c/eps1 redrawn after each 'above', nu 2c/eps2; 3: rho 1/eps1, nu c/eps2; 4: eps1 = eps/4, rho 1/eps1,
    nu 1/eps2; 5: no query noise; 6: nu 1/eps2 (eps1 = eps2 = eps/2 otherwise).
    """
    eps1 = eps / 4 if variant == 4 else eps / 2
    eps2 = eps - eps1
    nu_scale = {1: 2 * c / eps2, 2: 2 * c / eps2, 3: c / eps2, 4: 1 / eps2, 5: 0.0, 6: 1 / eps2}[variant]
    rho_scale = c / eps1 if variant == 2 else 1 / eps1

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        k = len(q)
        rho = _lap(rng, rho_scale, (size, 1))
        m = q + (_lap(rng, nu_scale, (size, k)) if nu_scale > 0 else 0.0)
        if variant == 2:  # rho redrawn after every 'above'
            above = np.empty((size, k), dtype=bool)
            r = rho[:, 0].copy()
            for j in range(k):
                above[:, j] = m[:, j] >= r + t
                fresh = _lap(rng, rho_scale, size)
                r = np.where(above[:, j], fresh, r)
        else:
            above = m >= rho + t
        if variant in (5, 6):
            return above.astype(np.int64)
        aborted = _abort_after(above, c)
        if variant == 3:
            out = np.where(above, m, -1000.0)
            return np.where(aborted, -2000.0, out)
        out = above.astype(np.int64)
        return np.where(aborted, -1, out)
    return target


def numerical_svt(c: int = 2, t: float = 1.0, eps: float = EPS):
    """Numerical SVT (Wang et al. PLDI 2019): rho1 ~ Lap(3/eps), per query nu ~ Lap(6c/eps) for the test
    and an independent Lap(3c/eps) on the released value; 0 below, the value above, -1000 aborted."""
    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        k = len(q)
        rho = _lap(rng, 3 / eps, (size, 1))
        above = q + _lap(rng, 6 * c / eps, (size, k)) >= t + rho
        z = q + _lap(rng, 3 * c / eps, (size, k))
        out = np.where(above, z, 0.0)
        return np.where(_abort_after(above, c), -1000.0, out)
    return target


def noisy_hist(scale: float):
    """NoisyHist1 (scale 1/eps, correct) and NoisyHist2 (scale eps, incorrect): Ding et al. CCS 2018."""
    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        return q + _lap(rng, scale, (size, len(q)))
    return target


def laplace(scale: float = 1 / EPS):
    """numpy's Laplace sampler (float arithmetic; Mironov CCS 2012 on its low-order bits)."""
    def target(data, rng, size):
        return rng.laplace(float(np.asarray(data).ravel()[0]), scale, size)
    return target


def laplace_parallel(n: int = 20, eps: float = 0.005):
    """n independent Laplace(1/eps) releases of the same scalar: n*eps-DP (basic composition)."""
    def target(data, rng, size):
        return float(np.asarray(data).ravel()[0]) + _lap(rng, 1 / eps, (size, n))
    return target


def prefix_sum(eps: float = EPS):
    """Prefix sums of q + Lap(1/eps) (Wang et al. PLDI 2019)."""
    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        return np.cumsum(q + _lap(rng, 1 / eps, (size, len(q))), axis=1)
    return target


def svt34_parallel(c: int = 2, t: float = 1.0, eps: float = EPS):
    """SVT3 and SVT4 run independently on the same queries, outputs side by side (claim 2 eps)."""
    a, b = svt(3, c, t, eps), svt(4, c, t, eps)

    def target(data, rng, size):
        return np.concatenate([a(data, rng, size), b(data, rng, size).astype(float)], axis=1)
    return target


def _geo_cdf(count: int, n: int, k: int) -> np.ndarray:
    """F(z), z = 0..n, of GeoSample (Balcer, Vadhan ITCS 2018, Alg. 4.8 step 2), exact integers."""
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (n - 1)
    f = []
    for z in range(n):
        if z < count:
            f.append(2 ** (k * (count - z)) * (2 ** k + 1) ** (n - (count - z)))
        else:
            f.append(d - 2 ** (k * (z - count + 1)) * (2 ** k + 1) ** (n - 1 - (z - count)))
    f.append(d)
    return np.array(f, dtype=np.int64)


def truncated_geometric(eps: float = EPS, n: int = 5):
    """GeoSample(eps, n): ln(1 + 2^-k)-DP with k = ceil(ln(2/eps)) (Balcer, Vadhan, Thm. 4.7)."""
    k = math.ceil(math.log(2.0 / eps))

    def target(data, rng, size):
        f = _geo_cdf(int(np.asarray(data).ravel()[0]), n, k)
        u = rng.integers(1, int(f[-1]) + 1, size)
        return np.searchsorted(f, u, side="left").astype(np.int64)
    return target


def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86 32-bit (Appleby), signed like mmh3.hash: the Bloom bits of DP-Sniper's RAPPOR."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    rot = lambda x, r: ((x << r) | (x >> (32 - r))) & mask  # noqa: E731
    nblocks = len(data) // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = rot((k * c1) & mask, 15) * c2 & mask
        h = (rot(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * nblocks:]
    k = 0
    for i, byte in enumerate(tail):
        k |= byte << (8 * i)
    if tail:
        h ^= rot((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - 2 ** 32 if h >= 2 ** 31 else h


def bloom_bits(value: int, hashes: int = 4, size: int = 20) -> np.ndarray:
    bits = np.zeros(size, dtype=bool)
    for i in range(hashes):
        bits[murmur3_32(str(value).encode(), i) % size] = True
    return bits


def rappor(f: float, p: float | None, q: float | None, hashes: int = 4, size: int = 20):
    """RAPPOR (Erlingsson et al. CCS 2014): Bloom filter, permanent randomized response with f, then
    (unless one-time) instantaneous randomized response with p, q."""
    def target(data, rng, size_):
        bits = bloom_bits(int(np.asarray(data).ravel()[0]), hashes, size)
        u = rng.random((size_, size))
        perm = np.where(u < f / 2, True, np.where(u < f, False, bits))
        if p is None:
            return perm.astype(np.int64)
        v = rng.random((size_, size))
        return (v < np.where(perm, q, p)).astype(np.int64)
    return target


def snapping(eps: float = EPS, bound: float = 100.0):
    """Mironov's snapping mechanism (CCS 2012, Sec. 5): clamp(round_Lambda(clamp(x) + S*lambda*ln U)),
    lambda = (1 + B 2^-49)/eps, Lambda the smallest power of 2 >= lambda (DP-Sniper's LaplaceFixed)."""
    lam = (1.0 + bound * 2.0 ** -49) / eps
    big = 2.0 ** math.ceil(math.log2(lam))

    def target(data, rng, size):
        loc = min(bound, max(-bound, float(np.asarray(data).ravel()[0])))
        sign = 1 - 2 * rng.integers(0, 2, size)
        u = rng.random(size)
        u = np.where(u == 0.0, np.nextafter(0.0, 1.0), u)
        x = loc + sign * lam * np.log(u)
        return np.clip(np.round(x / big) * big, -bound, bound)
    return target


# ----------------------------------------------------------------------------------------------
# Exact privacy loss of a pair
# ----------------------------------------------------------------------------------------------

def _lap_cdf(x, b):
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), 1 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _grid(scale: float, points: int = 400_001, width: float = 45.0) -> np.ndarray:
    return np.linspace(-width * scale, width * scale, points)


def _pair_loss(p0: np.ndarray, p1: np.ndarray) -> float:
    """sup over outcomes of |log p0/p1| (inf when one side has an outcome the other cannot give)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    if np.any((p0 > 0) != (p1 > 0)):
        return math.inf
    keep = p0 > 0
    return float(np.max(np.abs(np.log(p0[keep]) - np.log(p1[keep]))))


def _runs(q: np.ndarray) -> tuple[list[float], list[int]]:
    """Values and lengths of the runs of equal consecutive entries (the benchmark's pairs are blocks)."""
    values, counts = [float(q[0])], [1]
    for v in q[1:]:
        if v == values[-1]:
            counts[-1] += 1
        else:
            values.append(float(v))
            counts.append(1)
    return values, counts


def svt_pmf(q, variant: int, c: int = 1, t: float = 1.0, eps: float = EPS) -> tuple[list, np.ndarray]:
    """Outcome probabilities of SVT1/2/4 with c = 1 (first 'above' position, or none) and of SVT6
    (numbers of 'above' per group of equal queries), by quadrature over the threshold noise rho."""
    eps1 = eps / 4 if variant == 4 else eps / 2
    eps2 = eps - eps1
    nu = {1: 2 * c / eps2, 2: 2 * c / eps2, 4: 1 / eps2, 6: 1 / eps2}[variant]
    rho_b = 1 / eps1 if variant != 2 else c / eps1
    r = _grid(rho_b)
    w = np.exp(-np.abs(r) / rho_b) / (2 * rho_b)
    q = np.asarray(q, float)
    below = [_lap_cdf(r + t - qi, nu) for qi in q]  # P(q_i + nu_i < rho + t | rho)
    if variant == 6:
        # queries with equal values in *both* inputs form a group: outcomes of one type (number of
        # 'above' per group) share their likelihood ratio, so the type probabilities suffice
        values, counts = _runs(q)
        groups = [(_lap_cdf(r + t - v, nu), m) for v, m in zip(values, counts)]
        import itertools
        outcomes, probs = [], []
        for ks in itertools.product(*[range(m + 1) for _, m in groups]):
            dens = w.copy()
            for (bl, m), kk in zip(groups, ks):
                dens *= (1 - bl) ** kk * bl ** (m - kk)
            outcomes.append(ks)
            probs.append(np.trapezoid(dens, r))
        return outcomes, np.array(probs)
    assert c == 1, "quadrature implemented for c = 1"
    outcomes, probs = [], []
    run = w.copy()
    for k, bl in enumerate(below):
        outcomes.append(k)
        probs.append(np.trapezoid(run * (1 - bl), r))
        run = run * bl
    outcomes.append("none")
    probs.append(np.trapezoid(run, r))
    return outcomes, np.array(probs)


def svt_pattern_pmf(q, c: int, rho_scale: float, nu_scale: float, t: float = 1.0) -> np.ndarray:
    """Probabilities of the 'above' patterns of an SVT with one threshold noise rho ~ Lap(rho_scale)
    and query noise Lap(nu_scale) that aborts after the c-th 'above': the outcome is the tuple of
    'above' positions (at most c; after the c-th the rest is aborted), ordered by their number then
    lexicographically, by quadrature over rho:
    P(pos) = int f_rho(r) prod_{i in pos} P(above_i | r) prod_{i <= last, i not in pos} P(below_i | r) dr."""
    import itertools
    r = _grid(rho_scale, 200_001, 40.0)
    w = np.exp(-np.abs(r) / rho_scale) / (2 * rho_scale)
    q = np.asarray(q, float)
    below = [_lap_cdf(r + t - qi, nu_scale) for qi in q]
    probs = []
    for m in range(c + 1):
        for pos in itertools.combinations(range(len(q)), m):
            last = pos[-1] if m == c else len(q) - 1
            dens = w.copy()
            for i in range(last + 1):
                dens = dens * ((1 - below[i]) if i in pos else below[i])
            probs.append(np.trapezoid(dens, r))
    return np.array(probs)


def numerical_svt_types(q: float, c: int = 2, k: int = 10, t: float = 1.0,
                        eps: float = EPS) -> dict[tuple[int, int], tuple[float, int]]:
    """Pattern types of the numerical SVT (`numerical_svt`) on k equal queries q: for m 'above' answers
    and nb 'below' ones, (probability of one pattern of that type, number of such patterns), by
    quadrature over rho ~ Lap(3/eps) with B(rho) = P(q + nu < t + rho), nu ~ Lap(6c/eps):
    P(pattern) = int f_rho(r) (1 - B(r))^m B(r)^nb dr.  m < c: all k answered, nb = k - m, C(k, m)
    patterns; m = c: the run stops at the c-th 'above', nb in 0..k-c, C(nb + c - 1, c - 1) patterns."""
    rb, nu = 3 / eps, 6 * c / eps
    r = _grid(rb)
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    below = _lap_cdf(r + t - q, nu)
    out = {}
    for m in range(c + 1):
        for nb in ([k - m] if m < c else range(k - c + 1)):
            mult = math.comb(k, m) if m < c else math.comb(nb + c - 1, c - 1)
            out[(m, nb)] = (float(np.trapezoid(w * (1 - below) ** m * below ** nb, r)), mult)
    return out


def numerical_svt_loss(q0: float, q1: float, c: int = 2, k: int = 10, eps: float = EPS) -> float:
    """Exact pair loss of the numerical SVT on k equal queries q0 vs q1: given the pattern the released
    values z = q + Lap(3c/eps) are independent, each z's log ratio spans [-|q0 - q1| / (3c/eps), +...],
    both ends reached, so the sup is max over types of |log P0/P1(type)| + m |q0 - q1| eps / (3c)."""
    a, b = numerical_svt_types(q0, c, k, eps=eps), numerical_svt_types(q1, c, k, eps=eps)
    return max(abs(math.log(a[key][0] / b[key][0])) + key[0] * abs(q0 - q1) * eps / (3 * c) for key in a)


def _value_term_pmf(q0: float, q1: float, q: float, scale: float, bins: int) -> np.ndarray:
    """P_q of the cells of z = q + Lap(scale) by its log-ratio term (|z - q1| - |z - q0|) / scale:
    below both locations (term -d), `bins` equal cells between them, above both (term +d)."""
    lo, hi = min(q0, q1), max(q0, q1)
    edges = np.linspace(lo, hi, bins + 1)
    cdf = _lap_cdf(edges - q, scale)
    return np.concatenate([[cdf[0]], np.diff(cdf), [1 - cdf[-1]]])


def numerical_svt_oracle(q0: float, q1: float, n: int, level: float, c: int = 2, k: int = 10,
                         eps: float = EPS, bins: int = 16) -> float:
    """`oracle_discrete` on the outcomes (type, cell of each released value): the types of
    `numerical_svt_types` times the cells of `_value_term_pmf` per value (given the type the values are
    independent), so the Neyman-Pearson sets of the exact likelihood ratio are among the events (up
    to the lumping of the values between the two locations into `bins` cells: 16 and 64 cells agree
    to 1e-7 at 9e5 runs; cutting each outcome in 16 to allow randomised tests changes 5e-6).  Exact
    rates, so no Monte Carlo noise: plain Monte Carlo on 2*10^6 draws gave 0.0325 here instead of
    0.0305 at 9e5 runs (its best of 4001 noisy thresholds is biased upwards)."""
    a, b = numerical_svt_types(q0, c, k, eps=eps), numerical_svt_types(q1, c, k, eps=eps)
    scale = 3 * c / eps
    v0, v1 = _value_term_pmf(q0, q1, q0, scale, bins), _value_term_pmf(q0, q1, q1, scale, bins)
    p0, p1 = [], []
    for (m, nb), (pa, mult) in a.items():
        j0, j1 = np.array([pa * mult]), np.array([b[(m, nb)][0] * mult])
        for _ in range(m):
            j0, j1 = np.outer(j0, v0).ravel(), np.outer(j1, v1).ravel()
        p0.append(j0)
        p1.append(j1)
    return oracle_discrete(np.concatenate(p0), np.concatenate(p1), n, level)


def snapping_pmf(x: float, eps: float = EPS, bound: float = 100.0) -> np.ndarray:
    """Output probabilities of `snapping` on input x in real arithmetic: the outputs are -B, the
    multiples k Lambda of (-B, B) and B; k Lambda has P(x' + L in [(k - 1/2) Lambda, (k + 1/2) Lambda)),
    x' = clamp(x), L ~ Lap(lambda); +-B collect the tails beyond the last inner cell (the rounded
    value is clamped).  Mironov (CCS 2012, Sec. 5) designs the float version to stay within this
    model's guarantee, so this is the pair loss of the mechanism as specified (float effects not modelled)."""
    lam = (1.0 + bound * 2.0 ** -49) / eps
    big = 2.0 ** math.ceil(math.log2(lam))
    loc = min(bound, max(-bound, x))
    kmax = math.floor(bound / big)
    if kmax * big == bound:
        kmax -= 1  # B itself is a multiple of Lambda: it is the clamp output
    inner = np.arange(-kmax, kmax + 1) * big
    cdf = _lap_cdf(np.concatenate([inner - big / 2, [inner[-1] + big / 2]]) - loc, lam)
    return np.concatenate([[cdf[0]], np.diff(cdf), [1 - cdf[-1]]])


def svt4_pmf(q, c: int, t: float = 1.0, eps: float = EPS) -> np.ndarray:
    """Outcome probabilities of SVT4 with any c (`svt_pattern_pmf`; eps1 = eps/4: rho 1/eps1, nu 1/eps2)."""
    eps1 = eps / 4
    return svt_pattern_pmf(q, c, 1 / eps1, 1 / (eps - eps1), t)


def svt3_pattern_pmf(q, c: int, t: float = 1.0, eps: float = EPS) -> np.ndarray:
    """Probabilities of SVT3's 'above' patterns, its released values forgotten (rho 1/eps1, nu c/eps2,
    eps1 = eps2 = eps/2): a function of the output, so its pair loss and oracle are lower bounds on SVT3's."""
    return svt_pattern_pmf(q, c, 2 / eps, 2 * c / eps, t)


def svt34_parts(n: int, level: float) -> tuple[float, float]:
    """(pair loss, oracle) of the SVT4 half of SVT34Parallel (c = 2): lower bounds on the whole's
    (the halves are independent, their losses add)."""
    a, b = svt4_pmf(ONES10, 2), svt4_pmf(ABOVE_BELOW, 2)
    return _pair_loss(a, b), oracle_discrete(a, b, n, level)


def _svt34_pattern_pmfs() -> tuple[np.ndarray, np.ndarray]:
    """Joint probabilities of (SVT3's pattern, SVT4's pattern) of SVT34Parallel under ONES10 and
    ABOVE_BELOW (independent halves: outer products)."""
    a = np.outer(svt3_pattern_pmf(ONES10, 2), svt4_pmf(ONES10, 2)).ravel()
    b = np.outer(svt3_pattern_pmf(ABOVE_BELOW, 2), svt4_pmf(ABOVE_BELOW, 2)).ravel()
    return a, b


def svt34_loss_lower() -> float:
    """Lower bound on SVT34Parallel's pair loss: the loss of its two 'above' patterns (SVT3's values
    forgotten).  The halves are independent, so the loss of the pair of patterns is the sum of the two
    patterns' losses (0.1267 + 0.3124); SVT3's values can only add to it."""
    return _pair_loss(*_svt34_pattern_pmfs())


def svt34_oracle_lower(n: int, level: float) -> float:
    """Oracle of the Neyman-Pearson events of the two halves' joint 'above' patterns (SVT3's values
    forgotten): the bound of the best events that are functions of the patterns, a lower bound on the
    ceiling of all events."""
    return oracle_discrete(*_svt34_pattern_pmfs(), n, level)


def svt3_llr(q0, q1, c: int, t: float = 1.0, eps: float = EPS) -> Callable[[np.ndarray], np.ndarray]:
    """Exact log p0/p1 of SVT3 outputs (rows of values, -1000 below, -2000 aborted), any c, q0 vs q1:
    for 'above' positions pos with values v, p(pos, v) = prod_{i in pos} f_nu(v_i - q_i) *
    C_pos(min_i v_i - t), C_pos(u) = int_{rho <= u} f_rho(rho) prod_{i <= last, i not in pos} P(below_i | rho)
    (rho ~ Lap(2/eps), nu ~ Lap(2c/eps), last = the c-th 'above' or the last query), C_pos by quadrature."""
    import itertools
    nu, rb = 2 * c / eps, 2 / eps
    r = _grid(rb, 200_001, 40.0)
    dr = r[1] - r[0]
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    qs = (np.asarray(q0, float), np.asarray(q1, float))
    patterns = [pos for m in range(c + 1) for pos in itertools.combinations(range(len(qs[0])), m)]
    cums = []
    for q in qs:
        below = [_lap_cdf(r + t - qi, nu) for qi in q]
        per = {}
        for pos in patterns:
            last = pos[-1] if len(pos) == c else len(q) - 1
            dens = w.copy()
            for i in range(last + 1):
                if i not in pos:
                    dens = dens * below[i]
            per[pos] = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * dr)])
        cums.append(per)

    def llr(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float)
        above = (x != -1000.0) & (x != -2000.0)
        code = (above * (2 ** np.arange(x.shape[1]))).sum(axis=1)
        out = np.zeros(len(x))
        for pos in patterns:
            sel = code == sum(2 ** i for i in pos)
            if not np.any(sel):
                continue
            if not pos:
                out[sel] = math.log(cums[0][pos][-1] / cums[1][pos][-1])
                continue
            v = x[sel][:, list(pos)]
            term = ((np.abs(v - qs[1][list(pos)]) - np.abs(v - qs[0][list(pos)])) / nu).sum(axis=1)
            u = v.min(axis=1) - t
            c0, c1 = np.interp(u, r, cums[0][pos]), np.interp(u, r, cums[1][pos])
            out[sel] = term + np.log(np.maximum(c0, 1e-300)) - np.log(np.maximum(c1, 1e-300))
        return out
    return llr


def svt34_llr() -> Callable[[np.ndarray], np.ndarray]:
    """Exact log p0/p1 of SVT34Parallel's outputs, ONES10 vs ABOVE_BELOW: the halves are independent,
    so it is `svt3_llr` (c = 2) of the first ten columns plus SVT4's pattern log ratio (`svt4_pmf`)."""
    import itertools
    l3 = svt3_llr(ONES10, ABOVE_BELOW, 2)
    l4 = np.log(svt4_pmf(ONES10, 2)) - np.log(svt4_pmf(ABOVE_BELOW, 2))
    lut = np.zeros(1024, dtype=np.int64)
    patterns = [pos for m in range(3) for pos in itertools.combinations(range(10), m)]
    for i, pos in enumerate(patterns):
        lut[sum(2 ** j for j in pos)] = i

    def llr(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float)
        return l3(x[:, :10]) + l4[lut[((x[:, 10:] == 1) * (2 ** np.arange(10))).sum(axis=1)]]
    return llr


def svt3_cells(q, t: float = 1.0, eps: float = EPS, points: int = 200_001, width: float = 30.0) -> np.ndarray:
    """Probabilities of SVT3's outcomes (c = 1) on a grid: for each first 'above' query k and each value
    cell [v, v + dv) (v on the grid of `_grid(2/eps, points, width)` shifted by t), then 'none' last:
    P(k, dv) = f_nu(v - q_k) dv * int_{rho <= v - t} f_rho(rho) prod_{i<k} P(below_i | rho) drho
    (the density of `svt3_loss`), nu = 2/eps, rho ~ Lap(2/eps)."""
    eps1 = eps2 = eps / 2
    nu, rb = 1 / eps2, 1 / eps1
    r = _grid(rb, points, width)
    dr = r[1] - r[0]
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    run = w.copy()
    v = r + t
    masses = []
    for qk in np.asarray(q, float):
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (run[1:] + run[:-1]) * dr)])
        masses.append(np.exp(-np.abs(v - qk) / nu) / (2 * nu) * cum * dr)
        run = run * _lap_cdf(r + t - qk, nu)
    return np.concatenate(masses + [[np.trapezoid(run, r)]])


def svt3_loss(q0, q1, t: float = 1.0, eps: float = EPS) -> float:
    """sup |log density ratio| of SVT3 (c = 1) over outcomes (first 'above' k with value v; or none),
    by quadrature: density(k, v) = f_nu(v - q_k) * int_{rho <= v - t} f_rho(rho) prod_{i<k} P(below_i | rho)."""
    eps1, eps2 = eps / 2, eps / 2
    nu, rb = 1 / eps2, 1 / eps1
    r = _grid(rb, 200_001, 30.0)
    dr = r[1] - r[0]
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    worst = 0.0
    runs = []
    for q in (np.asarray(q0, float), np.asarray(q1, float)):
        run = w.copy()
        per_k = []
        for qk in q:
            # cumulative integral over rho <= v - t evaluated at v = r + t (so the grid is the same)
            cum = np.concatenate([[0.0], np.cumsum(0.5 * (run[1:] + run[:-1]) * dr)])
            per_k.append((cum, qk))
            run = run * _lap_cdf(r + t - qk, nu)
        runs.append((per_k, np.trapezoid(run, r)))
    v = r + t
    for k in range(len(q0)):
        (c0, a0), (c1, a1) = runs[0][0][k], runs[1][0][k]
        d0 = np.exp(-np.abs(v - a0) / nu) / (2 * nu) * c0
        d1 = np.exp(-np.abs(v - a1) / nu) / (2 * nu) * c1
        ok = (d0 > 1e-250) & (d1 > 1e-250)
        worst = max(worst, float(np.max(np.abs(np.log(d0[ok]) - np.log(d1[ok])))))
    return max(worst, abs(math.log(runs[0][1] / runs[1][1])))


def noisy_max_pmf(q, noise: str, eps: float = EPS) -> np.ndarray:
    """P(argmax = i) = int f_i(x) prod_{j != i} F_j(x) dx, by quadrature (scale 2/eps)."""
    b = 2 / eps
    q = np.asarray(q, float)
    x = np.linspace(q.min() - 45 * b, q.max() + 45 * b, 800_001)
    if noise == "laplace":
        dens = [np.exp(-np.abs(x - qi) / b) / (2 * b) for qi in q]
        cdf = [_lap_cdf(x - qi, b) for qi in q]
    else:
        dens = [np.where(x >= qi, np.exp(-np.maximum(x - qi, 0) / b) / b, 0.0) for qi in q]
        cdf = [np.where(x >= qi, 1 - np.exp(-np.maximum(x - qi, 0) / b), 0.0) for qi in q]
    out = []
    for i in range(len(q)):
        g = dens[i].copy()
        for j in range(len(q)):
            if j != i:
                g *= cdf[j]
        out.append(np.trapezoid(g, x))
    return np.array(out)


def geo_pmf(count: int, eps: float = EPS, n: int = 5) -> np.ndarray:
    k = math.ceil(math.log(2.0 / eps))
    f = [int(v) for v in _geo_cdf(count, n, k)]
    d = f[-1]
    return np.array([(f[0])] + [f[z] - f[z - 1] for z in range(1, n + 1)], dtype=float) / d


def rappor_loss(f: float, p: float | None, q: float | None, a: int, b: int) -> float:
    """Bits are independent: the loss is the number of differing Bloom bits times the per-bit loss."""
    diff = int(np.count_nonzero(bloom_bits(a) != bloom_bits(b)))
    hi = 1 - f / 2
    if p is None:
        per_bit = math.log(hi / (1 - hi))
    else:
        s1 = hi * q + (1 - hi) * p
        s0 = (1 - hi) * q + hi * p
        per_bit = max(abs(math.log(s1 / s0)), abs(math.log((1 - s1) / (1 - s0))))
    return diff * per_bit


def rappor_types(f: float, p: float | None, q: float | None, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities, under inputs a and b, of the types (ones among a's own bits, ones among b's own
    bits): the bits both or neither set are equal in law, so the likelihood ratio is a function of the type."""
    ba, bb = bloom_bits(a), bloom_bits(b)
    na, nb = int(np.count_nonzero(ba & ~bb)), int(np.count_nonzero(bb & ~ba))
    hi = 1 - f / 2
    s1, s0 = (hi, 1 - hi) if p is None else (hi * q + (1 - hi) * p, (1 - hi) * q + hi * p)
    ka, kb = np.arange(na + 1)[:, None], np.arange(nb + 1)[None, :]
    under_a = stats.binom.pmf(ka, na, s1) * stats.binom.pmf(kb, nb, s0)
    under_b = stats.binom.pmf(ka, na, s0) * stats.binom.pmf(kb, nb, s1)
    return under_a.ravel(), under_b.ravel()


# ----------------------------------------------------------------------------------------------
# Oracle: the finite-sample ceiling
# ----------------------------------------------------------------------------------------------

def oracle_from_rates(p0: np.ndarray, p1: np.ndarray, n: int, level: float) -> float:
    """max over events of log(CP_low(n p0) / CP_up(n p1)) at the expected counts, both directions."""
    best = 0.0
    for a, b in ((p0, p1), (p1, p0)):
        k0 = np.clip(np.round(a * n), 0, n)
        k1 = np.clip(np.round(b * n), 0, n)
        lo, up = cp_lower(k0, n, level), cp_upper(k1, n, level)
        with np.errstate(divide="ignore"):
            v = np.where(lo > 0, np.log(np.maximum(lo, 1e-300)) - np.log(up), 0.0)
        best = max(best, float(v.max()))
    return best


def oracle_discrete(p0: np.ndarray, p1: np.ndarray, n: int, level: float) -> float:
    """Neyman-Pearson sets (outcomes sorted by likelihood ratio, cumulated) of a finite outcome space."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    best = 0.0
    for a, b in ((p0, p1), (p1, p0)):
        with np.errstate(divide="ignore"):
            order = np.argsort(-(np.log(a) - np.log(b)))
        best = max(best, oracle_from_rates(np.cumsum(a[order]), np.cumsum(b[order]), n, level))
    return best


def oracle_cells(p0: np.ndarray, p1: np.ndarray, n: int, level: float, levels: int = 8001) -> float:
    """`oracle_discrete` for many cells (a fine grid of a continuous outcome): the Neyman-Pearson sets
    {log p0/p1 > t} and {log p0/p1 < t} evaluated at ~`levels` cumulative masses (geometric in the tails)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    keep = (p0 > 0) | (p1 > 0)
    p0, p1 = p0[keep], p1[keep]
    with np.errstate(divide="ignore"):
        order = np.argsort(-(np.log(p0) - np.log(p1)), kind="stable")
    c0, c1 = np.cumsum(p0[order]), np.cumsum(p1[order])
    marks = np.concatenate([np.geomspace(1e-9, 2.0, levels - levels // 4), np.linspace(0.0, 2.0, levels // 4)])
    idx = np.unique(np.clip(np.searchsorted(c0 + c1, marks), 0, len(c0) - 1))
    # prefixes {llr > t} (first returned by oracle_from_rates in both directions) and suffixes {llr < t}
    s0 = c0[-1] - np.concatenate([[0.0], c0])[idx]
    s1 = c1[-1] - np.concatenate([[0.0], c1])[idx]
    return max(oracle_from_rates(c0[idx], c1[idx], n, level), oracle_from_rates(s0, s1, n, level))


def oracle_llr_iw(llr: Callable[[np.ndarray], np.ndarray], target, d0, d1, n: int, level: float,
                  draws: int = 500_000, seed: int = 12345, levels: int = 4001) -> float:
    """Monte Carlo oracle of the exact log-likelihood ratio `llr`, with importance weights: the events
    {llr >= l} are counted on `draws` runs of d0, P0 by their fraction and P1 = E0[exp(-llr) 1{llr >= l}]
    (exact when llr is the exact log ratio), and the events {llr <= l} likewise on runs of d1.  The ratio
    P0/P1 of an event is then nearly free of Monte Carlo noise, which plain fractions' maximum over
    thresholds turns into an upward bias (SVT3: 0.180 with 2e6 plain draws against 0.160 from
    `svt3_cells`, 0.161 here with 1e6; Laplace: 0.0970 plain against the closed form's 0.0950 here)."""
    rng = np.random.default_rng(seed)
    marks = np.concatenate([np.geomspace(1e-6, 1.0, levels), np.linspace(0.0, 1.0, levels // 4)])
    best = 0.0
    for sign, data in ((1.0, d0), (-1.0, d1)):
        v = np.sort(sign * llr(target(data, rng, draws)))[::-1]  # events {sign * llr >= v[i]}: prefixes
        own = np.arange(1, draws + 1) / draws
        other = np.cumsum(np.exp(-np.clip(v, -700.0, 700.0))) / draws
        idx = np.unique(np.clip(np.ceil(marks * draws).astype(np.int64) - 1, 0, draws - 1))
        best = max(best, oracle_from_rates(own[idx], other[idx], n, level))
    return best


def _lap_llr(d0, d1, b):
    m0, m1 = np.asarray(d0, float), np.asarray(d1, float)

    def llr(x):
        x = np.asarray(x, float).reshape(len(x), -1)
        # rounded: float noise in |x - m| would split the atoms at +-|m0 - m1|/b into spurious events
        return np.round(((np.abs(x - m1) - np.abs(x - m0)) / b).sum(axis=1), 9)
    return llr


# ----------------------------------------------------------------------------------------------
# The rows
# ----------------------------------------------------------------------------------------------

ONES5, ONES10 = [1.0] * 5, [1.0] * 10
HALF = [1.0] * 5 + [0.0] * 5
HALF_R = [0.0] * 5 + [1.0] * 5
ABOVE_BELOW = [2.0] * 5 + [0.0] * 5


@dataclass
class Row:
    name: str
    make: Callable[[], Callable]
    d0: object
    d1: object
    claim: float
    known_violation: bool
    statdp: float | None
    dpsniper: float | None
    exact: Callable[[], float] | None = None
    oracle: Callable[[int, float], float] | None = None
    options: dict = field(default_factory=dict)
    note: str = ""
    #: `exact` / `oracle` give lower bounds only (printed with ">="; no ratio to exact in the summary).
    exact_lower: bool = False
    oracle_lower: bool = False


def _disc_oracle(pmf0, pmf1):
    return lambda n, level: oracle_discrete(pmf0(), pmf1(), n, level)


def rows() -> list[Row]:
    lap_b = 1 / EPS
    return [
        Row("ReportNoisyMax1", lambda: noisy_max("laplace", False), ONES5, [0.0, 2, 2, 2, 2], EPS, False, 0.0921, 0.0925,
            exact=lambda: _pair_loss(noisy_max_pmf(ONES5, "laplace"), noisy_max_pmf([0, 2, 2, 2, 2], "laplace")),
            oracle=_disc_oracle(lambda: noisy_max_pmf(ONES5, "laplace"),
                                lambda: noisy_max_pmf([0, 2, 2, 2, 2], "laplace"))),
        Row("ReportNoisyMax2", lambda: noisy_max("exponential", False), ONES5, [0.0, 2, 2, 2, 2], EPS, False, 0.0997,
            0.0979,
            exact=lambda: _pair_loss(noisy_max_pmf(ONES5, "exp"), noisy_max_pmf([0, 2, 2, 2, 2], "exp")),
            oracle=_disc_oracle(lambda: noisy_max_pmf(ONES5, "exp"), lambda: noisy_max_pmf([0, 2, 2, 2, 2], "exp"))),
        Row("ReportNoisyMax3", lambda: noisy_max("laplace", True), ONES5, [2.0] * 5, EPS, True, 0.1991, 0.2488,
            exact=lambda: 5 / (2 / EPS), oracle=lambda n, lv: _max_oracle(n, lv),
            note="max of 5 Laplace(20) shifted by 1: 5/20"),
        Row("ReportNoisyMax4", lambda: noisy_max("exponential", True), ONES5, [2.0] * 5, EPS, True, 0.1988, 0.3534,
            exact=lambda: math.inf, note="outputs in [1, 2) impossible on d1"),
        Row("SVT1", lambda: svt(1, c=1, t=0.5), HALF, HALF_R, EPS, False, 0.0298, 0.0858,
            exact=lambda: _pair_loss(svt_pmf(HALF, 1, t=0.5)[1], svt_pmf(HALF_R, 1, t=0.5)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(HALF, 1, t=0.5)[1], lambda: svt_pmf(HALF_R, 1, t=0.5)[1])),
        Row("SVT2", lambda: svt(2, c=1, t=1.0), HALF, HALF_R, EPS, False, 0.0407, 0.0859,
            exact=lambda: _pair_loss(svt_pmf(HALF, 2)[1], svt_pmf(HALF_R, 2)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(HALF, 2)[1], lambda: svt_pmf(HALF_R, 2)[1])),
        Row("SVT3", lambda: svt(3, c=1, t=1.0), ONES10, ABOVE_BELOW, EPS, True, 0.1793, 0.1822,
            exact=lambda: svt3_loss(ONES10, ABOVE_BELOW),
            oracle=lambda n, lv: oracle_cells(svt3_cells(ONES10), svt3_cells(ABOVE_BELOW), n, lv),
            note="oracle: level sets of the exact log ratio over (first 'above' k, value v), v in cells of 0.006"),
        Row("SVT4", lambda: svt(4, c=1, t=1.0), ONES10, ABOVE_BELOW, EPS, True, 0.1719, 0.1696,
            exact=lambda: _pair_loss(svt_pmf(ONES10, 4)[1], svt_pmf(ABOVE_BELOW, 4)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(ONES10, 4)[1], lambda: svt_pmf(ABOVE_BELOW, 4)[1])),
        Row("SVT5", lambda: svt(5, c=1, t=1.0), ONES10, ABOVE_BELOW, EPS, True, 14.3143, 1.7612,
            exact=lambda: math.inf, note="d1 gives half-above patterns, d0 never"),
        Row("SVT6", lambda: svt(6, c=1, t=1.0), HALF, HALF_R, EPS, True, 0.3220, 0.2720,
            exact=lambda: _svt6_loss(), oracle=lambda n, level: _svt6_oracle(n, level)),
        Row("NumericalSVT", lambda: numerical_svt(c=2, t=1.0), [2.0] * 10, ONES10, EPS, False, None, 0.0345,
            exact=lambda: numerical_svt_loss(2.0, 1.0), oracle=lambda n, lv: numerical_svt_oracle(2.0, 1.0, n, lv),
            note="exact: pattern types (m aboves, nb belows) by quadrature + m/60 for the values"),
        Row("NoisyHist1", lambda: noisy_hist(1 / EPS), [0.0, 1, 1, 1, 1], ONES5, EPS, False, 0.0994, 0.0978,
            exact=lambda: 1 / lap_b,
            oracle=lambda n, lv: oracle_llr_iw(_lap_llr([0.0, 1, 1, 1, 1], ONES5, lap_b), noisy_hist(lap_b),
                                            [0.0, 1, 1, 1, 1], ONES5, n, lv)),
        Row("NoisyHist2", lambda: noisy_hist(EPS), [0.0, 1, 1, 1, 1], ONES5, EPS, True, 10.0022, 4.6020,
            exact=lambda: 1 / EPS,
            oracle=lambda n, lv: oracle_llr_iw(_lap_llr([0.0, 1, 1, 1, 1], ONES5, EPS), noisy_hist(EPS),
                                            [0.0, 1, 1, 1, 1], ONES5, n, lv)),
        Row("Rappor", lambda: rappor(0.75, 0.45, 0.55), [1], [0], 8 * math.log(0.625 / 0.375), False, 0.2416, 0.3008,
            exact=lambda: rappor_loss(0.75, 0.45, 0.55, 1, 0),
            oracle=lambda n, lv: oracle_discrete(*rappor_types(0.75, 0.45, 0.55, 1, 0), n, lv),
            note="claim: RAPPOR's eps_inf = 2h ln((1 - f/2)/(f/2)), h = 4 (Erlingsson et al. Sec. 4)"),
        Row("OneTimeRappor", lambda: rappor(0.95, None, None), [1], [0], 8 * math.log(0.525 / 0.475), False, 0.0602,
            0.5999, exact=lambda: rappor_loss(0.95, None, None, 1, 0),
            oracle=lambda n, lv: oracle_discrete(*rappor_types(0.95, None, None, 1, 0), n, lv)),
        Row("Laplace", lambda: laplace(), [1.0], [2.0], EPS, False, 0.0998, 0.0976, exact=lambda: EPS,
            oracle=lambda n, lv: oracle_llr_iw(_lap_llr([1.0], [2.0], lap_b), laplace(), [1.0], [2.0], n, lv)),
        Row("TruncatedGeometric", lambda: truncated_geometric(), [1], [2], math.log(1 + 2.0 ** -3), False, 0.1169,
            0.1156, exact=lambda: _pair_loss(geo_pmf(1), geo_pmf(2)),
            oracle=_disc_oracle(lambda: geo_pmf(1), lambda: geo_pmf(2)),
            note="claim: ln(1 + 2^-ceil(ln(2/eps))) (Balcer, Vadhan Thm. 4.7)"),
        Row("LaplaceParallel", lambda: laplace_parallel(), [1.0], [0.0], 20 * 0.005, False, 0.0135, 0.0350,
            exact=lambda: 20 * 0.005,
            oracle=lambda n, lv: oracle_llr_iw(_lap_llr([1.0] * 20, [0.0] * 20, 200.0), laplace_parallel(), [1.0], [0.0],
                                            n, lv)),
        Row("SVT34Parallel", lambda: svt34_parallel(), ONES10, ABOVE_BELOW, 2 * EPS, True, 0.1963, 0.2616,
            exact=svt34_loss_lower, exact_lower=True,
            oracle=lambda n, lv: oracle_llr_iw(svt34_llr(), svt34_parallel(), ONES10, ABOVE_BELOW, n, lv),
            note="exact >=: the two halves' 'above' patterns (svt34_loss_lower); oracle: importance-weighted "
                 "Monte Carlo of the exact log ratio (oracle_llr_iw; patterns only: svt34_oracle_lower 0.239)"),
        Row("PrefixSum", lambda: prefix_sum(), ONES10, [0.0] * 10, 10 * EPS, False, 0.3516, 0.5774,
            exact=lambda: 10 * EPS,
            oracle=lambda n, lv: oracle_llr_iw(lambda x: _lap_llr(ONES10, [0.0] * 10, lap_b)(np.diff(x, axis=1, prepend=0)),
                                            prefix_sum(), ONES10, [0.0] * 10, n, lv),
            note="claim: 10 queries of sensitivity 1 each (component-wise neighbours), 10 eps"),
        Row("FloatLaplace", lambda: laplace(), [0.0], [1.0], EPS, True, None, 0.2521, exact=lambda: math.inf,
            options={"float_bits": True}, note="numpy's float sampler, bit features on (Mironov CCS 2012)"),
        Row("Snapping", lambda: snapping(), [0.0], [1.0], EPS, False, None, 0.0979,
            exact=lambda: _pair_loss(snapping_pmf(0.0), snapping_pmf(1.0)),
            oracle=_disc_oracle(lambda: snapping_pmf(0.0), lambda: snapping_pmf(1.0)),
            options={"float_bits": True}, note="Mironov's fix, bit features on; exact and oracle in real arithmetic"),
    ]


def _max_oracle(n: int, level: float) -> float:
    """ReportNoisyMax3 on 1 vs 2 everywhere: the max shifts by 1, its likelihood ratio is monotone, so
    the events {max < t} and {max > t} are the Neyman-Pearson ones; CDF F_Lap(t - q)^5."""
    t = np.linspace(-400.0, 500.0, 200_001)
    g0, g1 = _lap_cdf(t - 1, 2 / EPS) ** 5, _lap_cdf(t - 2, 2 / EPS) ** 5
    return max(oracle_from_rates(g0, g1, n, level), oracle_from_rates(1 - g0, 1 - g1, n, level))


def _svt6_loss() -> float:
    _, p0 = svt_pmf(HALF, 6)
    _, p1 = svt_pmf(HALF_R, 6)
    return _pair_loss(p0, p1)


def _svt6_oracle(n: int, level: float) -> float:
    # Types (a, b) = 'above' counts in the two blocks; the Neyman-Pearson sets are unions of types.
    return oracle_discrete(svt_pmf(HALF, 6)[1], svt_pmf(HALF_R, 6)[1], n, level)


class _Here:
    """`submit` runs the call at once (one worker: no process pool)."""

    def submit(self, fn, *args):
        done = Future()
        done.set_result(fn(*args))
        return done

    def shutdown(self) -> None:
        pass


def _run_named(name: str, samples: int, seed: int, extra: dict) -> dict:
    """`run_row` for the row called `name` (rows hold lambdas: a worker process rebuilds them)."""
    return run_row(next(r for r in rows() if r.name == name), samples, seed, extra)


def run_row(row: Row, samples: int, seed: int, extra: dict) -> dict:
    start = time.perf_counter()
    opts = {**row.options, **extra}
    res = audit(row.make(), np.asarray(row.d0), np.asarray(row.d1), claim_epsilon=row.claim, samples=samples,
                confidence=0.95, seed=seed, progress=False, executor="serial", **opts)
    return {"epsilon_lower": res.epsilon_lower, "verdict": res.verdict, "seconds": time.perf_counter() - start,
            "selection_samples": res.selection_samples,
            "event": res.directions[0].event if res.direction == "d0>d1" else res.directions[1].event}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^5 runs per side, one seed")
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--selection-fraction", type=float, default=None)
    ap.add_argument("--no-exact", action="store_true", help="skip the quadratures and oracles")
    ap.add_argument("--crossfit", action="store_true", help="audit with crossfit=True (see dpaudit.audit)")
    ap.add_argument("--selection-extension", type=float, default=None,
                    help="audit with selection_extension=F (see dpaudit.audit; default: automatic, 0.2)")
    ap.add_argument("--direction-share", type=float, default=None,
                    help="audit with direction_share=F (see dpaudit.audit; default 0.9)")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                    help="processes running the audits (default: 2, or 1 on one core)")
    ap.add_argument("--events-per-direction", type=int, default=None,
                    help="audit with events_per_direction=N (see dpaudit.audit; default 3)")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error(f"--workers must be at least 1, got {args.workers}")
    if args.selection_extension is not None and not 0.0 <= args.selection_extension < 0.9:
        ap.error(f"--selection-extension must be in [0, 0.9), got {args.selection_extension}")
    if args.events_per_direction is not None and args.events_per_direction < 1:
        ap.error(f"--events-per-direction must be at least 1, got {args.events_per_direction}")
    samples = 100_000 if args.quick else args.samples
    extra = {}
    if args.selection_fraction is not None:
        extra["selection_fraction"] = args.selection_fraction
    if args.crossfit:
        extra["crossfit"] = True
    if args.selection_extension is not None:
        extra["selection_extension"] = args.selection_extension
    if args.direction_share is not None:
        extra["direction_share"] = args.direction_share
    if args.events_per_direction is not None:
        extra["events_per_direction"] = args.events_per_direction
    level = 0.05 / 4
    table = []
    total = time.perf_counter()
    chosen = [row for row in rows() if not args.only or row.name in args.only]
    # one BLAS thread per core among the workers (dpaudit.audit.execution.worker_init)
    pool = process_pool(args.workers) if args.workers > 1 else _Here()
    # every audit is submitted first; the quadratures and oracles run here meanwhile
    audits = {row.name: [pool.submit(_run_named, row.name, samples, s, extra) for s in args.seeds] for row in chosen}
    for row in chosen:
        rec = {"algorithm": row.name, "claim": row.claim, "known_violation": row.known_violation,
               "statdp": row.statdp, "dpsniper": row.dpsniper, "note": row.note,
               "exact_lower": row.exact_lower, "oracle_lower": row.oracle_lower}
        if not args.no_exact:
            rec["exact"] = row.exact() if row.exact else None
            n_est = samples if args.crossfit else samples - round(extra.get("selection_fraction", 0.1) * samples)
            rec["oracle"] = row.oracle(n_est, level) if row.oracle else None
            rec["ceiling"] = row.oracle(samples, CEILING_LEVEL) if row.oracle else None
        runs = [f.result() for f in audits[row.name]]
        rec["dpaudit"] = [r["epsilon_lower"] for r in runs]
        rec["verdicts"] = [r["verdict"] for r in runs]
        rec["seconds"] = sum(r["seconds"] for r in runs)
        rec["event"] = runs[0]["event"]
        rec["selection_share"] = [r["selection_samples"] / samples for r in runs]
        caught = [v == "violation" for v in rec["verdicts"]]
        rec["ok"] = all(caught) if row.known_violation else not any(caught)
        rec["versus_peers"] = versus_peers(rec, samples)
        table.append(rec)
        if not args.json:
            _print_row(rec)
            sys.stdout.flush()
    pool.shutdown()
    wall = time.perf_counter() - total
    finite = [r for r in table if r.get("exact") not in (None, math.inf) and not r["exact_lower"]]
    ratios = [min(r["dpaudit"]) / r["exact"] for r in finite]
    ceil = [r["ceiling"] / r["exact"] for r in finite if r.get("ceiling") is not None]
    summary = {"samples_per_side": samples, "seeds": args.seeds, "wall_seconds": wall,
               # the mean of ceiling / exact over the finite rows, 1 for the rows without a ceiling
               # computed (SVT3): what any event-based audit could reach at most, in expectation
               "ceiling_mean_ratio_to_exact": float((sum(ceil) + len(finite) - len(ceil)) / len(finite))
               if finite else None,
               "ceiling_rows": len(ceil),
               "all_ok": all(r["ok"] for r in table),
               "below_a_peer": [r["algorithm"] for r in table if r["versus_peers"] == "below"],
               "mean_ratio_to_exact": float(np.mean(ratios)) if ratios else None,
               "min_ratio_to_exact": float(np.min(ratios)) if ratios else None}
    if args.json:
        print(json.dumps({"rows": table, "summary": summary}, indent=1, default=str))
    else:
        print(json.dumps(summary))
    return 0


def any_event_ceiling(samples: int) -> float:
    """The largest bound any event-based audit can give at `samples` runs per side (the `ceiling`
    column's levels): an event with every run of one input and none of the other,
    log(CP_lower(n of n) / CP_upper(0 of n))."""
    return math.log(cp_lower(samples, samples, CEILING_LEVEL) / cp_upper(0, samples, CEILING_LEVEL))


def versus_peers(rec: dict, samples: int) -> str:
    """'above' when the smaller of dpaudit's bounds over the seeds is at least every published peer
    bound below the row's ceiling (`any_event_ceiling` where the row has none), 'below' when not,
    'ceiling' when every peer bound is above the ceiling, '' without peer bounds."""
    peers = [b for b in (rec["statdp"], rec["dpsniper"]) if b is not None]
    if not peers:
        return ""
    ceiling = rec.get("ceiling")
    reachable = [b for b in peers if b < (ceiling if ceiling is not None else any_event_ceiling(samples))]
    if not reachable:
        return "ceiling"
    return "above" if min(rec["dpaudit"]) >= max(reachable) else "below"


def _fmt(v, lower: bool = False) -> str:
    if v is None:
        return "—"
    if v == math.inf:
        return "inf"
    return f"{'>=' if lower else ''}{v:.4f}"


def _print_row(r: dict) -> None:
    low = "/".join(f"{v:.4f}" for v in r["dpaudit"])
    print(f"{r['algorithm']:<19} claim {r['claim']:.4f} exact {_fmt(r.get('exact'), r['exact_lower']):>7} oracle "
          f"{_fmt(r.get('oracle'), r['oracle_lower']):>7} ceiling {_fmt(r.get('ceiling')):>7} statdp {_fmt(r['statdp']):>7} "
          f"dpsniper {_fmt(r['dpsniper']):>7} dpaudit {low:>15} {'/'.join(r['verdicts'])} {'OK' if r['ok'] else 'FAIL'} "
          f"peers {r['versus_peers'] or '—'} "
          f"{r['seconds']:.1f}s sel {'/'.join(f'{v:.2f}' for v in r['selection_share'])}  "
          f"[{r['event'][:50]}]")


if __name__ == "__main__":
    sys.exit(main())
