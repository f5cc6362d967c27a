"""The one-run bound at delta > 0 is exactly the grid-prefix value of its module docstring.

Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023, Theorem 3.1:
under (eps, delta)-DP, P[W >= v] <= f(v) + 2 m delta max_{1<=i<=v} (f(v-i) - f(v)) / i with
f(v) = P[Bin(r, q) >= v], q = e^eps / (1 + e^eps); `dpaudit.audit.one_run_bound` takes the p-value as
1 below v = (r + 1) q and reports eps_lower = (J - 1) h, J the first grid index (eps_j = j h,
h = EPSILON_GRID_STEP) whose p-value exceeds the level.  Here the p-value is recomputed
independently (scipy's binomial pmf, summed directly) over the whole prefix, and at the two grid
points around the reported value with mpmath at 40 digits; the reported bound must be that largest
passing grid value exactly: at most the first crossing of the level (the supremum of the rejected
prefix) and within one step of it.  Exact, no statistics.
"""

import mpmath
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

from dpaudit.audit.one_run_bound import EPSILON_GRID_STEP, best_one_run_epsilon, one_run_epsilon

LEVEL = 0.05
H = EPSILON_GRID_STEP
#: A grid point's p-value must be this far (relative) from the level for the float scan to decide it;
#: the cases below are at least 1.9e-4 away, the library rounds up by about 1e-9.
MARGIN = 1e-5

# (num_canaries m, guesses r, correct v, delta): the delta term matters in each (the delta = 0
# bound is above the reported one), small r so that the exact reference is cheap.
CASES = [
    (20, 20, 18, 1e-3),
    (50, 30, 27, 1e-4),
    (100, 40, 36, 1e-5),
    (10, 10, 10, 1e-2),
    (200, 50, 40, 1e-6),
    (1000, 60, 50, 1e-4),
    (30, 30, 25, 3e-3),
]


def p_value_float(m, r, v, eps, delta):
    """Theorem 3.1's bound at each eps (1 below v = (r + 1) q), from the binomial pmf."""
    q = expit(np.asarray(eps, dtype=float))
    pmf = binom.pmf(np.arange(r + 1)[None, :], r, q[:, None])
    window = np.max([pmf[:, v - i : v].sum(axis=1) / i for i in range(1, v + 1)], axis=0)
    p = np.minimum(1.0, pmf[:, v:].sum(axis=1) + 2 * m * delta * window)
    return np.where(v >= (r + 1) * q, p, 1.0)


def p_value_exact(m, r, v, eps, delta) -> mpmath.mpf:
    with mpmath.workdps(40):
        e = mpmath.mpf(eps)
        q = mpmath.exp(e) / (1 + mpmath.exp(e))
        if v < (r + 1) * q:
            return mpmath.mpf(1)
        pmf = [mpmath.binomial(r, j) * q**j * (1 - q) ** (r - j) for j in range(r + 1)]
        window = max(mpmath.fsum(pmf[v - i : v]) / i for i in range(1, v + 1))
        return min(mpmath.mpf(1), mpmath.fsum(pmf[v:]) + 2 * m * mpmath.mpf(delta) * window)


def grid_prefix_bound(m, r, v, delta, level=LEVEL, margin=MARGIN) -> float:
    """(J - 1) h for the first grid index J with p-value > level (0 if J = 0), checked to be decidable."""
    j = np.arange(0, 10_000)
    p = p_value_float(m, r, v, j * H, delta)
    first = int(np.argmax(p > level))
    assert p[first] > level  # the scan reached a failing point
    assert np.all(np.abs(p[: first + 1] / level - 1) > margin)  # no grid point is a near tie
    return max(first - 1, 0) * H


@pytest.mark.parametrize("m, r, v, delta", CASES)
def test_delta_bound_is_the_largest_grid_value_whose_prefix_passes(m, r, v, delta):
    got = float(one_run_epsilon(m, r, v, delta, LEVEL)[0])
    want = grid_prefix_bound(m, r, v, delta)
    assert want > 0 and want < float(one_run_epsilon(m, r, v, 0.0, LEVEL)[0])
    assert got == pytest.approx(want, abs=1e-12), (got, want)
    j = round(got / H)
    # exact reference at the two grid points around it: the reported point passes, the next fails
    assert p_value_exact(m, r, v, mpmath.mpf(j) * mpmath.mpf(H), delta) <= LEVEL
    assert p_value_exact(m, r, v, mpmath.mpf(j + 1) * mpmath.mpf(H), delta) > LEVEL
    # so the first crossing of the level (the supremum of the rejected prefix) is in (got, got + h]
    lo, hi = mpmath.mpf(j) * H, mpmath.mpf(j + 1) * H
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_value_exact(m, r, v, mid, delta) <= LEVEL else (lo, mid)
    assert got <= hi < got + H + 1e-12


@pytest.mark.parametrize("m, r, v, delta", CASES)
def test_delta_bound_when_the_level_is_crossed_just_below_a_grid_point(m, r, v, delta):
    # The level is set 1e-7 (relative) below the exact p-value at grid point J (J at about 0.8 of the
    # bound above): the p-value crosses the level within 1e-6 below J h, inside the last step of the
    # scan limit's bisection, so the scan itself meets the failing grid point J.  The largest passing
    # grid value is still (J - 1) h; J h would be a point where the theorem's bound exceeds the level.
    j = round(0.8 * grid_prefix_bound(m, r, v, delta) / H)
    level = float(p_value_exact(m, r, v, mpmath.mpf(j) * mpmath.mpf(H), delta)) * (1 - 1e-7)
    assert grid_prefix_bound(m, r, v, delta, level, margin=5e-8) == pytest.approx((j - 1) * H, abs=1e-12)
    got = float(one_run_epsilon(m, r, v, delta, level)[0])
    assert got == pytest.approx((j - 1) * H, abs=1e-12), (got, j)
    assert p_value_exact(m, r, v, mpmath.mpf(j - 1) * mpmath.mpf(H), delta) <= level
    _i, best = best_one_run_epsilon(m, [r], [v], delta, level)
    assert best == pytest.approx(got, abs=1e-12)


def test_best_pair_reports_the_largest_passing_grid_value():
    m, delta = 50, 1e-4
    r = np.array([30, 20, 10, 40])
    v = np.array([27, 18, 10, 33])
    want = [grid_prefix_bound(m, int(ri), int(vi), delta) for ri, vi in zip(r, v)]
    i, got = best_one_run_epsilon(m, r, v, delta, LEVEL)
    assert got == pytest.approx(max(want), abs=1e-12) and want[i] == pytest.approx(got, abs=1e-12)
