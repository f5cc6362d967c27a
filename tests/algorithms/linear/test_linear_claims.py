"""Chowdhury & Zhou's (ICML 2022) statements about P_Amp (§3.2, App. B.1): the local budget and σ of Thm 3.2 / B.1,
the claimed LDP (Remark 3.4) and the certified central guarantee of Lemma B.4. Exact tests on the paper's test vectors."""

import math

import pytest

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.algorithms.linear.claims import (
    pamp_claimed_central_event,
    pamp_claimed_local_event,
    pamp_local_budget,
    pamp_protocol,
    pamp_sigma,
)
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol, fmt20_amplification, fmt20_amplification_applies


@pytest.mark.parametrize(
    "batch, delta, eps, sigma, eps_tilde, delta_tilde",
    [  # Chowdhury & Zhou (ICML 2022), test vectors (Lemma B.4 as reconstructed; delta' = delta/2)
        (1000, 1e-6, 0.12045, 26.31, 0.576, 3.8e-6),
        (10000, 1e-6, 0.01, 105.43, 0.0465, 3.3e-6),
        (5000, 1e-5, 0.02, 63.96, 0.0975, 3.3e-5),
    ],
)
def test_pamp_matches_the_test_vectors(batch, delta, eps, sigma, eps_tilde, delta_tilde):
    eps0, delta0 = pamp_local_budget(eps, delta, batch)
    assert delta0 == pytest.approx(delta / batch)
    assert pamp_sigma(eps, delta, batch) == pytest.approx(sigma, rel=2e-3)
    closed = (
        4 * math.sqrt(2 * math.log(2.5 * batch / delta)) * math.sqrt(math.log(2 / delta)) / (eps * math.sqrt(batch))
    )
    assert pamp_sigma(eps, delta, batch) == pytest.approx(closed, rel=1e-12)
    et, dt = fmt20_amplification(eps0, delta0, batch, delta / 2)
    assert et == pytest.approx(eps_tilde, rel=2e-3)
    assert dt == pytest.approx(delta_tilde, rel=0.03)
    claimed = pamp_claimed_central_event(pamp_protocol(eps, delta, 3, batch), eps0, delta0, delta / 2)
    assert claimed == EpsilonDeltaDpEvent(epsilon=et, delta=dt)


def test_pamp_outside_the_papers_range_is_refused():
    # the paper's experiment (B = 20, delta = 0.1): eps > sqrt(log(2/delta)/B) and Lemma B.4 fails
    with pytest.raises(ValueError, match="epsilon"):
        pamp_local_budget(1.0, 0.1, 20)
    eps0, delta0 = pamp_local_budget(0.2, 0.1, 20)
    assert not fmt20_amplification_applies(eps0, 20, 0.05)
    with pytest.raises(ValueError, match=r"Lemma B.4"):
        fmt20_amplification(eps0, delta0, 20, 0.05)
    proto = pamp_protocol(0.01, 1e-6, 4, 20)
    with pytest.raises(ValueError, match=r"Lemma B.4"):
        pamp_claimed_central_event(proto, eps0, delta0, 0.05)


def test_pamp_protocol_and_local_claim():
    proto = pamp_protocol(0.01, 1e-6, 4, 10000)
    assert proto == GaussianShuffleProtocol(dim=4, num_users=10000, sigma=pamp_sigma(0.01, 1e-6, 10000))
    assert pamp_claimed_local_event(0.9, 1e-9) == EpsilonDeltaDpEvent(0.9, 1e-9)
    with pytest.raises(ValueError, match="delta0"):
        pamp_claimed_local_event(0.9, 0.0)
    # the claimed local epsilon is what the classical Gaussian calibration gives: the exact one is below it
    eps0, delta0 = pamp_local_budget(0.01, 1e-6, 10000)
    assert proto.local_epsilon(delta0) < eps0


def test_mechanisms_no_longer_carry_the_papers_p_amp_claims():
    import dpaudit.mechanisms as mechanisms
    import dpaudit.mechanisms.shuffle as shuffle

    for name in ("pamp_local_budget", "pamp_sigma"):
        assert not hasattr(mechanisms, name) and not hasattr(shuffle, name), name
    for method in ("from_privacy", "claimed_local_event", "claimed_central_event"):
        assert not hasattr(GaussianShuffleProtocol, method), method
