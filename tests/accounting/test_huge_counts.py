"""Counts beyond numpy's integers (10**20, 10**30 releases) and (epsilon0, delta0) far past the doubles:
every accountant answers with a valid bound, or inf where inf is the answer; none raises or hangs."""

import math
import warnings
from fractions import Fraction

import dp_accounting
import pytest

from dpaudit import accounting
from dpaudit.accounting.composition import OptimalHomogeneous
from dpaudit.accounting.events import EpsilonDeltaDpEvent


@pytest.mark.parametrize("count", [2**63 - 1, 2**64, 10**20, 10**30])
@pytest.mark.parametrize(
    "leaf",
    [
        EpsilonDeltaDpEvent(epsilon=1.0, delta=0.0),
        dp_accounting.LaplaceDpEvent(2.0),
        dp_accounting.GaussianDpEvent(2.0),
    ],
)
def test_counts_beyond_int64_answer_under_every_accountant(leaf, count):
    event = dp_accounting.SelfComposedDpEvent(leaf, count)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        answers = {name: accounting.epsilon(event, 1e-5, name) for name in accounting.supporting_accountants(event)}
    assert "approx" in answers
    for name, eps in answers.items():
        assert eps > 0 and not math.isnan(eps), name
    pure = accounting.pure_guarantee(event).epsilon if "pure" in answers else math.inf
    assert answers["approx"] <= pure


def test_optimal_homogeneous_beyond_2_to_53_is_fast_and_valid():
    """k = 10**30: the largest index with a positive term is found exactly (no float walk of 1e14 steps);
    the answer lies between the heterogeneous drift k eps0 tanh(eps0/2) and basic composition k eps0."""
    k = 10**30
    eps = OptimalHomogeneous(1.0, 0.0, k).epsilon(1e-5)
    assert k * math.tanh(0.5) <= eps <= k


def test_i_max_is_exact():
    """The largest i with (k - 2i) eps0 > eps, checked in exact rationals."""
    for k, eps0, eps in [
        (10, 1.0, 3.0),
        (10, 1.0, 2.5),
        (10**30, 1.0, 1e29),
        (7, 0.5, 0.0),
        (5, 1.0, 5.0),
        (10**20, 0.1, 3.0),
    ]:
        i = OptimalHomogeneous(eps0, 0.0, k)._i_max(eps)

        def above(j: int, k: int = k, eps0: float = eps0, eps: float = eps) -> bool:
            return (k - 2 * j) * Fraction(eps0) > Fraction(eps)

        assert i == -1 or above(i)
        assert i == k or not above(i + 1)


def test_huge_epsilon_delta_composition_is_inf():
    """10**18 releases of (1e6, 0.1)-DP: delta(eps) >= 1 - 0.9**k ~ 1 for every eps, so epsilon at delta
    1e-5 is inf, the valid and only bound; no OverflowError from e^1e6."""
    event = dp_accounting.SelfComposedDpEvent(EpsilonDeltaDpEvent(epsilon=1e6, delta=0.1), 10**18)
    assert accounting.epsilon(event, 1e-5) == math.inf
    assert accounting.delta(event, 1.0) == 1.0
