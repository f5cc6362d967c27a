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

For P_Vec (§3.3, the protocol of LinUCB-SDP-Vec) `pvec_exact_epsilon` is the tightest sound figure dpaudit
computes: the privacy loss distribution of the exact binomial counts of a batch (the d vector labels and
the d(d+1)/2 matrix labels, `dpaudit.algorithms.shuffle_claims.bit_sum_pld`), composed over the batches a
returning user joins. The `pld` accountant gives the same figure for LinUCB-SDP-Vec's declared event (both
build the counts' PLD on a grid of losses, `dpaudit.accounting.binomial_loss`), which its corrected guarantee
states. The approx accountant composes the same counts through one (ε0, δ0) point of each label's exact profile
(Kairouz, Oh, Viswanath, ICML 2015), which is 3-4x looser at δ <= 1e-3.
"""

from __future__ import annotations

import math

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.algorithms.shuffle_claims import bit_sum_pld
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol, fmt20_amplification, gaussian_ldp_sigma
from dpaudit.validation import check_delta, check_epsilon, check_open_unit, check_positive_int

__all__ = [
    "pamp_claimed_central_event",
    "pamp_claimed_local_event",
    "pamp_local_budget",
    "pamp_protocol",
    "pamp_sigma",
    "pvec_exact_epsilon",
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


def pvec_exact_epsilon(
    g: int,
    b: int,
    p: float,
    dim: int,
    batch_size: int,
    delta: float,
    batches: int = 1,
    range: str = "paper",
    value_discretization_interval: float | None = None,
) -> float:
    """ε at δ of LinUCB-SDP-Vec's released counts for one user (Chowdhury & Zhou (ICML 2022), §3.3, Algs. 5-7):
    every one of the d + d(d+1)/2 labels of a batch carries Bin(B·b, p) noise on a count the user moves by
    at most cap (2g for range="paper"), so one batch is `bit_sum_pld(B, d + d(d+1)/2, g, b, p, range)`
    (a pessimistic PLD of the exact mechanism), self-composed over the `batches` a returning user joins
    (Thm 4.2; 1 for unique users). Raises where B·b > 2⁵² (no exact loss grid there)."""
    d = check_positive_int(dim, "dim")
    delta = check_delta(delta, "delta")
    m = check_positive_int(batches, "batches")
    batch = bit_sum_pld(batch_size, d + d * (d + 1) // 2, g, b, p, range, value_discretization_interval)
    pld = batch if m == 1 else batch.self_compose(m)
    return float(pld.get_epsilon_for_delta(delta))
