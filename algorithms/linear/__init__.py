"""Linear contextual bandits: LinUCB and its jointly, locally and shuffle private variants.

Paper: Chowdhury, Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022 (Alg. 1 with P_Amp, §3.2, or
P_Vec, §3.3), with its baselines (Shariff & Sheffet 2018; Zheng et al. 2020; App. F). Modules: `environment` (contexts), `linucb` (the shared
`LinearAlgorithm`), one module per variant, `registration`.
"""

from dpaudit.algorithms.linear.canaries import CanaryUsers, one_run_target
from dpaudit.algorithms.linear.environment import ContextTable, Environment, LinearEnvironment, linear_environment
from dpaudit.algorithms.linear.linucb import LinUCB, LinUCBResult, simulate_linear
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec

__all__ = [
    "CanaryUsers",
    "ContextTable",
    "Environment",
    "LinUCB",
    "LinUCBJDP",
    "LinUCBLDP",
    "LinUCBResult",
    "LinUCBSDPAmp",
    "LinUCBSDPVec",
    "LinearEnvironment",
    "linear_environment",
    "one_run_target",
    "simulate_linear",
]
