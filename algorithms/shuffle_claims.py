"""The papers' calibration and claimed guarantee of the shuffled bit-sum protocol (linear and GLM families).

`dpaudit.mechanisms.vector_sum.BitSumProtocol` is Cheu, Joseph, Mao, Peng's shuffled vector sum
("Shuffle private stochastic convex optimization", ICLR 2022) for any (g, b, p), with its exact
accounting (`BitSumProtocol.event`). What lives here is what two bandit papers *state* about it:

- Chowdhury & Zhou, "Shuffle Private Linear Contextual Bandits" (ICML 2022), §3.3 (P_Vec) and
  Thm 3.5, restated as Thm C.1: p = 1/4, g = max{2√B, d, 4}, b = 24·10⁴ g² log²(4(d²+1)/δ)/(ε² B)
  make one batch (ε, δ)-SDP for ε ∈ (0, 15], δ ∈ (0, 1/2);
- Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits"
  (arXiv), App. S, eq. 127 and Lemmas S.1/S.2 (the same parameters for ShuffleGLM's matrix sum),
  and App. T, Alg. 7 / Lemma T.2 (P_GD: one such vector sum per round at (ε_it, δ_it)).

The claim is a sufficient condition, very loose; `corrected_epsilon` applies the same statement to
the count range the randomizer really uses (w = v + Δ ∈ [0, 2Δ], so x̂ ∈ [0, cap]).

Accounting needs no simulation: `bit_sum_event` and `bit_sum_theorem_event` describe one invocation
from (n, labels, g, b, p, range) in Python integers, so n·b may exceed 2⁶³ (P_GD's rounds at the papers'
horizons: b ∝ 1/ε_it² ∝ T_it) where `BitSumProtocol`, whose counts are int64, refuses to be built.
`binomial_loss_pld` (`dpaudit.accounting.binomial_loss`, re-exported here) is the privacy loss distribution of
one label's count for any number of noise bits up to 2⁵² (the papers' b ~ 10⁹ included), built on a grid of
privacy losses instead of enumerating the counts; the `pld` accountant uses it for such counts.
"""

from __future__ import annotations

import math

import dp_accounting
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpaudit.accounting.binomial import MAX_TRIALS
from dpaudit.accounting.binomial_loss import binomial_loss_pld
from dpaudit.accounting.events import BinomialDpEvent, EpsilonDeltaDpEvent
from dpaudit.mechanisms.shuffle_gd import ShuffleGradientDescent, pgd_iterations, pgd_round_privacy
from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES, BitSumProtocol
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "CHEU_CONSTANT",
    "accounted_trials",
    "binomial_loss_pld",
    "bit_sum_event",
    "bit_sum_pld",
    "bit_sum_protocol",
    "bit_sum_theorem_event",
    "cheu_claimed_epsilon",
    "cheu_parameters",
    "claimed_epsilon",
    "claimed_event",
    "corrected_epsilon",
    "count_cap",
    "pgd_claimed_event",
    "pgd_events",
    "pgd_theorem_event",
    "pvec_protocols",
    "shuffle_gradient_descent",
    "theorem_event",
]

CHEU_CONSTANT = 24.0e4  # Chowdhury & Zhou (ICML 2022), Thm C.1; Sarmasarkar (arXiv), eq. 127


def _check_claim_range(epsilon: float, delta: float) -> None:
    if epsilon > 15.0:
        raise ValueError(f"epsilon must be <= 15 for the claimed guarantee (Sarmasarkar, Lemma S.1), got {epsilon!r}")
    if delta >= 0.5:
        raise ValueError(
            f"delta must lie in (0, 1/2) for the claimed guarantee (Sarmasarkar, Lemma S.1), got {delta!r}"
        )


def cheu_parameters(epsilon: float, delta: float, num_users: int, dim: int) -> tuple[int, int, float]:
    """(g, b, p) of Sarmasarkar, eq. 127 = Chowdhury & Zhou (ICML 2022), Thm 3.5 / C.1, rounded up to integers:

        g = ⌈max{2√n, d, 4}⌉,  b = ⌈24·10⁴ · g² · log²(4(d²+1)/δ) / (ε² n)⌉,  p = 1/4,

    for ε ∈ (0, 15], δ ∈ (0, 1/2); d is the data dimension (the same d is used for the vector and
    for the d×d matrix invocation). n = users in this invocation (Chowdhury & Zhou (ICML 2022), Thm C.1:
    the batch size B).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    _check_claim_range(epsilon, delta)
    n = check_positive_int(num_users, "num_users")
    d = check_positive_int(dim, "dim")
    g = math.ceil(max(2.0 * math.sqrt(n), d, 4))
    b = math.ceil(CHEU_CONSTANT * g * g * math.log(4.0 * (d * d + 1) / delta) ** 2 / (epsilon**2 * n))
    return g, b, 0.25


def cheu_claimed_epsilon(g: int, b: int, num_users: int, dim: int, delta: float) -> float:
    """The ε the papers certify for given (g, b) at δ: eq. 127 inverted,

        ε = √(24·10⁴ · g² · log²(4(d²+1)/δ) / (b·n)),

    valid only for p = 1/4, g >= max{2√n, d, 4}, ε <= 15, δ < 1/2 (raises otherwise). A sufficient
    condition of the papers, very loose (Sarmasarkar, Lemma S.1; Chowdhury & Zhou (ICML 2022), Thm C.1).
    """
    g = check_positive_int(g, "g")
    b = check_positive_int(b, "b")
    n = check_positive_int(num_users, "num_users")
    d = check_positive_int(dim, "dim")
    delta = check_open_unit(delta, "delta")
    if g < max(2.0 * math.sqrt(n), d, 4):
        raise ValueError(f"g must be >= max(2 sqrt(n), d, 4) = {max(2 * math.sqrt(n), d, 4):.4g}, got {g}")
    eps = math.sqrt(CHEU_CONSTANT * g * g * math.log(4.0 * (d * d + 1) / delta) ** 2 / (b * n))
    _check_claim_range(eps, delta)
    return eps


def bit_sum_protocol(
    epsilon: float,
    delta: float,
    num_users: int,
    dim: int,
    num_labels: int | None = None,
    bound: float = 1.0,
    range: str = "paper",
) -> BitSumProtocol:
    """A `BitSumProtocol` with the eq. 127 parameters (`cheu_parameters`); num_labels defaults to dim (a vector)."""
    g, b, p = cheu_parameters(epsilon, delta, num_users, dim)
    labels = dim if num_labels is None else num_labels
    return BitSumProtocol(num_users=num_users, num_labels=labels, g=g, b=b, p=p, bound=bound, range=range)


def pvec_protocols(
    epsilon: float, delta: float, batch_size: int, dim: int, range: str = "paper"
) -> tuple[BitSumProtocol, BitSumProtocol]:
    """Chowdhury & Zhou's (ICML 2022) P_Vec for one batch (§3.3, Thm 3.5 / C.1, unique users): (vector
    protocol over the d labels of φ·y, matrix protocol over the d(d+1)/2 labels i <= j of φφᵀ), both with
    the eq. 127 parameters at (ε, δ) and n = B, Δ1 = Δ2 = 1 (use `sum_vectors` and `sum_matrices`)."""
    d = check_positive_int(dim, "dim")
    vec = bit_sum_protocol(epsilon, delta, batch_size, d, range=range)
    mat = bit_sum_protocol(epsilon, delta, batch_size, d, num_labels=d * (d + 1) // 2, range=range)
    return vec, mat


def _check_quarter(protocol: BitSumProtocol) -> None:
    if protocol.p != 0.25:
        raise ValueError(f"the claimed guarantee needs p = 1/4, got p={protocol.p}")


def claimed_epsilon(protocol: BitSumProtocol, dim: int, delta: float) -> float:
    """The papers' certified ε at δ for the protocol's (g, b): `cheu_claimed_epsilon` (p must be 1/4)."""
    _check_quarter(protocol)
    return cheu_claimed_epsilon(protocol.g, protocol.b, protocol.num_users, dim, delta)


def corrected_epsilon(protocol: BitSumProtocol, dim: int, delta: float) -> float:
    """The same statement applied to what the randomizer really does: the input w = v + Δ spans
    [0, 2Δ] and x̂ spans [0, cap], i.e. Cheu et al.'s protocol with precision g' = cap on range
    cap·Δ'/g. With range="paper" cap = 2g, so ε doubles (the count shift is 2g; Chowdhury & Zhou
    (ICML 2022), Alg. 5 calls R(w, Δ) on w ∈ [0, 2Δ]); with range="normalized" it equals the claim."""
    _check_quarter(protocol)
    return cheu_claimed_epsilon(protocol.cap, protocol.b, protocol.num_users, dim, delta)


def claimed_event(protocol: BitSumProtocol, dim: int, delta: float) -> EpsilonDeltaDpEvent:
    """The papers' claim for one invocation: (`claimed_epsilon`, δ) (Sarmasarkar, Lemmas S.1/S.2;
    Chowdhury & Zhou (ICML 2022), Thm C.1; Cheu et al., Thm 4.2)."""
    return EpsilonDeltaDpEvent(epsilon=claimed_epsilon(protocol, dim, delta), delta=delta)


def theorem_event(protocol: BitSumProtocol, dim: int, delta: float) -> dp_accounting.DpEvent:
    """The papers' statement applied to the real count range: (`corrected_epsilon`, δ) as a black
    box (a sufficient condition, very loose); NonPrivateDpEvent when b = 0. Raises outside the
    statement's range. The exact mechanism is `protocol.event()`."""
    if protocol.b == 0:
        return dp_accounting.NonPrivateDpEvent()
    return EpsilonDeltaDpEvent(epsilon=corrected_epsilon(protocol, dim, delta), delta=delta)


def shuffle_gradient_descent(
    num_users: int,
    dim: int,
    epsilon: float,
    delta: float,
    lipschitz: float,
    radius: float,
    iterations: int | None = None,
    step_size: float | None = None,
    regularization: float = 0.0,
    range: str = "paper",
    protocol: BitSumProtocol | None = None,
) -> ShuffleGradientDescent:
    """Sarmasarkar's P_GD (App. T, Alg. 7) with the paper's per-round protocol: eq. 127 at
    (ε_it, δ_it) = `pgd_round_privacy` (ε_it = ε/(2√(2 T_it log(1/δ))), δ_it = δ/(T_it + 1)) with
    bound L, unless `protocol` is given (e.g. an author-code b). T_it defaults to `pgd_iterations`."""
    if iterations is None:
        iterations = pgd_iterations(epsilon, delta, num_users, dim)
    if protocol is None:
        eps_it, delta_it = pgd_round_privacy(epsilon, delta, iterations)
        protocol = bit_sum_protocol(
            eps_it, delta_it, num_users, dim, bound=check_positive(lipschitz, "lipschitz"), range=range
        )
    return ShuffleGradientDescent(
        num_users, dim, epsilon, delta, lipschitz, radius, iterations, step_size, regularization, range, protocol
    )


def pgd_theorem_event(pgd: ShuffleGradientDescent) -> dp_accounting.DpEvent:
    """T_it rounds, each the papers' statement applied to the real count range at δ_it
    (`theorem_event`: doubled ε for range="paper")."""
    assert pgd.protocol is not None  # required by ShuffleGradientDescent.__post_init__
    round_theorem = theorem_event(pgd.protocol, pgd.dim, pgd.round_privacy[1])
    return dp_accounting.SelfComposedDpEvent(round_theorem, pgd.iterations)


def pgd_claimed_event(pgd: ShuffleGradientDescent) -> dp_accounting.DpEvent:
    """The paper's description (Sarmasarkar, Lemma T.2): T_it rounds, each (claimed ε of the protocol, δ_it)."""
    assert pgd.protocol is not None  # required by ShuffleGradientDescent.__post_init__
    round_claim = claimed_event(pgd.protocol, pgd.dim, pgd.round_privacy[1])
    return dp_accounting.SelfComposedDpEvent(round_claim, pgd.iterations)


# ---- accounting from the parameters alone (Python integers: no int64 bound)


def count_cap(g: int, range: str = "paper") -> int:
    """Largest x̂, hence a label's count sensitivity: 2g for range="paper" (w ∈ [0, 2Δ] on precision g),
    g for "normalized" (Chowdhury & Zhou (ICML 2022), Alg. 5; `BitSumProtocol.cap`)."""
    g = check_positive_int(g, "g")
    return 2 * g if check_choice(range, VECTOR_SUM_RANGES, "range") == "paper" else g


def bit_sum_event(
    num_users: int, num_labels: int, g: int, b: int, p: float = 0.25, range: str = "paper"
) -> dp_accounting.DpEvent:
    """One invocation of Cheu et al.'s bit sum as `BitSumProtocol.event` describes it, from its parameters:
    every label's count carries Bin(n·b, p) noise and one user moves it by at most cap, the labels'
    noises independent: SelfComposedDpEvent(BinomialDpEvent(N, p, cap), labels) with N = n·b computed in
    Python integers, then capped at 2⁵² (`accounted_trials`: sound, looser beyond); NonPrivateDpEvent for
    b = 0 (Cheu, Joseph, Mao, Peng, ICLR 2022, Alg. 4-6)."""
    n = check_positive_int(num_users, "num_users")
    k = check_positive_int(num_labels, "num_labels")
    b = check_int_at_least(b, 0, "b")
    p = check_open_unit(p, "p")
    if b == 0:
        return dp_accounting.NonPrivateDpEvent()
    label = BinomialDpEvent(trials=accounted_trials(int(n) * int(b)), probability=p, sensitivity=count_cap(g, range))
    return label if k == 1 else dp_accounting.SelfComposedDpEvent(label, k)


def accounted_trials(trials: int) -> int:
    """The noise bits a binomial count is accounted with: min(N, 2⁵²). Bin(N, p) = Bin(N', p) + an independent
    Bin(N - N', p), so the count with N' <= N bits is at least as revealing (post-processing): a sound,
    looser description, whose counts stay exact in float64 (the accountants' binomial tails evaluate them
    in floating point, where counts beyond 2⁵³ round and a shift of a few hundred can vanish)."""
    return min(check_positive_int(trials, "trials"), MAX_TRIALS)


def bit_sum_theorem_event(
    num_users: int, g: int, b: int, dim: int, delta: float, p: float = 0.25, range: str = "paper"
) -> dp_accounting.DpEvent:
    """`theorem_event` from the parameters: eq. 127 inverted at precision cap (`corrected_epsilon`);
    NonPrivateDpEvent when b = 0; raises outside the statement's range or for p != 1/4."""
    if check_int_at_least(b, 0, "b") == 0:
        return dp_accounting.NonPrivateDpEvent()
    if check_open_unit(p, "p") != 0.25:
        raise ValueError(f"the claimed guarantee needs p = 1/4, got p={p}")
    return EpsilonDeltaDpEvent(epsilon=cheu_claimed_epsilon(count_cap(g, range), b, num_users, dim, delta), delta=delta)


def pgd_events(
    num_users: int, dim: int, epsilon: float, delta: float, iterations: int | None = None, range: str = "paper"
) -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
    """(exact, theorem) events of Sarmasarkar's P_GD (App. T, Alg. 7) with the paper's per-round protocol,
    from the parameters alone: T_it rounds (default `pgd_iterations`), each the eq. 127 bit sum over the d
    gradient labels at (ε_it, δ_it) = `pgd_round_privacy` (`bit_sum_event`, `bit_sum_theorem_event`), composed.
    The same events as `shuffle_gradient_descent(...).event()` and `pgd_theorem_event`, at any n·b."""
    if iterations is None:
        iterations = pgd_iterations(epsilon, delta, num_users, dim)
    t = check_positive_int(iterations, "iterations")
    eps_it, delta_it = pgd_round_privacy(epsilon, delta, t)
    g, b, p = cheu_parameters(eps_it, delta_it, num_users, dim)
    exact = bit_sum_event(num_users, dim, g, b, p, range)
    theorem = bit_sum_theorem_event(num_users, g, b, dim, delta_it, p, range)
    return dp_accounting.SelfComposedDpEvent(exact, t), dp_accounting.SelfComposedDpEvent(theorem, t)


# ---- the exact count mechanism's privacy loss distribution


def bit_sum_pld(
    num_users: int,
    num_labels: int,
    g: int,
    b: int,
    p: float = 0.25,
    range: str = "paper",
    value_discretization_interval: float | None = None,
) -> pld_lib.PrivacyLossDistribution:
    """PLD of one invocation (`bit_sum_event`): `binomial_loss_pld(n·b, p, cap)` self-composed over the labels
    (independent noises; one user may move every label by cap, the worst case of randomized rounding's
    mixtures by joint convexity, `BitSumProtocol.label_pld`). Requires b >= 1."""
    k = check_positive_int(num_labels, "num_labels")
    if check_int_at_least(b, 0, "b") == 0:
        raise ValueError("b must be >= 1 for a privacy loss distribution (b = 0 is not private)")
    label = binomial_loss_pld(
        int(check_positive_int(num_users, "num_users")) * int(b), p, count_cap(g, range), value_discretization_interval
    )
    return label if k == 1 else label.self_compose(k)
