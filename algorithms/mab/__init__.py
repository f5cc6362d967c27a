"""Multi-armed bandits: reward environments, the elimination, UCB and FTNL families, their privacy.

Papers: Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic
Environment" (Anytime-Lazy-UCB, Alg. 1; Hybrid-UCB, Alg. 4; FTNL, Algs. 2-3); Chowdhury, Zhou, "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023 (batch SE, Alg. 1, with the central, distributed, local
and shuffle protocols of Thms 1-6).
Modules: `environment` (arms, reward tables), `outcome`, `base` (the shared `Algorithm` class),
one module per algorithm, `registration` (`dpaudit regret` entries).
"""

__all__: list[str] = []
