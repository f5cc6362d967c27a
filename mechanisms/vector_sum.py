"""Shuffle-private vector and matrix summation with bit messages and binomial noise.

Cheu, Joseph, Mao, Peng, "Shuffle private stochastic convex optimization" (ICLR 2022, arXiv 2021),
their vector-sum protocol as used by Sarmasarkar (shuffle/joint DP GLM bandits) (App. S, Algs. 4-6, eq. 127) and Chowdhury & Zhou (ICML 2022) (P_Vec, §3.3,
App. C.1, Algs. 5-7). Per user and per coordinate ("label") k, with the entry v_k ∈ [−Δ, Δ]:

    w = v_k + Δ ∈ [0, 2Δ];  x̄ = ⌊w·g/Δ'⌋;  γ1 ~ Bernoulli(w·g/Δ' − x̄);  x̂ = x̄ + γ1   (randomized rounding)
    γ2 ~ Binomial(b, p)                                                                   (privacy noise)
    message: (x̂ + γ2) one-bits and (cap + b) − (x̂ + γ2) zero-bits, all labelled k

The shuffler permutes all labelled bits of all n users; the analyzer counts the ones of label k,
C_k, and outputs (Δ'/g)(C_k − p·b·n) − n·Δ, an unbiased estimate of Σ_users v_k (Chowdhury & Zhou 2022, App. C.1
corrects Cheu et al.'s "− Δ" to "− nΔ"). Symmetric matrices send only the labels i <= j, mirrored by
the analyzer (Chowdhury & Zhou 2022, Alg. 5 R2; Sarmasarkar, Alg. 4 R2).

Range (Chowdhury & Zhou (ICML 2022), Alg. 5; Sarmasarkar (shuffle/joint-DP GLM bandits), Alg. 4; an ambiguity of both
papers): the pseudocode calls R(w, Δ) on
w ∈ [0, 2Δ], so x̂ ∈ [0, 2g] and a message needs cap = 2g one-slots (range="paper", the default:
Δ' = Δ, per-entry count sensitivity 2g). range="normalized" passes 2Δ instead (Δ' = 2Δ, x̂ ∈ [0, g],
cap = g, sensitivity g). Either way no message ever truncates.

Fast path: the shuffled view is equivalent to the per-label counts (bits within a label are
exchangeable), and Σ_users γ2 ~ Binomial(n·b, p); so `counts` draws C_k = Σ_u x̂_{u,k} + Bin(n·b, p)
directly, never materialising the n·d·(cap+b) bits (tested against the per-message path).

The papers' parameter rule (eq. 127) and their claimed ε for given (g, b) are the bandit papers'
statements, not the mechanism's: they live in `dpaudit.algorithms.shuffle_claims`.
"""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution
from scipy import stats

from dpaudit.accounting.events import BinomialDpEvent
from dpaudit.mechanisms.samplers import binomial
from dpaudit.mechanisms.shuffle import permutations
from dpaudit.validation import (
    check_choice,
    check_finite_array,
    check_int_at_least,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "VECTOR_SUM_RANGES",
    "BitSumProtocol",
    "binomial_count_pld",
]

VECTOR_SUM_RANGES = ("paper", "normalized")
_INT64_SAFE = 2**62
_PLD_MAX_SUPPORT = 2_000_000
# outcomes with log-mass below this go to the +∞ privacy loss (pessimistic): at most 2·10⁶ of them,
# so at most ~10⁻¹¹ added to δ, and the PLD's support (hence its composition) stays small
_PLD_LOG_MASS_TRUNCATION = -40.0


@dataclasses.dataclass(frozen=True)
class BitSumProtocol:
    """Cheu et al.'s shuffled summation of `num_labels` coordinates over `num_users` users.

    g: precision (one-slots per unit range), b: noise bits per message (b = 0 is allowed, to
    reproduce author code whose b truncates to 0: no privacy noise), p: their Bernoulli probability, bound: Δ (each entry lies in [−Δ, Δ]), range: "paper" | "normalized" (module doc).
    """

    num_users: int
    num_labels: int
    g: int
    b: int
    p: float = 0.25
    bound: float = 1.0
    range: str = "paper"

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_users", check_positive_int(self.num_users, "num_users"))
        object.__setattr__(self, "num_labels", check_positive_int(self.num_labels, "num_labels"))
        object.__setattr__(self, "g", check_positive_int(self.g, "g"))
        object.__setattr__(self, "b", check_int_at_least(self.b, 0, "b"))
        object.__setattr__(self, "p", check_open_unit(self.p, "p"))
        object.__setattr__(self, "bound", check_positive(self.bound, "bound"))
        check_choice(self.range, VECTOR_SUM_RANGES, "range")
        if self.num_users * (self.cap + self.b) >= _INT64_SAFE:
            raise ValueError(f"num_users*(cap+b) = {self.num_users * (self.cap + self.b)} would overflow int64 counts")

    @property
    def unit(self) -> float:
        """Δ': the range one unit of g stands for (Δ for "paper", 2Δ for "normalized")."""
        return self.bound if self.range == "paper" else 2.0 * self.bound

    @property
    def cap(self) -> int:
        """Largest x̂: 2g ("paper") or g ("normalized"); a message has cap + b bits."""
        return 2 * self.g if self.range == "paper" else self.g

    @property
    def message_bits(self) -> int:
        """Bits per message: cap + b."""
        return self.cap + self.b

    # -- randomizer, shuffler, analyzer --------------------------------------------------------

    def _check_values(self, values: np.ndarray) -> np.ndarray:
        values = check_finite_array(values, "values", ndim=3)
        if values.shape[1:] != (self.num_users, self.num_labels):
            raise ValueError(f"values must have shape (runs, {self.num_users}, {self.num_labels}), got {values.shape}")
        if np.any(np.abs(values) > self.bound):
            raise ValueError(f"values must lie in [-bound, bound] = [-{self.bound}, {self.bound}]; clip them first")
        return values

    def encode(self, rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
        """x̂ = ⌊(v+Δ)g/Δ'⌋ + Bernoulli(fraction): int64 (runs, n, labels), E[x̂] = (v+Δ)g/Δ'."""
        values = self._check_values(values)
        scaled = (values + self.bound) * (self.g / self.unit)
        floor = np.floor(scaled)
        xhat = floor.astype(np.int64) + (rng.random(values.shape) < scaled - floor)
        return np.minimum(xhat, self.cap)  # scaled <= cap exactly; guards round-off at the top edge

    def messages(self, rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
        """R*: every user's bits, uint8 (runs, n, labels, cap + b): x̂ + Bin(b, p) ones, then zeros."""
        ones = self.encode(rng, values) + binomial(
            rng, self.b, self.p, (values.shape[0], self.num_users, self.num_labels)
        )
        return (np.arange(self.message_bits) < ones[..., None]).astype(np.uint8)

    def shuffle_and_count(self, rng: np.random.Generator, bits: np.ndarray) -> np.ndarray:
        """S then the analyzer's grouping: shuffle all labelled bits of all users (per run),
        group by label and count the ones. Returns int64 counts (runs, labels)."""
        bits = np.asarray(bits)
        if bits.ndim != 4 or bits.shape[1:] != (self.num_users, self.num_labels, self.message_bits):
            raise ValueError(
                f"bits must have shape (runs, {self.num_users}, {self.num_labels}, {self.message_bits}), got {bits.shape}"
            )
        runs = bits.shape[0]
        labels = np.broadcast_to(np.arange(self.num_labels)[:, None], bits.shape[2:]).ravel()
        labels = np.tile(labels, bits.shape[1])  # the label of every bit of every user, in order
        perm = permutations(rng, runs, labels.size)  # S: one uniform permutation of the labelled bits
        shuffled_labels = labels[perm]
        shuffled_bits = bits.reshape(runs, -1)[np.arange(runs)[:, None], perm]
        flat = shuffled_labels + (np.arange(runs) * self.num_labels)[:, None]
        counts = np.bincount(flat.ravel(), weights=shuffled_bits.ravel(), minlength=runs * self.num_labels)
        return counts.reshape(runs, self.num_labels).astype(np.int64)

    def counts(self, rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
        """Fast path: C_k = Σ_u x̂_{u,k} + Binomial(n·b, p), int64 (runs, labels)."""
        xhat = self.encode(rng, values).sum(axis=1)
        return xhat + binomial(rng, self.num_users * self.b, self.p, xhat.shape)

    def analyze(self, counts: np.ndarray) -> np.ndarray:
        """A*: (Δ'/g)(C_k − p·b·n) − n·Δ, the estimate of Σ_users v_k (Chowdhury & Zhou 2022, Alg. 7, lines 11/19)."""
        n = self.num_users
        return (self.unit / self.g) * (np.asarray(counts, dtype=float) - self.p * self.b * n) - n * self.bound

    def run(self, rng: np.random.Generator, values: np.ndarray, per_message: bool = False) -> np.ndarray:
        """Estimated sums (runs, labels). per_message=True materialises and shuffles every bit."""
        if per_message:
            return self.analyze(self.shuffle_and_count(rng, self.messages(rng, values)))
        return self.analyze(self.counts(rng, values))

    def sum_vectors(self, rng: np.random.Generator, vectors: np.ndarray, per_message: bool = False) -> np.ndarray:
        """P1 = A1∘S1∘R1: vectors (runs, n, d) with d = num_labels -> estimated sums (runs, d)."""
        return self.run(rng, vectors, per_message)

    def sum_matrices(self, rng: np.random.Generator, matrices: np.ndarray, per_message: bool = False) -> np.ndarray:
        """P2 = A2∘S2∘R2: symmetric (runs, n, d, d), num_labels = d(d+1)/2; entries i <= j are sent
        (one randomizer each, m_ji = m_ij), the analyzer mirrors them."""
        matrices = check_finite_array(matrices, "matrices", ndim=4)
        d = matrices.shape[-1]
        if matrices.shape[-2] != d or d * (d + 1) // 2 != self.num_labels:
            raise ValueError(
                f"matrices must be (runs, n, d, d) with d(d+1)/2 = {self.num_labels}, got {matrices.shape}"
            )
        if not np.allclose(matrices, np.swapaxes(matrices, -1, -2)):
            raise ValueError("matrices must be symmetric")
        iu, ju = np.triu_indices(d)
        upper = self.run(rng, matrices[..., iu, ju], per_message)
        out = np.empty(upper.shape[:1] + (d, d))
        out[:, iu, ju] = upper
        out[:, ju, iu] = upper
        return out

    # -- accuracy and privacy -------------------------------------------------------------------

    def noise_variance_bound(self) -> float:
        """Per-entry error variance <= (Δ'/g)² · n · (1/4 + b·p(1−p)) (rounding Bernoullis have
        variance <= 1/4; the binomial n·b·p(1−p)). Sarmasarkar (shuffle/joint-DP GLM bandits); Chowdhury & Zhou (ICML 2022) proof of Thm C.1."""
        return (self.unit / self.g) ** 2 * self.num_users * (0.25 + self.b * self.p * (1.0 - self.p))

    def count_sensitivity(self) -> int:
        """Largest change of one label's count when one user's entry changes: cap (+1 from rounding
        is absorbed: x̂ ∈ [0, cap]). The binomial noise Bin(n·b, p) protects this shift."""
        return self.cap

    def label_pld(
        self, value_discretization_interval: float = 1e-4
    ) -> privacy_loss_distribution.PrivacyLossDistribution:
        """PLD of one label's count for the extreme neighbours (entry −Δ vs +Δ: x̂ = 0 vs cap, no
        rounding randomness): `binomial_count_pld(n·b, p, cap)`. Other neighbours are mixtures of
        shifts k <= cap (randomized rounding), so by joint convexity of the hockey-stick divergence
        and its monotonicity in k they are no less private. Requires b >= 1."""
        if self.b == 0:
            raise ValueError("b must be >= 1 for a privacy loss distribution (b = 0 is not private)")
        return binomial_count_pld(self.num_users * self.b, self.p, self.cap, value_discretization_interval)

    def exact_epsilon(self, delta: float, labels: int | None = None) -> float:
        """ε at δ of one user's whole message set when each of `labels` labels (default all) can
        shift by cap: the per-label PLD self-composed (labels are independent). The mechanism-exact
        target of the audits (Sarmasarkar (shuffle/joint-DP GLM bandits), Lemma S.1; Chowdhury & Zhou (ICML 2022), Thm C.1),
        far below the papers' claim."""
        delta = check_open_unit(delta, "delta")
        k = self.num_labels if labels is None else check_positive_int(labels, "labels")
        pld = self.label_pld()
        return float(pld.self_compose(k).get_epsilon_for_delta(delta) if k > 1 else pld.get_epsilon_for_delta(delta))

    def label_event(self) -> BinomialDpEvent:
        """One label's count: `BinomialDpEvent(n·b, p, cap)` (Bin(n·b, p) noise on an integer count
        that one user moves by at most `count_sensitivity()`). Requires b >= 1."""
        if self.b == 0:
            raise ValueError("b must be >= 1 for a binomial event (b = 0 is not private)")
        return BinomialDpEvent(trials=self.num_users * self.b, probability=self.p, sensitivity=self.cap)

    def event(self, dim: int | None = None, delta: float | None = None) -> dp_accounting.DpEvent:
        """One invocation as the accounting engine sees it: `label_event()` composed over all
        `num_labels` labels (one user's entry on every label may move by up to cap; the labels'
        noises are independent), `SelfComposedDpEvent(label_event(), num_labels)`;
        NonPrivateDpEvent when b = 0. The exact mechanism, not the papers' theorem: its `pld`
        answer is `exact_epsilon` (Sarmasarkar (shuffle/joint-DP GLM bandits), Alg. 4; Chowdhury & Zhou (ICML 2022), Alg. 5);
        `approx` accounts for it
        from the exact per-label profile at any b. `dim` and `delta` belong to the papers' statement
        (`dpaudit.algorithms.shuffle_claims.theorem_event`) and are not needed here; they are accepted
        so callers can switch freely.
        """
        if dim is not None:
            check_positive_int(dim, "dim")
        if delta is not None:
            check_open_unit(delta, "delta")
        if self.b == 0:
            return dp_accounting.NonPrivateDpEvent()
        label = self.label_event()
        return label if self.num_labels == 1 else dp_accounting.SelfComposedDpEvent(label, self.num_labels)


def binomial_count_pld(
    trials: int, p: float, shift: int, value_discretization_interval: float = 1e-4
) -> privacy_loss_distribution.PrivacyLossDistribution:
    """Privacy loss distribution of an integer count plus Binomial(trials, p) noise when one user
    moves the count by `shift`, in both directions (the binomial is skewed for p != 1/2, so the two
    directions differ; dp-accounting's `from_two_probability_mass_functions` with symmetric=False
    and pessimistic rounding). The hockey-stick divergence it gives is non-decreasing in `shift`
    (the binomial is log-concave; checked in the tests).

    The pmfs are evaluated exactly (scipy's binomial log-pmf) on a window of ±40 standard deviations
    around the mean; each distribution's mass outside the window is given to an outcome the other
    distribution never takes, and outcomes of mass below e^−40 are dropped into the +∞ privacy
    loss too: both only add to δ (pessimistic, never optimistic).
    Raises ValueError when the window exceeds 2·10⁶ outcomes (e.g. the papers' eq. 127 b ~ 10¹¹).
    """
    trials = check_positive_int(trials, "trials")
    p = check_open_unit(p, "p")
    shift = check_int_at_least(shift, 0, "shift")
    check_positive(value_discretization_interval, "value_discretization_interval")
    sd = math.sqrt(trials * p * (1.0 - p))
    lo = max(0, math.floor(trials * p - 40.0 * sd - 1))
    hi = min(trials, math.ceil(trials * p + 40.0 * sd + 1))
    if hi - lo + shift + 1 > _PLD_MAX_SUPPORT:
        raise ValueError(
            f"trials={trials} needs {hi - lo + shift + 1} outcomes (> {_PLD_MAX_SUPPORT}); the noise is so "
            "wide that the shift is negligible, use a smaller b to compute an exact profile"
        )
    x = np.arange(lo, hi + 1)
    logpmf = stats.binom.logpmf(x, trials, p)
    tail = -math.expm1(np.logaddexp.reduce(logpmf)) if logpmf.size else 1.0
    base: dict[int | str, float] = dict(zip(x.tolist(), logpmf.tolist()))  # outcome (or a tail's name): log mass
    shifted: dict[int | str, float] = dict(zip((x + shift).tolist(), logpmf.tolist()))
    if tail > 0.0:
        base["tail of the unshifted count"] = math.log(tail)
        shifted["tail of the shifted count"] = math.log(tail)
    return privacy_loss_distribution.from_two_probability_mass_functions(
        base,
        shifted,
        pessimistic_estimate=True,
        value_discretization_interval=value_discretization_interval,
        log_mass_truncation_bound=_PLD_LOG_MASS_TRUNCATION,
        symmetric=False,
    )
