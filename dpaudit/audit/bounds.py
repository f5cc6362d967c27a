"""Confidence bounds on event probabilities and the privacy parameters they imply.

For neighbouring inputs d0, d1 and any event E, an (epsilon, delta)-DP mechanism M satisfies
P[M(d0) in E] <= e^epsilon P[M(d1) in E] + delta (Dwork and Roth 2014, Def. 2.4), hence

    epsilon >= log((p0 - delta) / p1),       p0 = P[M(d0) in E], p1 = P[M(d1) in E].

Replacing p0 by a lower and p1 by an upper Clopper-Pearson bound (Clopper, Pearson, Biometrika
1934; each one-sided at level a) gives a
lower bound on epsilon that holds with probability >= 1 - 2a (Jagielski, Ullman, Oprea, "Auditing
Differentially Private Machine Learning", NeurIPS 2020; Nasr et al., "Adversary
Instantiation", IEEE S&P 2021).  A mu-Gaussian-DP mechanism has trade-off function
G_mu(a) = Phi(Phi^-1(1 - a) - mu) (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022,
Sec. 2), so for every event mu >= Phi^-1(p0) - Phi^-1(p1); the same bounds give a lower bound on mu.

Clopper-Pearson bounds are the roots of binomial tails written as regularized incomplete beta
functions (Johnson, Kemp, Kotz, "Univariate Discrete Distributions", 3rd ed., Wiley 2005, eq. 3.34):

    lower L:  P[Bin(n, L) >= k] = I_L(k, n - k + 1) = level,
    upper U:  P[Bin(n, U) <= k] = 1 - I_U(k + 1, n - k) = level.

scipy's inverse `betaincinv` (behind statsmodels' `proportion_confint(method="beta")` and
`scipy.stats.beta.ppf`) is wrong for large n: at n = 2e8, k = 1000 it returns 1.52 k/n, a "lower"
bound above the observed rate (scipy issues #12796, #12635; statsmodels #7008).  So every root is
checked by a round trip through the forward function (`betainc`/`betaincc`, accurate there) and,
when the check fails, found again by bisection on log x, keeping the end of the bracket on the
safe side (below the exact lower bound, above the exact upper bound).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc, betaincc, betainccinv, betaincinv, ndtri

__all__ = [
    "best_case_epsilon",
    "cp_lower",
    "cp_upper",
    "epsilon_from_rates",
    "mu_from_rates",
    "probit_cp_lower",
    "probit_cp_upper",
    "wilson_lower",
    "wilson_upper",
]

#: A root from scipy's inverse is accepted when the exact root lies within this relative distance
#: of it (relative to the nearer of x and 1 - x), as the forward function shows.
_ROUND_TRIP_RTOL = 1e-10
#: Bisection steps on log x over [tiny, 1]: log2(708 / 2**-52) < 62, so 64 steps meet adjacent floats.
_BISECT_STEPS = 64


def _check_counts(count, nobs, level: float) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(count, dtype=float)
    n = np.asarray(nobs, dtype=float)
    if not (np.all(np.isfinite(n)) and np.all(n >= 1) and np.all(n == np.floor(n))):
        raise ValueError(f"nobs must be a positive integer, got {nobs!r}")
    if not (np.all(np.isfinite(k)) and np.all(k == np.floor(k)) and np.all(k >= 0) and np.all(k <= n)):
        raise ValueError(f"count must be an integer in [0, nobs], got {count!r} (nobs={nobs!r})")
    if isinstance(level, bool) or not (isinstance(level, (int, float, np.floating)) and 0.0 < level <= 0.5):
        raise ValueError(f"level must lie in (0, 0.5], got {level!r}")
    k, n = np.broadcast_arrays(k, n)
    return k, n


def _bisect_log(below, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shrink brackets [lo, hi] (0 < lo < hi) keeping below(lo) true and below(hi) false."""
    for _ in range(_BISECT_STEPS):
        mid = np.sqrt(lo) * np.sqrt(hi)  # geometric midpoint, without underflow of lo * hi
        mid = np.clip(mid, lo, hi)
        ok = below(mid)
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo, hi


def _around(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x moved by `_ROUND_TRIP_RTOL` of its distance to the nearer end of [0, 1], down and up."""
    step = _ROUND_TRIP_RTOL * np.minimum(x, 1.0 - x)
    return np.maximum(x - step, 0.0), np.minimum(x + step, 1.0)


def _lower_root(k: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    """The largest x with I_x(k, n - k + 1) <= level (up to `_ROUND_TRIP_RTOL`), for 1 <= k <= n.

    scipy's root x0 is accepted when the tail brackets `level` around it (I at x0 moved down is
    <= level <= I at x0 moved up); the lower end is returned.  Otherwise: bisection on log x.
    """
    a, b = k, n - k + 1
    with np.errstate(all="ignore"):
        x = betaincinv(a, b, level)
        ok = np.isfinite(x) & (x > 0) & (x < 1)
        lo, hi = _around(np.where(ok, x, 0.5))
        ok &= (betainc(a, b, lo) <= level) & (betainc(a, b, hi) >= level)
    x = np.where(ok, lo, 0.0)
    bad = ~ok
    if np.any(bad):
        ab, bb = a[bad], b[bad]
        lo = np.full(ab.shape, np.finfo(float).tiny)
        lo_ok = betainc(ab, bb, lo) <= level
        # lo is the safe end: betainc(lo) <= level as computed, hi fails it (ulps apart: too close for an exact check)
        lo, _ = _bisect_log(lambda t: betainc(ab, bb, t) <= level, lo, np.ones(ab.shape))
        x[bad] = np.where(lo_ok, lo, 0.0)  # the root below the smallest normal float: 0 is safe
    return x


def _upper_root(k: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    """The smallest x with 1 - I_x(k + 1, n - k) <= level (up to `_ROUND_TRIP_RTOL`), for 0 <= k < n.

    As `_lower_root`, on the upper tail (`betaincc`, decreasing in x); the upper end is returned.
    """
    a, b = k + 1, n - k
    with np.errstate(all="ignore"):
        x = betainccinv(a, b, level)
        ok = np.isfinite(x) & (x > 0) & (x < 1)
        lo, hi = _around(np.where(ok, x, 0.5))
        ok &= (betaincc(a, b, lo) >= level) & (betaincc(a, b, hi) <= level)
    x = np.where(ok, hi, 1.0)
    bad = ~ok
    if np.any(bad):
        ab, bb = a[bad], b[bad]
        lo = np.full(ab.shape, np.finfo(float).tiny)
        hi_at_tiny = betaincc(ab, bb, lo) <= level
        _, hi = _bisect_log(lambda t: betaincc(ab, bb, t) > level, lo, np.ones(ab.shape))
        x[bad] = np.where(hi_at_tiny, lo, hi)
    return x


def cp_lower(count, nobs, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound L: P[Bin(n, L) >= k] = `level`, 0 at k = 0.

    P[p < L] <= `level`.  Never above the exact bound (see the module docstring for the check of
    scipy's inverse); count and nobs broadcast, nobs up to 2**53.
    """
    k, n = _check_counts(count, nobs, level)
    out = np.zeros(k.shape)
    pos = k > 0
    if np.any(pos):
        out[pos] = np.minimum(_lower_root(k[pos], n[pos], level), k[pos] / n[pos])
    return out


def cp_upper(count, nobs, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound U: P[Bin(n, U) <= k] = `level`, 1 at k = n.

    P[p > U] <= `level`.  Never below the exact bound (see the module docstring).
    """
    k, n = _check_counts(count, nobs, level)
    out = np.ones(k.shape)
    part = k < n
    if np.any(part):
        out[part] = np.maximum(_upper_root(k[part], n[part], level), k[part] / n[part])
    return out


def probit_cp_lower(count, nobs, level: float) -> np.ndarray:
    """Phi^-1 of the Clopper-Pearson lower bound, computed on the smaller tail.

    Above 1/2 the bound L is within 1e-16 of 1 only in absolute terms; Phi^-1(L) = -Phi^-1(1 - L)
    and 1 - L is the upper bound on the complementary count (P[Bin(n, 1-L) <= n-k] = level), so it
    is computed directly rather than as 1 minus a rounded L.
    """
    k, n = _check_counts(count, nobs, level)
    low = cp_lower(k, n, level)
    comp = cp_upper(n - k, n, level)  # = 1 - low exactly, accurate when small
    return np.where(low <= 0.5, ndtri(low), -ndtri(comp))


def probit_cp_upper(count, nobs, level: float) -> np.ndarray:
    """Phi^-1 of the Clopper-Pearson upper bound, computed on the smaller tail (see `probit_cp_lower`)."""
    k, n = _check_counts(count, nobs, level)
    upp = cp_upper(k, n, level)
    comp = cp_lower(n - k, n, level)  # = 1 - upp exactly, accurate when small
    return np.where(upp <= 0.5, ndtri(upp), -ndtri(comp))


def epsilon_from_rates(p0, p1, delta: float) -> np.ndarray:
    """log((p0 - delta) / p1), clamped below at 0 (the bound is on a non-negative quantity).

    p1 == 0 with p0 > delta gives +inf (a point estimate can be infinite; a Clopper-Pearson upper
    bound on p1 never is).
    """
    p0 = np.asarray(p0, dtype=float)
    p1 = np.asarray(p1, dtype=float)
    num = p0 - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num > 0, np.log(np.where(num > 0, num, 1.0)) - np.log(p1), 0.0)
    return np.maximum(out, 0.0)


def mu_from_rates(p0, p1) -> np.ndarray:
    """Phi^-1(p0) - Phi^-1(p1), clamped below at 0 (Dong, Roth, Su 2022)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ndtri(np.asarray(p0, dtype=float)) - ndtri(np.asarray(p1, dtype=float))
    return np.maximum(np.nan_to_num(out, nan=0.0), 0.0)


def wilson_lower(p, n, z: float) -> np.ndarray:
    """Wilson score lower bound for a proportion estimated as `p` from `n` trials (Wilson 1927)."""
    p = np.asarray(p, dtype=float)
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.maximum((centre - half) / (1 + z * z / n), 0.0)


def wilson_upper(p, n, z: float) -> np.ndarray:
    """Wilson score upper bound for a proportion estimated as `p` from `n` trials (Wilson 1927)."""
    p = np.asarray(p, dtype=float)
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.minimum((centre + half) / (1 + z * z / n), 1.0)


def best_case_epsilon(nobs: int, delta: float, level: float) -> float:
    """The largest lower bound any event can give with `nobs` runs per side: p0_hat = 1, p1_hat = 0."""
    low = float(cp_lower(nobs, nobs, level))
    upp = float(cp_upper(0, nobs, level))
    if low <= delta:
        return 0.0
    return math.log((low - delta) / upp)
