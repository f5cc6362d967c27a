"""pytest plugin (entry point `pytest11: dpaudit`): the `assert_dp` fixture and `--dpaudit-samples`.

    def test_my_mechanism(assert_dp):
        assert_dp(my_target, d0, d1, epsilon=1.0)

`--dpaudit-samples N` changes the fixture's default number of runs per input (e.g. larger in a
nightly job); an explicit `samples=` in the call wins.
"""

from __future__ import annotations

import functools

import pytest

from dpaudit.testing.assertions import DEFAULT_SAMPLES
from dpaudit.testing.assertions import assert_dp as _assert_dp

__all__ = ["assert_dp", "pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--dpaudit-samples N`: the `assert_dp` fixture's default number of runs per input."""
    group = parser.getgroup("dpaudit")
    group.addoption(
        "--dpaudit-samples",
        type=int,
        default=None,
        help=f"runs per input for the assert_dp fixture (default {DEFAULT_SAMPLES})",
    )


def configured(samples: int | None):
    """`assert_dp` with `samples` as its default number of runs per input (None: the built-in default)."""
    if samples is None:
        return _assert_dp
    if samples < 1:
        raise pytest.UsageError(f"--dpaudit-samples must be a positive integer, got {samples}")
    return functools.partial(_assert_dp, samples=samples)


@pytest.fixture
def assert_dp(request: pytest.FixtureRequest):
    """`assert_dp(target, d0, d1, epsilon, delta=0, **options)`: see `dpaudit.testing.assert_dp`."""
    return configured(request.config.getoption("--dpaudit-samples"))
