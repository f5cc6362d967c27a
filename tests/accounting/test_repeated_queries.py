"""Repeated queries reuse the composed state (PLD per branch, RDP curve per leaf) and answer
exactly as a fresh computation; a later composition invalidates the reuse; the vectorised
Poisson-subsampled Gaussian RDP is never below dp-accounting's."""

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from dpaudit import accounting as A
from dpaudit.accounting import backends, curves
from dpaudit.accounting.backends import rdp as rdp_backend

VDI = 1e-3  # coarse PLD discretisation keeps these tests fast
EPSILONS = (0.5, 1.0, 2.0)


def mixed_event(poisson_count: int = 20) -> dpa.DpEvent:
    return dpa.ComposedDpEvent(
        [
            dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(3.0), 4),
            dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 3),
            dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.1)), poisson_count),
        ]
    )


def fresh_pld(event: dpa.DpEvent) -> A.Accountant:
    """An accountant with its own backend (options give a private instance): nothing cached."""
    return A.Accountant("pld", value_discretization_interval=VDI).compose(event)


def test_repeated_pld_queries_equal_fresh_computation():
    acct = fresh_pld(mixed_event())
    first = [acct.delta(e) for e in EPSILONS] + [acct.epsilon(1e-5)]
    (backend,) = acct._overrides.values()
    assert backend._branch_pld.cache_info().misses == 1  # composed once for all the queries
    again = [acct.delta(e) for e in EPSILONS] + [acct.epsilon(1e-5)]
    fresh = fresh_pld(mixed_event())
    assert first == again == [fresh.delta(e) for e in EPSILONS] + [fresh.epsilon(1e-5)]


def test_compose_after_a_query_invalidates_the_composed_pld():
    acct = fresh_pld(mixed_event())
    before = acct.delta(1.0)
    acct.compose(dpa.LaplaceDpEvent(20.0), 2)
    after = acct.delta(1.0)
    expected = fresh_pld(dpa.ComposedDpEvent([mixed_event(), dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 2)]))
    assert after == expected.delta(1.0)
    assert after > before
    # the streaming fast path (a leaf already composed) invalidates too
    acct.compose(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.1)), 5)
    assert acct.epsilon(1e-5) == fresh_pld(
        dpa.ComposedDpEvent(
            [
                mixed_event(25),
                dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 2),
            ]
        )
    ).epsilon(1e-5)


def test_functional_entry_points_reuse_and_agree():
    event = mixed_event()
    backend = backends.PldBackend(VDI)
    pool = A.accountants._pool({"pld": backend})
    flat = A.accountants._prepare(event)
    fresh = backends.PldBackend(VDI).delta(flat, 1.0)
    assert backend.delta(flat, 1.0) == backend.delta(A.accountants._prepare(mixed_event()), 1.0) == fresh
    assert backend._branch_pld.cache_info().misses == 1
    assert pool["pld"] is backend
    # the public functions (shared backends) answer the same on repeated calls
    small = dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.LaplaceDpEvent(5.0)])
    assert A.delta(small, 1.0, "pld") == A.delta(
        dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.LaplaceDpEvent(5.0)]), 1.0, "pld"
    )
    assert A.epsilon(small, 1e-5) == A.epsilon(small, 1e-5) <= A.epsilon(small, 1e-5, "rdp")


def test_rdp_support_check_computes_no_curve(monkeypatch):
    calls = []
    real = curves.poisson_gaussian_rdp
    monkeypatch.setattr(rdp_backend, "poisson_gaussian_rdp", lambda *a: calls.append(a) or real(*a))
    acct = A.Accountant("rdp", orders=[1.5, 2, 3, 8, 32, 64])
    acct.compose(mixed_event())
    assert acct.supporting() == ["rdp", "pld"] and calls == []
    acct.epsilon(1e-5), acct.epsilon(1e-6), acct.delta(1.0)
    assert len(calls) == 1


@pytest.mark.parametrize("q,sigma", [(1e-4, 50.0), (0.01, 1.1), (0.3, 0.8), (0.9, 5.0), (0.0, 1.0), (1.0, 2.0)])
def test_poisson_gaussian_rdp_never_below_dp_accounting(q, sigma):
    orders = np.array([1.25, 1.5, 2.0, 3.0, 4.5, 7.0, 16.0, 64.0, 256.0, 1024.0])
    ref = rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    ours = curves.poisson_gaussian_rdp(q, sigma, orders)
    integer = orders == np.floor(orders)
    np.testing.assert_array_equal(ours[~integer], ref[~integer])  # dp-accounting's, unchanged
    assert np.all(ours[integer] >= ref[integer])
    assert np.all(ours[integer] - ref[integer] <= 1e-10 * np.maximum(1.0, ref[integer]))


def test_rdp_epsilon_of_poisson_gaussian_matches_dp_accounting():
    orders = backends.RDP_ORDERS[backends.RDP_ORDERS <= 512]
    event = dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.2))
    ref = rdp_privacy_accountant.RdpAccountant(orders).compose(event, 300)
    ours = A.Accountant("rdp", orders=orders).compose(event, 300)
    for delta in (1e-3, 1e-6):
        assert ref.get_epsilon(delta) <= ours.epsilon(delta) <= ref.get_epsilon(delta) * (1 + 1e-9)
