"""Exact privacy loss of an input pair, sup over outputs of |log p0/p1|: closed forms, or 1-D quadrature over the
threshold noise for the SVT and noisy-max rows; and the outcome probabilities the oracles of the rows read."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from benchmarks.peers.inputs import ABOVE_BELOW, ONES10
from benchmarks.peers.mechanisms import EPS, bloom_bits, geo_cdf
from benchmarks.peers.oracle import oracle_discrete


def lap_cdf(x, b):
    """The CDF of Laplace(0, b) at x."""
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), 1 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _grid(scale: float, points: int = 400_001, width: float = 45.0) -> np.ndarray:
    return np.linspace(-width * scale, width * scale, points)


def pair_loss(p0: np.ndarray, p1: np.ndarray) -> float:
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
    below = [lap_cdf(r + t - qi, nu) for qi in q]  # P(q_i + nu_i < rho + t | rho)
    if variant == 6:
        # queries with equal values in *both* inputs form a group: outcomes of one type (number of
        # 'above' per group) share their likelihood ratio, so the type probabilities suffice
        values, counts = _runs(q)
        groups = [(lap_cdf(r + t - v, nu), m) for v, m in zip(values, counts)]
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
    r = _grid(rho_scale, 200_001, 40.0)
    w = np.exp(-np.abs(r) / rho_scale) / (2 * rho_scale)
    q = np.asarray(q, float)
    below = [lap_cdf(r + t - qi, nu_scale) for qi in q]
    probs = []
    for m in range(c + 1):
        for pos in itertools.combinations(range(len(q)), m):
            last = pos[-1] if m == c else len(q) - 1
            dens = w.copy()
            for i in range(last + 1):
                dens = dens * ((1 - below[i]) if i in pos else below[i])
            probs.append(np.trapezoid(dens, r))
    return np.array(probs)


def numerical_svt_types(
    q: float, c: int = 2, k: int = 10, t: float = 1.0, eps: float = EPS
) -> dict[tuple[int, int], tuple[float, int]]:
    """Pattern types of the numerical SVT (`numerical_svt`) on k equal queries q: for m 'above' answers
    and nb 'below' ones, (probability of one pattern of that type, number of such patterns), by
    quadrature over rho ~ Lap(3/eps) with B(rho) = P(q + nu < t + rho), nu ~ Lap(6c/eps):
    P(pattern) = int f_rho(r) (1 - B(r))^m B(r)^nb dr.  m < c: all k answered, nb = k - m, C(k, m)
    patterns; m = c: the run stops at the c-th 'above', nb in 0..k-c, C(nb + c - 1, c - 1) patterns."""
    rb, nu = 3 / eps, 6 * c / eps
    r = _grid(rb)
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    below = lap_cdf(r + t - q, nu)
    out = {}
    for m in range(c + 1):
        for nb in [k - m] if m < c else range(k - c + 1):
            mult = math.comb(k, m) if m < c else math.comb(nb + c - 1, c - 1)
            out[(m, nb)] = (float(np.trapezoid(w * (1 - below) ** m * below**nb, r)), mult)
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
    cdf = lap_cdf(edges - q, scale)
    return np.concatenate([[cdf[0]], np.diff(cdf), [1 - cdf[-1]]])


def numerical_svt_oracle(
    q0: float, q1: float, n: int, level: float, c: int = 2, k: int = 10, eps: float = EPS, bins: int = 16
) -> float:
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
    lam = (1.0 + bound * 2.0**-49) / eps
    big = 2.0 ** math.ceil(math.log2(lam))
    loc = min(bound, max(-bound, x))
    kmax = math.floor(bound / big)
    if kmax * big == bound:
        kmax -= 1  # B itself is a multiple of Lambda: it is the clamp output
    inner = np.arange(-kmax, kmax + 1) * big
    cdf = lap_cdf(np.concatenate([inner - big / 2, [inner[-1] + big / 2]]) - loc, lam)
    return np.concatenate([[cdf[0]], np.diff(cdf), [1 - cdf[-1]]])


def svt4_pmf(q, c: int, t: float = 1.0, eps: float = EPS) -> np.ndarray:
    """Outcome probabilities of SVT4 with any c (`svt_pattern_pmf`; eps1 = eps/4: rho 1/eps1, nu 1/eps2)."""
    eps1 = eps / 4
    return svt_pattern_pmf(q, c, 1 / eps1, 1 / (eps - eps1), t)


def svt3_pattern_pmf(q, c: int, t: float = 1.0, eps: float = EPS) -> np.ndarray:
    """Probabilities of SVT3's 'above' patterns, its released values forgotten (rho 1/eps1, nu c/eps2,
    eps1 = eps2 = eps/2): a function of the output, so its pair loss and oracle are lower bounds on SVT3's."""
    return svt_pattern_pmf(q, c, 2 / eps, 2 * c / eps, t)


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
    return pair_loss(*_svt34_pattern_pmfs())


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
    nu, rb = 2 * c / eps, 2 / eps
    r = _grid(rb, 200_001, 40.0)
    dr = r[1] - r[0]
    w = np.exp(-np.abs(r) / rb) / (2 * rb)
    qs = (np.asarray(q0, float), np.asarray(q1, float))
    patterns = [pos for m in range(c + 1) for pos in itertools.combinations(range(len(qs[0])), m)]
    cums = []
    for q in qs:
        below = [lap_cdf(r + t - qi, nu) for qi in q]
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
            sel = code == sum(2**i for i in pos)
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
    l3 = svt3_llr(ONES10, ABOVE_BELOW, 2)
    l4 = np.log(svt4_pmf(ONES10, 2)) - np.log(svt4_pmf(ABOVE_BELOW, 2))
    lut = np.zeros(1024, dtype=np.int64)
    patterns = [pos for m in range(3) for pos in itertools.combinations(range(10), m)]
    for i, pos in enumerate(patterns):
        lut[sum(2**j for j in pos)] = i

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
        run = run * lap_cdf(r + t - qk, nu)
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
            run = run * lap_cdf(r + t - qk, nu)
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
        cdf = [lap_cdf(x - qi, b) for qi in q]
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
    f = [int(v) for v in geo_cdf(count, n, k)]
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
