"""Chowdhury & Zhou's (ICML 2022) calibration and claims for P_Amp (§3.2, App. B.1), the protocol of LinUCB-SDP-Amp.

`dpaudit.mechanisms.shuffle.GaussianShuffleProtocol` is the protocol for any σ (local Gaussian
randomizer, shuffler, summing analyzer) with its exact events. What lives here is what the paper
states about it (§3.2, App. B.1):

- Thm 3.2 / B.1 (unique users): a batch of B users is (ε, δ)-SDP with the local budget
  ε0 = ε√(B/log(2/δ)), δ0 = δ/B (proof of Thm B.1, δ' = δ/2), valid for ε <= √(log(2/δ)/B) (ε0 <= 1),
  and σ = 4√(2 log(2.5/δ0))/ε0 (the classical Gaussian mechanism for the two releases, Cor. B.3);
- Remark 3.4 / Cor. B.3: each user's messages are (ε0, δ0)-LDP;
- Lemma B.4 (Feldman, McMillan, Talwar 2020, Thm 3.8, as the paper states it): shuffling B such
  messages certifies (ε̃, δ̃) = `fmt20_amplification(ε0, δ0, B, δ')`.
"""

from __future__ import annotations

import math

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol, fmt20_amplification, gaussian_ldp_sigma
from dpaudit.validation import check_epsilon, check_open_unit, check_positive_int

__all__ = [
    "pamp_local_budget",
    "pamp_sigma",
    "pamp_protocol",
    "pamp_claimed_local_event",
    "pamp_claimed_central_event",
]


def pamp_local_budget(epsilon: float, delta: float, batch_size: int) -> tuple[float, float]:
    """Chowdhury & Zhou 2022, Thm 3.2 / B.1 (proof): ε0 = ε√(B/log(2/δ)), δ0 = δ/B, for ε <= √(log(2/δ)/B)."""
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    batch_size = check_positive_int(batch_size, "batch_size")
    limit = math.sqrt(math.log(2.0 / delta) / batch_size)
    if epsilon > limit:
        raise ValueError(
            f"epsilon must be <= sqrt(log(2/delta)/batch_size) = {limit:.6g} (Chowdhury & Zhou 2022, Thm B.1), got {epsilon!r}"
        )
    return epsilon * math.sqrt(batch_size / math.log(2.0 / delta)), delta / batch_size


def pamp_sigma(epsilon: float, delta: float, batch_size: int) -> float:
    """σ1 = σ2 = 4√(2 log(2.5B/δ))·√(log(2/δ))/(ε√B): Chowdhury & Zhou 2022, Thm 3.2 / B.1 (unique users)."""
    return gaussian_ldp_sigma(*pamp_local_budget(epsilon, delta, batch_size))


def pamp_protocol(epsilon: float, delta: float, dim: int, batch_size: int) -> GaussianShuffleProtocol:
    """P_Amp with the σ of Chowdhury & Zhou 2022, Thm 3.2 / B.1 for a target (ε, δ) per batch of `batch_size` users."""
    return GaussianShuffleProtocol(dim=dim, num_users=batch_size, sigma=pamp_sigma(epsilon, delta, batch_size))


def pamp_claimed_local_event(epsilon0: float, delta0: float) -> EpsilonDeltaDpEvent:
    """The paper's local claim: (ε0, δ0)-LDP (Chowdhury & Zhou 2022, Remark 3.4 / Cor. B.3)."""
    return EpsilonDeltaDpEvent(epsilon=check_epsilon(epsilon0, "epsilon0"), delta=check_open_unit(delta0, "delta0"))


def pamp_claimed_central_event(
    protocol: GaussianShuffleProtocol, epsilon0: float, delta0: float, delta_prime: float
) -> EpsilonDeltaDpEvent:
    """The paper's certified central guarantee (ε̃, δ̃) of Lemma B.4 for the claimed (ε0, δ0) of a batch.

    With Chowdhury & Zhou's (ICML 2022) choice δ' = δ/2 (proof of Thm B.1). Raises ValueError outside the
    lemma's range (e.g. the paper's experiments, B = 20, §5) or when it gives δ̃ >= 1.
    """
    eps, delta = fmt20_amplification(epsilon0, delta0, protocol.num_users, delta_prime)
    if delta >= 1.0:
        raise ValueError(f"Lemma B.4 gives delta={delta:.3g} >= 1 here: no guarantee (lower delta0)")
    return EpsilonDeltaDpEvent(epsilon=eps, delta=delta)
