"""Exact tests: closed forms, and the composition theorems against brute force on small cases."""

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import dp_event

from dpaudit import accounting as A
from dpaudit.accounting import composition
from dpaudit.accounting.guarantees import pure_delta, zcdp_epsilon
from dpaudit.accounting.leaves import rr_epsilon


def test_k_fold_laplace_pure_epsilon():
    for scale, k in [(2.0, 1), (0.5, 7), (10.0, 1000)]:
        e = dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(scale), k)
        assert A.epsilon(e, 0.0, "pure") == pytest.approx(k / scale, rel=1e-12)
        assert A.pure_guarantee(e).epsilon == pytest.approx(k / scale, rel=1e-12)


def test_discrete_laplace_and_epsilon_delta_pure_epsilon():
    e = dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.25, sensitivity=4)
    assert A.epsilon(dpa.SelfComposedDpEvent(e, 3), 0.0, "pure") == pytest.approx(3.0)
    assert A.epsilon(A.EpsilonDeltaDpEvent(epsilon=0.7), 0.0, "pure") == pytest.approx(0.7)


def test_parallel_is_the_worst_branch():
    a = dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1.0), 3)
    b = dpa.LaplaceDpEvent(0.5)
    par = A.ParallelComposedDpEvent(events=[a, b])
    assert A.epsilon(par, 0.0, "pure") == pytest.approx(3.0)
    seq = dpa.ComposedDpEvent([par, dpa.LaplaceDpEvent(1.0)])
    assert A.epsilon(seq, 0.0, "pure") == pytest.approx(4.0)


def test_gaussian_zcdp_rho():
    for sigma, k in [(1.0, 1), (3.0, 7), (20.0, 10_000)]:
        z = A.zcdp_guarantee(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k))
        assert z.rho == pytest.approx(k / (2 * sigma**2), rel=1e-12)
        assert z.xi == 0.0


def test_discrete_gaussian_rho_and_pure_to_zcdp():
    z = A.zcdp_guarantee(A.DiscreteGaussianDpEvent(sigma=4.0, sensitivity=2.0))
    assert z.rho == pytest.approx(4.0 / 32.0)
    z = A.zcdp_guarantee(dpa.LaplaceDpEvent(2.0))  # eps = 0.5 -> rho = eps^2/2
    assert z.rho == pytest.approx(0.125)


def test_zcdp_conversion_beats_bun_steinke_closed_form():
    for rho in [1e-4, 0.01, 0.5, 10.0]:
        for delta in [1e-3, 1e-6, 1e-10]:
            e = zcdp_epsilon(rho, delta)
            assert e <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12


def test_randomized_response_epsilon():
    for p, k in [(0.5, 2), (0.2, 4), (0.9, 10)]:
        assert rr_epsilon(p, k) == pytest.approx(math.log((1 - p + p / k) / (p / k)))
    e = dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)  # eps0 = ln 3
    assert A.epsilon(e, 0.0, "pure") == pytest.approx(math.log(3))
    # binary RR is exactly the pure_delta profile; PLD (pessimistic) agrees to discretisation
    for eps in [0.2, 0.6, 1.0]:
        exact = (3 - math.exp(eps)) / 4
        assert pure_delta(math.log(3), eps) == pytest.approx(exact)
        assert A.delta(e, eps, "pld") == pytest.approx(exact, abs=1e-3)
        assert A.delta(e, eps, "pld") >= exact - 1e-12


# ---- brute force: k-fold composition of the (eps0, delta0) dominating pair


def _brute_force_delta(eps_list, delta_list, epsilon):
    """Hockey-stick divergence at e^epsilon of the product of (eps_i, delta_i) dominating pairs
    P_i = (delta_i, (1-delta_i) e^eps_i/(1+e^eps_i), (1-delta_i)/(1+e^eps_i), 0), Q_i mirrored,
    by enumerating all 4^k outcomes."""
    p = q = np.ones(1)
    for e, d in zip(eps_list, delta_list):
        hi, lo = (1 - d) * math.exp(e) / (1 + math.exp(e)), (1 - d) / (1 + math.exp(e))
        p = np.kron(p, [d, hi, lo, 0.0])
        q = np.kron(q, [0.0, lo, hi, d])
    return float(np.maximum(p - math.exp(epsilon) * q, 0.0).sum())


@pytest.mark.parametrize("eps0,delta0,k", [(0.5, 0.0, 6), (1.0, 0.0, 5), (0.3, 1e-3, 5), (1.2, 1e-2, 4)])
def test_kov_optimal_matches_brute_force(eps0, delta0, k):
    opt = composition.OptimalHomogeneous(eps0, delta0, k)
    for epsilon in np.linspace(0.0, k * eps0 * 1.05, 23):  # grid points and between them
        assert opt.delta(epsilon) == pytest.approx(_brute_force_delta([eps0] * k, [delta0] * k, epsilon), abs=1e-13)
    for delta in [0.3, 0.05, 0.02]:
        e = opt.epsilon(delta)
        if math.isfinite(e):
            assert _brute_force_delta([eps0] * k, [delta0] * k, e) <= delta + 1e-12


@pytest.mark.parametrize("eps0,delta0,k", [(0.5, 0.0, 6), (0.2, 1e-4, 8), (1.0, 1e-3, 5)])
def test_drv_and_kov_heterogeneous_are_valid(eps0, delta0, k):
    for delta in [0.2, 0.05, 0.01]:
        for e in (
            composition.drv_epsilon(eps0, delta0, k, delta),
            composition.kov_heterogeneous_epsilon([eps0], [delta0], [k], delta),
        ):
            if math.isfinite(e):
                assert _brute_force_delta([eps0] * k, [delta0] * k, e) <= delta + 1e-12
    for epsilon in [0.5, 1.0, 2.0]:
        exact = _brute_force_delta([eps0] * k, [delta0] * k, epsilon)
        assert composition.drv_delta(eps0, delta0, k, epsilon) >= exact - 1e-12
        assert composition.kov_heterogeneous_delta([eps0], [delta0], [k], epsilon) >= exact - 1e-12


def test_drv_formula():
    eps0, k, dp = 0.1, 100, 1e-6
    expected = eps0 * math.sqrt(2 * k * math.log(1 / dp)) + k * eps0 * math.expm1(eps0)
    assert composition.drv_epsilon(eps0, 0.0, k, dp) == pytest.approx(expected)


def test_kov_heterogeneous_matches_brute_force_validity():
    eps, dels = [0.3, 0.3, 0.8, 1.1, 0.5], [0.0, 1e-3, 0.0, 1e-3, 0.0]
    for delta in [0.3, 0.1, 0.03]:
        e = composition.kov_heterogeneous_epsilon(eps, dels, [1] * 5, delta)
        assert _brute_force_delta(eps, dels, e) <= delta + 1e-12
        # the approx accountant's answer for the heterogeneous composition is valid as well
        event = dpa.ComposedDpEvent([A.EpsilonDeltaDpEvent(epsilon=x, delta=d) for x, d in zip(eps, dels)])
        e2 = A.epsilon(event, delta, "approx")
        assert _brute_force_delta(eps, dels, e2) <= delta + 1e-12


def test_kov_in_log_space_for_large_k():
    # dp-accounting's `advanced_composition` overflows at eps0 = 0.1, k = 1000
    opt = composition.OptimalHomogeneous(0.1, 0.0, 1000)
    e = opt.epsilon(1e-5)
    assert 0 < e < composition.drv_epsilon(0.1, 0.0, 1000, 1e-5)
    assert opt.delta(e) <= 1e-5
    assert math.isfinite(composition.OptimalHomogeneous(0.01, 0.0, 200_000).epsilon(1e-6))
    # k-fold RR is exactly the optimal composition: PLD agrees within discretisation
    rr = dpa.RandomizedResponseDpEvent(noise_parameter=2 / (math.exp(0.1) + 1), num_buckets=2)
    pld = A.epsilon(dpa.SelfComposedDpEvent(rr, 1000), 1e-5, "pld")
    # PLD is pessimistic, off by at most k * discretisation interval
    assert e <= pld + 1e-9 and pld - e <= 1000 * 1e-4
