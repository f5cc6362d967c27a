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
`binomial_loss_pld` is the privacy loss distribution of one label's count for any number of noise bits
up to 2⁵² (the papers' b ~ 10⁹ included), built on a grid of privacy losses instead of enumerating the
counts: the PLD accountant of the exact mechanism where the enumerating one gives up.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

from dpaudit.accounting.events import BinomialDpEvent, EpsilonDeltaDpEvent
from dpaudit.mechanisms.shuffle_gd import ShuffleGradientDescent, pgd_iterations, pgd_round_privacy
from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES, BitSumProtocol
from dpaudit.validation import (check_choice, check_epsilon, check_int_at_least, check_open_unit, check_positive,
                                check_positive_int)

__all__ = [
    "CHEU_CONSTANT",
    "cheu_parameters",
    "cheu_claimed_epsilon",
    "bit_sum_protocol",
    "pvec_protocols",
    "claimed_epsilon",
    "corrected_epsilon",
    "claimed_event",
    "theorem_event",
    "shuffle_gradient_descent",
    "pgd_claimed_event",
    "pgd_theorem_event",
    "count_cap",
    "bit_sum_event",
    "accounted_trials",
    "bit_sum_theorem_event",
    "pgd_events",
    "binomial_loss_pld",
    "bit_sum_pld",
]

CHEU_CONSTANT = 24.0e4  # Chowdhury & Zhou (ICML 2022), Thm C.1; Sarmasarkar (arXiv), eq. 127


def _check_claim_range(epsilon: float, delta: float) -> None:
    if epsilon > 15.0:
        raise ValueError(f"epsilon must be <= 15 for the claimed guarantee (Sarmasarkar, Lemma S.1), got {epsilon!r}")
    if delta >= 0.5:
        raise ValueError(f"delta must lie in (0, 1/2) for the claimed guarantee (Sarmasarkar, Lemma S.1), got {delta!r}")


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
    epsilon: float, delta: float, num_users: int, dim: int, num_labels: int | None = None,
    bound: float = 1.0, range: str = "paper",
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
    num_users: int, dim: int, epsilon: float, delta: float, lipschitz: float, radius: float,
    iterations: int | None = None, step_size: float | None = None, regularization: float = 0.0,
    range: str = "paper", protocol: BitSumProtocol | None = None,
) -> ShuffleGradientDescent:
    """Sarmasarkar's P_GD (App. T, Alg. 7) with the paper's per-round protocol: eq. 127 at
    (ε_it, δ_it) = `pgd_round_privacy` (ε_it = ε/(2√(2 T_it log(1/δ))), δ_it = δ/(T_it + 1)) with
    bound L, unless `protocol` is given (e.g. an author-code b). T_it defaults to `pgd_iterations`."""
    if iterations is None:
        iterations = pgd_iterations(epsilon, delta, num_users, dim)
    if protocol is None:
        eps_it, delta_it = pgd_round_privacy(epsilon, delta, iterations)
        protocol = bit_sum_protocol(eps_it, delta_it, num_users, dim, bound=check_positive(lipschitz, "lipschitz"),
                                    range=range)
    return ShuffleGradientDescent(num_users, dim, epsilon, delta, lipschitz, radius, iterations, step_size,
                                  regularization, range, protocol)


def pgd_theorem_event(pgd: ShuffleGradientDescent) -> dp_accounting.DpEvent:
    """T_it rounds, each the papers' statement applied to the real count range at δ_it
    (`theorem_event`: doubled ε for range="paper")."""
    round_theorem = theorem_event(pgd.protocol, pgd.dim, pgd.round_privacy[1])
    return dp_accounting.SelfComposedDpEvent(round_theorem, pgd.iterations)


def pgd_claimed_event(pgd: ShuffleGradientDescent) -> dp_accounting.DpEvent:
    """The paper's description (Sarmasarkar, Lemma T.2): T_it rounds, each (claimed ε of the protocol, δ_it)."""
    round_claim = claimed_event(pgd.protocol, pgd.dim, pgd.round_privacy[1])
    return dp_accounting.SelfComposedDpEvent(round_claim, pgd.iterations)


# ---- accounting from the parameters alone (Python integers: no int64 bound)

def count_cap(g: int, range: str = "paper") -> int:
    """Largest x̂, hence a label's count sensitivity: 2g for range="paper" (w ∈ [0, 2Δ] on precision g),
    g for "normalized" (Chowdhury & Zhou (ICML 2022), Alg. 5; `BitSumProtocol.cap`)."""
    g = check_positive_int(g, "g")
    return 2 * g if check_choice(range, VECTOR_SUM_RANGES, "range") == "paper" else g


def bit_sum_event(num_users: int, num_labels: int, g: int, b: int, p: float = 0.25,
                  range: str = "paper") -> dp_accounting.DpEvent:
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
    return min(check_positive_int(trials, "trials"), _PLD_TRIALS_LIMIT)


def bit_sum_theorem_event(num_users: int, g: int, b: int, dim: int, delta: float, p: float = 0.25,
                          range: str = "paper") -> dp_accounting.DpEvent:
    """`theorem_event` from the parameters: eq. 127 inverted at precision cap (`corrected_epsilon`);
    NonPrivateDpEvent when b = 0; raises outside the statement's range or for p != 1/4."""
    if check_int_at_least(b, 0, "b") == 0:
        return dp_accounting.NonPrivateDpEvent()
    if check_open_unit(p, "p") != 0.25:
        raise ValueError(f"the claimed guarantee needs p = 1/4, got p={p}")
    return EpsilonDeltaDpEvent(epsilon=cheu_claimed_epsilon(count_cap(g, range), b, num_users, dim, delta),
                               delta=delta)


def pgd_events(num_users: int, dim: int, epsilon: float, delta: float, iterations: int | None = None,
               range: str = "paper") -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
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


# ---- the exact count mechanism's privacy loss distribution, on a grid of losses

_PLD_TRIALS_LIMIT = 2**52  # counts up to here are exact in float64, so each loss is computed to round-off
_PLD_SIDE_SDS = 40.0  # counts beyond the mean ± this many sd: mass < 10^-340, put at the pessimistic end
_PLD_ROUND_OFF = 1e-9  # absolute margin added to every computed loss before it is rounded up to the grid
_PLD_MAX_CELLS = 200_000  # the grid is coarsened (a larger interval) to stay below this many cells per direction
_PLD_MASS_SLACK = 1e-15  # per grid cell: an upper bound on the round-off of a difference of two binomial tails


def _count_log_ratio(y: np.ndarray, trials: int, p: float, shift: int) -> np.ndarray:
    """log f(y - s)/f(y) for Bin(N, p)'s pmf f and integers s <= y <= N: Σ_{j<s} log1p((x - p(N+1))/((N-x+1)p)),
    x = y - j (f(x-1)/f(x) = x(1-p)/((N-x+1)p)); non-decreasing in y (the binomial is log-concave)."""
    x = np.asarray(y, dtype=float)[..., None] - np.arange(shift, dtype=float)
    return np.log1p((x - p * (trials + 1)) / ((trials - x + 1) * p)).sum(axis=-1)


def _largest_at_most(level: np.ndarray, lo: int, hi: int, trials: int, p: float, shift: int) -> np.ndarray:
    """For each level, the largest integer y in [lo, hi] with log ratio(y) + round-off margin <= level
    (lo - 1 when there is none): a vectorised bisection on the non-decreasing log ratio."""
    a = np.full(level.shape, lo - 1, dtype=np.int64)
    b = np.full(level.shape, hi, dtype=np.int64)
    ok_hi = _count_log_ratio(b, trials, p, shift) + _PLD_ROUND_OFF <= level
    a = np.where(ok_hi, b, a)
    while True:
        open_ = b - a > 1
        if not open_.any():
            return a
        mid = np.where(open_, (a + b) // 2, hi)  # closed entries evaluate a valid count, unused
        ok = _count_log_ratio(mid, trials, p, shift) + _PLD_ROUND_OFF <= level
        a = np.where(open_ & ok, mid, a)
        b = np.where(open_ & ~ok, mid, b)


def _interval_masses(lower: np.ndarray, upper: np.ndarray, trials: int, p: float) -> np.ndarray:
    """P(lower < X <= upper) for X ~ Bin(N, p), from the cdf below the mean and the survival function above
    it (no difference of two numbers near 1), never negative."""
    below = stats.binom.cdf(upper, trials, p) - stats.binom.cdf(lower, trials, p)
    above = stats.binom.sf(lower, trials, p) - stats.binom.sf(upper, trials, p)
    return np.maximum(np.where(upper <= trials * p, below, above), 0.0)


def _one_direction(trials: int, p: float, shift: int, vdi: float, sign: int) -> tuple[dict[int, float], float]:
    """Rounded-up pmf of the privacy loss on the grid vdi·Z and its infinity mass, for the upper law
    X + s against X (sign = +1: loss log f(y - s)/f(y) at y = X + s) or X against X + s (sign = -1: loss
    -log f(y - s)/f(y) at y = X). Counts one side alone produces go to infinity; the far tails go to the
    grid's pessimistic end; every cell's mass is rounded up by the tails' round-off (cell count x 1e-15)."""
    sd = math.sqrt(trials * p * (1 - p))
    x_lo = max(0, math.floor(trials * p - _PLD_SIDE_SDS * sd))
    x_hi = min(trials, math.ceil(trials * p + _PLD_SIDE_SDS * sd))
    if sign > 0:  # y = X + s, loss R(y) non-decreasing in y; y > N only under the upper law
        infinity = float(stats.binom.sf(trials - shift, trials, p))
        y_lo, y_hi = max(shift, x_lo + shift), min(trials, x_hi + shift)
        ends = np.array([y_lo, y_hi])
        k_lo, k_hi = np.ceil((_count_log_ratio(ends, trials, p, shift) + _PLD_ROUND_OFF) / vdi).astype(np.int64)
        grid = np.arange(k_lo, k_hi + 1)
        cut = _largest_at_most(grid * vdi, y_lo, y_hi, trials, p, shift)  # y <= cut[k] has loss <= k vdi
        upper_x = cut - shift
        lower_x = np.concatenate([[-1], upper_x[:-1]])  # the lowest cell takes every smaller count
        masses = _interval_masses(lower_x, upper_x, trials, p)
        infinity += float(stats.binom.sf(upper_x[-1], trials, p))  # counts above the top cell: at infinity
    else:  # y = X, loss -R(y) non-increasing in y; y < s only under the upper law
        y_lo, y_hi = max(shift, x_lo), x_hi
        ends = np.array([y_hi, y_lo])
        k_lo, k_hi = np.ceil((-_count_log_ratio(ends, trials, p, shift) + _PLD_ROUND_OFF) / vdi).astype(np.int64)
        grid = np.arange(k_lo, k_hi + 1)
        # y > cut[k] (not R̂(y) + margin <= 2 margin - k vdi) has true loss -R(y) <= -R̂(y) + margin < k vdi
        cut = _largest_at_most(2 * _PLD_ROUND_OFF - grid * vdi, y_lo, y_hi, trials, p, shift)
        lower_x = cut  # cell k: cut[k] < X <= cut[k-1]; the lowest cell takes every larger count
        upper_x = np.concatenate([[trials], cut[:-1]])
        masses = _interval_masses(lower_x, upper_x, trials, p)
        infinity = float(stats.binom.cdf(cut[-1], trials, p))  # X < s (Q = 0) and counts below the top cell
    pmf = {int(k): float(m) + _PLD_MASS_SLACK for k, m in zip(grid, masses) if m > 0}
    return pmf, min(1.0, infinity + _PLD_MASS_SLACK)


def binomial_loss_pld(trials: int, probability: float, shift: int,
                      value_discretization_interval: float | None = None) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic privacy loss distribution of a count plus Bin(N, p) noise that one user moves by `shift`,
    both directions (the binomial is skewed for p != 1/2), for any N up to 2⁵².

    The log likelihood ratio R(y) = log f(y - s)/f(y) is non-decreasing in y (log-concavity), so each
    grid cell ((k-1)v, kv] of the loss is an interval of counts, found by bisection, and its mass is a
    difference of binomial tails (regularized incomplete beta functions): nothing is enumerated, so
    Cheu et al.'s theorem-sized noise (N ~ 10¹⁰) costs what N = 100 does. Losses are rounded up (with a
    round-off margin), counts only one law produces and the tails beyond ±40 sd go to infinity or to
    the grid's pessimistic end, and each cell's mass is rounded up: every δ(ε) it gives is an upper
    bound (as `dpaudit.mechanisms.vector_sum.binomial_count_pld`, which enumerates the counts; the
    hockey-stick divergence attained on level sets of R: Balle, Barthe, Gaboardi, "Privacy Amplification
    by Subsampling", NeurIPS 2018, Thm 1). The interval is widened where the ±40 sd window would need
    more than 2·10⁵ cells (small N, large losses). Each composition adds up to one interval to the losses,
    so the default interval is min(10⁻⁵, μ/200), μ = s/sd the count's normal-limit Gaussian-DP parameter:
    thousands of composed labels stay within a few percent. Raises for N > 2⁵² (counts not exact in float64).
    """
    n = check_positive_int(trials, "trials")
    p = check_open_unit(probability, "probability")
    s = check_positive_int(shift, "shift")
    if n > _PLD_TRIALS_LIMIT:
        raise ValueError(f"trials={n} > 2^52: the counts are not exact in float64 (`accounted_trials` caps them)")
    if s > n:
        raise ValueError(f"shift={s} exceeds trials={n}: the two laws have disjoint supports (no privacy)")
    sd = math.sqrt(n * p * (1 - p))
    v = (min(1e-5, s / sd / 200) if value_discretization_interval is None
         else check_positive(value_discretization_interval, "value_discretization_interval"))
    ends = np.array([max(s, math.floor(n * p - _PLD_SIDE_SDS * sd)), min(n, math.ceil(n * p + _PLD_SIDE_SDS * sd) + s)])
    span = float(np.max(np.abs(_count_log_ratio(ends, n, p, s))))
    v = max(v, 2 * span / _PLD_MAX_CELLS)
    remove, inf_remove = _one_direction(n, p, s, v, +1)
    add, inf_add = _one_direction(n, p, s, v, -1)
    return pld_lib.PrivacyLossDistribution(pld_pmf.create_pmf(remove, v, inf_remove, True),
                                           pld_pmf.create_pmf(add, v, inf_add, True))


def bit_sum_pld(num_users: int, num_labels: int, g: int, b: int, p: float = 0.25, range: str = "paper",
                value_discretization_interval: float | None = None) -> pld_lib.PrivacyLossDistribution:
    """PLD of one invocation (`bit_sum_event`): `binomial_loss_pld(n·b, p, cap)` self-composed over the labels
    (independent noises; one user may move every label by cap, the worst case of randomized rounding's
    mixtures by joint convexity, `BitSumProtocol.label_pld`). Requires b >= 1."""
    k = check_positive_int(num_labels, "num_labels")
    if check_int_at_least(b, 0, "b") == 0:
        raise ValueError("b must be >= 1 for a privacy loss distribution (b = 0 is not private)")
    label = binomial_loss_pld(int(check_positive_int(num_users, "num_users")) * int(b), p, count_cap(g, range),
                              value_discretization_interval)
    return label if k == 1 else label.self_compose(k)
