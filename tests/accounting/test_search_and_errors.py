"""The one bisection function returns the end it checked; UnsupportedEventError is both
dp-accounting's error and a ValueError."""

import math

import dp_accounting as dpa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_backend_caches_drop_the_least_recently_used_leaf_not_everything():
    """The per-leaf caches are LRU caches: a leaf in constant use stays cached while more than
    CACHE_LIMIT other leaves pass through (a cache that empties when full recomputes it)."""
    from dpaudit.accounting.backends.base import CACHE_LIMIT
    from dpaudit.accounting.backends.rdp import RdpBackend
    from dpaudit.accounting.tree import leaf_key

    backend = RdpBackend(orders=[2.0, 8.0])
    hot = dpa.GaussianDpEvent(1.0)
    first = backend.leaf_curve(leaf_key(hot), hot)
    for i in range(CACHE_LIMIT + 10):
        other = dpa.GaussianDpEvent(2.0 + i)
        backend.leaf_curve(leaf_key(other), other)
        assert backend.leaf_curve(leaf_key(hot), hot) is first


def test_backend_cache_keys_are_typed():
    """GaussianDpEvent(True) == GaussianDpEvent(1.0) for attrs; the cache must keep them apart."""
    from dpaudit.accounting.backends.pure import PureBackend
    from dpaudit.accounting.tree import leaf_key

    backend = PureBackend()
    one, true = dpa.LaplaceDpEvent(1.0), dpa.LaplaceDpEvent(True)
    assert one == true
    backend.reason(leaf_key(one), one)
    backend.reason(leaf_key(true), true)
    assert backend._reason.cache_info().currsize == 2


@settings(deadline=None)
@given(st.integers(1, 5000), st.integers(0, 6000))
def test_largest_accepted_count_is_exact_and_evaluated(max_count, answer):
    from dpaudit.accounting.search import largest_accepted_count

    seen = {}

    def accept(k):
        assert 1 <= k <= max_count
        seen[k] = k <= answer
        return seen[k]

    k = largest_accepted_count(accept, max_count)
    assert k == min(answer, max_count)
    assert k == 0 or seen[k]  # the count returned was evaluated and accepted
    assert max(seen) <= max(2 * k, 2) or max(seen) == max_count  # no count far past the answer


@given(st.integers(-50, 50), st.integers(-1, 60), st.integers(-60, 120))
def test_smallest_accepted_int(lo, width, threshold):
    from dpaudit.accounting.search import smallest_accepted_int

    hi = lo + width
    assert smallest_accepted_int(lambda y: y >= threshold, lo, hi) == min(max(lo, threshold), hi + 1)
