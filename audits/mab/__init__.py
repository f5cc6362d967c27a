"""Catalog entries of the multi-armed family (`entries`): DP-SE, Anytime-Lazy-UCB, Hybrid-UCB, FTNL, the SE protocols."""

__all__: list[str] = []
