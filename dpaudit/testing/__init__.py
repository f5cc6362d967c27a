"""Tools for users' own test suites: `assert_dp` and hypothesis strategies for neighbouring data.

`assert_dp` is also a pytest fixture (plugin `dpaudit.testing.plugin`, registered under the
`pytest11` entry point); neither needs more than dpaudit. The strategies live in
`dpaudit.testing.strategies` and need hypothesis, which dpaudit itself does not install: the
`[testing]` extra brings it (`pip install "dpaudit[testing]"`), and without it importing the
strategies raises an ImportError saying so.
"""

from dpaudit.testing.assertions import assert_dp

__all__ = ["assert_dp"]
