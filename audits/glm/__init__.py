"""Catalog entries of the GLM family (`entries`): Private-GLM and ShuffleGLM."""
