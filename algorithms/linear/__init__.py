"""Linear contextual bandits: LinUCB and its jointly, locally and shuffle private variants.

Paper: Chowdhury, Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022 (Alg. 1 with P_Amp, §3.2, or
P_Vec, §3.3), with its baselines (Shariff & Sheffet 2018; Zheng et al. 2020; App. F). Modules: `environment` (contexts), `linucb` (the shared
`LinearAlgorithm`), one module per variant, `registration`.
"""

__all__: list[str] = []
