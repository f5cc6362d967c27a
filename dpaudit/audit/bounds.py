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
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "cp_lower",
    "cp_upper",
    "epsilon_from_rates",
    "mu_from_rates",
    "wilson_lower",
    "wilson_upper",
    "best_case_epsilon",
]


def cp_lower(count, nobs, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound: P[p < bound] <= `level` (statsmodels, method="beta")."""
    low, _ = proportion_confint(np.asarray(count), np.asarray(nobs), alpha=2.0 * level, method="beta")
    # statsmodels returns NaN for the lower bound at count == 0; the exact bound there is 0.
    return np.nan_to_num(np.asarray(low, dtype=float), nan=0.0)


def cp_upper(count, nobs, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound: P[p > bound] <= `level` (statsmodels, method="beta")."""
    _, upp = proportion_confint(np.asarray(count), np.asarray(nobs), alpha=2.0 * level, method="beta")
    # statsmodels returns NaN for the upper bound at count == nobs; the exact bound there is 1.
    return np.nan_to_num(np.asarray(upp, dtype=float), nan=1.0)


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
