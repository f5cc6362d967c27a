"""Inference on the CATE estimates of ConSE / DP-ConSE: Wald intervals, z-tests, coverage by simulation.

Propositions 2.6 and 3.6 of Li, Shi, Simchi-Levi (ICML 2024): Δ̂(X_j) is asymptotically normal with the same variance with and
without privacy. The paper gives no interval; as dpaudit chooses, the standard error is the Neyman
plug-in V̂ = σ̂²_{j1}/N_{j1} + σ̂²_{j0}/N_{j0} ("plugin", computed from raw outcomes, so *not* private), or
the free bound σ² ≤ 1/4 for [0, 1] outcomes ("bound", private), plus for DP-ConSE the variance
2 (2/(ε T_j))² of the Laplace noise on the estimate. Intervals Δ̂ ± z_{1-γ/2} sqrt(V̂); two-sided z-test of
H0: Δ(X_j) = 0, with multiplicity control across the M types by statsmodels' `multipletests`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dpaudit.algorithms.conse.algorithm import ConSEParams, ConSEResult, run_conse
from dpaudit.algorithms.conse.environment import PatientExperiment
from dpaudit.validation import check_choice, check_open_unit, check_positive, check_positive_int

__all__ = ["CATEInference", "cate_inference", "coverage"]


@dataclasses.dataclass(frozen=True, eq=False)
class CATEInference:
    """Per run and type (R, M): estimate, standard error, interval [lower, upper], z statistic, p-value."""

    estimate: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    z: np.ndarray
    pvalue: np.ndarray
    level: float

    def covers(self, cate: np.ndarray) -> np.ndarray:
        """Whether each interval contains the true Δ(X_j) (False where no estimate was released)."""
        c = np.asarray(cate)[None, :]
        return (self.lower <= c) & (c <= self.upper)

    def reject(self, alpha: float = 0.05, method: str = "holm") -> np.ndarray:
        """Rejections of H0: Δ(X_j) = 0 per run, family-wise over the M types.

        "holm" (step-down) and "bonferroni" are vectorised over runs; any other `method` name of
        statsmodels' `multipletests` is applied run by run (slower: about 30 ms per call).
        """
        alpha = check_open_unit(alpha, "alpha")
        p = np.where(np.isfinite(self.pvalue), self.pvalue, np.inf)
        k = np.isfinite(p).sum(axis=1, keepdims=True)
        if method == "bonferroni":
            return p * k <= alpha
        if method == "holm":
            order = np.argsort(p, axis=1)
            ps = np.take_along_axis(p, order, axis=1)
            step = np.arange(ps.shape[1])[None, :]
            ok = np.cumprod(ps * (k - step) <= alpha, axis=1).astype(bool)
            out = np.empty_like(ok)
            np.put_along_axis(out, order, ok, axis=1)
            return out
        out = np.zeros(p.shape, dtype=bool)
        for r, row in enumerate(p):
            fin = np.isfinite(row)
            if fin.any():
                out[r, fin] = multipletests(row[fin], alpha=alpha, method=method)[0]
        return out


def cate_inference(
    result: ConSEResult, level: float = 0.95, variance: str = "plugin", width_factor: float = 1.0
) -> CATEInference:
    """Wald intervals and z-tests for each type's effect from a ConSE / DP-ConSE run.

    width_factor scales the half-width (1 is the procedure; other values exist for the twin test that
    shows a too-narrow interval under-covers).
    """
    level = check_open_unit(level, "level")
    check_choice(variance, ("plugin", "bound"), "variance")
    width_factor = check_positive(width_factor, "width_factor")
    n_arm = np.maximum(result.rct_counts, 1.0)
    var_arm = (
        result.rct_vars * n_arm / np.maximum(n_arm - 1, 1.0) if variance == "plugin" else np.full_like(n_arm, 0.25)
    )
    v = (var_arm / n_arm).sum(axis=2)
    if result.params.private:
        b = 2.0 / (result.params.epsilon * np.maximum(result.rct_lengths, 1))
        v = v + 2 * b**2
    se = np.sqrt(v)
    est = result.estimates
    half = stats.norm.ppf(0.5 + level / 2) * se * width_factor
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, est / se, np.nan)
    p = 2 * stats.norm.sf(np.abs(z))
    return CATEInference(est, se, est - half, est + half, z, p, level)


def coverage(
    env: PatientExperiment,
    params: ConSEParams,
    horizon: int,
    runs: int,
    rng: np.random.Generator,
    level: float = 0.95,
    variance: str = "plugin",
    width_factor: float = 1.0,
) -> float:
    """Fraction of released intervals (over runs and types) that contain the true Δ(X_j)."""
    horizon = check_positive_int(horizon, "horizon")
    runs = check_positive_int(runs, "runs")
    data = env.sample(rng, horizon, runs)
    res = run_conse(env, data, params, rng)
    inf = cate_inference(res, level=level, variance=variance, width_factor=width_factor)
    released = np.isfinite(res.estimates)
    return float(inf.covers(env.cate)[released].mean())
