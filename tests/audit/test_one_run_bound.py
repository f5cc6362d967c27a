"""Exact properties of the one-run bound (Steinke, Nasr, Jagielski, NeurIPS 2023, Theorem 3.1).

No statistics here: tails against exact and independent references, the delta term against a
direct transcription of the theorem, closed forms, and monotonicity (hypothesis).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, gammaln
from scipy.stats import binom

from dpaudit.audit.one_run_bound import (
    EPSILON_GRID_STEP,
    _window_term,
    best_one_run_epsilon,
    binomial_tail,
    one_run_epsilon,
    one_run_p_value,
)


def exact_tail(v, r, q):
    qf = Fraction(q)
    return float(sum(math.comb(r, k) * qf**k * (1 - qf) ** (r - k) for k in range(max(v, 0), r + 1)))


def theorem_3_1(m, r, v, eps, delta):
    """Direct transcription: f(v) + 2 m delta max_{1<=i<=m} (f(v-i) - f(v)) / i, f from binom.sf."""
    q = expit(eps)
    f = lambda k: binom.sf(k - 1, r, q) if k > 0 else 1.0  # noqa: E731
    return f(v) + 2 * m * delta * max((f(v - i) - f(v)) / i for i in range(1, m + 1))


def test_binomial_tail_matches_exact_rational_sums():
    for r in (1, 7, 40):
        for q in (0.5, 0.73, 0.95):
            for v in range(-1, r + 2):
                assert binomial_tail(v, r, q) == pytest.approx(exact_tail(v, r, q), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("r, q, sds", [(10**6, 0.88, 5.0), (10**8, 0.6, 3.0), (10**8, 0.6, 30.0)])
def test_binomial_tail_at_huge_r_matches_a_log_space_pmf_sum(r, q, sds):
    # scipy's beta *quantile* is unreliable near n = 1e8; the tail itself is checked against an
    # independent sum of exp(log pmf) (gammaln), whose own round-off is ~1e-7 at r = 1e8.
    v = int(r * q + sds * math.sqrt(r * q * (1 - q)))
    j = np.arange(v, min(r, v + int(60 * math.sqrt(r))) + 1, dtype=float)
    lp = gammaln(r + 1.0) - gammaln(j + 1) - gammaln(r - j + 1) + j * math.log(q) + (r - j) * math.log1p(-q)
    ref = math.exp(lp.max()) * math.fsum(np.exp(lp - lp.max()))
    assert float(binomial_tail(v, r, q)) == pytest.approx(ref, rel=1e-6)


def test_binomial_tail_limits():
    assert binomial_tail(1, 10, 0.0) == 0.0  # q underflowed to 0 (eps below -745)
    assert binomial_tail(10, 10, 1.0) == 1.0
    assert binomial_tail(0, 10, 0.3) == 1.0 and binomial_tail(11, 10, 0.3) == 0.0


@pytest.mark.parametrize(
    "m, r, v, delta", [(100, 50, 40, 1e-4), (1000, 200, 170, 1e-6), (50, 50, 50, 1e-3), (400, 300, 200, 1e-5)]
)
def test_p_value_is_theorem_3_1_rounded_up(m, r, v, delta):
    eps = np.array([0.2, 0.5, 1.0, 1.7, 3.0])
    ours = one_run_p_value(m, r, v, eps, delta)
    for e, p in zip(eps, ours):
        if v >= (r + 1) * expit(e):
            direct = min(1.0, theorem_3_1(m, r, v, e, delta))
            assert direct <= p <= direct * (1 + 1e-6) + 1e-15
        else:  # counts no better than eps-DP randomized response: p-value 1 (monotone in v)
            assert p == 1.0


def test_pure_bound_all_correct_closed_form():
    # Not read from the paper's figures (not accessible here): the closed form Theorem 3.1 implies
    # for r guesses all correct at delta = 0, P[Bin(r, q) >= r] = q^r <= beta  <=>
    # eps <= log(p / (1 - p)), p = beta^(1/r).  E.g. r = 100 at 95%: 3.4930; r = 1000: 5.8091.
    beta = 0.05
    r = np.array([1, 10, 100, 1000, 10**5])
    p = beta ** (1.0 / r)
    want = np.where(p > 0.5, np.log(p / (1 - p)), 0.0)
    got = one_run_epsilon(10**6, r, r, 0.0, beta)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    assert got[0] == 0.0  # one correct guess proves nothing at 95%
    assert got[2] == pytest.approx(3.4930, abs=1e-4) and got[3] == pytest.approx(5.8091, abs=1e-4)


def test_pure_bound_is_the_binomial_test_boundary():
    for r, v, beta in [(1000, 700, 0.05), (5000, 3100, 0.01), (100_000, 52_000, 1e-4)]:
        eps = float(one_run_epsilon(r, r, v, 0.0, beta)[0])
        assert eps > 0
        assert binom.sf(v - 1, r, expit(eps)) <= beta < binom.sf(v - 1, r, expit(eps + 1e-6))


def test_delta_bound_is_a_grid_point_whose_prefix_is_rejected():
    m, r, v, delta, level = 1000, 400, 330, 1e-6, 0.05
    eps = float(one_run_epsilon(m, r, v, delta, level)[0])
    j = round(eps / EPSILON_GRID_STEP)
    assert eps == pytest.approx(j * EPSILON_GRID_STEP) and j > 0
    grid = np.arange(j + 1) * EPSILON_GRID_STEP
    assert np.all(one_run_p_value(m, r, v, grid, delta) <= level)
    assert one_run_p_value(m, r, v, (j + 1) * EPSILON_GRID_STEP, delta)[0] > level
    assert eps <= one_run_epsilon(m, r, v, 0.0, level)[0]


def test_delta_all_correct_against_theorem_3_1_bisection():
    # the grid-prefix value agrees with a plain search of the theorem's p-value to one grid step
    m, r, delta, level = 1000, 100, 1e-5, 0.05
    eps = float(one_run_epsilon(m, r, r, delta, level)[0])
    assert theorem_3_1(m, r, r, eps, delta) <= level < theorem_3_1(m, r, r, eps + 2 * EPSILON_GRID_STEP, delta)


def test_best_pair_matches_the_maximum_over_pairs():
    r = np.array([100, 200, 400, 50])
    v = np.array([85, 160, 300, 50])
    for delta in (0.0, 1e-5):
        each = one_run_epsilon(1000, r, v, delta, 0.01)
        i, eps = best_one_run_epsilon(1000, r, v, delta, 0.01)
        assert eps == pytest.approx(each.max()) and each[i] == pytest.approx(eps)


@settings(max_examples=40, deadline=None)
@given(
    r=st.integers(1, 300), data=st.data(), delta=st.sampled_from([0.0, 1e-7, 1e-4]), level=st.sampled_from([0.05, 1e-3])
)
def test_bound_is_monotone_in_correct_guesses_and_finite(r, data, delta, level):
    v1 = data.draw(st.integers(0, r))
    v2 = data.draw(st.integers(v1, r))
    e1, e2 = one_run_epsilon(10 * r, [r, r], [v1, v2], delta, level)
    assert 0.0 <= e1 <= e2 < math.inf


@settings(max_examples=30, deadline=None)
@given(r=st.integers(1, 200), data=st.data())
def test_bound_decreases_with_delta(r, data):
    v = data.draw(st.integers(0, r))
    e = [float(one_run_epsilon(5 * r, r, v, d, 0.05)[0]) for d in (0.0, 1e-8, 1e-5, 1e-3)]
    assert e[0] + 1e-12 >= e[1] >= e[2] >= e[3] >= 0.0


@pytest.mark.parametrize("r, v, q", [(100_000, 60_000, (0.55, 0.6)), (5000, 3500, (0.52, 0.6, 0.69)), (30, 29, (0.9,))])
def test_window_term_truncated_sum_is_never_below_the_full_sum(r, v, q):
    # max_i P[v-i <= B <= v-1] / i summed over the whole range [0, v-1] with scipy's pmf
    q = np.array(q)
    pmf = binom.pmf(np.arange(v - 1, -1, -1)[None, :], r, q[:, None])
    full = np.max(np.cumsum(pmf, axis=1) / np.arange(1, v + 1), axis=1)
    got = _window_term(r, v, q)
    assert np.all(got >= full) and np.all(got <= full * (1 + 1e-6))
