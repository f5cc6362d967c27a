"""Linear contextual bandits: LinUCB and its jointly, locally and shuffle private variants.

Paper: Chowdhury, Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022, with its baselines
(Shariff & Sheffet 2018; Zheng et al. 2020). Modules: `environment` (contexts), `linucb` (the shared
`LinearAlgorithm`), one module per variant, `registration`.
"""
