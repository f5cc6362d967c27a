"""Exact privacy of one release whose two output laws are known as probability mass functions.

For a view with pmf p under one input and q under its neighbour (arrays on a common finite support),
the hockey-stick divergence is attained on the level set {p > e^eps q} of the likelihood ratio:

    delta(eps) = max( sum_y max(0, p(y) - e^eps q(y)),  sum_y max(0, q(y) - e^eps p(y)) )

(e.g. Balle, Barthe, Gaboardi, "Privacy Amplification by Subsampling", NeurIPS 2018, Thm 1).
`slack` bounds the mass each computed pmf may miss (truncated tails folded onto the support): the
true pmfs lie in [p, p + slack] pointwise with total excess <= slack, so

    delta_true(eps) <= min( delta(eps) + slack,  sum_y max(0, p(y) + slack - e^eps q(y)) [both ways] ),
    pure eps <= max_y max( log((p + slack)/q), log((q + slack)/p) ).

Every figure is rounded the safe way: a relative round-off margin is added to delta and to the pure
eps, eps is the upper end of a bisection bracket (pmf values are trusted to a relative `_ROUND_OFF`). A Gaussian-DP mu (Dong, Roth, Su, "Gaussian Differential
Privacy", JRSS-B 2022, Cor. 2.13: f-DP with f = G_mu iff (eps, delta_mu(eps))-DP for every eps) is
checked on a grid eps_0 < eps_1 < ... with delta(eps_i) <= delta_mu(eps_{i+1}): both are
non-increasing in eps, so the check covers every eps in between.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr

from dpaudit.validation import check_delta, check_nonnegative

__all__ = ["check_pmfs", "pmf_delta", "pmf_epsilon", "pmf_gaussian_mu", "pmf_is_gaussian_dp", "pmf_pure_epsilon"]

_ULP = 2.0**-52
_EXP_CAP = 700.0  # e^eps is evaluated at min(eps, 700): no overflow, and only ever a larger delta
_ROUND_OFF = 1e-9
"""Relative round-off margin: the pmfs come from sums/convolutions of positive float64 terms (relative
error ~ terms x 2^-53 per convolution, < 10^-11 for the views audited), so every pmf value is taken as
uncertain by this relative amount on top of the absolute `slack`."""


def check_pmfs(p: np.ndarray, q: np.ndarray, slack: float = 0.0) -> tuple[np.ndarray, np.ndarray, float]:
    """p, q as float arrays of one shape, non-negative, each summing to at most 1 + round-off; slack >= 0."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(f"p and q must be non-empty 1-d pmfs on one support, got shapes {p.shape} and {q.shape}")
    for name, a in (("p", p), ("q", q)):
        if not np.all(np.isfinite(a)) or a.min() < 0 or a.sum() > 1 + 1e-9:
            raise ValueError(f"{name} must be a non-negative pmf (total <= 1), got total {a.sum()!r}")
    if not (math.isfinite(slack) and slack >= 0):
        raise ValueError(f"slack must be a finite non-negative mass, got {slack!r}")
    return p, q, float(slack)


def _one_way(p: np.ndarray, q: np.ndarray, epsilon: float, slack: float) -> float:
    """sum_y max(0, p_true - e^eps q_true) bounded as in the module docstring, plus round-off."""
    e = math.exp(min(epsilon, _EXP_CAP))  # capped: a smaller e^eps only raises delta (safe side)
    diff = np.where(q > 0, p - e * q, p)
    pos = diff > 0
    total = float(diff[pos].sum() + _ROUND_OFF * p[pos].sum())
    if slack == 0:
        return total
    wide = np.where(q > 0, p + slack - e * q, p + slack)
    wpos = wide > 0
    pointwise = float(wide[wpos].sum() + _ROUND_OFF * (p[wpos].sum() + slack * wpos.sum()))
    return min(total + slack, pointwise)


def _two_way(p: np.ndarray, q: np.ndarray, epsilon: float, slack: float) -> float:
    return max(_one_way(p, q, epsilon, slack), _one_way(q, p, epsilon, slack))


def pmf_delta(p: np.ndarray, q: np.ndarray, epsilon: float, slack: float = 0.0) -> float:
    """delta(eps) = max of the two hockey-stick divergences of p and q, plus `slack` (module docstring)."""
    p, q, slack = check_pmfs(p, q, slack)
    epsilon = check_nonnegative(epsilon, "epsilon")
    return min(1.0, _two_way(p, q, epsilon, slack))


def pmf_pure_epsilon(p: np.ndarray, q: np.ndarray, slack: float = 0.0) -> float:
    """max_y max(log((p + slack)/q), log((q + slack)/p)) over the support (inf where one of them is
    0 and the other is not), rounded up by the relative round-off margin (module docstring)."""
    p, q, slack = check_pmfs(p, q, slack)
    hi_p, hi_q = p + slack, q + slack
    if np.any((p == 0) & (hi_q > 0)) or np.any((q == 0) & (hi_p > 0)):
        return math.inf
    keep = (p > 0) & (q > 0)
    if not keep.any():
        raise ValueError("p and q have no common support")
    ratio = np.maximum(np.log(hi_p[keep]) - np.log(q[keep]), np.log(hi_q[keep]) - np.log(p[keep]))
    top = float(ratio.max())
    return top + 2 * _ROUND_OFF * (1.0 + top)


def pmf_epsilon(p: np.ndarray, q: np.ndarray, delta: float, slack: float = 0.0, rtol: float = 1e-9) -> float:
    """Smallest eps (upper end of a bisection bracket) with `pmf_delta` <= delta; inf if none exists
    (mass only one side produces, or slack above delta)."""
    p, q, slack = check_pmfs(p, q, slack)
    check_delta(delta, "delta")
    if pmf_delta(p, q, 0.0, slack) <= delta:
        return 0.0
    hi = pmf_pure_epsilon(p, q, slack)
    if not math.isfinite(hi) or pmf_delta(p, q, hi, slack) > delta:
        hi = 1.0
        while pmf_delta(p, q, hi, slack) > delta:
            hi *= 2.0
            if hi > 1e4:
                return math.inf
    lo = 0.0
    while hi - lo > rtol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if pmf_delta(p, q, mid, slack) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _one_way_grid(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """sum_y max(0, p(y) - e^eps q(y)) at every eps of an increasing grid, plus round-off: the
    level sets {log p/q > eps} are read from the outcomes sorted by log-ratio (cumulative sums)."""
    with np.errstate(divide="ignore"):
        llr = np.where(p > 0, np.log(p) - np.log(q), -np.inf)
    order = np.argsort(-llr)
    llr, ps, qs = llr[order], np.cumsum(p[order]), np.cumsum(q[order])
    k = np.searchsorted(-llr, -eps, side="left")  # number of outcomes with llr > eps
    idx = np.maximum(k - 1, 0)
    mass_p, mass_q = np.where(k > 0, ps[idx], 0.0), np.where(k > 0, qs[idx], 0.0)
    gap = mass_p - np.exp(np.minimum(eps, _EXP_CAP)) * mass_q  # capped e^eps: delta only rises (safe side)
    return np.maximum(gap, 0.0) + _ROUND_OFF * mass_p


def _two_way_grid(p: np.ndarray, q: np.ndarray, eps: np.ndarray, slack: float) -> np.ndarray:
    """`_two_way` on a grid of eps (vectorised)."""
    out = np.maximum(_one_way_grid(p, q, eps), _one_way_grid(q, p, eps))
    if slack > 0:
        wide = np.maximum(_one_way_grid(p + slack, q, eps), _one_way_grid(q + slack, p, eps))
        out = np.minimum(out + slack, wide)
    return out


def _log_delta_grid(p: np.ndarray, q: np.ndarray, eps: np.ndarray, slack: float) -> np.ndarray:
    """log delta(eps_i) for a grid of eps (module docstring), -inf where delta is 0 (the last point,
    the pure eps, has delta 0 by definition)."""
    d = _two_way_grid(p, q, eps, slack)
    d[-1] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(d)


def _log_gaussian_delta_lower(mu: float, eps: np.ndarray) -> np.ndarray:
    """log delta_mu(eps) of the Gaussian mechanism, rounded down (vectorised `log_gaussian_delta`
    formula, Balle & Wang, ICML 2018, Thm 8: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), with
    a relative margin taken off for round-off)."""
    a = log_ndtr(-eps / mu + mu / 2)
    b = eps + log_ndtr(-eps / mu - mu / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = a - b - 64 * _ULP * (np.abs(a) + np.abs(b) + 1.0)
        out = np.where(gap > 0, a + np.log(-np.expm1(-np.maximum(gap, 1e-300))), -np.inf)
    return out - _ROUND_OFF * (1.0 + np.abs(out))


def _mu_check(p: np.ndarray, q: np.ndarray, slack: float, step: float) -> Callable[[float], bool]:
    """accepts(mu): whether delta(eps_i) <= delta_mu(eps_{i+1}) on the grid of `pmf_gaussian_mu`."""
    top = pmf_pure_epsilon(p, q, slack)
    if not math.isfinite(top):
        return lambda mu: False
    fine = np.arange(0.0, min(top, 20.0), step)
    eps = np.concatenate([fine, np.linspace(fine[-1], top, 2001)[1:]]) if top > fine[-1] else np.append(fine, top)
    log_d = _log_delta_grid(p, q, eps, slack)
    live = np.isfinite(log_d[:-1])  # where delta(eps_i) > 0; beyond the pure eps delta is 0

    def accepts(mu: float) -> bool:
        bound = _log_gaussian_delta_lower(mu, eps[1:][live])
        return bool(np.all(log_d[:-1][live] <= bound))

    return accepts


def pmf_is_gaussian_dp(p: np.ndarray, q: np.ndarray, mu: float, slack: float = 0.0, step: float = 1e-3) -> bool:
    """Whether the pair (p, q) is shown mu-GDP by the grid check of `pmf_gaussian_mu`."""
    p, q, slack = check_pmfs(p, q, slack)
    if not (mu > 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be positive and finite, got {mu!r}")
    return _mu_check(p, q, slack, step)(mu)


def pmf_gaussian_mu(p: np.ndarray, q: np.ndarray, slack: float = 0.0, step: float = 1e-3, rtol: float = 1e-6) -> float:
    """Smallest mu (upper end of a bisection bracket) such that the pair (p, q) is mu-GDP, checked as
    delta(eps_i) <= delta_mu(eps_{i+1}) on a grid eps_0 = 0 < ... < eps_K = the pure eps (with
    `slack`; delta = 0 from there on, module docstring), of spacing `step` up to eps = 20 and
    coarser beyond (where delta_mu is below e^-100 for the mu of interest). inf when the pure eps
    is infinite.
    Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 2022), Cor. 2.13."""
    p, q, slack = check_pmfs(p, q, slack)
    accepts = _mu_check(p, q, slack, step)
    lo, hi = 0.0, 1.0
    while not accepts(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e3:
            return math.inf
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if accepts(mid):
            hi = mid
        else:
            lo = mid
    return hi
