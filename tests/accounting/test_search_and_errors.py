"""The one bisection helper returns the end it checked; UnsupportedEventError is both
dp-accounting's error and a ValueError."""

import math

import dp_accounting as dpa
import pytest
from hypothesis import given, settings, strategies as st

from dpaudit import accounting as A
from dpaudit.accounting.search import first_accepted_doubling, smallest_accepted


@settings(deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6), st.floats(min_value=1e-12, max_value=1e-3))
def test_smallest_accepted_returns_an_accepted_point_near_the_boundary(boundary, rtol):
    calls = []

    def accept(x):
        calls.append(x)
        return x >= boundary

    hi = smallest_accepted(accept, 0.0, 2 * boundary, rtol=rtol)
    assert accept(hi) and boundary <= hi <= boundary * (1 + 2 * rtol) + 1e-300


def test_smallest_accepted_with_a_non_monotone_test_still_returns_an_accepted_point():
    accepted = {0.75, 1.0}  # accept(0.5) fails, then accept(0.75) holds, accept(0.625) fails
    assert smallest_accepted(lambda x: x in accepted, 0.0, 1.0, rtol=0.2) in accepted


def test_first_accepted_doubling():
    assert first_accepted_doubling(lambda x: x >= 5, 1.0, 100.0) == 8.0
    assert first_accepted_doubling(lambda x: False, 1.0, 100.0) == math.inf
    with pytest.raises(ValueError, match="lo <= hi"):
        smallest_accepted(lambda x: True, 2.0, 1.0, rtol=1e-3)


def test_unsupported_event_error_is_dp_accountings_error_and_a_value_error():
    with pytest.raises(dpa.UnsupportedEventError) as info:
        A.epsilon(dpa.GaussianDpEvent(1.0), 1e-5, "pure")
    assert isinstance(info.value, ValueError) and isinstance(info.value, A.UnsupportedEventError)
    assert info.value.accountant == "pure" and "approx" in info.value.supported_by
