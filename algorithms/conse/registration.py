"""Registers ConSE and DP-ConSE (Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design",
ICML 2024, Algorithms 1 and 2) for `dpaudit regret`."""

from dpaudit.algorithms.conse.algorithm import ConSEParams
from dpaudit.algorithms.conse.privacy import conse_privacy
from dpaudit.algorithms.conse.regret import default_experiment, simulate_conse, simulate_dp_conse
from dpaudit.privacy import NON_PRIVATE
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param
from dpaudit.validation import check_int_at_least

__all__: list[str] = []

_CONSE_PARAMS = (
    Param("types", int, 2, "number of patient types M"),
    Param("alpha", float, 0.5, "trade-off α in [0, 1]: RCT length max{log n, min_j f̂_j^(1-α)}"),
    Param("gap", float, 0.4, "|Δ(X_j)|: outcome means 0.5 ∓ gap/2, sign alternating over types"),
    Param("seasonality", float, 0.3, "amplitude in [0, 1) of the seasonal arrival schedule"),
)


def _privacy(epsilon: float | None):
    """privacy(horizon, **params): the declared privacy over `horizon` units (None: non-private ConSE)."""

    def privacy(horizon, types=2, alpha=0.5, gap=0.4, seasonality=0.3):
        horizon = check_int_at_least(horizon, 2, "horizon")
        default_experiment(types, gap, seasonality)  # checks the instance's parameters
        if epsilon is None:
            return NON_PRIVATE
        return conse_privacy(ConSEParams(alpha=alpha, epsilon=epsilon), horizon, types)

    return privacy


def _dp_privacy(horizon, epsilon=1.0, **kw):
    return _privacy(epsilon)(horizon, **kw)


ALGORITHMS.register(
    "conse",
    AlgorithmEntry(
        "conse",
        "ConSE: per-type successive elimination then an RCT (Li, Shi, Simchi-Levi ICML 2024 Alg. 1, non-private)",
        simulate_conse,
        _CONSE_PARAMS,
        _privacy(None),
    ),
)
ALGORITHMS.register(
    "dp-conse",
    AlgorithmEntry(
        "dp-conse",
        "DP-ConSE: noisy epoch means/lengths, Lap+ RCT lengths, Laplace CATE (Li, Shi, Simchi-Levi ICML 2024 Alg. 2)",
        simulate_dp_conse,
        (Param("epsilon", float, 1.0, "privacy parameter ε"),) + _CONSE_PARAMS,
        _dp_privacy,
        "epsilon",
    ),
)
