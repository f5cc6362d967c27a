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
- `shuffled_delta` / `shuffled_epsilon`: the guarantee of a shuffled (eps0, delta0)-LDP randomizer
  (delta0 = 0: pure), the best of the bounds above and, for delta0 > 0, FMT 2021 Thm 3.8: if
  shuffling eps0-LDP randomizers is (eps, delta)-DP, shuffling (eps0, delta0)-LDP ones is
  (eps, delta + (e^eps + 1)(1 + e^-eps0/2) n delta0)-DP (`local_delta_term`), together with the
  un-amplified bound (one user's message is (eps0, delta0)-DP, the shuffle is post-processing).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats
from scipy.special import betainc

from dpaudit.accounting.guarantees import pure_delta
from dpaudit.accounting.search import smallest_accepted

__all__ = [
    "closed_form_applies",
    "closed_form_epsilon",
    "local_delta_term",
    "numerical_delta",
    "numerical_epsilon",
    "shuffled_delta",
    "shuffled_epsilon",
    "unamplified_delta",
    "unamplified_epsilon",
]

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
        self.n = min(int(num_users), _MAX_USERS)
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
        rr = a - ee * (1 - a)  # delta of eps0-RR at eps: a - e^eps (1 - a)
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

# Below this local epsilon e^eps0/(1 + e^eps0) rounds to within a few ulp of 1/2 (at 1e-17 exactly,
# and the numerical bound divided by 0): no amplification is claimed from it.
_MIN_LOCAL_EPSILON = 1e-9

# The numerical bound's windows of C ~ Bin(n - 1, e^-eps0) are doubles read by scipy's incomplete beta,
# which slows (18 s at 2^52 users) and then fails (nan near 1e18): more users are accounted as this
# many (0.4 s), and Thm 3.1 takes the true n. Fewer users is a valid bound: the shuffle of n' > n
# reports is a post-processing of the shuffle of n (the other n' - n users' data is fixed in a
# neighbouring pair, so their reports can be added and reshuffled).
_MAX_USERS = 10**10


def numerical_delta(local_epsilon: float, num_users: int, epsilon: float) -> float:
    """Upper bound on delta at `epsilon` of the shuffled protocol (FMT 2021 numerical bound)."""
    if local_epsilon > _MAX_LOCAL_EPSILON:
        return 0.0 if epsilon >= local_epsilon else 1.0
    if local_epsilon < _MIN_LOCAL_EPSILON:
        return pure_delta(local_epsilon, epsilon)
    return _Numerical(local_epsilon, num_users).delta(epsilon)


@functools.lru_cache(maxsize=4096)
def numerical_epsilon(local_epsilon: float, num_users: int, delta: float, rtol: float = 1e-4) -> float:
    """Smallest epsilon found (bisection, rounded up) with `numerical_delta` <= delta; at most eps0."""
    if delta <= _ROUNDOFF or not _MIN_LOCAL_EPSILON <= local_epsilon <= _MAX_LOCAL_EPSILON:
        return float(local_epsilon)
    num = _Numerical(local_epsilon, num_users, tail=min(1e-13, delta * 1e-3))
    hi = float(local_epsilon)
    if closed_form_applies(local_epsilon, num_users, delta):
        hi = min(hi, closed_form_epsilon(local_epsilon, num_users, delta))
    if num.delta(hi) > delta:
        hi = float(local_epsilon)
    if num.delta(0.0) <= delta:
        return 0.0
    return smallest_accepted(lambda e: num.delta(e) <= delta, 0.0, hi, rtol=rtol)


def local_delta_term(epsilon: float, local_epsilon: float, local_delta: float, num_users: int) -> float:
    """(e^eps + 1)(1 + e^-eps0/2) n delta0: what FMT 2021 Thm 3.8 adds to the delta of shuffling
    pure eps0-LDP randomizers when they are only (eps0, delta0)-LDP (increasing in eps)."""
    return (math.exp(epsilon) + 1.0) * (1.0 + math.exp(-local_epsilon) / 2.0) * num_users * local_delta


def unamplified_delta(local_epsilon: float, local_delta: float, epsilon: float) -> float:
    """delta at eps of one (eps0, delta0)-DP release, the bound without amplification (the shuffled
    view is a post-processing of the changed user's message): delta0 + (1 - delta0) delta_RR(eps),
    the hockey-stick of the dominating four-outcome mechanism (Kairouz, Oh, Viswanath, ICML 2015,
    Thm 2.1), with delta_RR = `guarantees.pure_delta(eps0, eps)`."""
    return local_delta + (1.0 - local_delta) * pure_delta(local_epsilon, epsilon)


def unamplified_epsilon(local_epsilon: float, local_delta: float, delta: float) -> float:
    """Smallest eps with `unamplified_delta` <= delta (the inverse in closed form: e^eps =
    e^eps0 - x (1 + e^eps0), x = (delta - delta0)/(1 - delta0)); inf when delta < delta0."""
    if delta < local_delta:
        return math.inf
    x = (delta - local_delta) / (1.0 - local_delta)
    # e^eps = e^eps0 (1 - x (1 + e^-eps0)), computed relative to e^eps0 to avoid overflow
    rest = 1.0 - x * (1.0 + math.exp(-local_epsilon))
    if rest <= 0.0:
        return 0.0
    # rounded up by a relative 1e-12 (log round-off), so the answer is never optimistic; eps0
    # itself is always valid at delta >= delta0
    return min(float(local_epsilon), max(0.0, local_epsilon + math.log(rest)) * (1 + 1e-12) + 1e-15)


# The amplified (eps0, delta0 > 0) bound g(eps) = numerical delta + Thm 3.8 term is evaluated on
# this many equal steps of [0, eps0] (every point is a valid bound; the grid only serves the search).
_GRID = 64


class _Amplified:
    """g(eps) = `numerical_delta`(eps0, n, eps) + `local_delta_term`(eps, eps0, delta0, n) for one
    (eps0, n, delta0), tabulated on a grid of [0, eps0]. Being (eps', d)-DP implies (eps, d)-DP
    for every eps >= eps', so delta(eps) = min over eps' <= eps of g(eps') (g falls, then the term
    takes over and it rises), and epsilon(delta) = the smallest eps found with g(eps) <= delta."""

    def __init__(self, local_epsilon: float, num_users: int, local_delta: float) -> None:
        self.e0, self.n, self.d0 = float(local_epsilon), int(num_users), float(local_delta)
        self.num = _Numerical(self.e0, self.n)
        self.grid = self.e0 * np.arange(_GRID + 1) / _GRID
        self.values = np.array([self.g(float(e)) for e in self.grid])

    def g(self, epsilon: float) -> float:
        return self.num.delta(epsilon) + local_delta_term(epsilon, self.e0, self.d0, self.n)

    def delta(self, epsilon: float) -> float:
        return min(self.g(epsilon), float(self.values[self.grid <= epsilon].min()))

    def epsilon(self, delta: float, rtol: float = 1e-6) -> float:
        ok = np.flatnonzero(self.values <= delta)
        if ok.size == 0:
            return math.inf
        j = int(ok[0])
        if j == 0:
            return 0.0
        # g(grid[j-1]) > delta >= g(grid[j])
        return smallest_accepted(lambda e: self.g(e) <= delta, float(self.grid[j - 1]), float(self.grid[j]), rtol=rtol)


@functools.lru_cache(maxsize=256)
def _amplified(local_epsilon: float, num_users: int, local_delta: float) -> _Amplified:
    return _Amplified(local_epsilon, num_users, local_delta)


def shuffled_delta(local_epsilon: float, num_users: int, epsilon: float, local_delta: float = 0.0) -> float:
    """delta at eps of n shuffled (eps0, delta0)-LDP randomizers: the smaller of `unamplified_delta`
    and the amplified bound, FMT's numerical bound (delta0 = 0) or, for delta0 > 0, the numerical
    bound plus `local_delta_term` (Thm 3.8) at the best eps' <= eps."""
    direct = unamplified_delta(local_epsilon, local_delta, epsilon)
    if epsilon >= local_epsilon or local_epsilon > _MAX_LOCAL_EPSILON:
        return min(1.0, direct)
    if local_delta == 0.0:
        return min(1.0, direct, numerical_delta(local_epsilon, num_users, epsilon))
    return min(1.0, direct, _amplified(local_epsilon, num_users, local_delta).delta(epsilon))


def _pure_shuffled_epsilon(local_epsilon: float, num_users: int, delta: float) -> float:
    """min(eps0 at delta (`unamplified_epsilon`, exact for one user), FMT Thm 3.1 where it applies,
    FMT numerical bound (skipped beyond `_MAX_USERS` users where Thm 3.1 applies)) at `delta`
    (pure eps0-LDP)."""
    best = float(local_epsilon)
    if delta == 0.0:
        return best
    best = min(best, unamplified_epsilon(local_epsilon, 0.0, delta))
    if closed_form_applies(local_epsilon, num_users, delta):
        best = min(best, closed_form_epsilon(local_epsilon, num_users, delta))
        if num_users > _MAX_USERS:  # the numerical bound would count only _MAX_USERS of them
            return best
    return min(best, numerical_epsilon(local_epsilon, num_users, delta))


def shuffled_epsilon(local_epsilon: float, num_users: int, delta: float, local_delta: float = 0.0) -> float:
    """eps at `delta` of n shuffled (eps0, delta0)-LDP randomizers (consistent with `shuffled_delta`,
    never optimistic: every answer has its delta checked).

    delta0 = 0: min(eps0, Thm 3.1, numerical). delta0 > 0: the smaller of `unamplified_epsilon` and
    the smallest eps found with numerical delta(eps) <= delta - term(eps) (Thm 3.8: the pure part
    gets what the local-delta term leaves). Raises ValueError when delta < delta0: then neither
    leaves any budget (the term is >= 2 n delta0 > delta, and one user's message is only
    (eps0, delta0)-DP).
    """
    if local_delta == 0.0:
        return _pure_shuffled_epsilon(local_epsilon, num_users, delta)
    if delta < local_delta:
        raise ValueError(
            f"delta={delta!r} is below local_delta={local_delta!r}: an (eps0, delta0)-LDP randomizer "
            "gives no guarantee there, shuffled or not (FMT 2021 Thm 3.8 leaves delta - "
            f"{local_delta_term(0.0, local_epsilon, local_delta, num_users):.3g} <= 0 for the pure part)"
        )
    best = unamplified_epsilon(local_epsilon, local_delta, delta)
    if local_epsilon <= _MAX_LOCAL_EPSILON:
        best = min(best, _amplified(local_epsilon, num_users, local_delta).epsilon(delta))
    return best
