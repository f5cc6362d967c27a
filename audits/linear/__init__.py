"""Catalog entries of the linear contextual family (`entries`): shuffle private LinUCB and its baselines."""

__all__: list[str] = []
