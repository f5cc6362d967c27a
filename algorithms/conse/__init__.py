"""Adaptive experiments: ConSE and DP-ConSE with CATE inference.

Paper: Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design", ICML 2024.
Modules: `environment` (typed patients), `algorithm` (ConSE / DP-ConSE), `privacy` (claimed vs corrected),
`inference` (CATE confidence intervals and tests), `regret`, `registration`.
"""
