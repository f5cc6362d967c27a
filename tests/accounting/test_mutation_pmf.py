"""Exact privacy of a pair of pmfs (`dpaudit.accounting.pmf`) at the edges of its branches.

- `check_pmfs` returns float arrays: exact pmfs given as Fractions give the deltas of their float values.
- `pmf_epsilon` is the smallest eps with delta(eps) <= delta: 0 at delta = delta(0) exactly.
- `pmf_pure_epsilon` = max_y max(log((p + slack)/q), log((q + slack)/p)) (the module docstring), symmetric in
  p and q, and blind to outcomes that neither pmf can produce (p = q = 0, no slack).
- The Gaussian-DP lower bound on log delta_mu(eps) = log(Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2))
  (Balle, Wang, "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, Thm 8) is never above
  the value from mpmath at 50 digits, and within its documented margin (relative 1e-9) of it.
- `pmf_gaussian_mu` with `slack` covers every pmf pair in the slack band: for truncated pmfs p = (1 - s) P,
  q = (1 - s) Q (pointwise below P, Q by at most s, in total s) and slack s, the mu is never below the exact
  pair's (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Cor. 2.13).
Deterministic: no statistics.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

from dpaudit.accounting import pmf
from dpaudit.accounting.pmf import _ROUND_OFF, check_pmfs, pmf_delta, pmf_epsilon, pmf_gaussian_mu, pmf_pure_epsilon

P = np.array([0.5, 0.3, 0.2])
Q = np.array([0.2, 0.3, 0.5])


def test_check_pmfs_returns_float_arrays():
    p, q, slack = check_pmfs([0, 1], [1, 0], 0)
    assert p.dtype == np.float64 and q.dtype == np.float64 and isinstance(slack, float)
    fp, fq = [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)], [Fraction(1, 5), Fraction(3, 10), Fraction(1, 2)]
    for eps in (0.0, 0.5, 1.0):
        assert pmf_delta(fp, fq, eps) == pmf_delta(P, Q, eps)
    assert pmf_pure_epsilon(fp, fq) == pmf_pure_epsilon(P, Q)


@pytest.mark.parametrize("slack", [0.0, 1e-6])
def test_pmf_epsilon_at_the_delta_of_eps_zero_is_zero(slack):
    d0 = pmf_delta(P, Q, 0.0, slack)
    assert 0.29 < d0 < 0.31
    assert pmf_epsilon(P, Q, d0, slack) == 0.0
    assert pmf_epsilon(P, Q, d0 * (1 - 1e-6), slack) > 0.0


def test_pmf_pure_epsilon_with_slack_takes_either_side():
    p, q, s = np.array([0.8, 0.2]), np.array([0.5, 0.5]), 0.01
    # the largest ratio is (q + s)/p at the second outcome: log(0.51/0.2)
    top = math.log((0.5 + s) / 0.2)
    assert top > max(math.log((0.8 + s) / 0.5), math.log((0.2 + s) / 0.5), math.log((0.5 + s) / 0.8))
    for a, b in ((p, q), (q, p)):
        assert top <= pmf_pure_epsilon(a, b, s) <= top + 1e-8


def test_pmf_pure_epsilon_ignores_outcomes_neither_side_produces():
    padded = pmf_pure_epsilon(np.append(P, 0.0), np.append(Q, 0.0))
    assert padded == pmf_pure_epsilon(P, Q)
    assert math.log(2.5) <= padded <= math.log(2.5) + 1e-8
    assert pmf_pure_epsilon(np.append(P, 0.0), np.append(Q, 0.0), 1e-9) == math.inf  # slack: the outcome may occur


@pytest.mark.parametrize("mu", [0.5, 1.0, 1.5])
def test_gaussian_log_delta_lower_bound_is_below_the_exact_value(mu):
    eps = np.array([1.0, 3.0, 6.0])
    lower = pmf._log_gaussian_delta_lower(mu, eps)
    for e, lo in zip(eps, lower, strict=True):
        with mpmath.workdps(50):
            m, x = mpmath.mpf(mu), mpmath.mpf(float(e))
            exact = float(mpmath.log(mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)))
        assert exact < -1.0  # where a margin relative to |log delta| is larger than an absolute one
        assert exact - 2e-9 * (1 + abs(exact)) <= lo <= exact


def test_gaussian_mu_with_slack_is_never_below_the_exact_pairs():
    support = np.arange(21)
    exact_p, exact_q = binom.pmf(support, 20, 0.4), binom.pmf(support, 20, 0.6)
    s = 1e-6
    mu_exact = pmf_gaussian_mu(exact_p, exact_q, rtol=1e-6)
    mu_slack = pmf_gaussian_mu((1 - s) * exact_p, (1 - s) * exact_q, slack=s, rtol=1e-6)
    assert 0.5 < mu_exact < 5.0
    assert mu_slack >= mu_exact * (1 - 2e-6)
    assert pmf.pmf_is_gaussian_dp((1 - s) * exact_p, (1 - s) * exact_q, mu_slack, slack=s)


@pytest.mark.parametrize("eps", [0.5, 1.0, 8.0])
def test_pure_epsilon_of_randomized_response_is_within_its_stated_margin(eps):
    # binary randomized response is exactly eps-DP; the module rounds up by at most 2 R (1 + eps), R = _ROUND_OFF
    p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    got = pmf_pure_epsilon(p, p[::-1].copy())
    assert eps <= got <= eps + 2 * _ROUND_OFF * (1 + eps) + 4 * math.ulp(eps)
