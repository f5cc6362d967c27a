"""Exact privacy profile of the binomial count mechanism, for any number of trials.

Release Y = c + X with X ~ Bin(N, p); one user moves the count c by s (an integer, `sensitivity`).
With f the Bin(N, p) pmf, the likelihood ratio of the shifted against the unshifted count,

    LR(y) = f(y - s) / f(y) = prod_{j<s} f(y-j-1)/f(y-j),   f(x-1)/f(x) = x(1-p) / ((N-x+1) p),

is non-decreasing in y (the binomial is log-concave), so in each direction the optimal
distinguishing set is a tail and the hockey-stick divergence is a difference of binomial tails:

    shifted vs unshifted:  delta_up(eps)   = P(X >= t - s) - e^eps P(X >= t),  t = min{y: LR(y) > e^eps}
    unshifted vs shifted:  delta_down(eps) = P(X <= u) - e^eps P(X <= u - s),  u = max{y: 1/LR(y) > e^eps}

and delta(eps) = max of the two: (eps, delta)-DP is a bound on the hockey-stick divergence
sup_S P(S) - e^eps Q(S) (e.g. Balle, Barthe, Gaboardi, NeurIPS 2018), attained at a level set of
the likelihood ratio. A count that moves by at most s: the divergence is non-decreasing in the shift
(log-concavity), so s is the worst case. Outcomes only one side can produce (y > N, y < s) have infinite
ratio. Nothing is enumerated: the tails are regularized incomplete beta functions, so a count
with N ~ 10^14 trials (the noise of Cheu et al.'s theorem-sized b) costs as little as N = 100.

Each delta is written P(S) - e^eps Q(S) = P(S minus Q's set) - (e^eps - 1) Q(S): up, the window
P(t - s <= X < t) minus (e^eps - 1) P(X >= t). scipy's tails and pmf lose a relative ~ulp·√N·(1 + |z|)
(`dpaudit.accounting.binomial_tails`), and the window (a sum of at most `_WINDOW_TERMS` pmf values, or a
difference of tails) is bounded above, the tail below, so every delta is an upper bound. Near the mean at
large N both tails are ~1/2 and the window tiny: its pmf sum keeps the error to ~RELATIVE·√N of delta,
where a difference of tails would leave ~RELATIVE·√N of 1/2.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats
from scipy.special import betainc

from dpaudit.accounting.binomial_tails import lower_bounds, upper_bounds
from dpaudit.accounting.search import first_accepted_doubling, smallest_accepted, smallest_accepted_int

__all__ = ["MAX_TRIALS", "binomial_delta", "binomial_epsilon"]

MAX_TRIALS = 2**52
"""Most trials accounted for: outcomes and N are doubles here, exact integers only below 2^53, and
scipy's incomplete beta returns nan near N = 1e18 (a delta of 0, epsilon 0, was read there)."""

_WINDOW_TERMS = 1024  # windows of at most this many counts are summed from the pmf, wider ones are tail differences
_ULP = 2.0**-52


def _log_ratio(y: np.ndarray, trials: int, p: float, s: int) -> np.ndarray:
    """log LR(y) for integers s <= y <= N: sum_j log1p((y - j - p(N+1)) / ((N - y + j + 1) p)).

    Each factor x(1-p)/((N-x+1)p) with x = y - j equals 1 + (x - p(N+1))/((N-x+1)p); the log1p
    form keeps the ratio accurate near 1, where the threshold lies when N is large.
    """
    y = np.asarray(y, dtype=float)[..., None]
    x = y - np.arange(s, dtype=float)
    return np.log1p((x - p * (trials + 1)) / ((trials - x + 1) * p)).sum(axis=-1)


def _threshold(trials: int, p: float, s: int, level: float) -> int:
    """Smallest integer y in [s, N] with log LR(y) > level, or N + 1 when there is none."""
    return smallest_accepted_int(lambda y: _log_ratio(np.array([y]), trials, p, s)[0] > level, s, trials)


def _at_least(trials: int, p: float, k: np.ndarray) -> np.ndarray:
    """P(X >= k) for X ~ Bin(N, p): 1 for k <= 0, 0 for k > N, else I_p(k, N - k + 1)."""
    k = np.asarray(k, dtype=float)
    inside = (k > 0) & (k <= trials)
    val = betainc(np.where(inside, k, 1.0), np.where(inside, trials - k + 1.0, 1.0), p)
    return np.where(inside, val, np.where(k <= 0, 1.0, 0.0))


def _at_most(trials: int, p: float, k: np.ndarray) -> np.ndarray:
    """P(X <= k) for X ~ Bin(N, p): 0 for k < 0, 1 for k >= N, else I_{1-p}(N - k, k + 1)."""
    k = np.asarray(k, dtype=float)
    inside = (k >= 0) & (k < trials)
    val = betainc(np.where(inside, trials - k, 1.0), np.where(inside, k + 1.0, 1.0), 1.0 - p)
    return np.where(inside, val, np.where(k < 0, 0.0, 1.0))


def _check(trials: int, probability: float, sensitivity: int) -> tuple[int, float, int]:
    """The arguments as (N, p, s), or ValueError naming the one outside what is exact here."""
    if not 1 <= trials <= MAX_TRIALS:
        raise ValueError(f"trials must be in [1, {MAX_TRIALS}] (exact only there), got {trials}")
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    if sensitivity < 0:
        raise ValueError(f"sensitivity must be >= 0, got {sensitivity}")
    return int(trials), float(probability), int(sensitivity)


def _window(
    trials: int, p: float, lo: np.ndarray, s: int, tails: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """Upper bounds on P(lo <= X < lo + s), from scipy's tails (big, at big_counts; small, at small_counts) with
    big - small the window (P(X >= lo) - P(X >= lo + s), or P(X <= lo + s - 1) - P(X <= lo - 1)): the raised big
    tail minus the lowered small one, and for s <= `_WINDOW_TERMS` the smaller of that and the sum of the raised
    pmf (math.fsum, correctly rounded), raised by 4 ulp for the sums' and the subtraction's rounding."""
    big, big_counts, small, small_counts = tails
    diff = upper_bounds(big, big_counts, trials, p) - lower_bounds(small, small_counts, trials, p)
    if s <= _WINDOW_TERMS:
        x = np.arange(int(lo.min()), int(lo.max()) + s)
        f = upper_bounds(stats.binom.pmf(x, trials, p), x, trials, p)
        diff = np.minimum(diff, [math.fsum(f[a - x[0] : a - x[0] + s]) for a in lo.tolist()])
    return np.maximum(diff, 0.0) * (1 + 4 * _ULP)


def _worst(window: np.ndarray, tail: np.ndarray, epsilon: float) -> float:
    """max over candidate sets of window - (e^eps - 1) tail, from an upper bound on each window and a lower bound on
    each tail: an upper bound on each P(S) - e^eps Q(S). (e^eps - 1) tail in log space (e^eps overflows past
    eps = 709, inf * 0 is nan), lowered by 4 ulp of the exponent's parts (log, exp and the sum round)."""
    if epsilon == 0.0:
        scaled = np.zeros_like(tail)
    else:
        log_growth = math.log(math.expm1(epsilon)) if epsilon < 700.0 else epsilon + math.log1p(-math.exp(-epsilon))
        with np.errstate(divide="ignore", over="ignore"):
            log_tail = np.log(np.where(tail > 0, tail, 1.0))
            exponent = log_growth + log_tail
            scaled = np.where(tail > 0, np.exp(exponent) * (1 - 4 * _ULP * (abs(log_growth) - log_tail + 1)), 0.0)
    diff = (window - scaled) * (1 + 4 * _ULP)
    return float(max(np.max(diff), 0.0))


@functools.lru_cache(maxsize=4096)
def binomial_delta(trials: int, probability: float, sensitivity: int, epsilon: float) -> float:
    """Exact delta(eps) of count + Bin(trials, probability) when one user moves the count by
    `sensitivity`, both directions (module docstring), rounded up by scipy's error bounds
    (`dpaudit.accounting.binomial_tails`): never below the exact value. The tails are regularized
    incomplete beta functions (P(X >= k) = I_p(k, N-k+1))."""
    n, p, s = _check(trials, probability, sensitivity)
    if not epsilon >= 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if s > n:  # the supports {0..N} and {s..N+s} are disjoint
        return 1.0
    if s == 0:  # the two laws are equal
        return 0.0
    # shifted vs unshifted: S = {y >= t}, the window t - s <= X < t and the tail P(X >= t); the computed
    # threshold may be off by one where log LR is within round-off of eps: every neighbour is a valid set,
    # the worst one is kept
    t = _threshold(n, p, s, epsilon)
    ks = np.arange(max(s, t - 2), min(n + 1, t + 2) + 1)
    tail = _at_least(n, p, ks)
    window = _window(n, p, ks - s, s, (_at_least(n, p, ks - s), ks - s, tail, ks))
    up = _worst(window, lower_bounds(tail, ks, n, p), epsilon)
    # unshifted vs shifted: S = {y <= u}, u = max{y: log LR(y) < -eps}; the window u - s < X <= u and the
    # tail P(X <= u - s)
    u = _threshold(n, p, s, -epsilon) - 1
    ks = np.arange(max(s - 1, u - 2), min(n, u + 2) + 1)
    tail = _at_most(n, p, ks - s)
    window = _window(n, p, ks - s + 1, s, (_at_most(n, p, ks), ks, tail, ks - s))
    down = _worst(window, lower_bounds(tail, ks - s, n, p), epsilon)
    return min(1.0, max(up, down))


def binomial_epsilon(trials: int, probability: float, sensitivity: int, delta: float, rtol: float = 1e-9) -> float:
    """Smallest eps found (bisection, rounded up) with `binomial_delta` <= delta; inf when even
    eps -> inf leaves more than delta (the mass only one side can produce)."""
    args = _check(trials, probability, sensitivity)

    def accept(e: float) -> bool:
        return binomial_delta(*args, e) <= delta

    if accept(0.0):
        return 0.0
    hi = first_accepted_doubling(accept, 1.0, 1e4)
    if math.isinf(hi):
        return hi
    return smallest_accepted(accept, 0.0 if hi == 1.0 else hi / 2, hi, rtol=rtol)
