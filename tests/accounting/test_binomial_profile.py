"""Exact (eps, delta) profile of the binomial count mechanism from binomial tails, any number of trials."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit import accounting as A
from dpaudit.accounting.binomial import binomial_delta, binomial_epsilon


def _brute_delta(trials, p, shift, eps):
    """max over both directions of sum_y (P(y) - e^eps Q(y))_+, every outcome enumerated."""
    y = np.arange(0, trials + shift + 1)
    up, low = stats.binom.pmf(y - shift, trials, p), stats.binom.pmf(y, trials, p)
    return max(np.maximum(up - np.exp(eps) * low, 0).sum(), np.maximum(low - np.exp(eps) * up, 0).sum())


@pytest.mark.parametrize(
    "trials, p, shift",
    [(200, 0.25, 6), (1000, 0.5, 20), (10, 0.25, 1), (5, 0.3, 5), (3, 0.5, 4), (30600, 0.25, 18), (1, 0.5, 1)],
)
def test_delta_equals_enumeration(trials, p, shift):
    for eps in (0.0, 0.1, 0.3, 0.8, 1.5, 3.0):
        brute = _brute_delta(trials, p, shift, eps)
        got = binomial_delta(trials, p, shift, eps)
        assert brute - 1e-15 <= got <= brute * (1 + 1e-8) + 1e-15, eps


def test_epsilon_and_delta_are_consistent_and_monotone():
    args = (30600, 0.25, 9)
    deltas = [binomial_delta(*args, e) for e in (0.0, 0.1, 0.2, 0.4, 0.8)]
    assert all(a >= b for a, b in itertools.pairwise(deltas))
    for delta in (1e-3, 1e-5, 1e-8):
        e = binomial_epsilon(*args, delta)
        assert binomial_delta(*args, e) <= delta < binomial_delta(*args, e * (1 - 1e-6))
    assert binomial_epsilon(*args, 0.1) == 0.0  # delta above the total variation
    assert binomial_epsilon(3, 0.5, 4, 0.5) == math.inf  # disjoint supports: no finite epsilon


def test_huge_trials_match_the_gaussian_limit():
    # N = 10^14: sd ~ 4.3e6, shift 50: delta(0) = TV ~ 2 Phi(mu/2) - 1 with mu = shift/sd
    n, p, s = 10**14, 0.25, 50
    mu = s / math.sqrt(n * p * (1 - p))
    assert binomial_delta(n, p, s, 0.0) == pytest.approx(2 * stats.norm.cdf(mu / 2) - 1, rel=1e-3)
    assert 0 < binomial_epsilon(n, p, s, 1e-6) < 1e-4


def test_accountants_on_binomial_events():
    small = A.BinomialDpEvent(trials=30600, probability=0.25, sensitivity=9)
    exact = binomial_epsilon(30600, 0.25, 9, 1e-5)
    assert A.epsilon(small, 1e-5, "approx") == pytest.approx(exact, rel=1e-12)
    pld = A.epsilon(small, 1e-5, "pld")
    assert exact <= pld <= exact + 1e-3  # pessimistic discretisation
    assert A.epsilon(small, 1e-5) == exact
    huge = A.BinomialDpEvent(trials=10**14, probability=0.25, sensitivity=50)  # pld: on a grid of losses
    assert A.supporting_accountants(huge) == ["approx", "pld"]
    exact = binomial_epsilon(10**14, 0.25, 50, 1e-6)
    assert exact <= A.epsilon(huge, 1e-6, "pld") <= exact * 1.01
    assert A.epsilon(huge, 1e-6) == binomial_epsilon(10**14, 0.25, 50, 1e-6)
    beyond = A.BinomialDpEvent(trials=2**52 + 1, probability=0.25, sensitivity=50)
    assert A.supporting_accountants(beyond) == []
    with pytest.raises(A.UnsupportedEventError, match="2\\^52"):
        A.epsilon(beyond, 1e-6, "pld")


@pytest.mark.parametrize(
    "trials, p, shift, eps, name",
    [
        (10079370854975320000, 0.25, 566, 0.0, "trials"),  # beyond exact doubles: read 0 before
        (A.binomial.MAX_TRIALS + 1, 0.25, 1, 0.0, "trials"),
        (0, 0.25, 1, 0.0, "trials"),
        (100, 0.0, 1, 0.0, "probability"),
        (100, 1.0, 1, 0.0, "probability"),
        (100, float("nan"), 1, 0.0, "probability"),
        (100, 0.5, -1, 0.0, "sensitivity"),
        (100, 0.5, 1, -0.1, "epsilon"),
        (100, 0.5, 1, float("nan"), "epsilon"),
    ],
)
def test_inputs_outside_the_exact_range_are_refused(trials, p, shift, eps, name):
    with pytest.raises(ValueError, match=name):
        binomial_delta(trials, p, shift, eps)
    if name != "epsilon":
        with pytest.raises(ValueError, match=name):
            binomial_epsilon(trials, p, shift, 1e-6)


def test_largest_exact_trials_is_positive_and_near_the_gaussian_limit():
    """At N = 2^52 the tails are still exact: delta(0) = TV of two binomials shifted by s, close to
    the Gaussian TV 2 Phi(s / (2 sigma)) - 1 (relative 1e-3)."""
    n, p, s = A.binomial.MAX_TRIALS, 0.25, 566
    sigma = math.sqrt(n * p * (1 - p))
    tv = 2 * stats.norm.cdf(s / (2 * sigma)) - 1
    assert binomial_delta(n, p, s, 0.0) == pytest.approx(tv, rel=1e-3)


def test_huge_epsilon_leaves_only_the_one_sided_mass():
    """Past eps = 709, e^eps overflows a double: delta is then the mass only one side can produce
    (the outcomes y > N or y < s), never nan or an overflow."""
    n, p, s = 10, 0.25, 2
    one_sided = max(stats.binom.sf(n - s, n, p), stats.binom.cdf(s - 1, n, p))
    for eps in (700.0, 710.0, 1e4):
        got = binomial_delta(n, p, s, eps)
        assert one_sided <= got <= one_sided * (1 + 1e-9)
    assert binomial_epsilon(n, p, s, one_sided / 2) == math.inf
