"""Multi-armed bandits: reward environments, the elimination, UCB and FTNL families, their privacy.

Papers: Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic
Environment" (Anytime-Lazy-UCB, Alg. 1; Hybrid-UCB, Alg. 4; FTNL, Algs. 2-3); Chowdhury, Zhou, "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023 (batch SE, Alg. 1, with the central, distributed, local
and shuffle protocols of Thms 1-6).
Modules: `environment` (arms, reward tables), `outcome`, `base` (the shared `Algorithm` class),
one module per algorithm, `registration` (`dpaudit regret` entries).
"""

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.canaries import CanaryRounds, one_run_target, released_block_count, tail_guesses
from dpaudit.algorithms.mab.elimination import DPSE, SuccessiveElimination
from dpaudit.algorithms.mab.environment import (
    BernoulliArms,
    ClippedGaussianArms,
    Environment,
    RewardTable,
    make_environment,
)
from dpaudit.algorithms.mab.ftnl import FTNL
from dpaudit.algorithms.mab.hybrid_ucb import HybridUCB
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import Outcome
from dpaudit.algorithms.mab.ucb import UCB1

__all__ = [
    "DPSE",
    "FTNL",
    "UCB1",
    "AnytimeLazyUCB",
    "BatchSE",
    "BernoulliArms",
    "CanaryRounds",
    "ClippedGaussianArms",
    "Environment",
    "HybridUCB",
    "Outcome",
    "RewardTable",
    "SuccessiveElimination",
    "make_environment",
    "one_run_target",
    "released_block_count",
    "tail_guesses",
]
