"""Generalized linear contextual bandits: Private-GLM and ShuffleGLM.

Paper: Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits".
Modules: `environment` (links, GLM instances), `private_glm`, `shuffle_glm`, `privacy` (claimed vs
corrected accounting), `regret`, `registration`.
"""
