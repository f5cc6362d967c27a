"""Clopper-Pearson bounds against exact binomial tails (mpmath) up to n = 1e10.

scipy's `betaincinv` (behind statsmodels' proportion_confint(method="beta")) returns a "lower" bound
of 1.52 k/n at k = 1000, n = 2e8 (scipy #12796, #12635; statsmodels #7008); these tests check every
bound against an exact tail: the lower bound never exceeds the exact one by more than 1e-9
(relative), the upper never falls below it, and neither is looser than 1e-6 (relative).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc, betaincc

from dpaudit.audit.bounds import best_case_epsilon, cp_lower, cp_upper, probit_cp_lower, probit_cp_upper

mpmath.mp.dps = 30
SAFE = 1e-9
TIGHT = 1e-6


def _tail_at_least(n: int, k: int, x) -> mpmath.mpf:
    """Exact P[Bin(n, x) >= k]: closed forms for k in {0, 1, n-1, n}, else the beta integral."""
    x = mpmath.mpf(x)
    if k == 0:
        return mpmath.mpf(1)
    if k == 1:
        return -mpmath.expm1(n * mpmath.log1p(-x))
    if k == n:
        return x**n
    if k == n - 1:
        return x**n + n * x ** (n - 1) * (1 - x)
    return _beta_integral(k, n - k + 1, 0, x)


def _tail_at_most(n: int, k: int, x) -> mpmath.mpf:
    """Exact P[Bin(n, x) <= k] = P[Bin(n, 1 - x) >= n - k]."""
    return _tail_at_least(n, n - k, 1 - mpmath.mpf(x))


def _beta_integral(a: int, b: int, lo, hi) -> mpmath.mpf:
    """Integral of the Beta(a, b) density over [lo, hi], restricted to 80 sd around the mass."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    log_norm = mpmath.loggamma(a) + mpmath.loggamma(b) - mpmath.loggamma(a + b)
    mean = a / (a + b)
    sd = mpmath.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    lo = max(mpmath.mpf(lo), mean - 80 * sd, mpmath.mpf(0))
    hi = min(mpmath.mpf(hi), mean + 80 * sd, mpmath.mpf(1))
    if hi <= lo:
        return mpmath.mpf(0)

    def density(t):
        return mpmath.exp((a - 1) * mpmath.log(t) + (b - 1) * mpmath.log1p(-t) - log_norm)

    return mpmath.quad(density, mpmath.linspace(lo, hi, 17))


def _near_one(x: float) -> mpmath.mpf:
    """The tightness margin for a bound above 1/2: TIGHT of 1 - x, at least 4 spacings of doubles near 1."""
    return max(TIGHT * (1 - mpmath.mpf(x)), mpmath.mpf(4) * 2.0**-53)


def _check_lower(n: int, k: int, level: float) -> None:
    low = float(cp_lower(k, n, level))
    assert 0.0 <= low <= k / n
    if k == 0:
        assert low == 0.0
        return
    # safe: just below the returned bound the tail is still at most `level`
    assert _tail_at_least(n, k, mpmath.mpf(low) * (1 - SAFE)) <= level
    # tight: a little above it the tail exceeds `level` (measured on the smaller side of 1/2)
    above = mpmath.mpf(low) * (1 + TIGHT) if low <= 0.5 else mpmath.mpf(low) + _near_one(low)
    assert _tail_at_least(n, k, min(above, mpmath.mpf(1))) >= level


def _check_upper(n: int, k: int, level: float) -> None:
    upp = float(cp_upper(k, n, level))
    assert k / n <= upp <= 1.0
    if k == n:
        assert upp == 1.0
        return
    # safe: just above the returned bound the tail is already at most `level`
    above = mpmath.mpf(upp) * (1 + SAFE) if upp <= 0.5 else 1 - (1 - mpmath.mpf(upp)) * (1 - SAFE)
    assert _tail_at_most(n, k, min(above, mpmath.mpf(1))) <= level
    # tight: a little below it the tail exceeds `level`
    below = mpmath.mpf(upp) * (1 - TIGHT) if upp <= 0.5 else mpmath.mpf(upp) - _near_one(upp)
    assert _tail_at_most(n, k, below) >= level


def _counts(n: int) -> list[int]:
    return sorted({0, 1, min(1000, n), n // 2, n - 1, n})


def test_lower_bound_at_two_hundred_million_runs_is_below_the_observed_rate():
    # statsmodels/scipy gave 1.52 * k / n here
    assert cp_lower(1000, 2e8, 0.0125) <= 1000 / 2e8
    _check_lower(200_000_000, 1000, 0.0125)


@pytest.mark.parametrize("n", [200_000_000, 10**10])
@pytest.mark.parametrize("k_of", [lambda n: 1000, lambda n: n // 2], ids=["k=1000", "k=n/2"])
def test_bounds_match_exact_tails_at_large_n(n, k_of):
    _check_lower(n, k_of(n), 0.0125)
    _check_upper(n, k_of(n), 0.0125)


@pytest.mark.parametrize("n", [10, 10**6, 2 * 10**8, 10**10])
@pytest.mark.parametrize("level", [0.25, 0.0125, 1e-9])
def test_bounds_match_exact_tails_closed_forms(n, level):
    for k in (0, 1, n - 1, n):
        _check_lower(n, k, level)
        _check_upper(n, k, level)


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 1000, 10**6, 1.3e8, 2e8, 10**9, 10**10])
@pytest.mark.parametrize("level", [0.25, 0.025, 0.0125, 1e-4, 1e-9])
def test_bounds_match_exact_tails_full_grid(n, level):
    n = int(n)
    for k in _counts(n):
        _check_lower(n, k, level)
        _check_upper(n, k, level)


@given(st.integers(1, 10**10), st.floats(0, 1), st.sampled_from([0.25, 0.0125, 1e-6, 1e-12]))
@settings(max_examples=200, deadline=None)
def test_bounds_round_trip_and_bracket_the_rate(n, frac, level):
    k = int(frac * n)
    low, upp = float(cp_lower(k, n, level)), float(cp_upper(k, n, level))
    assert 0.0 <= low <= k / n <= upp <= 1.0
    if k > 0:  # P[Bin(n, low) >= k] <= level, up to betainc's own rounding
        assert betainc(k, n - k + 1, low) <= level * (1 + 1e-10)
    if k < n:  # P[Bin(n, upp) <= k] <= level
        assert betaincc(k + 1, n - k, upp) <= level * (1 + 1e-10)


@given(st.integers(1, 10**10), st.floats(0, 1), st.sampled_from([0.25, 0.0125, 1e-9]))
@settings(max_examples=100, deadline=None)
def test_probit_bounds_agree_with_the_bounds(n, frac, level):
    k = int(frac * n)
    low, upp = float(cp_lower(k, n, level)), float(cp_upper(k, n, level))
    z_low, z_upp = float(probit_cp_lower(k, n, level)), float(probit_cp_upper(k, n, level))
    assert z_low <= z_upp
    if 1e-300 < low < 1 - 1e-6:
        assert math.isclose(z_low, float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(low) - 1)), rel_tol=1e-6)
    if 1e-300 < upp < 1 - 1e-6:
        assert math.isclose(z_upp, float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(upp) - 1)), rel_tol=1e-6)


def test_probit_bound_near_one_uses_the_small_tail():
    n, level = 10**10, 0.0125
    exact = -mpmath.sqrt(2) * mpmath.erfinv(2 * (1 - mpmath.power(level, mpmath.mpf(1) / n)) - 1)
    assert float(probit_cp_lower(n, n, level)) <= float(exact) * (1 + 1e-12)
    assert math.isclose(float(probit_cp_lower(n, n, level)), float(exact), rel_tol=1e-9)


def test_vector_inputs_broadcast():
    k = np.array([0, 5, 10])
    assert cp_lower(k, 10, 0.05).shape == (3,) and cp_upper(k, np.array([10, 10, 10]), 0.05).shape == (3,)
    assert cp_lower(k, 10, 0.05)[0] == 0.0 and cp_upper(k, 10, 0.05)[-1] == 1.0


@pytest.mark.parametrize(
    "args, name",
    [
        ((5, 4, 0.05), "count"),
        ((-1, 4, 0.05), "count"),
        ((1.5, 4, 0.05), "count"),
        ((1, 0, 0.05), "nobs"),
        ((1, 4.5, 0.05), "nobs"),
        ((1, 4, 0.0), "level"),
        ((1, 4, 0.7), "level"),
        ((1, 4, float("nan")), "level"),
    ],
)
def test_bad_arguments_name_the_parameter(args, name):
    with pytest.raises(ValueError, match=name):
        cp_lower(*args)
    with pytest.raises(ValueError, match=name):
        cp_upper(*args)


def test_best_case_epsilon_matches_the_closed_form_at_large_n():
    # p0 lower = level^(1/n), p1 upper = 1 - level^(1/n)
    n, level = 10**10, 0.0125
    root = mpmath.power(level, mpmath.mpf(1) / n)
    exact = float(mpmath.log(root / (1 - root)))
    assert best_case_epsilon(n, 0.0, level) <= exact * (1 + 1e-9)
    assert math.isclose(best_case_epsilon(n, 0.0, level), exact, rel_tol=1e-6)
