"""Adaptive experiments: ConSE and DP-ConSE with CATE inference.

Paper: Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design", ICML 2024: ConSE is its
Algorithm 1 (§2), DP-ConSE its Algorithm 2 (App. A.4), whose privacy claim is Theorem 3.5.
Modules: `environment` (typed patients), `algorithm` (ConSE / DP-ConSE), `privacy` (claimed vs corrected),
`inference` (CATE confidence intervals and tests), `regret`, `registration`.
"""

__all__: list[str] = []
