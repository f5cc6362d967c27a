"""Amplification by shuffling: n users each apply an eps0-DP local randomizer, outputs shuffled.

Feldman, McMillan, Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of
Privacy Amplification by Shuffling", FOCS 2021:
- `closed_form_epsilon`: their Theorem 3.1;
- `numerical_delta` / `numerical_epsilon`: their numerical bound (Thm 3.2 and Sec. 4.3). The
  shuffled output is a post-processing of the pair
      P = (A + D, C - A + 1 - D),  Q = (A + 1 - D, C - A + D),
  C ~ Bin(n-1, e^-eps0), A ~ Bin(C, 1/2), D ~ Bern(e^eps0/(e^eps0+1)) under P and
  Bern(1/(e^eps0+1)) under Q. C is observable (the sum is C + 1), so delta(eps) = E_C[delta_C(eps)].
  delta_c is non-increasing in c (the pair at c+1 is the pair at c plus an independent fair bit,
  a post-processing), so grouping c into intervals and using the value at each interval's left
  end is an upper bound; the mass of C outside the window counts with the trivial bound
  delta_RR(eps) (each conditional pair is a post-processing of eps0-randomized response).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats
from scipy.special import betainc

__all__ = ["closed_form_applies", "closed_form_epsilon", "numerical_delta", "numerical_epsilon"]

# Slack added to each numerically computed delta: cancellation in F(t) - e^eps F(t-1) loses at
# most a few ulps per conditional term; this bounds the total (weights sum to <= 1).
_ROUNDOFF = 1e-14
_INTERVALS = 600


def closed_form_applies(local_epsilon: float, num_users: int, delta: float) -> bool:
    """FMT Thm 3.1 requires eps0 <= log(n / (16 log(2/delta)))."""
    return delta > 0 and local_epsilon <= math.log(num_users / (16 * math.log(2 / delta)))


def closed_form_epsilon(local_epsilon: float, num_users: int, delta: float) -> float:
    """FMT 2021 Thm 3.1: eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta))/sqrt(n)
    + 8 e^eps0 / n)), valid when eps0 <= log(n/(16 log(2/delta))); raises ValueError otherwise."""
    if not closed_form_applies(local_epsilon, num_users, delta):
        raise ValueError(
            f"FMT Thm 3.1 needs local_epsilon <= log(num_users/(16 log(2/delta))); got local_epsilon="
            f"{local_epsilon!r}, num_users={num_users!r}, delta={delta!r}"
        )
    e0 = math.exp(local_epsilon)
    n = float(num_users)
    inner = 8 * math.sqrt(e0 * math.log(4 / delta)) / math.sqrt(n) + 8 * e0 / n
    return math.log1p(math.tanh(local_epsilon / 2) * inner)


def _half_binomial_cdf(t: np.ndarray, c: np.ndarray) -> np.ndarray:
    """P[Bin(c, 1/2) <= t] elementwise: 0 for t < 0, 1 for t >= c, else the regularized incomplete
    beta I_{1/2}(c - t, t + 1) (the identity cephes' bdtr evaluates). Computed on float arrays with
    betainc, so no integer-argument ufunc loop is involved: scipy's bdtr only has a C-long loop for
    n and falls back to a deprecated float loop (a DeprecationWarning per call) whenever n is not
    a C long, e.g. int64 where long is 32 bits."""
    t = np.asarray(t, dtype=float)
    c = np.asarray(c, dtype=float)
    inside = (t >= 0) & (t < c)
    a = np.where(inside, c - t, 1.0)
    b = np.where(inside, t + 1.0, 1.0)
    return np.where(inside, betainc(a, b, 0.5), np.where(t >= c, 1.0, 0.0))


class _Numerical:
    """Precomputed C-window and weights for one (eps0, n)."""

    def __init__(self, local_epsilon: float, num_users: int, tail: float = 1e-13) -> None:
        self.eps0 = float(local_epsilon)
        self.n = int(num_users)
        self.alpha = 1.0 / (1.0 + math.exp(-self.eps0))  # e^eps0/(1+e^eps0)
        m = self.n - 1
        p = math.exp(-self.eps0)
        if m == 0:
            self.cs = np.array([0.0])
            self.w = np.array([1.0])
            self.outside = 0.0
            return
        dist = stats.binom(m, p)
        lo = int(max(0, dist.ppf(tail)))
        hi = int(min(m, dist.isf(tail)))
        edges = np.unique(np.linspace(lo, hi + 1, _INTERVALS + 1).astype(np.int64))
        if edges[-1] != hi + 1:
            edges = np.append(edges, hi + 1)
        cdf = dist.cdf(edges - 1)  # P[C <= edge - 1]
        self.cs = edges[:-1].astype(float)  # left end of each interval [edges[j], edges[j+1])
        self.w = np.maximum(np.diff(cdf), 0.0)
        self.outside = max(0.0, 1.0 - float(self.w.sum()))

    def delta(self, epsilon: float) -> float:
        if epsilon >= self.eps0:
            return 0.0
        a = self.alpha
        ee = math.exp(epsilon)
        rr = (a - ee * (1 - a))  # delta of eps0-RR at eps: a - e^eps (1 - a)
        # P(a)/Q(a) is decreasing in a; P > e^eps Q  <=>  a/(c-a+1) < r*  <=>  a < beta (c+1)
        r_star = (a - ee * (1 - a)) / (ee * a - (1 - a))
        beta = r_star / (1 + r_star)
        c = self.cs
        t = np.floor(beta * (c + 1))
        t = np.where(t >= beta * (c + 1), t - 1, t)  # strict inequality: largest a < beta (c+1)
        f_t = _half_binomial_cdf(t, c)
        f_tm1 = _half_binomial_cdf(t - 1, c)
        # delta_c = P(S) - e^eps Q(S) with S = {a <= t}
        dc = f_t * (a - ee * (1 - a)) - f_tm1 * (ee * a - (1 - a))
        dc = np.clip(dc, 0.0, rr)
        return float(min(1.0, np.dot(self.w, dc) + self.outside * rr + _ROUNDOFF))


# Beyond this local epsilon the clone probability e^-eps0 is negligible for any feasible n and
# e^eps0 overflows: no amplification is claimed (the trivial eps0-DP bound is used).
_MAX_LOCAL_EPSILON = 500.0


def numerical_delta(local_epsilon: float, num_users: int, epsilon: float) -> float:
    """Upper bound on delta at `epsilon` of the shuffled protocol (FMT 2021 numerical bound)."""
    if local_epsilon > _MAX_LOCAL_EPSILON:
        return 0.0 if epsilon >= local_epsilon else 1.0
    return _Numerical(local_epsilon, num_users).delta(epsilon)


@functools.lru_cache(maxsize=4096)
def numerical_epsilon(local_epsilon: float, num_users: int, delta: float, rtol: float = 1e-4) -> float:
    """Smallest epsilon found (bisection, rounded up) with `numerical_delta` <= delta; at most eps0."""
    if delta <= _ROUNDOFF or local_epsilon > _MAX_LOCAL_EPSILON:
        return float(local_epsilon)
    num = _Numerical(local_epsilon, num_users, tail=min(1e-13, delta * 1e-3))
    hi = float(local_epsilon)
    if closed_form_applies(local_epsilon, num_users, delta):
        hi = min(hi, closed_form_epsilon(local_epsilon, num_users, delta))
    if num.delta(hi) > delta:
        hi = float(local_epsilon)
    lo = 0.0
    if num.delta(0.0) <= delta:
        return 0.0
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if num.delta(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi
