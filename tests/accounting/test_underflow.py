"""Underflow, overflow and cancellation at the edges: a positive delta never reads as 0, a tiny
noise never raises, a tiny divergence never reads as none. Each case failed before its fix."""

import math

import dp_accounting as dpa
import numpy as np
import pytest

from dpaudit import accounting as A
from dpaudit.accounting import composition, curves
from dpaudit.accounting.guarantees import zcdp_delta

TINY = math.ulp(0.0)


@pytest.mark.parametrize("accountant", ["approx", "rdp", "zcdp", "pld"])
def test_gaussian_delta_far_in_the_tail_is_positive(accountant):
    # exact delta ~ e^-12500: below the smallest double, but not 0 (rdp and zcdp returned 0.0)
    assert A.delta(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), 10), 500.0, accountant) >= TINY


def test_composition_theorem_deltas_are_positive_below_the_total():
    assert composition.kov_heterogeneous_delta([0.1], [0.0], [1000], 99.0) > 0
    assert composition.drv_delta(0.1, 0.0, 1000, 99.0) > 0
    assert composition.drv_delta(1e-300, 0.0, 10, 1.0) == 0.0  # ((eps - drift)/eps0)**2 raised OverflowError
    assert composition.drv_delta(1e-300, 0.0, 10**6, 1e-295) == TINY
    assert composition.OptimalHomogeneous(0.1, 0.0, 10_000).delta(999.0) == TINY
    assert composition.OptimalHomogeneous(0.1, 0.0, 10_000).delta(1000.0) == 0.0
    assert zcdp_delta(0.5, 1000.0) == TINY


def test_gaussian_profile_with_a_vanishing_mu_is_not_zero():
    # Phi(mu/2) - Phi(-mu/2) ~ 0.399 mu: both log terms round to log(1/2) (the old code gave 0)
    assert curves.gaussian_delta(1e-300, 0.0) == pytest.approx(0.3989422804014327e-300, rel=1e-6)
    assert curves.gaussian_epsilon(1e-300, 1e-301) > 0.0
    assert curves.gaussian_epsilon(1.0, 0.0) == math.inf


@pytest.mark.parametrize(
    "event",
    [
        dpa.GaussianDpEvent(1e-300),
        A.DiscreteGaussianDpEvent(sigma=1e-300, sensitivity=1.0),
        A.SkellamDpEvent(variance=1e-300, l1_sensitivity=1.0, l2_sensitivity=1.0),
        dpa.PoissonSampledDpEvent(0.5, dpa.GaussianDpEvent(1e-300)),
        dpa.ComposedDpEvent([dpa.GaussianDpEvent(1e-300), dpa.LaplaceDpEvent(1.0)]),
    ],
)
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_vanishing_noise_gives_no_guarantee_and_no_error(event):
    """sigma = 1e-300 raised ZeroDivisionError (zcdp, pld) or OverflowError (rdp via dp-accounting);
    the overflows to +inf on the way (the trivial bound at that order) raise no RuntimeWarning either."""
    for name in A.supporting_accountants(event):
        if name == "pure":
            continue
        # inf or a huge bound; the Skellam PLD is exact there: Sk(var) is 0 but for mass
        # var/2 = 5e-301 at +-1, so the shift has privacy loss log(2e300) = 691.5 at 0
        assert A.epsilon(event, 1e-5, name) > 690.0, name
        assert A.delta(event, 1.0, name) > 0.99, name


@pytest.mark.parametrize("accountant", ["rdp", "zcdp", "approx", "pld"])
def test_a_divergence_that_underflows_is_not_read_as_zero(accountant):
    """sigma = 1e300: rho = 5e-601 underflows to 0; rdp and zcdp then claimed epsilon 0 at delta 0."""
    event = dpa.GaussianDpEvent(1e300)
    assert A.epsilon(event, 0.0, accountant) == math.inf
    assert A.epsilon(event, 1e-300, accountant) >= 0.0


def test_poisson_gaussian_rdp_with_vanishing_sigma_is_inf_not_nan():
    out = curves.poisson_gaussian_rdp(0.01, 1e-300, np.array([1.5, 2.0, 8.0]))
    assert np.all(np.isinf(out))
