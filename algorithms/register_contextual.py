"""Registers the contextual algorithms and adaptive experiments (seeds 000, 002, 003, baselines) for `dpaudit regret`."""
