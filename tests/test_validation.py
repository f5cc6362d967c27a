"""The central validators: a wrong type raises TypeError, a bad value of the right type ValueError; both name the
parameter."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.validation import (
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int_at_least,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_probability,
)

REALS = [check_positive, check_nonnegative, check_probability, check_open_unit]


@pytest.mark.parametrize("check", REALS)
@pytest.mark.parametrize("bad", ["0.5", None, True, np.True_, 1j, [0.5], Fraction])
def test_a_non_number_is_a_type_error(check, bad):
    with pytest.raises(TypeError, match=r"^x must be a real number"):
        check(bad, "x")


@pytest.mark.parametrize("bad", ["1", None, False])
def test_epsilon_and_delta_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match=r"^epsilon "):
        check_epsilon(bad)
    with pytest.raises(TypeError, match=r"^delta "):
        check_delta(bad)


@pytest.mark.parametrize(
    "check, bad",
    [
        (check_positive, 0.0),
        (check_positive, math.inf),
        (check_nonnegative, -1e-300),
        (check_probability, 1.5),
        (check_open_unit, 1.0),
        (check_open_unit, 0),
        (check_positive, math.nan),
    ],
)
def test_a_number_out_of_range_is_a_value_error(check, bad):
    with pytest.raises(ValueError, match=r"^x must"):
        check(bad, "x")


@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.fractions()))
def test_every_real_number_gets_a_float_or_a_value_error(value):
    try:
        got = check_positive(value, "x")
    except ValueError:
        assert not 0 < value < math.inf
    else:
        assert got == float(value) and 0 < got < math.inf


def test_integers():
    assert check_int_at_least(np.int64(5), 1, "n") == 5 and check_positive_int(3.0, "n") == 3
    assert type(check_positive_int(1e5, "n")) is int  # an integral float counts as its integer
    with pytest.raises(ValueError, match=r"^n must be an integer >= 2, got 1$"):
        check_int_at_least(1, 2, "n")
    for bad in (2.5, math.inf, math.nan, "3", True, None, np.float64(0.5)):
        with pytest.raises(TypeError, match=r"^n must be an integer"):
            check_positive_int(bad, "n")


def test_flags():
    assert check_bool(True, "flag") is True and check_bool(np.False_, "flag") is False
    for bad in (1, 0, "yes", None, 1.0):
        with pytest.raises(TypeError, match=r"^flag must be True or False"):
            check_bool(bad, "flag")


def test_choices():
    assert check_choice("a", ("a", "b"), "kind") == "a"
    with pytest.raises(ValueError, match=r"^unknown kind 'c'; choose one of a, b$"):
        check_choice("c", ("a", "b"), "kind")
    for bad in (None, 1, ["a"]):
        with pytest.raises(TypeError, match=r"^kind must be a string, one of a, b"):
            check_choice(bad, ("a", "b"), "kind")


def test_arrays():
    np.testing.assert_array_equal(check_finite_array([Fraction(1, 2), 1, np.int8(2)], "x"), [0.5, 1.0, 2.0])
    for bad in (["1"], "1", [None], [1j], [True, None]):
        with pytest.raises(TypeError, match=r"^x must be an array of real numbers"):
            check_finite_array(bad, "x")
    for bad, message in (([1.0, math.nan], "finite"), ([[1.0], [2.0, 3.0]], "rectangular"), ([1.0], "2 axes")):
        with pytest.raises(ValueError, match=rf"^x must .*{message}"):
            check_finite_array(bad, "x", ndim=2 if message == "2 axes" else None)
