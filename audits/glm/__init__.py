"""Catalog entries of the GLM family (`entries`): Private-GLM and ShuffleGLM."""

__all__: list[str] = []
