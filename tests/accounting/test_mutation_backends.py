"""Accountants (`dpaudit.accounting.backends`) answering for single leaves whose privacy is known in closed form.

- pure: n-fold eps0-DP is (n eps0)-DP, and delta(eps) = (e^E - e^eps)/(1 + e^E) at E = n eps0 (Kairouz, Oh,
  Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015, Thm 2.1).
- approx, one binomial count (count + Bin(N, p), one user moves it by s): delta(eps) is the exact hockey-stick
  divergence of the shifted and unshifted binomials (from scipy's pmf), since the composition of one release
  at eps0 = eps is the release itself; never below it.
- rdp, Gaussian: alpha / (2 sigma^2) at each order alpha (Mironov, "Renyi Differential Privacy", CSF 2017,
  Prop. 7), never below it (checked with exact rationals) and within 1e-12 of it; discrete Gaussian:
  alpha D^2 / (2 sigma^2) (Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy",
  NeurIPS 2020, Thm 4); sampling without replacement: dp-accounting's `RdpAccountant` (replace-one relation).
- zcdp, Gaussian: rho = 1/(2 sigma^2) (Bun, Steinke, "Concentrated Differential Privacy", TCC 2016, Prop. 1.6).
- A release that ignores its input (Poisson sampling with probability 0, zCDP with rho = xi = 0) is
  (0, 0)-DP under rdp and zcdp.
- Refusals name the reason: an (eps, delta > 0) black box has no RDP curve and no zCDP bound.
Deterministic: no statistics.
"""

import math
from fractions import Fraction

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy.stats import binom

from dpaudit import accounting as A


@pytest.mark.parametrize(("noise", "count", "eps"), [(2.0, 3, 0.5), (1.0, 1, 0.25), (0.5, 2, 3.0)])
def test_pure_delta_is_that_of_randomized_response(noise, count, eps):
    total = count / noise
    expected = (math.exp(total) - math.exp(eps)) / (1 + math.exp(total))
    event = dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(noise), count)
    assert A.delta(event, eps, "pure") == pytest.approx(expected, rel=1e-12)
    assert A.delta(event, total, "pure") == 0.0


def binomial_delta(n, p, s, eps):
    y = np.arange(n + s + 1)
    unshifted, shifted = binom.pmf(y, n, p), binom.pmf(y - s, n, p)
    e = math.exp(eps)
    return max(float(np.maximum(a - e * b, 0.0).sum()) for a, b in ((unshifted, shifted), (shifted, unshifted)))


@pytest.mark.parametrize(("n", "p", "s", "eps"), [(100, 0.5, 1, 0.3), (40, 0.3, 2, 1.0), (1000, 0.5, 1, 0.1)])
def test_approx_delta_of_one_binomial_count_is_exact(n, p, s, eps):
    exact = binomial_delta(n, p, s, eps)
    d = A.delta(A.BinomialDpEvent(n, p, s), eps, "approx")
    assert exact <= d <= exact * (1 + 1e-6) + 1e-15


@pytest.mark.parametrize("sigma", [2.0, 0.5, 3.0])
def test_rdp_curve_of_the_gaussian_is_alpha_over_two_sigma_squared(sigma):
    curve = A.rdp_guarantee(dpa.GaussianDpEvent(sigma))
    for a, v in zip(curve.orders, curve.values, strict=True):
        exact = Fraction(a) / (2 * Fraction(sigma) ** 2)
        assert Fraction(v) >= exact
        assert v == pytest.approx(float(exact), rel=1e-12)


def test_rdp_curve_of_the_discrete_gaussian_is_its_zcdp_bound():
    curve = A.rdp_guarantee(A.DiscreteGaussianDpEvent(sigma=4.0, sensitivity=2))
    assert "rdp" in A.supporting_accountants(A.DiscreteGaussianDpEvent(sigma=4.0, sensitivity=2))
    for a, v in zip(curve.orders, curve.values, strict=True):
        assert Fraction(v) >= Fraction(a) * 4 / 32
        assert v == pytest.approx(a * 4 / 32, rel=1e-12)


def test_rdp_of_sampling_without_replacement_is_dp_accountings():
    event = dpa.SampledWithoutReplacementDpEvent(1000, 100, dpa.GaussianDpEvent(1.0))
    orders = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0]
    ref = rdp_lib.RdpAccountant(orders, neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE).compose(event)
    ours = A.Accountant("rdp", orders=orders).compose(event)
    assert ours.epsilon(1e-5) == pytest.approx(ref.get_epsilon(1e-5), rel=1e-9)
    assert ours.delta(2.0) == pytest.approx(ref.get_delta(2.0), rel=1e-9)


@pytest.mark.parametrize("sigma", [2.0, 0.5])
def test_zcdp_of_the_gaussian_is_one_over_two_sigma_squared(sigma):
    assert "zcdp" in A.supporting_accountants(dpa.GaussianDpEvent(sigma))
    rho = A.zcdp_guarantee(dpa.GaussianDpEvent(sigma)).rho
    assert Fraction(rho) >= 1 / (2 * Fraction(sigma) ** 2)
    assert rho == pytest.approx(1 / (2 * sigma**2), rel=1e-12)


@pytest.mark.parametrize(
    ("event", "accountants"),
    [(dpa.PoissonSampledDpEvent(0.0, dpa.GaussianDpEvent(1.0)), ["rdp"]), (dpa.ZCDpEvent(0.0, 0.0), ["rdp", "zcdp"])],
)
def test_a_release_ignoring_its_input_is_zero_zero_private(event, accountants):
    for name in accountants:
        assert A.epsilon(event, 0.0, name) == 0.0
        assert A.delta(event, 1e-3, name) == 0.0


def test_an_epsilon_delta_black_box_is_refused_with_the_reason():
    box = A.EpsilonDeltaDpEvent(1.0, 1e-6)
    with pytest.raises(A.UnsupportedEventError, match=r"\): an \(epsilon, delta > 0\) black box has no RDP curve; "):
        A.epsilon(box, 1e-5, "rdp")
    with pytest.raises(A.UnsupportedEventError, match=r"\): no zCDP bound is known for it; "):
        A.epsilon(box, 1e-5, "zcdp")


def test_approx_accounts_for_pure_releases():
    # a pure eps-DP leaf is (eps, 0)-DP: the approx accountant answers it (and compositions of it) itself,
    # never above the pure bound, and does not refuse it
    from dpaudit.accounting import epsilon as _epsilon

    one = dpa.LaplaceDpEvent(0.5)
    assert 0.99 * 2.0 < _epsilon(one, 1e-6, "approx") <= 2.0
    three = dpa.ComposedDpEvent([one] * 3)
    assert 2.0 < _epsilon(three, 1e-6, "approx") <= 6.0
