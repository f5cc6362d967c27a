"""The public entry points: names, "best", bad input (ValueError naming the parameter)."""

import dataclasses
import math

import dp_accounting as dpa
import pytest

from dpaudit import accounting as A

G = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 10)


def test_accountant_names():
    assert A.ACCOUNTANTS == ("pure", "approx", "rdp", "zcdp", "pld", "shuffle")


def test_best_is_the_smallest_supported_answer():
    values = {n: A.epsilon(G, 1e-5, n) for n in A.supporting_accountants(G)}
    assert set(values) == {"approx", "rdp", "zcdp", "pld"}
    assert A.epsilon(G, 1e-5) == min(values.values())
    deltas = {n: A.delta(G, 2.0, n) for n in values}
    assert A.delta(G, 2.0) == min(deltas.values())


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        A.delta(G, bad)


@pytest.mark.parametrize("bad", ["1", True, None])
def test_epsilon_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match="epsilon"):
        A.delta(G, bad)


@pytest.mark.parametrize("bad", [-1e-9, 1.0, 2.0, math.nan])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        A.epsilon(G, bad)


@pytest.mark.parametrize(
    "event,name",
    [
        (dpa.GaussianDpEvent(0.0), "noise_multiplier"),
        (dpa.LaplaceDpEvent(-1.0), "noise_multiplier"),
        (dpa.RandomizedResponseDpEvent(noise_parameter=0.0, num_buckets=2), "noise_parameter"),
        (dpa.RandomizedResponseDpEvent(noise_parameter=1.5, num_buckets=2), "noise_parameter"),
        (dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), -1), "count"),
    ],
)
def test_bad_leaf_parameters(event, name):
    with pytest.raises(ValueError, match=name):
        A.epsilon(event, 1e-5)


@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: A.ShuffledDpEvent(local_epsilon=1.0, num_users=0), "num_users"),
        (lambda: A.ShuffledDpEvent(local_epsilon=0.0, num_users=10), "local_epsilon"),
        (lambda: A.SkellamDpEvent(variance=0.0, l1_sensitivity=1.0, l2_sensitivity=1.0), "variance"),
        (lambda: A.DiscreteGaussianDpEvent(sigma=-1.0, sensitivity=1.0), "sigma"),
        (lambda: A.EpsilonDeltaDpEvent(epsilon=1.0, delta=1.0), "delta"),
        (lambda: A.BinomialDpEvent(trials=10, probability=1.0, sensitivity=1), "probability"),
        (lambda: A.BinomialDpEvent(trials=0, probability=0.5, sensitivity=1), "trials"),
    ],
)
def test_bad_event_construction(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_unknown_accountant_and_non_event():
    with pytest.raises(ValueError, match="accountant"):
        A.epsilon(G, 1e-5, "moments")
    with pytest.raises(TypeError, match="DpEvent"):
        A.epsilon("gaussian", 1e-5)


def test_unsupported_leaf_names_event_and_accountants():
    e = dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.UnsupportedDpEvent()])
    with pytest.raises(A.UnsupportedEventError, match="UnsupportedDpEvent"):
        A.epsilon(e, 1e-5)
    with pytest.raises(A.UnsupportedEventError) as info:
        A.epsilon(dpa.GaussianDpEvent(1.0), 1e-5, "pure")
    assert isinstance(info.value, ValueError)
    assert info.value.supported_by == ("approx", "rdp", "zcdp", "pld")
    assert "GaussianDpEvent" in str(info.value) and "pld" in str(info.value)


def test_delta_zero_for_non_pure_event_is_infinite_not_an_error():
    assert math.isinf(A.epsilon(dpa.GaussianDpEvent(1.0), 0.0, "rdp"))
    assert A.epsilon(dpa.LaplaceDpEvent(1.0), 0.0) == pytest.approx(1.0)


def test_value_objects_are_frozen_and_convert():
    z = A.Zcdp(rho=0.1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        z.rho = 1.0  # type: ignore[misc]
    assert z.epsilon(1e-5) == pytest.approx(A.epsilon(dpa.ZCDpEvent(rho=0.1), 1e-5, "zcdp"))
    assert A.PureDp(1.0).to_zcdp().rho == 0.5
    curve = A.rdp_guarantee(G)
    assert curve.epsilon(1e-5) == pytest.approx(A.epsilon(G, 1e-5, "rdp"))
    with pytest.raises(ValueError, match="rho"):
        A.Zcdp(rho=-1.0)
    with pytest.raises(ValueError, match="delta"):
        A.ApproxDp(1.0, 2.0)
