"""Helpers for users' own test suites: `assert_dp` and hypothesis strategies for neighbouring data.

`assert_dp` is also a pytest fixture (plugin `dpaudit.testing.plugin`, registered under the
`pytest11` entry point); the strategies live in `dpaudit.testing.strategies` (needs hypothesis).
"""

from dpaudit.testing.assertions import assert_dp

__all__ = ["assert_dp"]
