"""The `pld` accountant (`dpaudit.accounting.backends.pld`): composition counts, default precision, FFT slack, refusals.

- k-fold binary randomized response has the exact profile of Kairouz, Oh, Viswanath ("The Composition Theorem for
  Differential Privacy", ICML 2015, Thm 3.3; `composition.OptimalHomogeneous`): the PLD's delta (pessimistic,
  default interval 1e-4) is never below it and within 5e-3 (relative) of it, for 1, 2 and 10 releases.
- `fft_slack` is 4 ulp per probability of the PLD's pmfs, both of them when they differ, a sparse one counted
  over the width of its losses (its dense form's length).
- A Poisson-sampled Gaussian whose losses span mu^2 + 20 mu (mu = 1/sigma, tails cut at 10 sd) more than
  `MAX_POINTS_COMPOSED` intervals is refused, as too costly to build, before anything is built.
- An empty composition is (0, 0)-DP.
- A binomial count whose shift moves it beyond 40 sd of its own law (sensitivity = trials included) is refused at
  once (`binomial_loss.windows_overlap`), and `delta` answers 1 from the approx accountant's exact sum; a large shift
  that keeps the laws overlapping is built on a table of at most `_WORK` terms, in seconds, never below that sum.
- A Skellam sum whose ±(15 sd + 50) outcomes exceed `MAX_ENUMERATED` is refused before it is enumerated.
Deterministic: no statistics.
"""

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpaudit import accounting as A
from dpaudit.accounting.backends.pld import PldBackend
from dpaudit.accounting.composition import OptimalHomogeneous


@pytest.mark.parametrize(("count", "eps"), [(1, 0.3), (2, 0.6), (2, 0.2), (10, 0.6), (10, 2.0)])
def test_pld_of_composed_randomized_response_is_kov_exact(count, eps):
    exact = OptimalHomogeneous(0.5, 0.0, count).delta(eps)
    d = A.delta(dpa.SelfComposedDpEvent(A.KaryRandomizedResponseDpEvent(0.5, 2), count), eps, "pld")
    assert exact > 1e-3
    assert exact <= d <= exact * (1 + 5e-3)


def test_fft_slack_counts_every_probability_of_both_pmfs():
    ulp = float(np.finfo(float).eps)
    sparse = pld_lib.from_privacy_parameters(
        pld_common.DifferentialPrivacyParameters(1.0, 0.0), value_discretization_interval=1e-2
    )
    assert PldBackend.fft_slack(sparse) == 4 * ulp * 201  # losses -1 .. 1 in steps of 1e-2, one pmf (symmetric)
    dense = pld_lib.from_laplace_mechanism(1.0, value_discretization_interval=1e-2, sampling_prob=0.5).self_compose(3)
    sizes = [p.to_dense_pmf()._probs.size for p in (dense._pmf_remove, dense._pmf_add)]
    assert dense._pmf_remove is not dense._pmf_add and min(sizes) > 100
    assert PldBackend.fft_slack(dense) == 4 * ulp * sum(sizes)


def test_a_too_wide_sampled_gaussian_is_refused_before_it_is_built():
    sigma = 0.05  # mu = 20: losses span 800, 8e6 intervals of 1e-4
    mu = 1 / sigma
    assert (mu * mu + 20 * mu) / 1e-4 > PldBackend.MAX_POINTS_COMPOSED
    event = dpa.PoissonSampledDpEvent(0.5, dpa.GaussianDpEvent(sigma))
    assert "pld" not in A.supporting_accountants(event)
    with pytest.raises(A.UnsupportedEventError, match=r"would take too long"):
        A.epsilon(event, 1e-5, "pld")


def test_an_empty_composition_is_zero_zero_private():
    assert A.epsilon(dpa.NoOpDpEvent(), 0.0, "pld") == 0.0
    assert A.delta(dpa.NoOpDpEvent(), 0.5, "pld") == 0.0
    assert A.Accountant("pld").delta(math.ulp(0.0)) == 0.0


@pytest.mark.parametrize("shift", [400_010, 399_000])
def test_a_binomial_moved_beyond_its_own_window_is_refused_at_once(shift):
    event = A.BinomialDpEvent(400_010, 0.5, shift)
    assert A.supporting_accountants(event) == ["approx"]
    with pytest.raises(A.UnsupportedEventError, match="disjoint within"):
        A.delta(event, 1.0, "pld")
    assert A.delta(event, 1.0) == 1.0


def test_a_large_overlapping_shift_is_accounted_in_bounded_work():
    # 10 sd of Bin(4e8, 1/2): a table of 4097 counts would sum 4e8 log-ratio terms (3 GB); capped, it takes ~1 s
    event = A.BinomialDpEvent(400_000_000, 0.5, 100_000)
    exact = A.delta(event, 3.0, "approx")
    assert 0.9 < exact <= A.delta(event, 3.0, "pld") <= 1.0


def test_a_skellam_sum_too_wide_to_enumerate_is_refused():
    from dpaudit.accounting.curves import MAX_ENUMERATED

    variance = 2e8  # 2 (15 sd + 50) + 1 = 424365 outcomes
    assert 2 * (15 * math.sqrt(variance) + 50) + 1 > MAX_ENUMERATED
    assert "pld" not in A.supporting_accountants(A.SkellamDpEvent(variance, 1, 1))
    assert "pld" in A.supporting_accountants(A.SkellamDpEvent(1e8, 1, 1))


@pytest.mark.parametrize("event", [dpa.LaplaceDpEvent(1.0), dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(1.0))])
def test_one_release_beyond_its_largest_loss_has_delta_zero(event):
    # one release is not self-composed: composing adds dp-accounting's truncated tail (~1e-15) at infinity
    assert A.delta(event, 2.0, "pld") == 0.0
    assert A.delta(event, 20.0, "pld") == 0.0
