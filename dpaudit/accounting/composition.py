"""Composition theorems for (epsilon, delta)-DP mechanisms.

- basic composition: (sum eps_i, sum delta_i) (Dwork, McSherry, Nissim, Smith 2006);
- advanced composition of Dwork, Rothblum, Vadhan (FOCS 2010; Dwork-Roth 2014 Thm 3.20);
- the heterogeneous bound of Kairouz, Oh, Viswanath (ICML 2015, Thm 3.5), which improves DRV;
- the optimal homogeneous composition of Kairouz, Oh, Viswanath (ICML 2015, Thm 3.3), evaluated
  in log space for any k and at any real epsilon (not only on its grid): k-fold (eps0, delta0)-DP
  is dominated by k-fold binary randomized response plus a delta0 atom, whose hockey-stick
  divergence is delta(eps) = 1 - (1-delta0)^k (1 - delta_RR(eps)).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import gammaln, logsumexp

from dpaudit.accounting.guarantees import positive_delta
from dpaudit.accounting.search import smallest_accepted

__all__ = [
    "OptimalHomogeneous",
    "basic",
    "drv_delta",
    "drv_epsilon",
    "kov_heterogeneous_delta",
    "kov_heterogeneous_epsilon",
    "log_binomial_lower_tail_bound",
]


def basic(epsilons: np.ndarray, deltas: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """Basic composition: (sum k_i eps_i, sum k_i delta_i)."""
    return float(np.dot(counts, epsilons)), float(min(1.0, np.dot(counts, deltas)))


def drv_epsilon(eps0: float, delta0: float, k: int, delta: float) -> float:
    """Advanced composition (DRV 2010; Dwork-Roth Thm 3.20): k-fold (eps0, delta0)-DP is
    (eps0 sqrt(2k ln(1/d')) + k eps0 (e^eps0 - 1), k delta0 + d')-DP; here d' = delta - k delta0.
    inf when delta <= k delta0."""
    slack = delta - k * delta0
    if slack <= 0:
        return math.inf
    if eps0 > 700:  # e^eps0 overflows; the bound is then far above basic composition anyway
        return math.inf
    return eps0 * math.sqrt(2 * k * -math.log(slack)) + k * eps0 * math.expm1(eps0)


def drv_delta(eps0: float, delta0: float, k: int, epsilon: float) -> float:
    """delta at `epsilon` from the DRV bound (1 when it does not reach `epsilon`)."""
    if epsilon >= k * eps0:  # basic composition already gives (k eps0, k delta0)
        return min(1.0, k * delta0)
    if eps0 > 700:
        return 1.0
    drift = k * eps0 * math.expm1(eps0)
    if eps0 == 0.0:
        return min(1.0, k * delta0)
    if epsilon <= drift:
        return 1.0
    z = (epsilon - drift) / eps0  # may be inf for a tiny eps0: the term is then the smallest double
    return min(1.0, k * delta0 + positive_delta(-(z * z) / (2 * k)))


def _het_parts(epsilons: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    e = np.asarray(epsilons, dtype=float)
    c = np.asarray(counts, dtype=float)
    total = float(np.dot(c, e))
    drift = float(np.dot(c, e * np.tanh(e / 2)))  # (e^x - 1) x / (e^x + 1) = x tanh(x/2)
    sq = float(np.dot(c, e * e))
    return total, drift, sq


def _log_keep(deltas: np.ndarray, counts: np.ndarray) -> float:
    """log prod (1 - delta_i)^k_i (-inf when some delta_i = 1 is composed)."""
    with np.errstate(divide="ignore"):
        return float(np.dot(counts, np.log1p(-np.asarray(deltas, dtype=float))))


def kov_heterogeneous_epsilon(epsilons, deltas, counts, delta: float) -> float:
    """KOV 2015 Thm 3.5: for any d~ in (0, 1], the composition is (eps, 1 - (1-d~) prod(1-delta_i))-DP,
    eps = min(sum eps_i, D + sqrt(2 S log(e + sqrt(S)/d~)), D + sqrt(2 S log(1/d~))),
    D = sum eps_i (e^eps_i - 1)/(e^eps_i + 1), S = sum eps_i^2. Here d~ solves the delta equation."""
    keep = _log_keep(deltas, counts)
    # 1 - (1 - d~) e^keep <= delta  <=>  d~ <= 1 - (1 - delta) e^-keep, positive iff log(1-delta) < keep
    gap = math.log1p(-delta) - keep
    if not gap < 0:  # also keep = -inf (a delta_i = 1 composed): e^-keep overflows, no d~ works
        return math.inf
    dt = -math.expm1(gap)
    total, drift, sq = _het_parts(epsilons, counts)
    cands = [total]
    if sq > 0:
        cands.append(drift + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / dt)))
        cands.append(drift + math.sqrt(2 * sq * -math.log(dt)))
    return min(cands)


def kov_heterogeneous_delta(epsilons, deltas, counts, epsilon: float) -> float:
    """delta at `epsilon` from KOV 2015 Thm 3.5 (both branches inverted in closed form)."""
    keep = _log_keep(deltas, counts)
    total, drift, sq = _het_parts(epsilons, counts)
    if epsilon >= total:
        dt = 0.0
    elif epsilon <= drift or sq == 0:
        return 1.0
    else:
        x = (epsilon - drift) ** 2 / (2 * sq)
        dt = positive_delta(-x)  # never 0 below eps < total: e^-x may underflow
        if x > 1.0 + 1e-12:  # log(e + sqrt(S)/d~) = x  <=>  d~ = sqrt(S)/(e^x - e)
            dt = min(dt, math.sqrt(sq) / (math.exp(x) - math.e)) if x < 700 else dt
        dt = max(min(dt, 1.0), math.ulp(0.0))
    if dt >= 1:
        return 1.0
    return float(min(1.0, max(-math.expm1(math.log1p(-dt) + keep), dt)))  # >= dt: no 1 - tiny cancellation


def log_binomial_lower_tail_bound(k: int, log_p: float, log_q: float, j: int) -> float:
    """An upper bound on log P(Bin(k, q) <= j), q = e^log_q, p = e^log_p = 1 - q, in log space.

    The smaller of the Chernoff bound -k KL(j/k || q) (valid for j <= k q; Hoeffding 1963,
    Thm 1) and the geometric bound: below the mode the pmf ratio w_{i-1}/w_i = i p / ((k-i+1) q)
    is at most r = j p/((k-j+1) q) < 1, so P(I <= j) <= w_j / (1 - r). 0 (log 1) otherwise.
    """
    if j < 0:
        return -math.inf
    a = j / k
    q = math.exp(log_q)
    if a >= q:
        return 0.0
    kl = (a * (math.log(a) - log_q) if a > 0 else 0.0) + (1 - a) * (math.log1p(-a) - log_p)
    best = -k * kl
    log_r = math.log(j) + log_p - math.log(k - j + 1) - log_q if j > 0 else -math.inf
    if log_r < 0:
        # as floats: scipy's gammaln takes no integer beyond 2**64 (a count of 1e20 releases)
        log_wj = (
            float(gammaln(float(k) + 1) - gammaln(float(j) + 1) - gammaln(float(k - j) + 1))
            + (k - j) * log_p
            + j * log_q
        )
        best = min(best, log_wj - math.log(-math.expm1(log_r)))
    return min(0.0, best)


class OptimalHomogeneous:
    """Exact privacy profile of k-fold adaptive composition of (eps0, delta0)-DP mechanisms.

    delta(eps) = 1 - (1-delta0)^k + (1-delta0)^k * sum_{i: (k-2i) eps0 > eps} C(k,i) p^(k-i) q^i
                 (1 - e^(eps - (k-2i) eps0)),  p = e^eps0/(1+e^eps0), q = 1 - p.
    Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015,
    Thm 3.3 (optimal), evaluated in log space at real eps (the binary-RR pair dominates every
    eps0-DP mechanism, their Thm 2.1, so the formula holds between the grid points (k-2i) eps0
    too; Murtagh, Vadhan 2016). Everything is compared in log space, so a delta far below the
    smallest double (1e-308) is still told apart from 0: at delta = 0 the answer is k eps0 for
    delta0 = 0 (pure composition is tight) and inf otherwise.

    Cost: at most `WINDOW` terms per query whatever k. The sum runs over the `WINDOW` indices just
    below the largest index with a positive term (where the terms peak whenever delta is small);
    the indices below the window are bounded by the binomial lower tail
    (`log_binomial_lower_tail_bound`), so the answer is an upper bound for every k, exact
    (to round-off) when k < 2 WINDOW.
    """

    WINDOW = 8192

    def __init__(self, eps0: float, delta0: float, k: int) -> None:
        self.eps0, self.delta0, self.k = float(eps0), float(delta0), int(k)
        self._log_p = -float(np.logaddexp(0.0, -self.eps0))
        self._log_q = -float(np.logaddexp(0.0, self.eps0))
        self._log_keep = self.k * math.log1p(-self.delta0) if self.delta0 < 1 else -math.inf
        self._log_lost = math.log(-math.expm1(self._log_keep)) if self.delta0 > 0 else -math.inf
        self._log_k_fact = float(gammaln(float(self.k) + 1))  # a float: gammaln takes no integer beyond 2**64
        # round-off of a log term: gammaln and the two products, each a few ulp of its magnitude
        mag = self._log_k_fact + self.k * (abs(self._log_p) + abs(self._log_q)) + 1.0
        self._slack = 16 * np.finfo(float).eps * mag

    def _i_max(self, epsilon: float) -> int:
        """The largest i with (k - 2i) eps0 > eps (-1 when there is none)."""
        if self.eps0 == 0.0:
            return -1
        if not math.isfinite(epsilon / self.eps0):  # a huge epsilon or a tiny eps0: no loss exceeds epsilon
            return -1
        # exact rationals: k - 2i > eps/eps0; floats would be off by many indices once k > 2**53
        ratio = Fraction(epsilon) / Fraction(self.eps0)
        return min(self.k, max(-1, math.ceil((self.k - ratio) / 2) - 1))

    def _log_delta_rr(self, epsilon: float) -> float:
        """log of the binary-RR sum (an upper bound, see the class docstring)."""
        top = self._i_max(epsilon)
        if top < 0:
            return -math.inf
        lo = max(0, top - self.WINDOW + 1)
        i = np.arange(lo, top + 1, dtype=float)
        loss = (self.k - 2 * i) * self.eps0
        logw = (
            self._log_k_fact
            - gammaln(i + 1)
            - gammaln(float(self.k) - i + 1)
            + (self.k - i) * self._log_p
            + i * self._log_q
        )
        with np.errstate(divide="ignore", over="ignore"):  # a loss rounded to <= epsilon adds log 0: nothing
            gain = np.log(np.maximum(-np.expm1(epsilon - loss), 0.0))
        total = float(logsumexp(logw + gain))
        if lo > 0:
            total = float(np.logaddexp(total, log_binomial_lower_tail_bound(self.k, self._log_p, self._log_q, lo - 1)))
        return total + self._slack

    def log_delta(self, epsilon: float) -> float:
        """log delta(eps), rounded up (-inf when delta is exactly 0)."""
        if self.eps0 == 0.0:
            return self._log_lost
        return min(0.0, float(np.logaddexp(self._log_lost, self._log_keep + self._log_delta_rr(epsilon))))

    def delta(self, epsilon: float) -> float:
        """delta at `epsilon` (>= 0); a positive delta below the smallest double is reported as
        the smallest positive double, never as 0."""
        ld = self.log_delta(epsilon)
        if ld == -math.inf:
            return 0.0
        return max(math.exp(ld), math.ulp(0.0))

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon (to relative 1e-10, rounded up) with delta(epsilon) <= `delta`; inf if none."""
        target = math.log(delta) if delta > 0 else -math.inf

        def accept(e: float) -> bool:
            return self.log_delta(e) <= target

        total = self.k * self.eps0
        if not accept(total):
            return math.inf
        if accept(0.0):
            return 0.0
        return smallest_accepted(accept, 0.0, total, rtol=1e-10)
