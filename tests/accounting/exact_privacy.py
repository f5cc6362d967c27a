"""Exact privacy of the named mechanisms, as references for tests/accounting/test_extremes.py.

Every function returns a *lower bound* on log delta(eps), the exact hockey-stick divergence of the
mechanism at eps (-inf when it bounds nothing), so a reported epsilon eps_hat is proven optimistic
when the reference at eps_hat exceeds log delta. Closed forms are evaluated in mpmath; sums over
outcomes add only positive terms (a partial sum is a lower bound), each rounded down by a margin
above float64's error in the log-pmf; a composition is bounded below by a post-processing of it
(data-processing inequality), e.g. k binary randomized responses, whose k-fold profile is exact
(Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015, Thm 3.3).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import stats
from scipy.special import ive, logsumexp

_WINDOW = 20_000
_PMF_SLACK = 1e-11  # relative error allowed in a float64 log-pmf (of |log-pmf| + 1)


def _log(x: mpmath.mpf) -> float:
    return float(mpmath.log(x)) if x > 0 else -math.inf


def _down(x: float) -> float:
    """A float log value rounded down by a relative 1e-12 (mpmath's value is exact far beyond)."""
    return x - 1e-12 * (abs(x) + 1.0) if math.isfinite(x) else x


def kov_log_delta_lower(eps0: float, k: int, epsilon: float) -> float:
    """A lower bound on log delta(eps) of k-fold eps0-DP (binary randomized response, KOV Thm 3.3):
    the sum of the terms of a window of i (up to `_WINDOW` of them below the largest), each w_i
    anchored at one index by mpmath's log-gamma and carried by exact ratio recurrences, rounded down."""
    if not eps0 > 0:
        return -math.inf
    if math.isinf(eps0):  # every release reveals the input: delta(eps) = 1
        return -1e-12
    with mpmath.workdps(50):
        e0 = mpmath.mpf(eps0)
        log_p = -mpmath.log1p(mpmath.exp(-e0))
        log_q = -mpmath.log1p(mpmath.exp(e0))
        ratio = mpmath.mpf(epsilon) / e0
        if ratio >= k:
            return -math.inf
        m = None  # largest i with (k - 2i) eps0 > eps
        i = int(mpmath.ceil((k - ratio) / 2)) - 1
        for cand in (i + 1, i, i - 1, i - 2):
            if 0 <= cand <= k and (k - 2 * cand) * e0 > epsilon:
                m = cand
                break
        if m is None:
            return -math.inf
        mode = int(mpmath.floor((k + 1) * mpmath.exp(log_q)))
        sd = float(mpmath.sqrt(k * mpmath.exp(log_p + log_q)))
        top = min(m, mode + int(8 * sd) + 1)
        lo = max(0, top - _WINDOW)
        anchor = (
            mpmath.loggamma(k + 1)
            - mpmath.loggamma(top + 1)
            - mpmath.loggamma(k - top + 1)
            + (k - top) * log_p
            + top * log_q
        )
        back = np.arange(top - lo, -1, -1, dtype=float)  # top - i for i = lo .. top, exact
        idx = float(top) - back
        # log w_{i-1} - log w_i = log(i / (k - i + 1)) + log p - log q, summed downwards from `top`
        step = np.log(idx[1:] / (float(k) - idx[1:] + 1)) + float(log_p - log_q)
        rel = np.concatenate([np.cumsum(step[::-1])[::-1], [0.0]])
        # the loss minus eps, (k - 2i) eps0 - eps, in mpmath at `top`, carried exactly in top - i
        gap = float((k - 2 * top) * e0 - epsilon) + 2 * eps0 * back
    keep = gap > 0
    logs = rel[keep] + np.log(-np.expm1(-gap[keep] * (1 - 1e-12)))
    if logs.size == 0:
        return -math.inf
    total = float(logsumexp(logs))
    # a few ulp per step of the recurrence (its ratios are doubles, inexact integers beyond 2^53)
    slack = 1e-12 * (abs(total) + float(np.abs(rel).max()) + 1.0) + 1e-15 * idx.size
    return float(anchor) + total - slack


def binary_rr_epsilon(tail: mpmath.mpf) -> float:
    """eps' = log((1 - t)/t) of the binary randomized response a post-processing leaves with
    P(1 | x) = 1 - t = 1 - P(1 | x'), from the small side t (so no digits are lost to 1 - t), rounded
    down (a smaller eps' only lowers the reference); inf when t vanishes (the bit reveals the input)."""
    if not tail > 0:
        return math.inf
    return float(mpmath.log1p(-tail) - mpmath.log(tail)) * (1 - 1e-12)


def pure_log_delta(eps0: float, epsilon: float) -> float:
    """log delta(eps) of one worst-case eps0-DP release, binary randomized response:
    (e^eps0 - e^eps)/(1 + e^eps0) (KOV Thm 2.1), in mpmath."""
    with mpmath.workdps(60):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(epsilon)
        return _down(_log((mpmath.exp(e0) - mpmath.exp(e)) / (1 + mpmath.exp(e0)))) if e < e0 else -math.inf


def gaussian_log_delta(mu: float, epsilon: float) -> float:
    """log delta(eps) of the Gaussian mechanism, mu = sensitivity/sigma: Phi(-eps/mu + mu/2) -
    e^eps Phi(-eps/mu - mu/2) (Balle, Wang, ICML 2018, Thm 8), in mpmath at enough digits to resolve
    a difference of relative size mu."""
    if mu == 0:
        return -math.inf
    digits = 40 + max(0, int(-mpmath.log10(mu)) if mu < 1 else 0)
    with mpmath.workdps(digits):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        if -e / m + m / 2 < -1e4:
            return -math.inf  # below e^-5e7: no delta of the sweep is this small
        return _down(_log(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)))


def laplace_log_delta(eps0: float, epsilon: float) -> float:
    """log delta(eps) of one Laplace release of pure eps0: 1 - e^((eps - eps0)/2) for eps < eps0."""
    with mpmath.workdps(60):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(epsilon)
        return _down(_log(-mpmath.expm1((e - e0) / 2))) if e < e0 else -math.inf


def laplace_threshold_epsilon(eps0: float) -> float:
    """eps' of the post-processing 1[Y > sensitivity/2] of a Laplace release of pure eps0: binary RR
    with p = 1 - e^(-eps0/2)/2, eps' = log(2 e^(eps0/2) - 1)."""
    with mpmath.workdps(60):
        return float(mpmath.log1p(2 * mpmath.expm1(mpmath.mpf(eps0) / 2))) * (1 - 1e-12)


def discrete_laplace_log_delta(a: float, sensitivity: int, epsilon: float) -> float:
    """log delta(eps) of one discrete Laplace release, pmf tanh(a/2) e^(-a|x|), shift D: the
    likelihood ratio is e^(aD) on x <= 0 (mass 1/(1 + e^-a)) and e^(a(D - 2x)) for 0 < x < D."""
    with mpmath.workdps(60):
        a_, e, d = mpmath.mpf(a), mpmath.mpf(epsilon), int(sensitivity)
        total = mpmath.mpf(0)
        if a_ * d > e:
            total += -mpmath.expm1(e - a_ * d) / (1 + mpmath.exp(-a_))
        norm = mpmath.tanh(a_ / 2)
        for x in range(1, d):
            loss = a_ * (d - 2 * x)
            if loss <= e:
                break
            total += norm * mpmath.exp(-a_ * x) * -mpmath.expm1(e - loss)
        return _down(_log(total))


def discrete_laplace_threshold_epsilon(a: float, sensitivity: int) -> float:
    """eps' of 1[Y > j] for a discrete Laplace release with odd shift D = 2j + 1: binary RR with
    p = P(X <= j) = 1 - e^(-a(j+1))/(1 + e^-a), eps' = log(e^(a(j+1)) + e^(aj) - 1)."""
    j = (int(sensitivity) - 1) // 2
    with mpmath.workdps(60):
        a_ = mpmath.mpf(a)
        return float(mpmath.log(mpmath.exp(a_ * (j + 1)) + mpmath.expm1(a_ * j))) * (1 - 1e-12)


def rr_log_delta(eps0: float, k: int, epsilon: float) -> float:
    """log delta(eps) of one k-ary randomized response: (e^eps0 - e^eps)/(e^eps0 + k - 1)."""
    with mpmath.workdps(60):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(epsilon)
        return _down(_log((mpmath.exp(e0) - mpmath.exp(e)) / (mpmath.exp(e0) + k - 1))) if e < e0 else -math.inf


def rr_binary_epsilon(eps0: float, k: int) -> float:
    """eps' of a post-processing of k-RR into binary RR: the true bucket x -> 1, the neighbour's x' -> 0,
    any other bucket -> a fair coin: p = (1 + a - b)/2 with a - b = (e^eps0 - 1)/(e^eps0 + k - 1), so
    eps' = log((2 e^eps0 + k - 2)/k) = log1p(2 (e^eps0 - 1)/k)."""
    with mpmath.workdps(60):
        return float(mpmath.log1p(2 * mpmath.expm1(mpmath.mpf(eps0)) / k)) * (1 - 1e-12)


def epsilon_delta_log_delta(eps0: float, delta0: float, k: int, epsilon: float) -> float:
    """log delta(eps) of k-fold composition of an (eps0, delta0)-DP box (exact worst case, KOV Thm 3.3):
    1 - (1 - delta0)^k + (1 - delta0)^k delta_RR,k(eps), the RR term bounded below by the window sum."""
    rr = kov_log_delta_lower(eps0, k, epsilon) if k > 1 else pure_log_delta(eps0, epsilon)
    with mpmath.workdps(60):
        keep = mpmath.exp(k * mpmath.log1p(-mpmath.mpf(delta0)))
        total = (1 - keep) + keep * (mpmath.exp(rr) if rr > -math.inf else 0)
        return _down(_log(total))


def _windows(half_width: int, shift: int) -> np.ndarray:
    """The integers within `half_width` of 0 or of `shift` (where the two laws put their mass)."""
    return np.union1d(
        np.arange(-half_width, half_width + 1), np.arange(shift - half_width, shift + half_width + 1)
    ).astype(float)


def unimodal_log_delta(log_mode_mass: float, epsilon: float) -> float:
    """A lower bound for unimodal integer noise X shifted by D >= 1: with A = {x <= mode},
    delta(eps) >= P(A) - e^eps P(A - D) >= P(X = mode) - (e^eps - 1)."""
    with mpmath.workdps(60):
        return _down(_log(mpmath.exp(log_mode_mass) - mpmath.expm1(mpmath.mpf(epsilon))))


def binomial_log_mode_mass(trials: int, p: float) -> mpmath.mpf:
    """log P(X = floor((N+1) p)) for X ~ Bin(N, p), in mpmath."""
    with mpmath.workdps(60 + int(math.log10(trials + 1))):
        n, p_ = int(trials), mpmath.mpf(p)
        m = min(n, int(mpmath.floor((n + 1) * p_)))
        return (
            mpmath.loggamma(n + 1)
            - mpmath.loggamma(m + 1)
            - mpmath.loggamma(n - m + 1)
            + m * mpmath.log(p_)
            + (n - m) * mpmath.log1p(-p_)
        )


def pmf_log_delta(
    logp_lo: np.ndarray, logp_hi: np.ndarray, logq_lo: np.ndarray, logq_hi: np.ndarray, epsilon: float
) -> float:
    """A lower bound on log of max(sum (P - e^eps Q)^+, sum (Q - e^eps P)^+) over a window of a common
    support (mass outside the window only adds), from lower and upper bounds on the log-pmfs, each
    further widened by `_PMF_SLACK` (float64's error in a log-pmf)."""
    best = -math.inf
    for a, b in ((logp_lo, logq_hi), (logq_lo, logp_hi)):
        ok = np.isfinite(a)
        a, b = a[ok], b[ok]
        err = _PMF_SLACK * (np.abs(a) + np.where(np.isfinite(b), np.abs(b), 0.0) + 1.0)
        with np.errstate(invalid="ignore"):
            gap = np.where(np.isfinite(b), a - b - 2 * err, np.inf) - epsilon  # loss - eps, rounded down
        pos = gap > 0
        if not pos.any():
            continue
        with np.errstate(divide="ignore"):
            terms = a[pos] - err[pos] + np.log(-np.expm1(-gap[pos]))
        best = max(best, float(logsumexp(terms)) - 1e-9)
    return best


def _ncdf_above(x: mpmath.mpf) -> mpmath.mpf:
    """Phi(x), or its bound phi(x)/|x| (Mills' ratio) far below 0, where mpmath's erfc overflows."""
    return mpmath.npdf(x) / -x if x < -1e6 else mpmath.ncdf(x)


def discrete_gaussian_log_norm(sigma: float) -> mpmath.mpf:
    """log of sum_x e^(-x^2/(2 sigma^2)): a Jacobi theta value (Poisson summation above sigma = 1)."""
    with mpmath.workdps(60):
        s = mpmath.mpf(sigma)
        if s < 1:
            return mpmath.log(mpmath.jtheta(3, 0, mpmath.exp(-1 / (2 * s * s))))
        return mpmath.log(s * mpmath.sqrt(2 * mpmath.pi) * mpmath.jtheta(3, 0, mpmath.exp(-2 * mpmath.pi**2 * s * s)))


def discrete_gaussian_log_delta(sigma: float, sensitivity: int, epsilon: float) -> float:
    """log delta(eps) of the discrete Gaussian N_Z(0, sigma^2) with integer shift D (Canonne, Kamath,
    Steinke, NeurIPS 2020, Thm 7): summed over |x| <= 40 sigma + D + 10 up to sigma = 1e4, above it
    the D terms next to the threshold exactly and the tail below them bounded above by an integral
    (the sum of an increasing f over x <= u is at most its integral to u + 1)."""
    d = int(sensitivity)
    log_n = discrete_gaussian_log_norm(sigma)
    if sigma <= 1e4:
        x = _windows(int(40 * sigma) + 10, d)
        s2 = 2.0 * sigma * sigma
        logp = -(x * x) / s2 - float(log_n)
        logq = -((x - d) * (x - d)) / s2 - float(log_n)
        return pmf_log_delta(logp, logp, logq, logq, epsilon)
    with mpmath.workdps(60):
        s, e, n = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.exp(log_n)
        # S = {x <= t}, t the largest x with loss (D^2 - 2xD)/(2 sigma^2) > eps; N delta(eps) =
        # sum_{t-D < x <= t} f(x) - (e^eps - 1) sum_{x <= t-D} f(x), f(x) = e^(-x^2/(2 sigma^2))
        t = int(mpmath.ceil(mpmath.mpf(d) / 2 - e * s * s / d)) - 1
        near = mpmath.fsum(mpmath.exp(-(mpmath.mpf(x) ** 2) / (2 * s * s)) for x in range(t - d + 1, t + 1))
        u = t - d
        c = s * mpmath.sqrt(2 * mpmath.pi)
        # sum_{x <= u} f(x) <= integral to u + 1 (f increasing up to 0), or N - integral to -u - 1 by symmetry
        tail = c * _ncdf_above((u + 1) / s) if u <= -1 else n - c * mpmath.ncdf((-u - 1) / s)
        return _down(_log((near - mpmath.expm1(e) * tail) / n))


def symmetric_threshold_epsilon(log_pmf_at, sensitivity: int, narrow: bool) -> float:
    """eps' of 1[Y > j] for a symmetric unimodal integer noise with odd shift D = 2j + 1: binary RR with
    1 - p = P(X > j), eps' = log(p/(1 - p)); `log_pmf_at(x)` an mpmath log-pmf. The tail is summed
    for a `narrow` noise (sd below 1), else taken as (1 - P(0))/2 - sum_{x=1}^{j} P(x) with the digits
    to resolve 1 - P(0) (a wide noise has P(0) ~ 1/sd)."""
    j = (int(sensitivity) - 1) // 2
    if narrow:  # terms fall at least geometrically (ratio < e^-1.5): stop 1e-80 below the first
        with mpmath.workdps(60):
            first = mpmath.exp(log_pmf_at(j + 1))
            terms, x = [first], j + 2
            while terms[-1] > first * mpmath.mpf(10) ** -80 and x < j + 10**4:
                terms.append(mpmath.exp(log_pmf_at(x)))
                x += 1
            return binary_rr_epsilon(mpmath.fsum(terms))
    with mpmath.workdps(60 + int(-log_pmf_at(0) / mpmath.log(10))):
        return binary_rr_epsilon(
            (1 - mpmath.exp(log_pmf_at(0))) / 2 - mpmath.fsum(mpmath.exp(log_pmf_at(x)) for x in range(1, j + 1))
        )


def skellam_log_pmf(variance: float, x: int) -> mpmath.mpf:
    """log of e^-var I_|x|(var), the Skellam(var/2, var/2) pmf (Skellam 1946), in mpmath (with the
    digits to cancel log I_x(var) ~ var against var)."""
    with mpmath.workdps(60 + max(0, int(mpmath.log10(variance)))):
        v = mpmath.mpf(variance)
        return mpmath.log(mpmath.besseli(abs(x), v)) - v


def _skellam_log_pmfs(variance: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds on log e^-var I_|x|(var) at each x: scipy's ive (within `_PMF_SLACK`), and
    where it underflows mpmath (var <= 1: its power series converges at once) or else -inf below and
    the Chernoff tail bound P(X >= |x|) <= e^-(u asinh(u/var) - sqrt(var^2 + u^2) + var) above (a mass
    that underflowed must not read as an outcome one side never produces)."""
    with np.errstate(divide="ignore"):
        out = np.log(ive(np.abs(x), variance))
    lo, hi = out.copy(), out.copy()
    for i in np.flatnonzero(~(out > -690)):
        u = abs(float(x[i]))
        if variance <= 1:
            lo[i] = hi[i] = float(skellam_log_pmf(variance, int(u)))
        else:
            lo[i], hi[i] = -math.inf, -(u * math.asinh(u / variance) - math.hypot(variance, u) + variance)
    return lo, hi


def skellam_log_delta(variance: float, shift: int, epsilon: float) -> float:
    """log delta(eps) of Skellam noise of variance var with integer shift D: summed over
    |x| <= 40 sd + 10 of 0 and of D with scipy's ive up to var = 1e6; above it `unimodal_log_delta`."""
    d = int(shift)
    if variance <= 1e6:
        variance = float(variance)
        x = _windows(int(40 * math.sqrt(variance)) + 10, d)
        return pmf_log_delta(*_skellam_log_pmfs(variance, x), *_skellam_log_pmfs(variance, x - d), epsilon)
    return unimodal_log_delta(skellam_log_pmf(variance, 0), epsilon)


def binomial_log_delta(trials: int, p: float, shift: int, epsilon: float) -> float:
    """log delta(eps) of count + Bin(N, p) against count + D + Bin(N, p), summed over the outcomes
    within 40 sd (+ D + 10) of the mean, scipy's log-pmf (log-gamma based)."""
    n, d = int(trials), int(shift)
    sd = math.sqrt(n * p * (1 - p))
    lo, hi = max(0, int(n * p - 40 * sd) - 10), min(n, int(n * p + 40 * sd) + 10)
    y = np.arange(lo, hi + d + 1, dtype=float)
    with np.errstate(divide="ignore"):
        logp = stats.binom.logpmf(y, n, p)
        logq = stats.binom.logpmf(y - d, n, p)
    return pmf_log_delta(logp, logp, logq, logq, epsilon)


def shuffled_rr_log_delta(eps0: float, users: int, epsilon: float) -> float:
    """log delta(eps) of n users' binary randomized responses of pure eps0, shuffled (the count of 1s):
    Bin(n-1, q) + Bern(q) against Bin(n-1, q) + Bern(1-q), q = 1/(1 + e^eps0), summed over a window;
    a lower bound for every shuffled eps0-DP randomizer (Feldman, McMillan, Talwar, FOCS 2021, Sec. 3)."""
    n = int(users)
    if n == 1:
        return pure_log_delta(eps0, epsilon)
    q = float(1 / (1 + mpmath.exp(mpmath.mpf(eps0))))
    p = 1.0 - q
    m = n - 1
    sd = math.sqrt(max(m * p * q, 0.0))
    lo, hi = max(0, int(m * q - 40 * sd) - 10), min(m, int(m * q + 40 * sd) + 10)
    x = np.arange(lo, hi + 2, dtype=float)
    with np.errstate(divide="ignore"):
        f0 = stats.binom.logpmf(x, m, q)
        f1 = stats.binom.logpmf(x - 1, m, q)
    log_q, log_p = math.log(q), math.log1p(-q)
    base = np.logaddexp(log_q + f1, log_p + f0)  # the changed user reports 1 w.p. q
    changed = np.logaddexp(log_p + f1, log_q + f0)  # ... w.p. 1 - q
    return pmf_log_delta(changed, changed, base, base, epsilon)
