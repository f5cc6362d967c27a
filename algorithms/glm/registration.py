"""Registers Private-GLM and ShuffleGLM (Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized
Linear Contextual Bandits", Algorithms 2 and 1) for `dpaudit regret`."""

import numpy as np

from dpaudit.algorithms.glm.environment import LINKS, paper_glm_environment
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams
from dpaudit.algorithms.glm.regret import simulate_private_glm, simulate_shuffle_glm
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams
from dpaudit.algorithms.params import optional_float
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param
from dpaudit.validation import check_positive_int

__all__: list[str] = []


def _cli(simulate):
    """`simulate` called with the CLI's `--arms` (K) as its `n_arms`."""

    def run(horizon, runs, seed, arms=20, **kw):
        return simulate(horizon, runs, seed, n_arms=arms, **kw)

    return run


def _privacy_private_glm(
    horizon,
    dim=3,
    arms=20,
    link="probit",
    S=2.0,
    epsilon=4.0,
    delta=0.02,
    tree_calibration="code",
    env_seed=109832,
    optimizer="dp-gd",
):
    """Declared privacy of Private-GLM on the instance drawn from `env_seed` (its κ, κ* enter the noise)."""
    from dpaudit.algorithms.glm.privacy import private_glm_privacy

    env = _instance(horizon, dim, arms, S, link, env_seed)
    params = PrivateGLMParams(
        epsilon=_private(epsilon), delta=delta, zeta=delta, tree_calibration=tree_calibration, optimizer=optimizer
    )
    return private_glm_privacy(params, env.horizon, dim, env.kappa, env.kappa_star, env.S)


def _privacy_shuffle_glm(
    horizon,
    dim=3,
    arms=20,
    link="probit",
    S=2.0,
    epsilon=4.0,
    delta=0.02,
    pgd_iterations=None,
    first_batch=None,
    env_seed=109832,
):
    """Declared privacy of ShuffleGLM over the batches its schedule (eqs. 6-10) gives on that instance."""
    from dpaudit.algorithms.glm.algorithms import ShuffleGLM
    from dpaudit.algorithms.glm.shuffle_glm import _schedule

    env = _instance(horizon, dim, arms, S, link, env_seed)
    params = ShuffleGLMParams(
        epsilon=_private(epsilon),
        delta=delta,
        pgd_iterations=None if pgd_iterations is None else int(pgd_iterations),
        first_batch=first_batch,
    )
    ends = _schedule(env, params, env.horizon, S, 1.0).ends
    sizes = np.diff(np.concatenate([[0], ends])).tolist()
    return ShuffleGLM(params).privacy(env.horizon, dim=dim, batch_sizes=sizes)


def _instance(horizon, dim, arms, S, link, env_seed):
    return paper_glm_environment(
        np.random.default_rng(env_seed), dim, arms, check_positive_int(horizon, "horizon"), S, link
    )


def _private(epsilon):
    if epsilon is None or epsilon == 0:
        raise ValueError(
            f"epsilon must be positive for a privacy budget (0 runs the non-private counterpart), got {epsilon!r}"
        )
    return epsilon


_GLM_PARAMS = (
    Param("dim", int, 3, "feature dimension d (Sarmasarkar, Table 2: 3)"),
    Param("arms", int, 20, "arms per round K (Sarmasarkar's experiments: 20)"),
    Param("link", str, "probit", "GLM link", tuple(LINKS)),
    Param("S", float, 2.0, "‖θ*‖ (Sarmasarkar, Table 2: 2, 2.5, 3; κ grows with S)"),
    Param("epsilon", float, 4.0, "privacy ε (0 = the non-private counterpart)"),
    Param("delta", float, 0.02, "privacy δ (Sarmasarkar's experiments, §8 Table 2: 0.02)"),
    Param("env_seed", int, 109832, "seed of the instance (the authors' 109832)"),
)
ALGORITHMS.register(
    "private-glm",
    AlgorithmEntry(
        "private-glm",
        "Private-GLM: jointly private rarely-switching GLM-UCB with tree-released design matrices "
        "(Sarmasarkar, Alg. 2)",
        _cli(simulate_private_glm),
        _GLM_PARAMS
        + (
            Param(
                "tree_calibration",
                str,
                "code",
                "code: zCDP per tree (C_V = 1); paper: Lemma I.4 σ calibrated to 1/κ* for both trees",
                ("code", "paper"),
            ),
            Param(
                "optimizer",
                str,
                "dp-gd",
                "dp-gd: noisy full-batch GD; dp-sgd: the authors' DP-SGD "
                "(Sarmasarkar, Remark A.1), Poisson-sampled, accounted at sensitivity 2C",
                ("dp-gd", "dp-sgd"),
            ),
        ),
        _privacy_private_glm,
        "epsilon",
    ),
)
ALGORITHMS.register(
    "shuffle-glm",
    AlgorithmEntry(
        "shuffle-glm",
        "ShuffleGLM: batched G-optimal-design GLM bandit, shuffled matrix sums and P_GD (Sarmasarkar, Alg. 1)",
        _cli(simulate_shuffle_glm),
        _GLM_PARAMS
        + (
            Param("pgd_iterations", optional_float, None, "P_GD rounds per batch (default Alg. 7's T_it)"),
            Param("first_batch", optional_float, None, "B_1 (default eq. 6)"),
        ),
        _privacy_shuffle_glm,
        "epsilon",
    ),
)
