"""Generalized linear contextual bandits: Private-GLM and ShuffleGLM.

Paper: Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits" (arXiv):
ShuffleGLM is its Algorithm 1 (§5), Private-GLM its Algorithm 2 (§6).
Modules: `environment` (links, GLM instances), `private_glm`, `shuffle_glm`, `privacy` (claimed vs
corrected accounting), `regret`, `registration`.
"""

__all__: list[str] = []
