"""Calibration returns a parameter that meets the target (safe side) and is tight to the tolerance."""

import dp_accounting as dpa
import pytest

from dpaudit import accounting as A
from dpaudit.accounting.calibration import calibrate, calibrate_count, calibrate_parameter
from dpaudit.accounting.named import event_for


def _eps(mech, value, count, delta, acct, **params):
    return A.epsilon(dpa.SelfComposedDpEvent(event_for(mech, {**params, **value}), count), delta, acct)


@pytest.mark.parametrize("acct", ["pld", "rdp", "zcdp"])
def test_gaussian_noise_meets_target_and_is_tight(acct):
    sigma = calibrate_parameter("gaussian", 1.0, 1e-5, count=50, accountant=acct)
    assert _eps("gaussian", {"sigma": sigma}, 50, 1e-5, acct) <= 1.0
    assert _eps("gaussian", {"sigma": sigma * (1 - 1e-3)}, 50, 1e-5, acct) > 1.0


def test_gaussian_noise_matches_analytic_single_release():
    sigma = calibrate_parameter("gaussian", 1.0, 1e-5, accountant="pld")
    assert sigma == pytest.approx(dpa.get_sigma_gaussian(1.0, 1e-5), rel=2e-4)


def test_laplace_pure_is_count_over_epsilon():
    scale = calibrate_parameter("laplace", 2.0, 0.0, count=10, accountant="pure")
    assert 5.0 <= scale <= 5.0 * (1 + 2e-4)


def test_shuffle_largest_local_epsilon():
    e0 = calibrate_parameter("shuffle", 0.1, 1e-6, params={"users": 100_000}, accountant="shuffle")
    assert _eps("shuffle", {"epsilon0": e0}, 1, 1e-6, "shuffle", users=100_000) <= 0.1
    assert _eps("shuffle", {"epsilon0": e0 * (1 + 1e-3)}, 1, 1e-6, "shuffle", users=100_000) > 0.1


def test_calibrate_count():
    g = dpa.GaussianDpEvent(10.0)
    k = calibrate_count(g, 2.0, 1e-5, accountant="pld")
    assert (
        A.epsilon(dpa.SelfComposedDpEvent(g, k), 1e-5, "pld")
        <= 2.0
        < A.epsilon(dpa.SelfComposedDpEvent(g, k + 1), 1e-5, "pld")
    )
    assert calibrate_count(dpa.LaplaceDpEvent(0.1), 1.0, 0.0, accountant="pure") == 0


def test_unreachable_target_and_bad_input():
    with pytest.raises(ValueError, match="bracket"):
        calibrate(lambda s: dpa.GaussianDpEvent(s), 0.01, 1e-5, lower=0.1, upper=1.0, accountant="pld")
    with pytest.raises(ValueError, match="target_epsilon"):
        calibrate_parameter("gaussian", -1.0, 1e-5)
    with pytest.raises(ValueError, match="target_delta"):
        calibrate_parameter("gaussian", 1.0, 1.5)
    with pytest.raises(ValueError, match="mechanism"):
        calibrate_parameter("cauchy", 1.0, 1e-5)


def test_binomial_trials_are_whole_and_meet_target():
    trials = calibrate_parameter("binomial", 0.5, 1e-5, params={"sensitivity": 9}, accountant="pld")
    assert trials == int(trials)
    assert A.epsilon(A.BinomialDpEvent(trials=int(trials), probability=0.25, sensitivity=9), 1e-5, "pld") <= 0.5
