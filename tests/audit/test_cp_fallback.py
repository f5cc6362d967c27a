"""The bisection fallback of the Clopper-Pearson bounds returns the safe end of its bracket.

When scipy's beta quantile fails its round trip (k = 1000 at n >= 2e8), or here when
it is replaced by NaN to force the fallback everywhere, `dpaudit.audit.bounds` bisects on log x
keeping below(lo) true and below(hi) false; the lower bound must be the end whose tail is at most
the level (lo), the upper bound the end whose upper tail is at most the level (hi).  The two ends
are adjacent or nearly adjacent floats, and scipy's `betainc` is itself only accurate to a few ulps,
so against an exact (mpmath) quantile the two ends cannot be told apart (measured: the returned lower
bound is up to ~6 ulps above the exact root, within the module's documented `_ROUND_TRIP_RTOL`, and
the other end is sometimes below it).  The safe-end property is therefore checked directly, as the
bracket's invariant on the forward function the bisection used; the exact tail checks that the
value is the quantile up to that round-off.  Exact, no statistics.
"""

import mpmath
import numpy as np
import pytest
from scipy.special import betainc, betaincc, betaincinv

import dpaudit.audit.bounds as bounds
from dpaudit.audit.bounds import cp_lower, cp_upper

#: Relative round-off allowed on the exact tail at the returned bound (scipy's betainc: a few ulps).
ROUND_OFF = 1e-12
#: The bisection converged: a relative step this large moves the exact tail across the level.
CONVERGED = 1e-9

FORCED = [
    (k, n, level)
    for n in (3, 10, 37, 100, 1000, 10**5)
    for k in sorted({1, 2, n // 3, n // 2, n - 1})
    for level in (0.3, 0.05, 1e-6)
]


def exact_tail_at_least(k, n, x) -> mpmath.mpf:
    """P[Bin(n, x) >= k] = I_x(k, n - k + 1), 40 digits."""
    with mpmath.workdps(40):
        return mpmath.betainc(k, n - k + 1, 0, mpmath.mpf(x), regularized=True)


def exact_tail_at_most(k, n, x) -> mpmath.mpf:
    """P[Bin(n, x) <= k] = 1 - I_x(k + 1, n - k), 40 digits."""
    with mpmath.workdps(40):
        return mpmath.betainc(k + 1, n - k, mpmath.mpf(x), 1, regularized=True)


@pytest.fixture
def no_scipy_inverse(monkeypatch):
    """scipy's inverse always "fails": every root comes from the bisection."""
    nan = lambda a, b, y: np.full(np.broadcast(a, b, y).shape, np.nan)  # noqa: E731
    monkeypatch.setattr(bounds, "betaincinv", nan)
    monkeypatch.setattr(bounds, "betainccinv", nan)


def test_forced_fallback_returns_the_safe_end_of_the_bracket(no_scipy_inverse):
    k = np.array([c[0] for c in FORCED], dtype=float)
    n = np.array([c[1] for c in FORCED], dtype=float)
    for level in (0.3, 0.05, 1e-6):
        at = np.array([c[2] == level for c in FORCED])
        low = cp_lower(k[at], n[at], level)
        upp = cp_upper(k[at], n[at], level)
        # the roots themselves, not the clamp at the observed rate
        assert np.all(low < k[at] / n[at]) and np.all(upp > k[at] / n[at])
        # safe end: the forward function the bisection used is on the right side of the level
        assert np.all(betainc(k[at], n[at] - k[at] + 1, low) <= level)
        assert np.all(betaincc(k[at] + 1, n[at] - k[at], upp) <= level)


@pytest.mark.parametrize("k, n, level", [c for c in FORCED[::3] if c[1] <= 1000])  # mpmath is slow at large k
def test_forced_fallback_is_the_exact_quantile_up_to_round_off(no_scipy_inverse, k, n, level):
    low, upp = float(cp_lower(k, n, level)), float(cp_upper(k, n, level))
    assert exact_tail_at_least(k, n, low) <= level * (1 + ROUND_OFF)
    assert exact_tail_at_least(k, n, low * (1 + CONVERGED)) > level
    assert exact_tail_at_most(k, n, upp) <= level * (1 + ROUND_OFF)
    assert exact_tail_at_most(k, n, upp * (1 - CONVERGED)) > level


@pytest.mark.parametrize("n", [2 * 10**8, 10**9, 10**10])
@pytest.mark.parametrize("level", [0.0125, 1e-6])
def test_natural_fallback_returns_the_safe_end_of_the_bracket(n, level):
    k = 1000
    # where scipy's quantile misses (its round trip is off by far more than the acceptance tolerance)
    assert betainc(k, n - k + 1, betaincinv(k, n - k + 1, level)) > 2 * level
    low = float(cp_lower(k, n, level))
    assert 0 < low < k / n
    assert betainc(k, n - k + 1, low) <= level
    assert betainc(k, n - k + 1, low * (1 + CONVERGED)) > level
