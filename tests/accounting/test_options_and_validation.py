"""Accountant options are validated naming the option; leaves are validated on every call (a
bool parameter equal to a valid float is still refused, whatever was evaluated before)."""

import math

import dp_accounting as dpa
import pytest

from dpaudit import accounting as A


@pytest.mark.parametrize(
    "value, error",
    [
        (-1.0, ValueError),
        (0.0, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        (True, TypeError),
        ("0.1", TypeError),
    ],
)
def test_pld_discretisation_interval_is_validated(value, error):
    with pytest.raises(error, match="value_discretization_interval"):
        A.Accountant("pld", value_discretization_interval=value)


@pytest.mark.parametrize(
    "orders, error",
    [
        ([], ValueError),
        ([1.0], ValueError),
        ([0.5, 2.0], ValueError),
        ([2.0, math.nan], ValueError),
        ([2.0, math.inf], ValueError),
        ([True, 2.0], TypeError),
        ("23", TypeError),
        (3.0, TypeError),
    ],
)
def test_rdp_orders_are_validated(orders, error):
    with pytest.raises(error, match="orders"):
        A.Accountant("rdp", orders=orders)


def test_unknown_option_is_named():
    with pytest.raises(ValueError, match="'orderz'"):
        A.Accountant("rdp", orderz=[2.0])
    with pytest.raises(ValueError, match="no option 'orders'; it takes value_discretization_interval"):
        A.Accountant("pld", orders=[2.0])


def test_valid_options_still_work():
    event = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 3)
    assert A.Accountant("rdp", orders=[2, 4.5, 64]).compose(event).epsilon(1e-5) >= A.epsilon(event, 1e-5, "rdp")
    assert math.isfinite(A.Accountant("pld", value_discretization_interval=1e-3).compose(event).epsilon(1e-5))


def test_bool_parameter_is_refused_after_the_equal_float_was_evaluated():
    """GaussianDpEvent(True) == GaussianDpEvent(1.0) with equal hashes: a validation cache keyed on
    the event accepted the bool once the float had been evaluated."""
    assert math.isfinite(A.epsilon(dpa.GaussianDpEvent(1.0), 1e-5))
    with pytest.raises(TypeError, match="noise_multiplier"):
        A.epsilon(dpa.GaussianDpEvent(True), 1e-5)
    acct = A.Accountant("rdp").compose(dpa.GaussianDpEvent(1.0))
    with pytest.raises(TypeError, match="noise_multiplier"):
        acct.compose(dpa.GaussianDpEvent(True))
    assert acct.branches == [{dpa.GaussianDpEvent(1.0): 1}]


@pytest.mark.parametrize(
    "event",
    [
        dpa.ZCDpEvent(rho=True),
        dpa.ZCDpEvent(rho=0.1, xi=True),
        dpa.PoissonSampledDpEvent(True, dpa.GaussianDpEvent(1.0)),
        dpa.LaplaceDpEvent(True),
        dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=True),
    ],
)
def test_bool_parameters_are_refused(event):
    with pytest.raises(TypeError, match="must be"):
        A.epsilon(event, 1e-5)
