"""Value objects for privacy guarantees and the conversions between them (sources named).

- `PureDp(epsilon)`: epsilon-DP.
- `ApproxDp(epsilon, delta)`: (epsilon, delta)-DP.
- `RdpCurve(orders, values)`: (alpha, values[i])-RDP at every alpha = orders[i] (Mironov 2017).
- `Zcdp(rho, xi)`: (xi, rho)-zCDP, i.e. RDP xi + alpha*rho at every alpha > 1 (Bun, Steinke 2016).

Every conversion returns a valid (never optimistic) guarantee; numerical optimisation only
picks among valid bounds, so an imperfect optimum is merely loose.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from fractions import Fraction

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from dpaudit.accounting import randomized_response
from dpaudit.validation import check_delta, check_epsilon, check_nonnegative

__all__ = [
    "ApproxDp",
    "PureDp",
    "RdpCurve",
    "Zcdp",
    "half_square_up",
    "positive_delta",
    "pure_delta",
    "pure_rdp",
    "pure_to_zcdp",
    "rdp_delta",
    "rdp_epsilon",
    "zcdp_delta",
    "zcdp_epsilon",
]


def positive_delta(log_delta: float) -> float:
    """delta from its logarithm: exp, except that a positive delta below the smallest double is
    reported as the smallest positive double (exp underflows to 0 below log = -745, and a delta
    of 0 would claim more than the bound gives)."""
    if log_delta == -math.inf:
        return 0.0
    return min(1.0, max(math.exp(log_delta), math.ulp(0.0)))


def pure_delta(pure_eps: float, epsilon: float) -> float:
    """Smallest delta such that every pure_eps-DP mechanism is (epsilon, delta)-DP.

    delta = max(0, (e^pure_eps - e^epsilon) / (1 + e^pure_eps)): every pure_eps-DP mechanism is a
    post-processing of binary randomized response with that epsilon (Kairouz, Oh, Viswanath,
    "The Composition Theorem for Differential Privacy", ICML 2015, Thm 2.1), whose hockey-stick
    divergence at e^epsilon is this value.
    """
    if math.isinf(pure_eps):
        return 1.0
    if epsilon >= pure_eps:
        return 0.0
    # (e^a - e^b)/(1+e^a) = -expm1(b - a) / (1 + e^-a)
    return float(-math.expm1(epsilon - pure_eps) / (1.0 + math.exp(-pure_eps)))


def half_square_up(r: float) -> float:
    """r^2/2 rounded up to the next double when inexact: below the smallest normal double a square
    loses its relative precision (and 0 would claim no privacy loss), so one smallest double is added there."""
    half = 0.5 * r * r
    if half < sys.float_info.min:
        return half + math.ulp(0.0)
    return math.nextafter(half, math.inf) if math.isfinite(half) and Fraction(half) < Fraction(r) ** 2 / 2 else half


def pure_to_zcdp(pure_eps: float) -> float:
    """rho of the zCDP implied by pure epsilon-DP: rho = epsilon^2/2 (Bun, Steinke 2016, Prop. 3.3),
    rounded up (`half_square_up`)."""
    return 0.0 if pure_eps == 0.0 else half_square_up(pure_eps)


def pure_rdp(pure_eps: float, orders: np.ndarray) -> np.ndarray:
    """RDP implied by pure epsilon-DP: the Renyi divergence of binary randomized response.

    D_a = log(p^a q^(1-a) + q^a p^(1-a)) / (a-1), p = e^eps/(1+e^eps), q = 1-p. Valid for every
    eps-DP mechanism by KOV 2015 Thm 2.1 (post-processing of RR) and the data-processing
    inequality; it is <= min(eps, a*eps^2/2) (Bun, Steinke 2016, Prop. 3.3). Evaluated as k-RR with
    k = 2 (`randomized_response.rdp`), whose form keeps a tiny eps (D_a ~ a eps^2/2) from cancelling
    to 0, rounded up.
    """
    orders = np.asarray(orders, dtype=float)
    if math.isinf(pure_eps):
        return np.full_like(orders, np.inf)
    if pure_eps == 0.0:
        return np.zeros_like(orders)
    return randomized_response.rdp(pure_eps, 2, orders)


@dataclasses.dataclass(frozen=True)
class PureDp:
    """epsilon-DP: P[M(d) in S] <= e^epsilon P[M(d') in S] for neighbours d, d' and every set S (Dwork,
    McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis", TCC 2006).

    Examples
    --------
    >>> from dpaudit.accounting import PureDp
    >>> PureDp(1.0).to_zcdp()
    Zcdp(rho=0.5, xi=0.0)
    """

    epsilon: float

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0):
            raise ValueError(f"epsilon must be non-negative, got {self.epsilon!r}")

    def delta(self, epsilon: float) -> float:
        """delta at `epsilon` (see `pure_delta`)."""
        return pure_delta(self.epsilon, check_epsilon(epsilon))

    def to_zcdp(self) -> Zcdp:
        """epsilon-DP implies (epsilon^2/2)-zCDP (Bun, Steinke 2016, Prop. 3.3)."""
        return Zcdp(rho=pure_to_zcdp(self.epsilon))


@dataclasses.dataclass(frozen=True)
class ApproxDp:
    """(epsilon, delta)-DP: P[M(d) in S] <= e^epsilon P[M(d') in S] + delta (Dwork, Roth, "The Algorithmic
    Foundations of Differential Privacy", FnT TCS 2014, Def. 2.4)."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0):
            raise ValueError(f"epsilon must be non-negative, got {self.epsilon!r}")
        if not (0.0 <= self.delta <= 1.0):
            raise ValueError(f"delta must lie in [0, 1], got {self.delta!r}")


def rdp_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """epsilon at `delta` from an RDP curve: inf over orders of
    rdp(a) + log1p(-1/a) - log(delta * a)/(a - 1).

    Canonne, Kamath, Steinke 2020 Prop. 12 / Balle et al. 2020 Thm 21 (the conversion
    dp-accounting's `compute_epsilon` implements, reused here). Negative entries can only be
    round-off of a non-negative divergence and are clamped to 0 first.
    """
    rdp = np.maximum(np.asarray(rdp, dtype=float), 0.0)
    if np.all(np.isinf(rdp)):
        return math.inf
    with np.errstate(over="ignore"):  # a huge divergence: +inf at that order, never taken as the minimum
        eps, _ = _rdp.compute_epsilon(np.asarray(orders, dtype=float), rdp, delta)
    return float(eps)


def rdp_delta(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> float:
    """delta at `epsilon` from an RDP curve (same conversion, solved for delta; dp-accounting's
    `compute_delta`)."""
    rdp = np.maximum(np.asarray(rdp, dtype=float), 0.0)
    if np.all(np.isinf(rdp)):
        return 1.0
    with np.errstate(over="ignore"):  # a huge divergence: log delta +inf at that order (delta 1 there)
        d, _ = _rdp.compute_delta(np.asarray(orders, dtype=float), rdp, epsilon)
    if d == 0.0 and np.any(rdp > 0):  # exp underflowed: the bound is positive, below 1e-308
        return math.ulp(0.0)
    return float(min(d, 1.0))


@dataclasses.dataclass(frozen=True)
class RdpCurve:
    """(alpha, values[i])-RDP at alpha = orders[i]: D_alpha(M(d) || M(d')) <= values[i] (Mironov, "Renyi
    Differential Privacy", CSF 2017, Def. 4)."""

    orders: tuple
    values: tuple

    def __post_init__(self) -> None:
        if len(self.orders) != len(self.values) or not self.orders:
            raise ValueError("orders and values must be non-empty and of equal length")
        if any(not (a > 1) for a in self.orders):
            raise ValueError("every RDP order must exceed 1")

    def epsilon(self, delta: float) -> float:
        """epsilon at `delta` (see `rdp_epsilon`)."""
        return rdp_epsilon(np.array(self.orders), np.array(self.values), check_delta(delta))

    def delta(self, epsilon: float) -> float:
        """delta at `epsilon` (see `rdp_delta`)."""
        return rdp_delta(np.array(self.orders), np.array(self.values), check_epsilon(epsilon))


# Orders alpha - 1 on which the zCDP conversion is minimised (any alpha > 1 is valid).
_ZCDP_ALPHA_M1 = np.logspace(-5, 9, 3000)


def _zcdp_log_delta(rho: float, xi: float, epsilon: float, am1: np.ndarray) -> np.ndarray:
    a = am1 + 1.0
    with np.errstate(over="ignore"):  # a huge rho: +inf, the trivial bound (delta = 1) at those orders
        r = xi + a * rho
        # log delta = (a-1)(r - eps + log(1-1/a)) - log a      (CKS 2020 Prop. 12 / Cor. 13)
        return am1 * (r - epsilon + np.log(am1 / a)) - np.log(a)


def zcdp_delta(rho: float, epsilon: float, xi: float = 0.0) -> float:
    """delta at `epsilon` for (xi, rho)-zCDP: inf over alpha > 1 of
    exp((a-1)(xi + a*rho - eps) - log a + (a-1) log(1 - 1/a)).

    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy" (2020), Prop. 12
    and Cor. 13, with RDP xi + a*rho; the infimum is taken over a dense grid of real alpha
    (every alpha gives a valid bound).
    """
    if rho == 0.0 and xi == 0.0:
        return 0.0
    ld = _zcdp_log_delta(rho, xi, epsilon, _ZCDP_ALPHA_M1)
    return positive_delta(float(min(0.0, float(np.min(ld)))))


def zcdp_epsilon(rho: float, delta: float, xi: float = 0.0) -> float:
    """epsilon at `delta` for (xi, rho)-zCDP: inf over alpha > 1 of
    xi + a*rho + log1p(-1/a) - log(delta * a)/(a - 1)   (CKS 2020 Prop. 12 / Cor. 13).

    The closed form rho + 2 sqrt(rho log(1/delta)) (Bun, Steinke 2016, Prop. 1.3) is never smaller.
    """
    if rho == 0.0 and xi == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    am1 = _ZCDP_ALPHA_M1
    a = am1 + 1.0
    with np.errstate(over="ignore"):  # a huge rho: +inf, the trivial bound at those orders
        eps = xi + a * rho + np.log(am1 / a) - (math.log(delta) + np.log(a)) / am1
    i = int(np.argmin(eps))
    # refine around the grid minimum with a golden-section search on log(a-1); every point
    # evaluated is a valid bound, so the minimum of all evaluated points is valid.
    lo = math.log(am1[max(i - 1, 0)])
    hi = math.log(am1[min(i + 1, len(am1) - 1)])
    best = float(eps[i])
    g = (math.sqrt(5) - 1) / 2

    def f(t: float) -> float:
        m = math.exp(t)
        return xi + (m + 1) * rho + math.log(m / (m + 1)) - (math.log(delta) + math.log1p(m)) / m

    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(60):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = f(d)
        best = min(best, fc, fd)
    return max(0.0, best)


@dataclasses.dataclass(frozen=True)
class Zcdp:
    """(xi, rho)-zCDP: RDP of order alpha at most xi + alpha*rho for every alpha > 1 (Bun, Steinke,
    "Concentrated Differential Privacy", TCC 2016, Def. 1.1)."""

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        check_nonnegative(self.rho, "rho")
        check_nonnegative(self.xi, "xi")

    def epsilon(self, delta: float) -> float:
        """epsilon at `delta` (see `zcdp_epsilon`)."""
        return zcdp_epsilon(self.rho, check_delta(delta), self.xi)

    def delta(self, epsilon: float) -> float:
        """delta at `epsilon` (see `zcdp_delta`)."""
        return zcdp_delta(self.rho, check_epsilon(epsilon), self.xi)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """The implied RDP curve xi + alpha * rho at each of `orders` (Bun, Steinke 2016, Def. 1.1)."""
        return self.xi + np.asarray(orders, dtype=float) * self.rho
