"""Registers ConSE and DP-ConSE (Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design",
ICML 2024, Algorithms 1 and 2) for `dpaudit regret`."""

from dpaudit.algorithms.conse.regret import simulate_conse, simulate_dp_conse
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param

_CONSE_PARAMS = (
    Param("types", int, 2, "number of patient types M"),
    Param("alpha", float, 0.5, "trade-off α in [0, 1]: RCT length max{log n, min_j f̂_j^(1-α)}"),
    Param("gap", float, 0.4, "|Δ(X_j)|: outcome means 0.5 ∓ gap/2, sign alternating over types"),
    Param("seasonality", float, 0.3, "amplitude in [0, 1) of the seasonal arrival schedule"),
)
ALGORITHMS.register("conse", AlgorithmEntry(
    "conse", "ConSE: per-type successive elimination then an RCT (Li, Shi, Simchi-Levi ICML 2024 Alg. 1, non-private)",
    simulate_conse, _CONSE_PARAMS))
ALGORITHMS.register("dp-conse", AlgorithmEntry(
    "dp-conse", "DP-ConSE: noisy epoch means/lengths, Lap+ RCT lengths, Laplace CATE (Li, Shi, Simchi-Levi ICML 2024 Alg. 2)",
    simulate_dp_conse, (Param("epsilon", float, 1.0, "privacy parameter ε"),) + _CONSE_PARAMS))
