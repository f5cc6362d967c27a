"""Shuffle-private LinUCB (Chowdhury & Zhou, ICML 2022): Algorithm 1 with P_Amp or P_Vec.

The batched template is `dpaudit.algorithms.linear.linucb.run_batched_linucb`; at every batch end the B
users' (phi*y, phi phi^T) go through a shuffle protocol of `dpaudit.mechanisms`:
- LinUCB-SDP-Amp: `mechanisms.shuffle.GaussianShuffleProtocol` (local Gaussian randomizer, shuffler,
  summing analyzer; fast path draws the batch sum's exact law);
- LinUCB-SDP-Vec: `mechanisms.vector_sum.BitSumProtocol` (Cheu et al. bit messages with binomial
  noise; fast path draws the per-label counts), once for the d-vector and once for the d(d+1)/2
  upper-triangle labels of the matrix.

Users (Chowdhury & Zhou (ICML 2022)): "unique" (each user in one round; parallel composition over batches,
Thm 3.2 / 3.5) or "returning" (a user may appear once in every batch; the per-batch budget is
eps_m = eps/(2 sqrt(2M log(2/delta))), delta_m = delta/(2M) for advanced composition over M = T/B batches,
Thm 4.2 = E.3 / E.5).

Noise (`noise`): "paper" = the theorems' constants, evaluated even outside their stated range (the
privacy declaration then says the claim is not backed); "code" = the constants of the authors'
simulation code (Chowdhury & Zhou (ICML 2022), §5 footnote 7), which generated the paper's figures.
"""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np

from dpaudit import accounting
from dpaudit.algorithms.linear.claims import pamp_claimed_central_event, pamp_local_budget
from dpaudit.algorithms.linear.linucb import LinearAlgorithm, Release, RunningSums, user_statistics
from dpaudit.algorithms.linear.linucb_ldp import MATRIX_SENSITIVITY, VECTOR_SENSITIVITY
from dpaudit.algorithms.shuffle_claims import accounted_trials, bit_sum_event, cheu_parameters, theorem_event
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol
from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES, BitSumProtocol
from dpaudit.privacy import Guarantee, Privacy, accounted
from dpaudit.validation import check_choice, check_epsilon, check_open_unit, check_positive_int

__all__ = [
    "AMP_RETURNING_NOISES",
    "SDP_NOISES",
    "USERS",
    "AmpSums",
    "LinUCBSDPAmp",
    "LinUCBSDPVec",
    "VecSums",
    "amp_sigma",
    "returning_budget",
    "vec_parameters",
]

USERS = ("unique", "returning")
SDP_NOISES = ("paper", "code")
AMP_RETURNING_NOISES = ("paper", "derived", "code")


def returning_budget(epsilon: float, delta: float, batches: int) -> tuple[float, float]:
    """Per-batch (eps_m, delta_m) = (eps/(2 sqrt(2M log(2/delta))), delta/(2M)) (Chowdhury & Zhou (ICML 2022) proofs of E.3/E.5).

    Advanced composition (Thm E.2) of M such batches with delta' = delta/2 gives (eps, delta).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    m = check_positive_int(batches, "batches")
    return epsilon / (2.0 * math.sqrt(2.0 * m * math.log(2.0 / delta))), delta / (2.0 * m)


def amp_sigma(
    epsilon: float, delta: float, batch: int, horizon: int, users: str = "unique", noise: str = "paper"
) -> float:
    """Per-user noise std of P_Amp.

    unique, "paper": 4 sqrt(2 log(2.5B/delta)) sqrt(log(2/delta))/(eps sqrt(B)) (Thm 3.2 / B.1; valid for
    eps <= sqrt(log(2/delta)/B), i.e. eps0 <= 1, which `algorithms.linear.claims.pamp_sigma` enforces);
    returning, "paper": 16 log(2/delta) sqrt(T log(5T/delta))/(eps B) (Thm 4.2 = E.3 as printed);
    returning, "derived": Thm B.1's sigma at (eps_m, delta_m) without the paper's log(2/delta_m) ~ log(2/delta)
    simplification, 16 sqrt(T log(5T/delta) log(4T/(B delta)) log(2/delta))/(eps B) (Chowdhury & Zhou (ICML 2022), proof of Thm E.3);
    "code": sqrt(ln(2.5B/delta))/(eps sqrt(B)) (authors' code; it ignores returning users).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    b = check_positive_int(batch, "batch")
    t = check_positive_int(horizon, "horizon")
    check_choice(users, USERS, "users")
    check_choice(noise, AMP_RETURNING_NOISES if users == "returning" else SDP_NOISES, "noise")
    if noise == "code":
        return math.sqrt(math.log(2.5 * b / delta)) / (epsilon * math.sqrt(b))
    if users == "unique":
        return (
            4.0
            * math.sqrt(2.0 * math.log(2.5 * b / delta))
            * math.sqrt(math.log(2.0 / delta))
            / (epsilon * math.sqrt(b))
        )
    if noise == "paper":
        return 16.0 * math.log(2.0 / delta) * math.sqrt(t * math.log(5.0 * t / delta)) / (epsilon * b)
    return (
        16.0
        * math.sqrt(t * math.log(5.0 * t / delta) * math.log(4.0 * t / (b * delta)) * math.log(2.0 / delta))
        / (epsilon * b)
    )


def vec_parameters(
    epsilon: float, delta: float, batch: int, dim: int, horizon: int, users: str = "unique", noise: str = "paper"
) -> tuple[int, int, float]:
    """(g, b, p) of P_Vec.

    unique, "paper": `algorithms.shuffle_claims.cheu_parameters` (Thm 3.5 / C.1, eps <= 15, delta < 1/2);
    returning, "paper": g as above, b = ceil(10^7 log(2/delta) g^2 T log^2(8T(d^2+1)/delta)/(eps^2 B^2))
    (Thm 4.2 = E.5 as printed);
    "code": g = ceil(max(2 sqrt(B), d, 4)) (the code keeps it fractional), b = floor(s g^2 ln^2(d/delta)/(eps^2 B))
    with the code's tuned s = 1 for eps < 1 and s = 10 otherwise (public code of Chowdhury & Zhou (ICML 2022), §5 footnote 7); raises if b = 0 (the
    code's truncation to no noise at all).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    b_users = check_positive_int(batch, "batch")
    d = check_positive_int(dim, "dim")
    t = check_positive_int(horizon, "horizon")
    check_choice(users, USERS, "users")
    check_choice(noise, SDP_NOISES, "noise")
    g_real = max(2.0 * math.sqrt(b_users), d, 4)
    if noise == "code":
        scale = 1.0 if epsilon < 1.0 else 10.0
        bits = math.floor(scale * g_real**2 * math.log(d / delta) ** 2 / (epsilon**2 * b_users))
        if bits < 1:
            raise ValueError(
                f"epsilon={epsilon!r}: the authors' code formula gives b = 0 noise bits (no privacy); use noise='paper'"
            )
        return math.ceil(g_real), bits, 0.25
    if users == "unique":
        return cheu_parameters(epsilon, delta, b_users, d)
    g = math.ceil(g_real)
    bits = math.ceil(
        1e7
        * math.log(2.0 / delta)
        * g
        * g
        * t
        * math.log(8.0 * t * (d * d + 1) / delta) ** 2
        / (epsilon**2 * b_users**2)
    )
    return g, bits, 0.25


class AmpSums(RunningSums):
    """Release through P_Amp: per batch (u~_m, V~_m) = analyzer sums; cumulative sums returned.

    Released per batch: "u" (R, d) and "V" (R, d, d), the analyzer's outputs; with `per_message`
    every message is randomized and shuffled (no fast path) and the analyzer's whole view is
    released too: "shuffled_u" (R, B, d) and "shuffled_V" (R, B, d, d), the SDP observable.
    """

    exact = False

    def __init__(self, sigma: float, dim: int, batch: int, per_message: bool = False) -> None:
        self.protocol = GaussianShuffleProtocol(dim=dim, num_users=batch, sigma=sigma)
        self.per_message = per_message

    def release(self, phis, ys, rng):
        """Run P_Amp on the batch's users (message by message when `per_message`) and add its sums."""
        vec, mat = user_statistics(phis, ys)
        stats: dict[str, np.ndarray] = {}
        if self.per_message:
            y1, y2 = self.protocol.shuffle(rng, *self.protocol.randomize(rng, vec, mat))
            u, v = self.protocol.analyze(y1, y2)
            stats = {"shuffled_u": y1, "shuffled_V": y2}
        else:
            u, v = self.protocol.run(rng, vec, mat)
        stats.update(u=u, V=v)
        return (*self.accumulate(u, v), stats)

    def noise_std(self, horizon: int, batch: int, dim: int) -> float:
        """sigma~ = sigma sqrt(T) (Chowdhury & Zhou (ICML 2022), proof of Thm B.1: T per-user noises summed)."""
        return self.protocol.sigma * math.sqrt(horizon)


class VecSums(RunningSums):
    """Release through P_Vec: the vector and the upper triangle of the matrix, each a `BitSumProtocol`.

    Released per batch: "u" (R, d), "V" (R, d, d) (the analyzer's outputs).
    """

    exact = False

    def __init__(
        self, g: int, b: int, p: float, dim: int, batch: int, rng_range: str, per_message: bool = False
    ) -> None:
        self.vector = BitSumProtocol(num_users=batch, num_labels=dim, g=g, b=b, p=p, range=rng_range)
        self.matrix = BitSumProtocol(num_users=batch, num_labels=dim * (dim + 1) // 2, g=g, b=b, p=p, range=rng_range)
        self.per_message = per_message

    def release(self, phis, ys, rng):
        """Clip the users' statistics to [-1, 1], run P_Vec on the vector and the matrix, and add the sums."""
        vec, mat = (np.clip(a, -1.0, 1.0) for a in user_statistics(phis, ys))
        u = self.vector.sum_vectors(rng, vec, self.per_message)
        v = self.matrix.sum_matrices(rng, mat, self.per_message)
        return (*self.accumulate(u, v), {"u": u, "V": v})

    def noise_std(self, horizon: int, batch: int, dim: int) -> float:
        """sigma~ = sqrt(M * per-batch variance bound) (Chowdhury & Zhou (ICML 2022), proof of Thm C.1)."""
        return math.sqrt(max(horizon // batch, 1) * self.vector.noise_variance_bound())


@dataclasses.dataclass(frozen=True)
class _ShuffleLinUCB(LinearAlgorithm):
    batch: int = 20
    epsilon: float = 1.0
    delta: float = 0.1
    users: str = "unique"
    noise: str = "paper"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_epsilon(self.epsilon)
        check_open_unit(self.delta, "delta")
        check_choice(self.users, USERS, "users")

    def batches(self, horizon: int) -> int:
        return max(check_positive_int(horizon, "horizon") // self.batch, 1)


@dataclasses.dataclass(frozen=True)
class LinUCBSDPAmp(_ShuffleLinUCB):
    """LinUCB-SDP-Amp: Algorithm 1 with P_Amp (Chowdhury & Zhou 2022, §3.2, Thm 3.2; returning users Thm 4.2(i)).

    per_message: run the protocol message by message and release the shuffled view (for audits;
    the same output distribution of the sums as the fast path).
    """

    per_message: bool = False
    name = "linucb-sdp-amp"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.noise, AMP_RETURNING_NOISES if self.users == "returning" else SDP_NOISES, "noise")

    def sigma(self, horizon: int) -> float:
        """Per-user noise std of P_Amp over `horizon` users (`amp_sigma`)."""
        return amp_sigma(self.epsilon, self.delta, self.batch, horizon, self.users, self.noise)

    def default_regularizer(self, dim: int, horizon: int) -> float | None:
        """noise='code': the authors' Lambda = 2 Gamma, Gamma = sigma sqrt(T) sqrt(d) (public code of Chowdhury & Zhou (ICML 2022), §5 footnote 7)."""
        if self.noise != "code":
            return None
        return 2.0 * self.sigma(horizon) * math.sqrt(horizon) * math.sqrt(dim)

    def make_release(self, dim: int, horizon: int) -> Release:
        return AmpSums(self.sigma(horizon), dim, self.batch, self.per_message)

    def privacy(self, horizon: int, *, dim: int) -> Privacy:
        """Claim (eps, delta)-SDP; corrected: Lemma B.4's certified (eps~, delta~) where it applies, else
        the exact epsilon of the local messages at the claim's delta (no amplification credited: valid).

        event: one user's local Gaussian messages (a valid bound without amplification: the shuffled
        batch is a post-processing of them); lower_event: the batch sum (a post-processing of the
        shuffled view, so its epsilon lower-bounds the view's). Returning users compose both over M.
        """
        protocol = GaussianShuffleProtocol(dim=dim, num_users=self.batch, sigma=self.sigma(horizon))
        local = protocol.local_event(VECTOR_SENSITIVITY, MATRIX_SENSITIVITY)
        batch_sum = protocol.sum_event(VECTOR_SENSITIVITY, MATRIX_SENSITIVITY)
        m = self.batches(horizon)
        source = "Chowdhury & Zhou 2022 Thm 3.2 (O(eps, delta)-SDP)"
        eps_b, delta_b = self.epsilon, self.delta
        relation = "user"
        if self.users == "returning":
            source = "Chowdhury & Zhou 2022 Thm 4.2(i) / E.3 (advanced composition over M batches)"
            eps_b, delta_b = returning_budget(self.epsilon, self.delta, m)
            local = dp_accounting.SelfComposedDpEvent(local, m)
            batch_sum = dp_accounting.SelfComposedDpEvent(batch_sum, m)
            relation = "returning-user"
        claim = Guarantee("approx", self.epsilon, self.delta, source=source)
        notes = []
        corrected = None
        implied: list[tuple[str, Guarantee]] = [
            ("jdp", Guarantee("approx", self.epsilon, self.delta, source="billboard lemma"))
        ]
        if self.noise == "code":
            notes.append("noise='code' (authors' simulation constant) does not back the claim: account the event")
        else:
            try:
                eps0, delta0 = pamp_local_budget(eps_b, delta_b, self.batch)
            except ValueError as exc:
                notes.append(f"Thm B.1's range fails per batch ({exc}); the claim is not backed")
            else:
                implied.append(("ldp", Guarantee("approx", eps0, delta0, source="Remark 3.4")))
                try:
                    cert = pamp_claimed_central_event(protocol, eps0, delta0, delta_b / 2.0)
                except ValueError as exc:
                    notes.append(f"Lemma B.4 does not apply ({exc})")
                else:
                    if self.users == "unique":
                        corrected = Guarantee(
                            "approx", cert.epsilon, cert.delta, source="Lemma B.4 certified (eps~, delta~)"
                        )
                    else:
                        notes.append(
                            f"per batch Lemma B.4 certifies ({cert.epsilon:.4g}, {cert.delta:.3g}), not "
                            f"(eps_m, delta_m) = ({eps_b:.4g}, {delta_b:.3g})"
                        )
        no_amp = accounted(local, self.delta, "the user's local Gaussian messages, no amplification credited")
        if no_amp is not None:
            implied.append(("no-amplification", no_amp))
            if corrected is None:
                corrected = no_amp
        notes.append("event = the user's local Gaussian messages (no amplification credited); lower_event = batch sum")
        return Privacy(
            relation, "shuffle", local, claim, corrected, "; ".join(notes), lower_event=batch_sum, implied=dict(implied)
        )


_EXACT_COUNTS = {
    "pld": "exact binomial counts of the batch: privacy loss distribution of every label's count, composed "
    "(dpaudit pld accountant)",
    "approx": "exact binomial counts of the batch: every label's exact (eps, delta) profile, composed through one "
    "point each (dpaudit approx accountant)",
}


def _exact_counts(event: dp_accounting.DpEvent, delta: float) -> Guarantee | None:
    """The least epsilon at `delta` of the pld and approx accountants on the exact binomial counts, naming the one
    that gives it; None where neither answers (as `dpaudit.privacy.accounted`: never a made-up number)."""
    answers: list[tuple[float, str]] = []
    for accountant, source in _EXACT_COUNTS.items():
        try:
            answers.append((float(accounting.epsilon(event, delta, accountant)), source))
        except (accounting.UnsupportedEventError, ValueError, OverflowError):
            continue
    if not answers:
        return None
    eps, source = min(answers, key=lambda answer: answer[0])  # a tie: the first (pld)
    return Guarantee("approx", max(eps, 1e-12), delta, source=source)  # (0, delta)-DP as a tiny epsilon: looser


@dataclasses.dataclass(frozen=True)
class LinUCBSDPVec(_ShuffleLinUCB):
    """LinUCB-SDP-Vec: Algorithm 1 with P_Vec (Chowdhury & Zhou 2022, §3.3, Thm 3.5; returning users Thm 4.2(ii)).

    vec_range: "paper" (R(w, Delta) on w in [0, 2 Delta]: count sensitivity 2g) or "normalized" (2 Delta passed,
    sensitivity g); see `mechanisms.vector_sum`.
    """

    vec_range: str = "paper"
    name = "linucb-sdp-vec"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.noise, SDP_NOISES, "noise")
        check_choice(self.vec_range, VECTOR_SUM_RANGES, "vec_range")

    def parameters(self, dim: int, horizon: int) -> tuple[int, int, float]:
        """(g, b, p) of P_Vec for dimension `dim` over `horizon` users (`vec_parameters`)."""
        return vec_parameters(self.epsilon, self.delta, self.batch, dim, horizon, self.users, self.noise)

    def default_regularizer(self, dim: int, horizon: int) -> float | None:
        """noise='code': the authors' Lambda = 2 Gamma, Gamma = (1/4) log(d/delta)/(eps sqrt(B)) sqrt(T) sqrt(d)
        (public code of Chowdhury & Zhou (ICML 2022), §5 footnote 7)."""
        if self.noise != "code":
            return None
        proxy = math.log(dim / self.delta) / (self.epsilon * math.sqrt(self.batch))
        return 2.0 * 0.25 * proxy * math.sqrt(horizon) * math.sqrt(dim)

    def make_release(self, dim: int, horizon: int) -> Release:
        g, b, p = self.parameters(dim, horizon)
        return VecSums(g, b, p, dim, self.batch, self.vec_range)

    def privacy(self, horizon: int, *, dim: int) -> Privacy:
        """Claim (eps, delta)-SDP (Thm 3.5 / 4.2(ii)).

        event: the exact mechanism of one batch, the vector and matrix invocations (`BitSumProtocol.event`:
        Bin(B b, p) on every label's count, shift <= cap, from the parameters by `shuffle_claims.bit_sum_event`, which
        accounts at most 2^52 noise bits per count: sound, looser beyond), composed; over the M batches for
        returning users. corrected: its epsilon at the claim's delta, the least of dpaudit's accountants: the pld
        accountant's privacy loss distribution of the exact counts (on a grid of losses for the theorem's b ~ 10^9,
        `dpaudit.accounting.binomial_loss`; the tightest sound value) or approx's exact per-label profiles; where
        none answers, the theorem applied to the real count range (`theorem_event`, basic composition).
        implied "theorem": that theorem bound (a loose sufficient condition; doubled eps for range="paper").
        """
        g, b, p = self.parameters(dim, horizon)
        rel = VecSums(g, b, p, dim, self.batch, self.vec_range)
        m = self.batches(horizon)
        delta_b = self.delta if self.users == "unique" else returning_budget(self.epsilon, self.delta, m)[1]
        notes = [f"g={g}, b={b}, p={p}, range={self.vec_range}, count sensitivity {rel.vector.count_sensitivity()}"]
        per_batch = dp_accounting.ComposedDpEvent(
            [bit_sum_event(self.batch, k, g, b, p, self.vec_range) for k in (dim, dim * (dim + 1) // 2)]
        )
        if accounted_trials(self.batch * b) < self.batch * b:
            notes.append(
                f"each count accounted with 2^52 of its {self.batch * b:.3g} noise bits (a count with fewer "
                "is at least as revealing)"
            )
        relation, source, event = "user", "Chowdhury & Zhou 2022 Thm 3.5 ((eps, delta)-SDP)", per_batch
        if self.users == "returning":
            relation, source = "returning-user", "Chowdhury & Zhou 2022 Thm 4.2(ii) / E.5"
            event = dp_accounting.SelfComposedDpEvent(per_batch, m)
        if self.noise == "code":
            notes.append("noise='code' (authors' simulation constants) does not back the claim")
        claim = Guarantee("approx", self.epsilon, self.delta, source=source)
        implied: list[tuple[str, Guarantee]] = [
            ("jdp", Guarantee("approx", self.epsilon, self.delta, source="billboard lemma"))
        ]
        theorem = None
        try:
            parts = [theorem_event(rel.vector, dim, delta_b), theorem_event(rel.matrix, dim, delta_b)]
        except ValueError as exc:
            notes.append(f"the papers' theorem gives no guarantee for these (g, b) ({exc})")
        else:
            if all(hasattr(e, "epsilon") for e in parts):
                k = 1 if self.users == "unique" else m
                theorem = Guarantee(
                    "approx",
                    k * sum(e.epsilon for e in parts),
                    min(k * sum(e.delta for e in parts), 0.999999),
                    source="the theorem on the real count range, basic composition",
                )
                implied.append(("theorem", theorem))
        corrected = _exact_counts(event, self.delta)
        if corrected is None:
            notes.append("the accountant gives no epsilon for the exact binomial event here")
            corrected = theorem
        return Privacy(relation, "shuffle", event, claim, corrected, "; ".join(notes), implied=dict(implied))
