"""Closed forms of `dpaudit.accounting.composition` checked independently.

- KOV heterogeneous composition (Kairouz, Oh, Viswanath, "The Composition Theorem for Differential Privacy",
  ICML 2015, Thm 3.5) solved for delta: eps = D + sqrt(2 S log(e + sqrt(S)/d~)) and eps = D + sqrt(2 S log(1/d~))
  give d~ = sqrt(S)/(e^x - e) and d~ = e^-x, x = (eps - D)^2/(2S), D = sum eps_i (e^eps_i - 1)/(e^eps_i + 1),
  S = sum eps_i^2; the delta is the smaller d~ (combined with the deltas composed), and the epsilon it maps back to
  is at most eps (never optimistic either way).
- The binomial lower-tail bound used below the optimal composition's window: min(Chernoff -k KL(j/k || q)
  (Hoeffding 1963, Thm 1), log w_j - log(1 - r)), w_j the binomial pmf at j, r = j p/((k - j + 1) q); at least the
  exact log tail from scipy.
Exact to round-off (relative 1e-12): no statistics.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpaudit.accounting import composition


def kov_dt(epsilons, counts, eps):
    e, c = np.asarray(epsilons, float), np.asarray(counts, float)
    drift = float(np.sum(c * e * (np.exp(e) - 1) / (np.exp(e) + 1)))
    sq = float(np.sum(c * e * e))
    x = (eps - drift) ** 2 / (2 * sq)
    return min(math.exp(-x), math.sqrt(sq) / (math.exp(x) - math.e) if x > 1 else math.inf)


@pytest.mark.parametrize(
    ("epsilons", "counts", "eps"),
    [([0.1], [100], 2.0), ([0.1, 0.05], [100, 400], 3.0), ([0.01], [10_000], 1.5), ([0.5, 0.2], [4, 10], 2.5)],
)
def test_kov_heterogeneous_delta_is_its_closed_form(epsilons, counts, eps):
    dt = kov_dt(epsilons, counts, eps)
    d = composition.kov_heterogeneous_delta(epsilons, [0.0] * len(epsilons), counts, eps)
    assert d == pytest.approx(dt, rel=1e-12)
    assert composition.kov_heterogeneous_epsilon(epsilons, [0.0] * len(epsilons), counts, d) <= eps * (1 + 1e-12)


def test_kov_heterogeneous_delta_adds_the_composed_deltas():
    # 1 - (1 - d~) (1 - delta0)^k
    d = composition.kov_heterogeneous_delta([0.1], [1e-6], [100], 2.0)
    assert d == pytest.approx(1 - (1 - kov_dt([0.1], [100], 2.0)) * (1 - 1e-6) ** 100, rel=1e-12)


@pytest.mark.parametrize(("k", "q", "j"), [(200, 0.3, 30), (1000, 0.5, 400), (50, 0.2, 3), (5000, 0.1, 420)])
def test_binomial_lower_tail_bound_is_its_closed_form(k, q, j):
    p = 1 - q
    a = j / k
    chernoff = -k * (a * math.log(a / q) + (1 - a) * math.log((1 - a) / p))
    r = j * p / ((k - j + 1) * q)
    geometric = float(binom.logpmf(j, k, q)) - math.log1p(-r)
    bound = composition.log_binomial_lower_tail_bound(k, math.log(p), math.log(q), j)
    assert bound == pytest.approx(min(chernoff, geometric), rel=1e-10)
    assert bound >= float(binom.logcdf(j, k, q))  # never below the exact tail


@pytest.mark.parametrize(
    ("epsilons", "counts", "which"),
    [
        ([0.01], [100], "log(e + sqrt(S)/d)"),
        ([0.1], [1000], "log(1/d)"),
        ([0.01, 0.05], [60, 30], "log(e + sqrt(S)/d)"),
    ],
)
def test_kov_heterogeneous_epsilon_is_its_closed_form(epsilons, counts, which):
    # Kairouz, Oh, Viswanath (ICML 2015), Thm 3.5 at d~ = delta (no delta_i): each branch is the least in one case
    delta = 1e-5
    e, c = np.asarray(epsilons), np.asarray(counts)
    drift = float(np.sum(c * e * (np.exp(e) - 1) / (np.exp(e) + 1)))
    sq = float(np.sum(c * e * e))
    branches = {
        "log(e + sqrt(S)/d)": drift + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / delta)),
        "log(1/d)": drift + math.sqrt(2 * sq * math.log(1 / delta)),
    }
    assert min(branches, key=branches.get) == which
    assert branches[which] < float(np.sum(c * e))
    got = composition.kov_heterogeneous_epsilon(epsilons, [0.0] * len(epsilons), counts, delta)
    assert got == pytest.approx(branches[which], rel=1e-12)
