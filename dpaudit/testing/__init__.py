"""Helpers for users' own test suites: `assert_dp` and hypothesis strategies for neighbouring data."""
