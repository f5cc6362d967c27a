"""Registers the contextual algorithms and adaptive experiments (seeds 000, 002, 003, baselines) for `dpaudit regret`."""

from dpaudit.algorithms.conse_regret import simulate_conse, simulate_dp_conse  # noqa: E402  (seed 000)
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param  # noqa: E402

_CONSE_PARAMS = (
    Param("types", int, 2, "number of patient types M"),
    Param("alpha", float, 0.5, "trade-off α in [0, 1]: RCT length max{log n, min_j f̂_j^(1-α)}"),
    Param("gap", float, 0.4, "|Δ(X_j)|: outcome means 0.5 ∓ gap/2, sign alternating over types"),
    Param("seasonality", float, 0.3, "amplitude in [0, 1) of the seasonal arrival schedule"),
)
ALGORITHMS.register("conse", AlgorithmEntry(
    "conse", "ConSE: per-type successive elimination then an RCT (seed 000 Alg. 1, non-private)",
    simulate_conse, _CONSE_PARAMS))
ALGORITHMS.register("dp-conse", AlgorithmEntry(
    "dp-conse", "DP-ConSE: noisy epoch means/lengths, Lap+ RCT lengths, Laplace CATE (seed 000 Alg. 2)",
    simulate_dp_conse, (Param("epsilon", float, 1.0, "privacy parameter ε"),) + _CONSE_PARAMS))

# --- linear contextual bandits (seed 003 and its baselines) -------------------------------------
from dpaudit.algorithms.linucb import LinUCB, simulate_linear  # noqa: E402
from dpaudit.algorithms.linucb_jdp import JDP_NOISES, LinUCBJDP  # noqa: E402
from dpaudit.algorithms.linucb_ldp import LDP_NOISES, LinUCBLDP  # noqa: E402
from dpaudit.algorithms.shuffle_linucb import (  # noqa: E402
    AMP_RETURNING_NOISES,
    USERS,
    LinUCBSDPAmp,
    LinUCBSDPVec,
)
from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES  # noqa: E402
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param  # noqa: E402,F811


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() in ("", "none", "auto") else float(text)


def _linear_params(batch: int) -> tuple[Param, ...]:
    return (
        Param("dim", int, 5, "feature dimension d (seed 003: 5, 10, 15)"),
        Param("arms", int, 100, "actions per round K (seed 003: 100)"),
        Param("contexts", str, "fixed", "fixed: one arm set per run (authors' code); iid: fresh features every round",
              ("fixed", "iid")),
        Param("batch", int, batch, "users per batch B (1 = sequential; seed 003's SDP runs use 20)"),
        Param("regularizer", _optional_float, None, "ridge lambda (default: max(1, 2 sigma~ (sqrt d + sqrt(2 log(M/alpha)))))"),
        Param("width_scale", float, 1.0, "multiplier of the confidence radius beta_m (1 = theory radius)"),
    )


_PRIVATE_PARAMS = (
    Param("epsilon", float, 1.0, "privacy parameter epsilon > 0 (seed 003: 0.2, 1, 10)"),
    Param("delta", float, 0.1, "privacy parameter delta in (0, 1) (seed 003: 0.1)"),
)


def _linear_entry(cls, summary: str, params: tuple[Param, ...]) -> AlgorithmEntry:
    def simulate(horizon, runs, seed, dim=5, arms=100, contexts="fixed", **kw):
        return simulate_linear(cls(**kw), horizon, runs, seed, dim=dim, arms=arms, contexts=contexts)

    return AlgorithmEntry(cls.name, summary, simulate, params)


ALGORITHMS.register("linucb", _linear_entry(
    LinUCB, "LinUCB / OFUL (Abbasi-Yadkori et al. 2011), non-private; batched when --batch > 1", _linear_params(1)))
ALGORITHMS.register("linucb-jdp", _linear_entry(
    LinUCBJDP, "jointly private LinUCB, tree-based Gram matrices (Shariff & Sheffet 2018)",
    _linear_params(1) + _PRIVATE_PARAMS + (
        Param("noise", str, "paper", "paper: Shariff-Sheffet sigma; code: seed 003's simulation constant", JDP_NOISES),
        Param("user_rounds", int, 1, "rounds per user M0 (user-level JDP, seed 003 Prop. 4.3: variance x M0^2)"),)))
ALGORITHMS.register("linucb-ldp", _linear_entry(
    LinUCBLDP, "locally private LinUCB (Zheng et al. 2020; Batched-Local-LinUCB of seed 003 when --batch > 1)",
    _linear_params(1) + _PRIVATE_PARAMS + (
        Param("noise", str, "paper", "paper: 4 sqrt(2 ln(2.5/delta))/eps; code: seed 003's simulation constant", LDP_NOISES),)))
_SDP_PARAMS = _linear_params(20) + _PRIVATE_PARAMS + (
    Param("users", str, "unique", "unique users, or returning users present once per batch (seed 003 §4)", USERS),
)
ALGORITHMS.register("linucb-sdp-amp", _linear_entry(
    LinUCBSDPAmp, "shuffle-private LinUCB, amplification protocol P_Amp (Chowdhury & Zhou 2022, Alg. 1-4)",
    _SDP_PARAMS + (Param("noise", str, "paper", "paper: theorem sigma (derived: returning users without the log "
                         "simplification); code: the authors' simulation sigma", AMP_RETURNING_NOISES),)))
ALGORITHMS.register("linucb-sdp-vec", _linear_entry(
    LinUCBSDPVec, "shuffle-private LinUCB, vector/matrix summation P_Vec (Chowdhury & Zhou 2022, Alg. 5-7)",
    _SDP_PARAMS + (
        Param("noise", str, "paper", "paper: theorem (g, b); code: the authors' simulation (g, b)", ("paper", "code")),
        Param("vec_range", str, "paper", "paper: R(w, Delta) on [0, 2 Delta] (sensitivity 2g); normalized: 2 Delta",
              VECTOR_SUM_RANGES),)))

# --- GLM contextual bandits (seed 002) ----------------------------------------------------------
from dpaudit.algorithms.glm_env import LINKS  # noqa: E402
from dpaudit.algorithms.glm_regret import simulate_private_glm, simulate_shuffle_glm  # noqa: E402

_GLM_PARAMS = (
    Param("dim", int, 3, "feature dimension d (seed 002 Table 2: 3)"),
    Param("arms", int, 20, "arms per round K (seed 002: 20)"),
    Param("link", str, "probit", "GLM link", tuple(LINKS)),
    Param("S", float, 2.0, "‖θ*‖ (seed 002 Table 2: 2, 2.5, 3; κ grows with S)"),
    Param("epsilon", float, 4.0, "privacy ε (0 = the non-private counterpart)"),
    Param("delta", float, 0.02, "privacy δ (seed 002: 0.02)"),
    Param("env_seed", int, 109832, "seed of the instance (the authors' 109832)"),
)
ALGORITHMS.register("private-glm", AlgorithmEntry(
    "private-glm", "Private-GLM: jointly private rarely-switching GLM-UCB with tree-released design matrices "
    "(seed 002 Alg. 2)", simulate_private_glm,
    _GLM_PARAMS + (Param("tree_calibration", str, "code", "code: zCDP per tree (C_V = 1); paper: Lemma I.4 σ "
                         "calibrated to 1/κ* for both trees", ("code", "paper")),)))
ALGORITHMS.register("shuffle-glm", AlgorithmEntry(
    "shuffle-glm", "ShuffleGLM: batched G-optimal-design GLM bandit, shuffled matrix sums and P_GD "
    "(seed 002 Alg. 1)", simulate_shuffle_glm,
    _GLM_PARAMS + (Param("pgd_iterations", _optional_float, None, "P_GD rounds per batch (default Alg. 7's T_it)"),
                   Param("first_batch", _optional_float, None, "B_1 (default eq. 6)"))))
