"""`dpaudit regret conse | dp-conse`: the experiment's regret, with the estimator error alongside.

The default instance has M types with Bernoulli outcomes, means 0.5 ± gap/2 whose sign alternates with the
type (so the better arm differs across types, |Δ(X_j)| = gap = Θ(1) as in the class E0 of Li, Shi, Simchi-Levi, §1.2),
and a seasonal arrival schedule (Assumption 1.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.algorithms.conse.algorithm import ConSEParams, run_conse
from dpaudit.algorithms.conse.environment import PatientExperiment
from dpaudit.regret import RegretCurves
from dpaudit.validation import check_int_at_least, check_positive_int, check_probability

__all__ = ["checkpoints", "default_experiment", "simulate_conse", "simulate_dp_conse"]


def default_experiment(types: int = 2, gap: float = 0.4, seasonality: float = 0.3) -> PatientExperiment:
    """M types, mu_{0,1}[j] = 0.5 ∓ s_j gap/2 with s_j = +1, -1, +1, ...; seasonal arrivals."""
    m = check_positive_int(types, "types")
    gap = check_probability(gap, "gap")
    sign = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    return PatientExperiment(0.5 - sign * gap / 2, 0.5 + sign * gap / 2, seasonality=seasonality)


def checkpoints(horizon: int, points: int = 100) -> np.ndarray:
    """About `points` increasing rounds from 1 to `horizon` (horizon included)."""
    horizon = check_positive_int(horizon, "horizon")
    return np.unique(np.linspace(1, horizon, min(points, horizon)).round().astype(np.int64))


def _simulate(
    name: str,
    horizon: int,
    runs: int,
    seed: int,
    epsilon: float | None,
    types: int,
    alpha: float,
    gap: float,
    seasonality: float,
) -> RegretCurves:
    horizon = check_int_at_least(horizon, 2, "horizon")
    runs = check_positive_int(runs, "runs")
    env = default_experiment(types, gap, seasonality)
    params = ConSEParams(alpha=alpha, epsilon=epsilon)
    rng = np.random.default_rng(seed)
    data = env.sample(rng, horizon, runs)
    res = run_conse(env, data, params, rng)
    cp = checkpoints(horizon)
    privacy: dict[str, Any] = {"trust_model": "none", "claim": {"notion": "none"}, "note": "ConSE is not private"}
    if params.private:
        from dpaudit.algorithms.conse.privacy import conse_privacy

        privacy = conse_privacy(params, horizon, types, rct_length_floor=float(res.t_min.min())).to_dict()
    sq = res.squared_errors(env.cate)
    return RegretCurves(
        algorithm=name,
        checkpoints=cp,
        regret=res.regret[:, cp - 1],
        privacy=privacy,
        params={
            "types": types,
            "alpha": alpha,
            "epsilon": epsilon,
            "gap": gap,
            "seasonality": seasonality,
            "seed": seed,
            "horizon": horizon,
            "runs": runs,
            # the experiment's second objective (Li, Shi, Simchi-Levi, Eq. 1): max over types of the estimator MSE
            "estimator_max_mse": float(np.nanmax(np.nanmean(sq, axis=0))),
            "estimator_mse_per_type": [float(v) for v in np.nanmean(sq, axis=0)],
        },
    )


def simulate_conse(
    horizon: int, runs: int, seed: int, types: int = 2, alpha: float = 0.5, gap: float = 0.4, seasonality: float = 0.3
) -> RegretCurves:
    """Regret of non-private ConSE (Li, Shi, Simchi-Levi, Algorithm 1); params carry the estimator MSE."""
    return _simulate("conse", horizon, runs, seed, None, types, alpha, gap, seasonality)


def simulate_dp_conse(
    horizon: int,
    runs: int,
    seed: int,
    epsilon: float = 1.0,
    types: int = 2,
    alpha: float = 0.5,
    gap: float = 0.4,
    seasonality: float = 0.3,
) -> RegretCurves:
    """Regret of DP-ConSE (Li, Shi, Simchi-Levi, Algorithm 2); privacy carries the claimed and corrected guarantees."""
    return _simulate("dp-conse", horizon, runs, seed, epsilon, types, alpha, gap, seasonality)
