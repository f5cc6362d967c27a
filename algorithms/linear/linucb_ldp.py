"""Locally private LinUCB (Zheng, Cheng, Ye, Shen, Jin 2020) as Chowdhury & Zhou (ICML 2022) runs it (App. F, §5).

Every user perturbs her own (phi*y, phi phi^T) with the Gaussian randomizer R_Amp of Chowdhury & Zhou (ICML 2022, Alg. 2)
(`dpaudit.mechanisms.shuffle.GaussianShuffleProtocol.randomize`: N(0, sigma^2 I) on the vector,
symmetric noise with i.i.d. upper triangle on the matrix) and sends it to the server unshuffled;
the server sums and plays LinUCB (batch B = 1: Zheng et al.'s sequential algorithm; B > 1: the
Batched-Local-LinUCB of Chowdhury & Zhou 2022, Prop. F.1).

Noise: "paper": sigma = 4 sqrt(2 ln(2.5/delta0))/epsilon0 (Chowdhury & Zhou 2022, Prop. F.1 / Cor. B.3; the classical
Gaussian mechanism, claimed (epsilon0, delta0)-LDP only for epsilon0 <= 1); "code": sigma =
sqrt(ln(2.5/delta))/epsilon (the simulation code of Chowdhury & Zhou (ICML 2022), §5 footnote 7; the code also symmetrises the
matrix noise as (N+N^T)/2, which halves the off-diagonal variance: here the matrix noise keeps the
paper's copy-the-upper-triangle form at the same sigma).
"""

from __future__ import annotations

import dataclasses
import math

import dp_accounting

from dpaudit.algorithms.linear.linucb import LinearAlgorithm, Release, RunningSums, user_statistics
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol
from dpaudit.privacy import Guarantee, Privacy, accounted
from dpaudit.validation import check_choice, check_epsilon, check_open_unit

__all__ = [
    "LDP_NOISES",
    "MATRIX_SENSITIVITY",
    "VECTOR_SENSITIVITY",
    "LinUCBLDP",
    "LocalGaussianSums",
    "ldp_sigma",
]

LDP_NOISES = ("paper", "code")
VECTOR_SENSITIVITY = 2.0  # ||phi y - phi' y'||_2 <= 2 with ||phi|| <= 1, |y| <= 1
MATRIX_SENSITIVITY = math.sqrt(2.0)  # upper-triangle L2 of phi phi^T - phi' phi'^T <= its Frobenius norm <= sqrt(2)


def ldp_sigma(epsilon: float, delta: float, noise: str = "paper") -> float:
    """Per-user noise std of the local randomizer (see the module docstring for both readings).

    "paper": 4 sqrt(2 ln(2.5/delta))/epsilon, the formula of Chowdhury & Zhou 2022, Prop. F.1 evaluated as is (its
    claim needs epsilon <= 1; `LinUCBLDP.privacy` says when it does not hold).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    check_choice(noise, LDP_NOISES, "noise")
    if noise == "code":
        return math.sqrt(math.log(2.5 / delta)) / epsilon
    return 4.0 * math.sqrt(2.0 * math.log(2.5 / delta)) / epsilon


def local_message_event(sigma: float) -> dp_accounting.DpEvent:
    """One user's two Gaussian messages, sensitivities 2 (vector) and sqrt(2) (upper triangle)."""
    proto = GaussianShuffleProtocol(dim=1, num_users=1, sigma=sigma)
    return proto.local_event(VECTOR_SENSITIVITY, MATRIX_SENSITIVITY)


class LocalGaussianSums(RunningSums):
    """Release: every user's randomized messages (no shuffle), summed by the server.

    Released per batch: "messages_u" (R, B, d) and "messages_V" (R, B, d, d), the server's view.
    """

    exact = False

    def __init__(self, sigma: float, dim: int, batch: int) -> None:
        self.sigma = sigma
        self.protocol = GaussianShuffleProtocol(dim=dim, num_users=batch, sigma=sigma)

    def release(self, phis, ys, rng):
        """Randomize every user's (phi y, phi phi^T) locally and add the batch's sums of the messages."""
        m1, m2 = self.protocol.randomize(rng, *user_statistics(phis, ys))
        u, g = self.accumulate(m1.sum(axis=1), m2.sum(axis=1))
        return u, g, {"messages_u": m1, "messages_V": m2}

    def noise_std(self, horizon: int, batch: int, dim: int) -> float:
        """sigma~ = sigma sqrt(T): T users' noises are summed (Chowdhury & Zhou (ICML 2022), proof of Thm B.1)."""
        return self.sigma * math.sqrt(horizon)


@dataclasses.dataclass(frozen=True)
class LinUCBLDP(LinearAlgorithm):
    """LinUCB-LDP: local Gaussian randomizer per user, server sums (Zheng et al. 2020; Chowdhury & Zhou 2022, Prop. F.1)."""

    epsilon: float = 1.0
    delta: float = 0.1
    noise: str = "paper"
    name = "linucb-ldp"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_epsilon(self.epsilon)
        check_open_unit(self.delta, "delta")
        check_choice(self.noise, LDP_NOISES, "noise")

    @property
    def sigma(self) -> float:
        """Per-user noise std (`ldp_sigma`)."""
        return ldp_sigma(self.epsilon, self.delta, self.noise)

    def default_regularizer(self, dim: int, horizon: int) -> float | None:
        """noise='code': the authors' Lambda = 2 Gamma, Gamma = sigma sqrt(T) sqrt(d) (public code of Chowdhury & Zhou (ICML 2022), §5 footnote 7)."""
        if self.noise != "code":
            return None
        return 2.0 * self.sigma * math.sqrt(horizon) * math.sqrt(dim)

    def make_release(self, dim: int, horizon: int) -> Release:
        return LocalGaussianSums(self.sigma, dim, self.batch)

    def privacy(self, horizon: int, *, dim: int) -> Privacy:
        """Event: one user's Gaussian messages (each user sends once: unique users); corrected: its
        exact epsilon at the claim's delta (the classical-Gaussian claim is loose or, for epsilon > 1 or
        noise='code', not backed)."""
        claim = Guarantee(
            "approx", self.epsilon, self.delta, source="Zheng et al. 2020; Chowdhury & Zhou 2022, Prop. F.1 (LDP)"
        )
        notes = ["each user's messages are a Gaussian mechanism of L2 sensitivity (2, sqrt 2); unique users"]
        if self.noise == "code":
            notes.append(
                "noise='code' (the simulation constant of Chowdhury & Zhou's (ICML 2022) code for §5) does not back the claim: account the event"
            )
        elif self.epsilon > 1.0:
            notes.append("epsilon > 1: outside the classical Gaussian mechanism's range, the claim is not backed")
        event = local_message_event(self.sigma)
        corrected = accounted(event, self.delta, "exact Gaussian epsilon of the user's messages (dpaudit accountant)")
        return Privacy("user", "local", event, claim, corrected, "; ".join(notes))
