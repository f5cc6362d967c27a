"""`dpaudit.audit.bounds` at the edges of its domain: the best-case bound at every delta, and no warning anywhere.

`best_case_epsilon(n, delta, level)` is the bound of a perfectly distinguishing event (p0_hat = 1, p1_hat = 0),
log((L(n, n) - delta) / U(0, n)) with Clopper-Pearson bounds (Clopper, Pearson, Biometrika 1934), 0 when
L(n, n) <= delta; where positive it is the value `epsilon_from_rates` gives those rates (the auditor's "samples
too few" check compares it with the claimed epsilon, which is positive).  The
bound functions take rates of exactly 0 and 1 and counts of 0 and n as ordinary input: they return the clamped
values without a RuntimeWarning (a user running with warnings as errors gets the bound).  Exact, no statistics.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri

from dpaudit.audit.bounds import (
    best_case_epsilon,
    cp_lower,
    cp_upper,
    epsilon_from_rates,
    mu_from_rates,
    probit_cp_lower,
    probit_cp_upper,
)


@pytest.mark.parametrize("n", [1, 10, 1000, 10**7])
@pytest.mark.parametrize("level", [0.25, 0.0125, 1e-9])
def test_best_case_epsilon_is_the_bound_of_a_perfect_event_at_every_delta(n, level):
    low, upp = float(cp_lower(n, n, level)), float(cp_upper(0, n, level))
    for delta in (0.0, 1e-6, 0.3 * low, low * (1 - 1e-12), low, np.nextafter(low, 1.0), 1.0):
        want = float(epsilon_from_rates(low, upp, delta))
        assert max(best_case_epsilon(n, delta, level), 0.0) == pytest.approx(want, rel=1e-14, abs=0.0), delta
    assert best_case_epsilon(n, low, level) == 0.0  # at delta = L the event proves nothing (no log of 0)
    assert best_case_epsilon(n, 1.0, level) == 0.0
    if best_case_epsilon(n, 0.0, level) > 0:
        assert best_case_epsilon(n, 1e-6, level) < best_case_epsilon(n, 0.0, level)  # delta is subtracted


def test_bounds_at_rates_and_counts_on_the_edges_warn_nothing():
    n = np.array([1, 5, 100, 100, 100])
    k = np.array([0, 5, 0, 100, 37])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(mu_from_rates([0.0, 1.0, 0.0, 1.0, 0.5], [0.0, 1.0, 1.0, 0.0, 0.5]) >= 0.0)
        assert mu_from_rates(1.0, 0.0) > 1e300 and mu_from_rates(0.0, 0.0) == 0.0
        eps = epsilon_from_rates([0.0, 1.0, 0.5, 1.0], [0.0, 0.0, 0.0, 1.0], 0.0)
        assert list(eps) == [0.0, math.inf, math.inf, 0.0]
        assert epsilon_from_rates(0.3, 0.1, 0.3) == 0.0  # p0 = delta: the event proves nothing
        assert np.all(np.isfinite(probit_cp_lower(k, n, 0.05)) | (k == 0))
        assert np.all(np.isfinite(probit_cp_upper(k, n, 0.05)) | (k == n))
        assert np.all((cp_lower(k, n, 0.05) >= 0) & (cp_upper(k, n, 0.05) <= 1))
        for count, nobs in zip(k, n):
            best_case_epsilon(int(nobs), 0.0, 0.05)
            cp_lower(count, nobs, 1e-300)
            cp_upper(count, nobs, 1e-300)


def test_mu_point_is_the_probit_difference_clamped_at_zero():
    # Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Sec. 2: mu >= Phi^-1(p0) - Phi^-1(p1).
    p0 = np.array([0.9, 0.5, 0.3, 0.99, 0.2, 1e-9])
    p1 = np.array([0.1, 0.5, 0.6, 0.5, 0.05, 1e-12])
    want = np.maximum(stats.norm.ppf(p0) - stats.norm.ppf(p1), 0.0)
    np.testing.assert_allclose(mu_from_rates(p0, p1), want, rtol=1e-12, atol=0)
    assert mu_from_rates(0.9, 0.1) == pytest.approx(2 * stats.norm.ppf(0.9), rel=1e-12)
    assert mu_from_rates([1, 0], [0, 1]).dtype == np.float64


@pytest.mark.parametrize("n", [10**6, 10**12, 10**15])
def test_probit_bounds_keep_their_precision_near_one(n):
    # Near 1 a bound is within 1e-15 of 1 only in absolute terms: Phi^-1 of it is read off the complementary
    # count's bound, 1 - L(k, n) = U(n - k, n), which is small and exact to its last digits.  At n = 1e15 the
    # rounded 1 - 1e-16 would give an infinite (or a 1e-4-off) probit.
    level = 0.05
    tail_lower, tail_upper = float(cp_lower(1, n, level)), float(cp_upper(1, n, level))  # both below 1/2
    assert probit_cp_lower(1, n, level) == pytest.approx(ndtri(tail_lower), rel=1e-13)
    assert probit_cp_upper(1, n, level) == pytest.approx(ndtri(tail_upper), rel=1e-13)
    assert probit_cp_lower(n - 1, n, level) == pytest.approx(-ndtri(tail_upper), rel=1e-13)
    assert probit_cp_upper(n - 1, n, level) == pytest.approx(-ndtri(tail_lower), rel=1e-13)
    for k in (1, n // 3, n // 2, n - 1):
        assert probit_cp_lower(k, n, level) == -probit_cp_upper(n - k, n, level)  # symmetric in the two inputs
        assert np.isfinite(probit_cp_lower(k, n, level)) and probit_cp_lower(k, n, level) < probit_cp_upper(k, n, level)


@pytest.mark.parametrize("n", [2**53, 10**15])
def test_lower_bound_below_the_smallest_normal_float_is_zero(n):
    # At level 1e-300 the root of P[Bin(n, x) >= 1] = 1 - (1 - x)^n = level lies at or above level / n (as
    # 1 - (1 - x)^n <= n x), far below the smallest normal float: the safe answer is 0 (never above the root).
    low = float(cp_lower(1, n, 1e-300))
    assert 0.0 <= low <= 1e-300 / n
    assert float(cp_upper(n - 1, n, 1e-300)) == 1.0  # the mirror image: 1 - (a root above 1 - 1e-300 / n)


def test_level_one_half_is_accepted_and_brackets_the_median():
    # 0 < level <= 1/2 is the documented domain: at 1/2 both bounds are medians of the Clopper-Pearson posterior.
    low, upp = float(cp_lower(5, 10, 0.5)), float(cp_upper(5, 10, 0.5))
    assert stats.binom.sf(4, 10, low) <= 0.5 < stats.binom.sf(4, 10, low * (1 + 1e-9))
    assert stats.binom.cdf(5, 10, upp) <= 0.5 < stats.binom.cdf(5, 10, upp * (1 - 1e-9))
    assert low < 0.5 < upp
