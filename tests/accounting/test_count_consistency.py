"""For every event type and every accountant: count=k, SelfComposedDpEvent(e, k), ComposedDpEvent
([e]*k) and k separate compositions agree (dp-accounting's PLD accountant ignores the count of
randomized response; dpaudit must not), and unsupported accountants refuse loudly."""

import math

import dp_accounting as dpa
import pytest
from dp_accounting import dp_event

from dpaudit import accounting as A

EVENTS = {
    "gaussian": dpa.GaussianDpEvent(3.0),
    "laplace": dpa.LaplaceDpEvent(2.0),
    "discrete_laplace": dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.3, sensitivity=2),
    "rr": dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2),
    "discrete_gaussian": A.DiscreteGaussianDpEvent(sigma=5.0, sensitivity=1.0),
    "skellam": A.SkellamDpEvent(variance=400.0, l1_sensitivity=10.0, l2_sensitivity=10.0),
    "pure_box": A.EpsilonDeltaDpEvent(epsilon=0.4),
    "approx_box": A.EpsilonDeltaDpEvent(epsilon=0.4, delta=1e-7),
    "shuffled": A.ShuffledDpEvent(local_epsilon=1.0, num_users=2000),
    "shuffled_local_delta": A.ShuffledDpEvent(local_epsilon=1.0, num_users=20000, local_delta=1e-12),
    "zcdp": dpa.ZCDpEvent(rho=0.02),
    "binomial": A.BinomialDpEvent(trials=2000, probability=0.25, sensitivity=3),
    "parallel": A.ParallelComposedDpEvent(
        events=[dpa.LaplaceDpEvent(2.0), dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(4.0), 3)]
    ),
}
K = 4
DELTA = 1e-6


def _forms(event, k):
    yield "self_composed", lambda acct: A.epsilon(dpa.SelfComposedDpEvent(event, k), DELTA, acct)
    yield "composed", lambda acct: A.epsilon(dpa.ComposedDpEvent([event] * k), DELTA, acct)
    yield "count", lambda acct: A.Accountant(acct).compose(event, count=k).epsilon(DELTA)

    def one_by_one(acct):
        a = A.Accountant(acct)
        for _ in range(k):
            a.compose(event)
        return a.epsilon(DELTA)

    yield "one_by_one", one_by_one


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_count_forms_agree_under_every_accountant(name):
    event = EVENTS[name]
    supported = A.supporting_accountants(event)
    assert supported, name
    for acct in A.ACCOUNTANTS:
        if acct not in supported:
            with pytest.raises(A.UnsupportedEventError) as info:
                A.epsilon(dpa.SelfComposedDpEvent(event, K), DELTA, acct)
            assert acct in str(info.value) and all(s in str(info.value) for s in supported)
            continue
        values = {form: f(acct) for form, f in _forms(event, K)}
        ref = values["self_composed"]
        assert all(v == ref for v in values.values()), (name, acct, values)
        single = A.epsilon(event, DELTA, acct)
        assert ref >= single, (name, acct)
        if acct in ("pure", "pld", "rdp", "zcdp") and single > 0:
            assert ref > 1.5 * single, (name, acct, single, ref)  # the count is not dropped


def test_randomized_response_count_is_not_dropped():
    # dp-accounting 0.6.0's PLD accountant reports 1.10 here (the single-release epsilon)
    rr = dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)
    e = A.epsilon(dpa.SelfComposedDpEvent(rr, 100), 1e-5, "pld")
    assert e == pytest.approx(90.8, abs=0.05)
    assert A.Accountant("pld").compose(rr, 100).epsilon(1e-5) == e


def test_streaming_state_is_merged():
    g = dpa.GaussianDpEvent(5.0)
    a = A.Accountant("rdp")
    for _ in range(1000):
        a.compose(g)
    assert a.branches == [{g: 1000}]
    assert a.epsilon(1e-5) == A.epsilon(dpa.SelfComposedDpEvent(g, 1000), 1e-5, "rdp")


def test_failed_compose_leaves_state_unchanged():
    a = A.Accountant("pure").compose(dpa.LaplaceDpEvent(1.0), 2)
    with pytest.raises(A.UnsupportedEventError):
        a.compose(dpa.ComposedDpEvent([dpa.LaplaceDpEvent(1.0), dpa.GaussianDpEvent(1.0)]))
    assert a.epsilon(0.0) == pytest.approx(2.0)


def test_zero_count_is_no_release():
    assert A.epsilon(dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1.0), 0), 1e-5) == 0.0
    assert A.Accountant("rdp").compose(dpa.GaussianDpEvent(1.0), 0).epsilon(1e-5) == 0.0


def test_nonprivate_is_infinite_everywhere():
    e = dpa.ComposedDpEvent([dpa.LaplaceDpEvent(1.0), dpa.NonPrivateDpEvent()])
    for acct in ("pure", "approx", "rdp", "zcdp", "pld"):
        assert math.isinf(A.epsilon(e, 1e-5, acct))
        assert A.delta(e, 1.0, acct) == 1.0
