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

import numpy as np
from scipy import stats
from scipy.special import gammaln, logsumexp

__all__ = [
    "basic",
    "drv_epsilon",
    "drv_delta",
    "kov_heterogeneous_epsilon",
    "kov_heterogeneous_delta",
    "OptimalHomogeneous",
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
    return eps0 * math.sqrt(2 * k * math.log(1 / slack)) + k * eps0 * math.expm1(eps0)


def drv_delta(eps0: float, delta0: float, k: int, epsilon: float) -> float:
    """delta at `epsilon` from the DRV bound (1 when it does not reach `epsilon`)."""
    if eps0 > 700:
        return 1.0
    drift = k * eps0 * math.expm1(eps0)
    if eps0 == 0.0:
        return min(1.0, k * delta0)
    if epsilon <= drift:
        return 1.0
    return min(1.0, k * delta0 + math.exp(-((epsilon - drift) / eps0) ** 2 / (2 * k)))


def _het_parts(epsilons: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    e = np.asarray(epsilons, dtype=float)
    c = np.asarray(counts, dtype=float)
    total = float(np.dot(c, e))
    drift = float(np.dot(c, e * np.tanh(e / 2)))  # (e^x - 1) x / (e^x + 1) = x tanh(x/2)
    sq = float(np.dot(c, e * e))
    return total, drift, sq


def _log_keep(deltas: np.ndarray, counts: np.ndarray) -> float:
    """log prod (1 - delta_i)^k_i."""
    return float(np.dot(counts, np.log1p(-np.asarray(deltas, dtype=float))))


def kov_heterogeneous_epsilon(epsilons, deltas, counts, delta: float) -> float:
    """KOV 2015 Thm 3.5: for any d~ in (0, 1], the composition is (eps, 1 - (1-d~) prod(1-delta_i))-DP,
    eps = min(sum eps_i, D + sqrt(2 S log(e + sqrt(S)/d~)), D + sqrt(2 S log(1/d~))),
    D = sum eps_i (e^eps_i - 1)/(e^eps_i + 1), S = sum eps_i^2. Here d~ solves the delta equation."""
    keep = _log_keep(deltas, counts)
    # 1 - (1 - d~) e^keep <= delta  <=>  d~ <= 1 - (1 - delta) e^-keep
    dt = -math.expm1(math.log1p(-delta) - keep)
    if dt <= 0:
        return math.inf
    total, drift, sq = _het_parts(epsilons, counts)
    cands = [total]
    if sq > 0:
        cands.append(drift + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / dt)))
        cands.append(drift + math.sqrt(2 * sq * math.log(1 / dt)))
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
        dt = math.exp(-x)
        if x > 1.0 + 1e-12:  # log(e + sqrt(S)/d~) = x  <=>  d~ = sqrt(S)/(e^x - e)
            dt = min(dt, math.sqrt(sq) / (math.exp(x) - math.e)) if x < 700 else dt
        dt = min(dt, 1.0)
    return float(min(1.0, -math.expm1(math.log1p(-dt) + keep) if dt < 1 else 1.0))


class OptimalHomogeneous:
    """Exact privacy profile of k-fold adaptive composition of (eps0, delta0)-DP mechanisms.

    delta(eps) = 1 - (1-delta0)^k + (1-delta0)^k * sum_{i: (k-2i) eps0 > eps} C(k,i) p^(k-i) q^i
                 (1 - e^(eps - (k-2i) eps0)),  p = e^eps0/(1+e^eps0), q = 1 - p.
    Kairouz, Oh, Viswanath, ICML 2015, Thm 3.3 (optimal), evaluated in log space at real eps
    (the binary-RR pair dominates every eps0-DP mechanism, their Thm 2.1, so the formula holds
    between the grid points (k-2i) eps0 too; Murtagh, Vadhan 2016).
    """

    # Above this many compositions only the central window of Bin(k, q) (all but 1e-18 of its
    # mass on each side) is summed; the mass outside is added to delta in full (pessimistic).
    _FULL_UP_TO = 200_000
    _TAIL = 1e-18

    def __init__(self, eps0: float, delta0: float, k: int) -> None:
        self.eps0, self.delta0, self.k = float(eps0), float(delta0), int(k)
        log_p = -float(np.logaddexp(0.0, -self.eps0))
        log_q = -float(np.logaddexp(0.0, self.eps0))
        self._outside = 0.0
        if self.k <= self._FULL_UP_TO:
            i = np.arange(self.k + 1, dtype=float)
        else:
            dist = stats.binom(self.k, math.exp(log_q))
            lo, hi = int(dist.ppf(self._TAIL)), int(dist.isf(self._TAIL))
            i = np.arange(lo, hi + 1, dtype=float)
            self._outside = float(dist.cdf(lo - 1) + dist.sf(hi))
        self._logw = gammaln(self.k + 1) - gammaln(i + 1) - gammaln(self.k - i + 1) + (self.k - i) * log_p + i * log_q
        self._loss = (self.k - 2 * i) * self.eps0
        self._log_keep = self.k * math.log1p(-self.delta0) if self.delta0 < 1 else -math.inf

    def _log_delta_rr(self, epsilon: float) -> float:
        m = self._loss > epsilon
        if not np.any(m):
            return -math.inf
        return float(logsumexp(self._logw[m] + np.log(-np.expm1(epsilon - self._loss[m]))))

    def delta(self, epsilon: float) -> float:
        """Exact delta at `epsilon` (>= 0)."""
        if self.eps0 == 0.0:
            return -math.expm1(self._log_keep)
        lost = -math.expm1(self._log_keep)  # 1 - (1 - delta0)^k
        rr = math.exp(self._log_delta_rr(epsilon)) + self._outside
        return float(min(1.0, lost + math.exp(self._log_keep) * rr))

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon (to relative 1e-10, rounded up) with delta(epsilon) <= `delta`; inf if none."""
        total = self.k * self.eps0
        if self.delta(total) > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, total
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if self.delta(mid) <= delta:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-10 * hi:
                break
        return hi
