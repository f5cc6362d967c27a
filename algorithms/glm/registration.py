"""Registers Private-GLM and ShuffleGLM (Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized
Linear Contextual Bandits", Algorithms 2 and 1) for `dpaudit regret`."""

from dpaudit.algorithms.glm.environment import LINKS
from dpaudit.algorithms.glm.regret import simulate_private_glm, simulate_shuffle_glm
from dpaudit.algorithms.params import optional_float
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param


def _cli(simulate):
    """`simulate` called with the CLI's `--arms` (K) as its `n_arms`."""

    def run(horizon, runs, seed, arms=20, **kw):
        return simulate(horizon, runs, seed, n_arms=arms, **kw)

    return run


_GLM_PARAMS = (
    Param("dim", int, 3, "feature dimension d (Sarmasarkar, Table 2: 3)"),
    Param("arms", int, 20, "arms per round K (Sarmasarkar's experiments: 20)"),
    Param("link", str, "probit", "GLM link", tuple(LINKS)),
    Param("S", float, 2.0, "‖θ*‖ (Sarmasarkar, Table 2: 2, 2.5, 3; κ grows with S)"),
    Param("epsilon", float, 4.0, "privacy ε (0 = the non-private counterpart)"),
    Param("delta", float, 0.02, "privacy δ (Sarmasarkar's experiments: 0.02)"),
    Param("env_seed", int, 109832, "seed of the instance (the authors' 109832)"),
)
ALGORITHMS.register("private-glm", AlgorithmEntry(
    "private-glm", "Private-GLM: jointly private rarely-switching GLM-UCB with tree-released design matrices "
    "(Sarmasarkar, Alg. 2)", _cli(simulate_private_glm),
    _GLM_PARAMS + (Param("tree_calibration", str, "code", "code: zCDP per tree (C_V = 1); paper: Lemma I.4 σ "
                         "calibrated to 1/κ* for both trees", ("code", "paper")),)))
ALGORITHMS.register("shuffle-glm", AlgorithmEntry(
    "shuffle-glm", "ShuffleGLM: batched G-optimal-design GLM bandit, shuffled matrix sums and P_GD "
    "(Sarmasarkar, Alg. 1)", _cli(simulate_shuffle_glm),
    _GLM_PARAMS + (Param("pgd_iterations", optional_float, None, "P_GD rounds per batch (default Alg. 7's T_it)"),
                   Param("first_batch", optional_float, None, "B_1 (default eq. 6)"))))
