"""`dpaudit regret shuffle-glm | private-glm`: regret of Sarmasarkar's (shuffle/joint DP GLM bandits) algorithms (Algs. 1-2)
on the authors' GLM generator (their code for the §8 experiments).

The instance (arms in the unit ball, θ* of norm S) is drawn once from `env_seed` (the authors fix it, 109832)
and shared by all runs, which differ in their reward seeds and the algorithms' noise (as in the authors' code for Sarmasarkar (shuffle/joint-DP GLM bandits), §8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.algorithms.conse.regret import checkpoints
from dpaudit.algorithms.glm.environment import GLMEnvironment, paper_glm_environment
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, run_private_glm
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams, run_shuffle_glm
from dpaudit.regret import RegretCurves
from dpaudit.validation import check_positive_int

__all__ = ["simulate_private_glm", "simulate_shuffle_glm"]


def _setup(
    horizon: int, runs: int, dim: int, n_arms: int, link: str, S: float, env_seed: int, epsilon: float | None
) -> tuple[int, int, GLMEnvironment, float | None]:
    """Validated horizon and runs, the shared instance drawn from env_seed, and ε (ε = 0 or None
    selects the non-private counterpart: None)."""
    horizon = check_positive_int(horizon, "horizon")
    runs = check_positive_int(runs, "runs")
    env = paper_glm_environment(np.random.default_rng(env_seed), dim, n_arms, horizon, S, link)
    eps = None if epsilon is None or epsilon == 0 else epsilon
    return horizon, runs, env, eps


def _curves(
    name: str,
    horizon: int,
    regret: np.ndarray,
    eps: float | None,
    claimed: Callable[[], dict[str, Any]],
    config: dict[str, Any],
) -> RegretCurves:
    """The regret at the checkpoints with the claimed privacy (`claimed()`, unless non-private)."""
    cp = checkpoints(horizon)
    privacy = (
        {"trust_model": "none", "claim": {"notion": "none"}, "note": "non-private counterpart"}
        if eps is None
        else claimed()
    )
    return RegretCurves(name, cp, regret[:, cp - 1], privacy, config)


def simulate_private_glm(
    horizon: int,
    runs: int,
    seed: int,
    dim: int = 3,
    n_arms: int = 20,
    link: str = "probit",
    S: float = 2.0,
    epsilon: float | None = 4.0,
    delta: float = 0.02,
    tree_calibration: str = "code",
    env_seed: int = 109832,
    optimizer: str = "dp-gd",
) -> RegretCurves:
    """Regret of Private-GLM (Sarmasarkar, Alg. 2); epsilon 0 runs its non-private counterpart; optimizer
    "dp-gd" or "dp-sgd" (the authors' DP-SGD, `PrivateGLMParams.optimizer`)."""
    from dpaudit.algorithms.glm.privacy import private_glm_privacy

    horizon, runs, env, eps = _setup(horizon, runs, dim, n_arms, link, S, env_seed, epsilon)
    params = PrivateGLMParams(
        epsilon=eps, delta=delta, zeta=delta, tree_calibration=tree_calibration, optimizer=optimizer
    )
    rng = np.random.default_rng(seed)
    res = run_private_glm(env, env.sample(rng, runs), params, rng)
    return _curves(
        "private-glm",
        horizon,
        res.regret,
        eps,
        lambda: private_glm_privacy(params, horizon, dim, env.kappa, env.kappa_star, env.S).to_dict(),
        {
            "dim": dim,
            "arms": n_arms,
            "link": link,
            "S": S,
            "epsilon": eps,
            "delta": delta,
            "tree_calibration": tree_calibration,
            "optimizer": optimizer,
            "env_seed": env_seed,
            "seed": seed,
            "kappa": env.kappa,
            "kappa_star": env.kappa_star,
        },
    )


def simulate_shuffle_glm(
    horizon: int,
    runs: int,
    seed: int,
    dim: int = 3,
    n_arms: int = 20,
    link: str = "probit",
    S: float = 2.0,
    epsilon: float | None = 4.0,
    delta: float = 0.02,
    pgd_iterations: int | None = None,
    first_batch: float | None = None,
    env_seed: int = 109832,
) -> RegretCurves:
    """Regret of ShuffleGLM (Sarmasarkar, Alg. 1); epsilon 0 runs it with exact sums and exact GD."""
    from dpaudit.algorithms.glm.privacy import shuffle_glm_privacy

    horizon, runs, env, eps = _setup(horizon, runs, dim, n_arms, link, S, env_seed, epsilon)
    params = ShuffleGLMParams(epsilon=eps, delta=delta, pgd_iterations=pgd_iterations, first_batch=first_batch)
    rng = np.random.default_rng(seed)
    res = run_shuffle_glm(env, env.sample(rng, runs), params, rng)
    sizes = np.diff(np.concatenate([[0], res.batch_ends])).tolist()
    return _curves(
        "shuffle-glm",
        horizon,
        res.regret,
        eps,
        lambda: shuffle_glm_privacy(params, sizes, dim, list(res.iterations)).to_dict(),
        {
            "dim": dim,
            "arms": n_arms,
            "link": link,
            "S": S,
            "epsilon": eps,
            "delta": delta,
            "batch_ends": res.batch_ends.tolist(),
            "pgd_iterations": list(res.iterations),
            "env_seed": env_seed,
            "seed": seed,
            "kappa": env.kappa,
            "kappa_star": env.kappa_star,
        },
    )
