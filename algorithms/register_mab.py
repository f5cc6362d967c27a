"""Registers the multi-armed and full-information algorithms (seeds 001, 004, baselines) for `dpaudit regret`."""
