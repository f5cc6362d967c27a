"""The one-run p-value at its edges: delta = 0, the smallest counts, the cap at 1 and the documented round-up.

`one_run_p_value` bounds P[W >= v] for r guesses on m canaries under (eps, delta)-DP (Steinke, Nasr, Jagielski,
"Privacy Auditing with One (1) Training Run", NeurIPS 2023, Theorem 3.1): at delta = 0 it is the binomial tail
f(v) = P[Bin(r, q) >= v], q = e^eps / (1 + e^eps), rounded up by the relative slack
1e-9 + 1e-14 (log r! + r min(max(-log q, -log(1 - q)), 1000)) and capped at 1; for delta > 0 counts below
(r + 1) q (with a 1e-12 round-off margin) get 1 (module docstring).  Exact, no statistics.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

from dpaudit.audit.one_run_bound import best_one_run_epsilon, binomial_tail, one_run_epsilon, one_run_p_value


def exact_tail(v: int, r: int, q: float) -> float:
    qf = Fraction(q)
    return float(sum(math.comb(r, k) * qf**k * (1 - qf) ** (r - k) for k in range(max(v, 0), r + 1)))


def slack(r: int, q: float) -> float:
    logs = max(-math.log(q), -math.log1p(-q) if q < 1.0 else math.inf)
    return 1e-9 + 1e-14 * (math.lgamma(r + 1.0) + r * min(logs, 1e3))


@pytest.mark.parametrize("r, v, eps", [(1, 1, 0.0), (10, 7, 0.3), (100, 40, 0.0), (100, 90, 1.5), (60, 60, 2.0)])
def test_pure_p_value_is_the_binomial_tail_rounded_up(r, v, eps):
    q = float(expit(eps))
    want = min(1.0, exact_tail(v, r, q) * (1.0 + slack(r, q)))
    got = one_run_p_value(1000, r, v, [eps], 0.0)
    assert got.shape == (1,) and got[0] == pytest.approx(want, rel=1e-13, abs=0.0)
    assert got[0] >= exact_tail(v, r, q)  # never below the tail it bounds


def test_pure_p_value_slack_grows_with_the_log_pmf_scale():
    # r = 10^6: log r! ~ 1.3e7 makes the slack ~1e-7, far above its 1e-9 floor; eps = 800 rounds q to 1
    # (log(1 - q) = -inf, capped at 1000) without a floating-point warning.
    r, v = 10**6, 600_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for eps in (0.5, 800.0):
            q = float(expit(eps))
            tail = float(binom.sf(v - 1, r, q))
            got = float(one_run_p_value(10, r, v, [eps], 0.0)[0])
            assert got == pytest.approx(min(1.0, tail * (1.0 + slack(r, q))), rel=1e-12, abs=0.0)
    q = float(expit(0.4))
    tail = float(binom.sf(v - 1, r, q))
    assert 0 < tail < 1 and float(one_run_p_value(10, r, v, [0.4], 0.0)[0]) / tail - 1 > 1e-7


def test_p_value_of_no_correct_guess_is_one_and_of_one_is_the_tail():
    eps = np.array([0.0, 1.0, 5.0])
    for delta in (0.0, 1e-5):
        p = one_run_p_value(50, 20, 0, eps, delta)
        assert p.shape == (3,) and p.dtype == np.float64 and np.all(p == 1.0)
    # one guess, right: P[Bin(1, q) >= 1] = q
    assert float(one_run_p_value(50, 1, 1, [0.0], 0.0)[0]) == pytest.approx(0.5 * (1 + slack(1, 0.5)), rel=1e-14)


@pytest.mark.parametrize(
    "m, r, v, eps, delta", [(100, 100, 1, 0.0, 0.0), (10**6, 20, 18, 0.5, 0.1), (5, 3, 3, 40.0, 0.0)]
)
def test_p_value_is_capped_at_one(m, r, v, eps, delta):
    p = float(one_run_p_value(m, r, v, [eps], delta)[0])
    assert p == 1.0  # the tail is 1 to double precision, or the delta term alone is far above 1


def test_counts_at_the_mode_get_one_with_delta():
    # v = (r + 1) q exactly (r = 3, eps = 0: q = 1/2, v = 2): below the 1e-12 margin, so the p-value is 1;
    # one more correct guess is above it and gets the tail plus the delta term (here about 0.125 + 3e-6).
    assert float(one_run_p_value(1000, 3, 2, [0.0], 1e-6)[0]) == 1.0
    p = float(one_run_p_value(1000, 3, 3, [0.0], 1e-6)[0])
    assert 0.125 < p < 0.126


def test_pure_bound_is_rejected_and_tight():
    # one_run_epsilon at delta = 0: the largest eps whose p-value is at most the level (bisection, lower end kept)
    for r, v, level in [(100, 90, 0.05), (1000, 700, 1e-3), (10**5, 99_000, 0.05)]:
        eps = float(one_run_epsilon(1000, [r], [v], 0.0, level)[0])
        assert eps > 0
        assert float(one_run_p_value(1000, r, v, [eps], 0.0)[0]) <= level
        assert float(one_run_p_value(1000, r, v, [eps * (1 + 1e-6)], 0.0)[0]) > level


def test_binomial_tail_outside_zero_to_r():
    # P[Bin(r, q) >= v] is 1 for v <= 0 and 0 for v > r, r = 0 included (no guess: no correct one)
    q = np.array([0.3, 0.5, 0.9])
    np.testing.assert_array_equal(binomial_tail(0, 5, q), np.ones(3))
    np.testing.assert_array_equal(binomial_tail(-2, 5, q), np.ones(3))
    np.testing.assert_array_equal(binomial_tail(6, 5, q), np.zeros(3))
    np.testing.assert_array_equal(binomial_tail(1, 0, q), np.zeros(3))
    np.testing.assert_allclose(binomial_tail(5, 5, q), q**5, rtol=1e-14)


def test_best_pair_is_the_first_on_a_tie_and_the_first_when_none_is_positive():
    for delta in (0.0, 1e-5):
        index, eps = best_one_run_epsilon(100, [40, 40], [38, 38], delta, 0.05)
        assert index == 0 and eps > 0
        assert eps == float(one_run_epsilon(100, [40], [38], delta, 0.05)[0])
        assert best_one_run_epsilon(100, [40, 30], [10, 5], delta, 0.05) == (0, 0.0)  # no pair rejects eps = 0


def test_best_pair_has_the_largest_delta_bound_not_the_largest_pure_one():
    # visited in decreasing order of the delta = 0 bound: (80, 80) first (pure 3.27, with delta 0.44), then
    # (40, 40) (pure 2.55, with delta 0: skipped), then (320, 304) (pure 2.51, with delta 1.82: the best)
    guesses, correct = [80, 40, 320], [80, 40, 304]
    each = one_run_epsilon(1000, guesses, correct, 1e-3, 0.05)
    assert int(np.argmax(each)) == 2 and each[0] > 0 and each[1] == 0
    assert best_one_run_epsilon(1000, guesses, correct, 1e-3, 0.05) == (2, float(each[2]))
