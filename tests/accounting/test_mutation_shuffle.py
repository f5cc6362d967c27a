"""The numerical shuffling bound (`shuffle.numerical_delta`) against its definition, for few users.

Feldman, McMillan, Talwar, "Hiding Among the Clones", FOCS 2021, Thm 3.2 / Sec. 4.3: the shuffled view of n pure
eps0-LDP reports is a post-processing of (A + 1 - D, C - A + D) against (A + D, C - A + 1 - D), C ~ Bin(n - 1,
e^-eps0) clones, A ~ Bin(C, 1/2), D ~ Bern(1 - alpha), alpha = e^eps0/(1 + e^eps0); with C seen, delta(eps) =
E_C sum_a max(0, P_C(a) - e^eps Q_C(a)), P_C(a) = alpha b_C(a) + (1 - alpha) b_C(a - 1), Q_C(a) = (1 - alpha)
b_C(a) + alpha b_C(a - 1), b_C the Bin(C, 1/2) pmf. For n <= 6 every C has weight above the library's tail cut,
so its answer is this sum (by scipy's pmfs) plus its documented round-off slack 1e-14, never less. At eps = 0
the level set {P_C > Q_C} ends exactly at a = (C + 1)/2 for odd C (a tie the bound must not move).
Below eps0 = 1e-9 no amplification is claimed: delta is that of binary randomized response,
(e^eps0 - e^eps)/(1 + e^eps0) (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1), here from mpmath.
Deterministic: no statistics.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

from dpaudit.accounting.shuffle import numerical_delta, shuffled_delta


def fmt_delta(eps0, n, eps):
    alpha = 1 / (1 + math.exp(-eps0))
    total = 0.0
    for c in range(n):
        a = np.arange(c + 2)
        b, b1 = binom.pmf(a, c, 0.5), binom.pmf(a - 1, c, 0.5)
        p = alpha * b + (1 - alpha) * b1
        q = (1 - alpha) * b + alpha * b1
        total += binom.pmf(c, n - 1, math.exp(-eps0)) * float(np.maximum(p - math.exp(eps) * q, 0.0).sum())
    return total


@pytest.mark.parametrize(("eps0", "n"), [(0.5, 5), (1.0, 6), (2.0, 4), (0.4, 3)])
@pytest.mark.parametrize("eps", [0.0, 0.05, 0.3])
def test_numerical_delta_for_few_users_is_the_exact_sum(eps0, n, eps):
    ref = fmt_delta(eps0, n, eps)
    d = numerical_delta(eps0, n, eps)
    assert ref <= d <= ref + 1e-13
    assert shuffled_delta(eps0, n, eps) <= d


@pytest.mark.parametrize(("eps0", "eps"), [(1e-10, 0.0), (5e-10, 1e-10)])
def test_numerical_delta_below_the_smallest_local_epsilon_is_randomized_response(eps0, eps):
    with mpmath.workdps(40):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)
        rr = float((mpmath.exp(e0) - mpmath.exp(e)) / (1 + mpmath.exp(e0)))
    assert numerical_delta(eps0, 1000, eps) == pytest.approx(rr, rel=1e-9)
