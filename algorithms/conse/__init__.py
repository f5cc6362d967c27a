"""Adaptive experiments: ConSE and DP-ConSE with CATE inference.

Paper: Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design", ICML 2024: ConSE is its
Algorithm 1 (§2), DP-ConSE its Algorithm 2 (App. A.4), whose privacy claim is Theorem 3.5.
Modules: `environment` (typed patients), `algorithm` (ConSE / DP-ConSE), `privacy` (claimed vs corrected),
`inference` (CATE confidence intervals and tests), `regret`, `registration`.
"""

from dpaudit.algorithms.conse.conse import ConSE
from dpaudit.algorithms.conse.environment import PatientData, PatientExperiment
from dpaudit.algorithms.conse.inference import CATEInference, cate_inference

__all__ = ["CATEInference", "ConSE", "PatientData", "PatientExperiment", "cate_inference"]
