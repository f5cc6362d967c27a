"""Binomial tails, pmf and hockey-stick divergence in 40-digit mpmath, for any number of trials up to 2^52: the
references of tests/accounting/test_binomial_deep_tails.py and test_binomial_loss_pld.py.

A tail P(X >= k), k above the mean, is a sum of the pmf f(x) = C(N, x) p^x (1-p)^(N-x), which is analytic and varies
on the scale of the standard deviation: Euler-Maclaurin summation,

    sum_{x>=k} f(x) = int_k^inf f + f(k)/2 - sum_{i>=1} B_2i / (2i)! f^(2i-1)(k),

is exact up to a remainder of order f(k) (|z|/sd)^(2i+1) (z the count's distance to the mean in sd), far below 10^-20
of the tail from N = 10^6 up with five Bernoulli terms. The log-pmf around k is its Taylor series in polygamma
functions, summed to 40 digits, and integrated by Gauss-Legendre quadrature on pieces where it changes by e^2 at
most; the tail beyond sqrt(z^2 + 400) sd (< e^-200 of it) is left out. Against the direct sum of the pmf at N = 10^6
and 10^7 it agrees to 10^-22 or better at |z| <= 35.
"""

from __future__ import annotations

import functools
import math

import mpmath

from dpaudit.accounting.binomial import _threshold

DPS = 40


def _log_pmf(trials: int, p: mpmath.mpf, x: mpmath.mpf) -> mpmath.mpf:
    return (
        mpmath.loggamma(trials + 1)
        - mpmath.loggamma(x + 1)
        - mpmath.loggamma(trials - x + 1)
        + x * mpmath.log(p)
        + (trials - x) * mpmath.log(1 - p)
    )


def pmf(trials: int, p: float, x: int) -> mpmath.mpf:
    """f(x) = C(N, x) p^x (1 - p)^(N - x)."""
    with mpmath.workdps(DPS):
        if not 0 <= x <= trials:
            return mpmath.mpf(0)
        return mpmath.exp(_log_pmf(trials, mpmath.mpf(p), mpmath.mpf(x)))


def _upper_tail(trials: int, p: float, k: int) -> mpmath.mpf:
    """P(X >= k) for k >= Np, by Euler-Maclaurin (module docstring)."""
    pm, x = mpmath.mpf(p), mpmath.mpf(k)
    sd = math.sqrt(trials * p * (1 - p))
    z = (k - trials * p) / sd
    t_end = min(trials - k, (math.sqrt(z * z + 400.0) - z) * sd)
    # log f(k + t) - log f(k) = sum_j c_j t^j, c_j = L^(j)(k) / j!, L = log f
    coef = [mpmath.mpf(0), -mpmath.digamma(x + 1) + mpmath.digamma(trials - x + 1) + mpmath.log(pm / (1 - pm))]
    while len(coef) < 12 or abs(coef[-1]) * mpmath.mpf(t_end) ** (len(coef) - 1) > mpmath.mpf(10) ** -DPS:
        j = len(coef)
        coef.append((-mpmath.psi(j - 1, x + 1) - (-1) ** j * mpmath.psi(j - 1, trials - x + 1)) / mpmath.factorial(j))
    pieces = [mpmath.mpf(0)]
    while pieces[-1] < t_end:
        at = z + float(pieces[-1]) / sd
        pieces.append(min(mpmath.mpf(t_end), pieces[-1] + 2 * sd / (1 + abs(at))))
    integral = mpmath.quad(lambda t: mpmath.exp(mpmath.polyval(coef, t, asc=True)), pieces, method="gauss-legendre")
    e = [mpmath.mpf(1)]  # exp(sum_j c_j t^j) = sum_m e_m t^m, so f^(m)(k) = f(k) m! e_m
    for m in range(1, 12):
        e.append(sum(j * coef[j] * e[m - j] for j in range(1, m + 1)) / m)
    ends = mpmath.mpf(1) / 2 - sum(mpmath.bernoulli(2 * i) / (2 * i) * e[2 * i - 1] for i in range(1, 6))
    return mpmath.exp(_log_pmf(trials, pm, x)) * (integral + ends)


@functools.lru_cache(maxsize=512)
def at_least(trials: int, p: float, k: int) -> mpmath.mpf:
    """P(X >= k), X ~ Bin(N, p), to about 30 digits (N >= 10^6)."""
    with mpmath.workdps(DPS):
        if k <= 0:
            return mpmath.mpf(1)
        if k > trials:
            return mpmath.mpf(0)
        if k >= trials * p:
            return _upper_tail(trials, p, k)
        return 1 - _upper_tail(trials, 1 - p, trials - k + 1)


def at_most(trials: int, p: float, k: int) -> mpmath.mpf:
    """P(X <= k) = P(N - X >= N - k), N - X ~ Bin(N, 1 - p) (1 - p exact for the p of the tests)."""
    return at_least(trials, 1 - p, trials - k)


def _log_ratio(trials: int, p: mpmath.mpf, shift: int, y: int) -> mpmath.mpf:
    """log f(y - s) / f(y) = sum_{j<s} log(x (1 - p) / ((N - x + 1) p)), x = y - j."""
    return mpmath.fsum(mpmath.log((y - j) * (1 - p) / ((trials - y + j + 1) * p)) for j in range(shift))


def _window(trials: int, p: float, lo: int, hi: int) -> mpmath.mpf:
    """P(lo <= X <= hi), by the pmf's ratio recurrence."""
    lo, hi = max(lo, 0), min(hi, trials)
    if lo > hi:
        return mpmath.mpf(0)
    pm = mpmath.mpf(p)
    term = pmf(trials, p, lo)
    total = term
    for x in range(lo, hi):
        term *= (trials - x) * pm / ((x + 1) * (1 - pm))
        total += term
    return total


@functools.lru_cache(maxsize=512)
def hockey_stick(trials: int, p: float, shift: int, eps: float) -> mpmath.mpf:
    """Exact delta(eps) of count + Bin(N, p) moved by `shift`, both directions: the level sets of the likelihood
    ratio (`dpaudit.accounting.binomial`'s docstring), thresholds found in mpmath:

        up:   P(X >= t - s) - e^eps P(X >= t) = P(t - s <= X < t) - (e^eps - 1) P(X >= t),  t = min{y: log LR(y) > eps}
        down: P(X <= u) - e^eps P(X <= u - s) = P(u - s < X <= u) - (e^eps - 1) P(X <= u - s),
              u = max{y: log LR(y) < -eps}.
    """
    with mpmath.workdps(DPS):
        pm, growth = mpmath.mpf(p), mpmath.expm1(mpmath.mpf(eps))

        def first_above(level: float) -> int:  # smallest y in [s, N + 1] with log LR(y) > level (N + 1: none)
            y = _threshold(trials, p, shift, level)  # float64's guess, walked to the exact answer
            while y <= trials and not _log_ratio(trials, pm, shift, y) > level:
                y += 1
            while y > shift and _log_ratio(trials, pm, shift, y - 1) > level:
                y -= 1
            return y

        t = first_above(eps)
        up = _window(trials, p, t - shift, t - 1) - growth * at_least(trials, p, t)
        u = first_above(-eps) - 1
        while u >= shift and not _log_ratio(trials, pm, shift, u) < -eps:
            u -= 1
        down = _window(trials, p, u - shift + 1, u) - growth * at_most(trials, p, u - shift)
        return max(up, down, mpmath.mpf(0))
