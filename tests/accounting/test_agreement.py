"""Agreement with dp-accounting where both apply."""

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from dpaudit import accounting as A
from dpaudit.accounting.backends import RDP_ORDERS

REL = dpa.NeighboringRelation


@pytest.mark.parametrize(
    "event",
    [
        dpa.GaussianDpEvent(2.0),
        dpa.LaplaceDpEvent(1.5),
        dpa.RandomizedResponseDpEvent(noise_parameter=0.4, num_buckets=3),
    ],
)
@pytest.mark.parametrize("k", [1, 50])
def test_rdp_equals_dp_accounting(event, k):
    ref = rdp_privacy_accountant.RdpAccountant(RDP_ORDERS, neighboring_relation=REL.REPLACE_ONE).compose(event, k)
    for delta in (1e-3, 1e-7):
        assert A.epsilon(dpa.SelfComposedDpEvent(event, k), delta, "rdp") == pytest.approx(
            ref.get_epsilon(delta), rel=1e-12
        )
    assert A.delta(dpa.SelfComposedDpEvent(event, k), 3.0, "rdp") == pytest.approx(ref.get_delta(3.0), rel=1e-12)


@pytest.mark.parametrize(
    "event",
    [dpa.LaplaceDpEvent(3.0), dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.2, sensitivity=2)],
)
@pytest.mark.parametrize("k", [1, 30])
def test_pld_equals_dp_accounting(event, k):
    """Equal to dp-accounting's PLD accountant, up to the FFT round-off slack dpaudit reserves
    from delta when it composes (`PldBackend.fft_slack`), which can only raise epsilon."""
    ref = pld_privacy_accountant.PLDAccountant().compose(event, k).get_epsilon(1e-6)
    ours = A.epsilon(dpa.SelfComposedDpEvent(event, k), 1e-6, "pld")
    assert ref * (1 - 1e-12) <= ours <= ref * (1 + 1e-4)


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (5.0, 30), (50.0, 2000)])
def test_gaussian_pld_is_exact_and_within_dp_accounting_discretisation(sigma, k):
    ref = pld_privacy_accountant.PLDAccountant().compose(dpa.GaussianDpEvent(sigma), k).get_epsilon(1e-5)
    ours = A.epsilon(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k), 1e-5, "pld")
    exact = dpa.get_epsilon_gaussian(sigma / math.sqrt(k), 1e-5)
    assert ours == pytest.approx(exact, rel=1e-9, abs=1e-9)
    assert ours <= ref + 1e-12 and ours == pytest.approx(ref, rel=1e-2)


def test_rr_single_release_equals_dp_accounting_pld():
    rr = dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)
    ref = pld_privacy_accountant.PLDAccountant(REL.REPLACE_ONE).compose(rr).get_epsilon(1e-5)
    assert A.epsilon(rr, 1e-5, "pld") == pytest.approx(ref, rel=1e-12)


def test_zcdp_event_rdp_equals_dp_accounting():
    z = dpa.ZCDpEvent(rho=0.05, xi=0.01)
    ref = rdp_privacy_accountant.RdpAccountant(RDP_ORDERS).compose(z, 3)
    assert A.epsilon(dpa.SelfComposedDpEvent(z, 3), 1e-6, "rdp") == pytest.approx(ref.get_epsilon(1e-6), rel=1e-12)


def test_skellam_rdp_formula_and_gaussian_limit():
    from dpaudit.accounting.curves import skellam_rdp

    # AKL 2021 Thm 3.5 at integer orders, by hand
    var, l1, l2 = 50.0, 3.0, 2.0
    for a in (2, 5, 40):
        expected = a * l2**2 / (2 * var) + min(((2 * a - 1) * l2**2 + 6 * l1) / (4 * var**2), 3 * l1 / (2 * var))
        assert skellam_rdp(np.array([float(a)]), var, l1, l2)[0] == pytest.approx(expected)
    # Chowdhury & Zhou (ICLR 2023), Thm 2 (Skellam): epsilon = 1 at large scale g = 100 tends to the Gaussian limit 4.753 (delta = 1e-5)
    g = 100.0
    sk = A.SkellamDpEvent(variance=g**2, l1_sensitivity=g, l2_sensitivity=g)
    e = A.epsilon(sk, 1e-5, "rdp")
    assert A.epsilon(dpa.GaussianDpEvent(1.0), 1e-5, "rdp") <= e == pytest.approx(4.753, rel=5e-3)


@pytest.mark.parametrize("eps,s,n,expected", [(1.0, 10, 16, 4.370), (0.5, 10, 64, 1.992), (0.1, 10, 1024, 0.341)])
def test_skellam_pld_matches_checked_values(eps, s, n, expected):
    # Dist-RDP-SE (Chowdhury & Zhou (ICLR 2023), Thm 2) per release, values checked by brute force: g = ceil(s eps sqrt(n)), Skellam variance g^2/eps^2, shift g
    g = math.ceil(s * eps * math.sqrt(n))
    sk = A.SkellamDpEvent(variance=g * g / eps**2, l1_sensitivity=g, l2_sensitivity=g)
    pld = A.epsilon(sk, 1e-5, "pld")
    assert pld == pytest.approx(expected, abs=1.5e-3)
    assert pld <= A.epsilon(sk, 1e-5, "rdp")
    # and close to the continuous Gaussian with sigma/Delta = 1/eps (4.377, 1.993, 0.341)
    assert pld == pytest.approx(A.epsilon(dpa.GaussianDpEvent(1 / eps), 1e-5, "pld"), rel=3e-3)


@pytest.mark.parametrize("shift,expected", [(9, 0.42), (18, 0.88)])
def test_binomial_count_pld_matches_checked_values(shift, expected):
    # Chowdhury & Zhou (ICML 2022)'s P_Vec (§3.3) in the authors' code (§5 footnote 7) at eps = 0.2: one label, Bin(30600, 1/4), shift ~g or ~2g
    e = A.epsilon(A.BinomialDpEvent(trials=30600, probability=0.25, sensitivity=shift), 1e-5)
    assert e == pytest.approx(expected, abs=0.01)
    assert A.supporting_accountants(A.BinomialDpEvent(trials=30600, probability=0.25, sensitivity=shift)) == [
        "approx",
        "pld",
    ]
