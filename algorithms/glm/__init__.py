"""Generalized linear contextual bandits: Private-GLM and ShuffleGLM.

Paper: Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits" (arXiv):
ShuffleGLM is its Algorithm 1 (§5), Private-GLM its Algorithm 2 (§6).
Modules: `environment` (links, GLM instances), `private_glm`, `shuffle_glm`, `privacy` (claimed vs
corrected accounting), `regret`, `registration`.
"""

from dpaudit.algorithms.glm.algorithms import PrivateGLM, ShuffleGLM
from dpaudit.algorithms.glm.environment import GLMData, GLMEnvironment, paper_glm_environment
from dpaudit.algorithms.glm.privacy import private_glm_privacy, shuffle_glm_privacy

__all__ = [
    "GLMData",
    "GLMEnvironment",
    "PrivateGLM",
    "ShuffleGLM",
    "paper_glm_environment",
    "private_glm_privacy",
    "shuffle_glm_privacy",
]
