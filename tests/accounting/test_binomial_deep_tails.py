"""scipy's binomial tails and pmf, and the exact (eps, delta) profile of a binomial count built on them
(`dpaudit.accounting.binomial`), against 40-digit mpmath (tests/accounting/exact_binomial.py) at up to 2^52 trials and
30 sd from the mean: the tails' error stays within the bound `dpaudit.accounting.binomial_tails` allows, and every
delta is at or above the exact one and within a relative 5·10^-3 of it. Exact computations on fixed points: no false
failures; each check has a twin that fails when the bound is dropped."""

import math

import exact_binomial as exact
import mpmath
import numpy as np
import pytest
from scipy import stats

from dpaudit.accounting import binomial, binomial_tails
from dpaudit.accounting.binomial import binomial_delta

P = 0.25


@pytest.mark.parametrize("trials", [10**6, 10**9, 10**12, 2**52])
def test_scipy_tails_and_pmf_are_within_a_fifth_of_their_bound(trials):
    """P(X >= k), P(X <= k) (`binomial`'s incomplete beta functions) and the pmf (`stats.binom.pmf`) at z in
    [-36, 36]: their relative error is at most 1/5 of `binomial_tails.relative_error` (0.78 ulp·√N·(1 + |z|) was
    the largest seen, the bound is 8 ulp·√N·(1 + |z|) + 2^-40); at 2^52 trials it is above 100 ulp, so no margin of
    a few ulp would do (the twin)."""
    sd = math.sqrt(trials * P * (1 - P))
    worst = 0.0
    for z in (-36.0, -4.0, -0.5, 0.3, 20.0, 36.0):
        k = int(trials * P + z * sd)
        bound = float(binomial_tails.relative_error(np.array([k]), trials, P)[0])
        for got, ref in (
            (binomial._at_least(trials, P, np.array([k]))[0], exact.at_least(trials, P, k)),
            (binomial._at_most(trials, P, np.array([k]))[0], exact.at_most(trials, P, k)),
            (stats.binom.pmf(k, trials, P), exact.pmf(trials, P, k)),
        ):
            error = float(abs(mpmath.mpf(float(got)) - ref) / ref)
            assert error <= bound / 5, (z, error, bound)
            worst = max(worst, error)
    if trials == 2**52:
        assert worst > 100 * 2.0**-52


def test_reference_tails_match_the_summed_pmf():
    """The Euler-Maclaurin reference against the direct sum of the pmf at N = 10^6 (to 10^-20)."""
    trials = 10**6
    sd = math.sqrt(trials * P * (1 - P))
    for z in (-30.0, -1.0, 0.2, 25.0):
        k = int(trials * P + z * sd)
        with mpmath.workdps(exact.DPS):
            summed = exact._window(trials, P, k, int(trials * P + 60 * sd))
            assert abs(exact.at_least(trials, P, k) - summed) <= 1e-20 * summed


CASES = [(10**8, 18), (6_624_529_180, 18), (10**12, 1), (2**52, 1), (2**52, 566)]
SDS = (0.0, 1.0, 4.0, 15.0, 25.0)  # eps = mu z puts the optimal set's edge z sd from the mean (mu = s / sd)


def _relative_errors() -> list[float]:
    """(binomial_delta - exact) / exact over CASES x SDS."""
    errors = []
    for trials, shift in CASES:
        mu = shift / math.sqrt(trials * P * (1 - P))
        for z in SDS:
            ref = exact.hockey_stick(trials, P, shift, mu * z)
            errors.append(float((mpmath.mpf(binomial_delta(trials, P, shift, mu * z)) - ref) / ref))
    return errors


def test_delta_is_never_below_the_exact_divergence_and_within_half_a_percent():
    """N up to 2^52, deltas down to 10^-147: never optimistic, within 5e-3 (4e-3 seen, at 2^52 trials, 25 sd,
    where the window P(t - s <= X < t) and (e^eps - 1) P(X >= t) cancel to 1/400 of either; 1e-7 at the mean)."""
    errors = _relative_errors()
    assert min(errors) >= 0.0
    assert max(errors) <= 5e-3


def test_without_the_bound_some_delta_is_optimistic(monkeypatch):
    """The twin: scipy's values taken as exact (no relative bound) give a delta below the exact one somewhere."""
    monkeypatch.setattr(binomial_tails, "RELATIVE", 0.0)
    monkeypatch.setattr(binomial_tails, "FLOOR", 0.0)
    binomial_delta.cache_clear()
    try:
        assert min(_relative_errors()) < 0.0
    finally:
        binomial_delta.cache_clear()
