"""Registers LinUCB and its private variants for `dpaudit regret`: jointly private (Shariff & Sheffet 2018),
locally private (Zheng et al. 2020) and shuffle private (Chowdhury & Zhou, "Shuffle Private Linear Contextual
Bandits", ICML 2022, Alg. 1 with P_Amp (§3.2) or P_Vec (§3.3)); defaults follow its experiments (§5, App. G)."""

from dpaudit.algorithms.linear.environment import INSTANCES
from dpaudit.algorithms.linear.linucb import LinUCB, simulate_linear
from dpaudit.algorithms.linear.linucb_jdp import JDP_NOISES, LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LDP_NOISES, LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import (
    AMP_RETURNING_NOISES,
    USERS,
    LinUCBSDPAmp,
    LinUCBSDPVec,
)
from dpaudit.algorithms.params import optional_float
from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param
from dpaudit.validation import check_int_at_least, check_positive_int

__all__: list[str] = []


def _linear_params(batch: int) -> tuple[Param, ...]:
    return (
        Param("dim", int, 5, "feature dimension d (Chowdhury & Zhou (ICML 2022), Fig. 1: 5; Fig. 2: 10, 15)"),
        Param("arms", int, 100, "actions per round K (Chowdhury & Zhou (ICML 2022), §5: 100)"),
        Param(
            "contexts",
            str,
            "fixed",
            "fixed: one arm set per run (authors' code); iid: fresh features every round",
            ("fixed", "iid"),
        ),
        Param(
            "instances",
            str,
            "random",
            "random: drawn by the paper's description (§5); authors: run r is the authors' "
            "code's instance r (np.random.seed(2) stream, features rescaled to norm <= 1, same means)",
            INSTANCES,
        ),
        Param(
            "batch", int, batch, "users per batch B (1 = sequential; Chowdhury & Zhou's (ICML 2022) SDP runs use 20)"
        ),
        Param(
            "regularizer",
            optional_float,
            None,
            "ridge lambda (default: max(1, 2 sigma~ (sqrt d + sqrt(2 log(M/alpha)))))",
        ),
        Param("width_scale", float, 1.0, "multiplier of the confidence radius beta_m (1 = theory radius)"),
        Param(
            "width",
            optional_float,
            None,
            "fixed confidence width used at every round instead of beta_m "
            "(the authors' code: cew(T), see linucb.code_width)",
        ),
    )


_PRIVATE_PARAMS = (
    Param("epsilon", float, 1.0, "privacy parameter epsilon > 0 (Chowdhury & Zhou (ICML 2022), Fig. 1: 0.2, 1, 10)"),
    Param("delta", float, 0.1, "privacy parameter delta in (0, 1) (Chowdhury & Zhou (ICML 2022), §5: 0.1)"),
)


def _linear_entry(cls, summary: str, params: tuple[Param, ...]) -> AlgorithmEntry:
    def simulate(horizon, runs, seed, dim=5, arms=100, contexts="fixed", instances="random", **kw):  # --arms is K
        return simulate_linear(
            cls(**kw), horizon, runs, seed, dim=dim, n_arms=arms, contexts=contexts, instances=instances
        )

    def privacy(horizon, dim=5, arms=100, contexts="fixed", instances="random", **kw):
        """The declared privacy of `horizon` users at dimension `dim` (K and the contexts do not enter it)."""
        check_int_at_least(arms, 2, "arms")
        return cls(**kw).privacy(check_positive_int(horizon, "horizon"), dim=check_positive_int(dim, "dim"))

    tuned = "epsilon" if any(p.name == "epsilon" for p in params) else None
    return AlgorithmEntry(cls.name, summary, simulate, params, privacy, tuned)


ALGORITHMS.register(
    "linucb",
    _linear_entry(
        LinUCB, "LinUCB / OFUL (Abbasi-Yadkori et al. 2011), non-private; batched when --batch > 1", _linear_params(1)
    ),
)
ALGORITHMS.register(
    "linucb-jdp",
    _linear_entry(
        LinUCBJDP,
        "jointly private LinUCB, tree-based Gram matrices (Shariff & Sheffet 2018)",
        _linear_params(1)
        + _PRIVATE_PARAMS
        + (
            Param(
                "noise",
                str,
                "paper",
                "paper: Shariff-Sheffet sigma; code: Chowdhury & Zhou's (ICML 2022) simulation constant (§5 fn. 7)",
                JDP_NOISES,
            ),
            Param(
                "user_rounds",
                int,
                1,
                "rounds per user M0 (user-level JDP, Chowdhury & Zhou 2022, Prop. 4.3: variance x M0^2)",
            ),
        ),
    ),
)
ALGORITHMS.register(
    "linucb-ldp",
    _linear_entry(
        LinUCBLDP,
        "locally private LinUCB (Zheng et al. 2020; Batched-Local-LinUCB of Chowdhury & Zhou (ICML 2022), Prop. F.1, when --batch > 1)",
        _linear_params(1)
        + _PRIVATE_PARAMS
        + (
            Param(
                "noise",
                str,
                "paper",
                "paper: 4 sqrt(2 ln(2.5/delta))/eps; code: Chowdhury & Zhou's (ICML 2022) simulation constant (§5 fn. 7)",
                LDP_NOISES,
            ),
        ),
    ),
)
_SDP_PARAMS = (
    _linear_params(20)
    + _PRIVATE_PARAMS
    + (
        Param(
            "users",
            str,
            "unique",
            "unique users, or returning users present once per batch (Chowdhury & Zhou 2022, §4)",
            USERS,
        ),
    )
)
ALGORITHMS.register(
    "linucb-sdp-amp",
    _linear_entry(
        LinUCBSDPAmp,
        "shuffle-private LinUCB, amplification protocol P_Amp (Chowdhury & Zhou 2022, Alg. 1-4)",
        _SDP_PARAMS
        + (
            Param(
                "noise",
                str,
                "paper",
                "paper: theorem sigma (derived: returning users without the log "
                "simplification); code: the authors' simulation sigma",
                AMP_RETURNING_NOISES,
            ),
        ),
    ),
)
ALGORITHMS.register(
    "linucb-sdp-vec",
    _linear_entry(
        LinUCBSDPVec,
        "shuffle-private LinUCB, vector/matrix summation P_Vec (Chowdhury & Zhou 2022, Alg. 5-7)",
        _SDP_PARAMS
        + (
            Param(
                "noise", str, "paper", "paper: theorem (g, b); code: the authors' simulation (g, b)", ("paper", "code")
            ),
            Param(
                "vec_range",
                str,
                "paper",
                "paper: R(w, Delta) on [0, 2 Delta] (sensitivity 2g); normalized: 2 Delta",
                VECTOR_SUM_RANGES,
            ),
        ),
    ),
)
