"""Catalog entries of the adaptive-experiment family (`entries`): DP-ConSE."""

__all__: list[str] = []
