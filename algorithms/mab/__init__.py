"""Multi-armed bandits: reward environments, the elimination, UCB and FTNL families, their privacy.

Papers: Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic
Environment" (Anytime-Lazy-UCB, Hybrid-UCB, FTNL); Chowdhury, Zhou, "Distributed Differential Privacy
in Multi-Armed Bandits", ICLR 2023 (DP-SE with central, distributed, local and shuffle protocols).
Modules: `environment` (arms, reward tables), `outcome`, `base` (the shared `Algorithm` class),
one module per algorithm, `registration` (`dpaudit regret` entries).
"""
