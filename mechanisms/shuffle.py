"""The shuffler, and Chowdhury & Zhou's (ICML 2022) amplification protocol P_Amp (local Gaussian randomizer + shuffle).

Shuffle model (Chowdhury & Zhou 2022, Def. 2.3; Sarmasarkar, Def. B.3): users apply a local randomizer R, a trusted
shuffler S permutes all messages uniformly at random, the analyzer A sees only the shuffled multiset.
The protocol is (ε, δ)-shuffle DP when S∘R^n is (ε, δ)-DP (the analyzer's output is post-processing).

P_Amp (Chowdhury & Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022, §3.2, App. B.1,
Algs. 2-4): each user adds N(0, σ²I_d) to its vector v = φ(c,a)·y and symmetric Gaussian noise (upper
triangle incl. diagonal i.i.d. N(0, σ²), copied below) to its matrix X = φφᵀ; the shuffler permutes
the vectors and the matrices (two independent uniform permutations); the analyzer sums. Here for any
σ, with its exact events; the paper's calibration of σ (Thm 3.2 / B.1) and its claimed local and
central guarantees (Remark 3.4, Lemma B.4) are in `dpaudit.algorithms.linear.claims`. The classical
Gaussian calibration for the two releases (`gaussian_ldp_sigma`) and Feldman-McMillan-Talwar's
amplification bound as the paper states it (`fmt20_amplification`) stay here: they are not the paper's.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import dp_accounting
import numpy as np
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

from dpaudit.accounting.events import ShuffledDpEvent
from dpaudit.accounting.shuffle import local_delta_term
from dpaudit.mechanisms.samplers import gaussian
from dpaudit.validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "GaussianShuffleProtocol",
    "fmt20_amplification",
    "fmt20_amplification_applies",
    "fmt21_local_delta_term",
    "gaussian_ldp_sigma",
    "permutations",
    "shuffle",
]


@functools.cache
def _triu(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """np.triu_indices(dim), computed once per dimension (read-only: the protocol runs once per batch)."""
    iu, ju = np.triu_indices(dim)
    iu.flags.writeable = ju.flags.writeable = False
    return iu, ju


def permutations(rng: np.random.Generator, runs: int, n: int) -> np.ndarray:
    """`runs` independent uniformly random permutations of 0..n-1, shape (runs, n)."""
    runs = check_positive_int(runs, "runs")
    n = check_positive_int(n, "n")
    return rng.permuted(np.tile(np.arange(n), (runs, 1)), axis=1)


def shuffle(rng: np.random.Generator, messages: np.ndarray) -> np.ndarray:
    """The shuffler S: permute axis 1 (the messages) of `messages` (runs, n, ...) uniformly at
    random, independently in each run; each message (the trailing axes) moves as a whole."""
    messages = np.asarray(messages)
    if messages.ndim < 2:
        raise ValueError(f"messages must have shape (runs, n, ...), got {messages.shape}")
    runs, n = messages.shape[:2]
    perm = permutations(rng, runs, n)
    return messages[np.arange(runs)[:, None], perm]


def gaussian_ldp_sigma(epsilon0: float, delta0: float) -> float:
    """σ = 4√(2 log(2.5/δ0))/ε0: Chowdhury & Zhou 2022, Cor. B.3 / Prop. F.1 (Zheng et al. 2020's randomizer).

    The classical Gaussian mechanism (Dwork-Roth Thm A.1, valid for ε < 1) for two releases, the
    vector and the matrix, each with L2 sensitivity 2 at budget (ε0/2, δ0/2):
    2·√(2 log(1.25/(δ0/2)))/(ε0/2). The paper requires ε0 <= 1.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    delta0 = check_open_unit(delta0, "delta0")
    if epsilon0 > 1.0:
        raise ValueError(f"epsilon0 must be <= 1 for the classical Gaussian mechanism, got {epsilon0!r}")
    return 4.0 * math.sqrt(2.0 * math.log(2.5 / delta0)) / epsilon0


def fmt20_amplification_applies(epsilon0: float, n: int, delta_prime: float) -> bool:
    """Condition of Chowdhury & Zhou 2022, Lemma B.4: ε0 <= log(n / (16 log(2/δ')))."""
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_positive_int(n, "n")
    delta_prime = check_open_unit(delta_prime, "delta_prime")
    ratio = n / (16.0 * math.log(2.0 / delta_prime))
    return ratio > 1.0 and epsilon0 <= math.log(ratio)


def fmt20_amplification(epsilon0: float, delta0: float, n: int, delta_prime: float) -> tuple[float, float]:
    """The paper's amplification formula, Chowdhury & Zhou 2022, Lemma B.4 (Feldman, McMillan, Talwar, "Hiding
    Among the Clones", arXiv 2020, Thm 3.8), as stated:

        ε̃ = log(1 + (e^ε0 − 1)/(e^ε0 + 1)·(8√(e^ε0 log(4/δ'))/√n + 8e^ε0/n))
        δ̃ = δ' + (e^ε̃ + 1)(1 + e^−ε0/2)·n·δ0

    for an (ε0, δ0)-LDP randomizer over n users, valid when ε0 <= log(n/(16 log(2/δ'))) (raises
    ValueError otherwise). This is the paper's claim; the accounting engine's `shuffle` accountant
    (FMT21 closed form and numerical bound) is separate and tighter.
    """
    if not fmt20_amplification_applies(epsilon0, n, delta_prime):
        raise ValueError(
            f"epsilon0={epsilon0!r} exceeds log(n/(16 log(2/delta_prime))) for n={n}, "
            f"delta_prime={delta_prime}: Chowdhury & Zhou 2022, Lemma B.4 does not apply"
        )
    delta0 = check_delta(delta0, "delta0")
    e0 = math.exp(epsilon0)
    inner = 8.0 * math.sqrt(e0 * math.log(4.0 / delta_prime)) / math.sqrt(n) + 8.0 * e0 / n
    eps = math.log1p((e0 - 1.0) / (e0 + 1.0) * inner)
    return eps, delta_prime + (math.exp(eps) + 1.0) * (1.0 + math.exp(-epsilon0) / 2.0) * n * delta0


def fmt21_local_delta_term(epsilon: float, epsilon0: float, delta0: float, n: int) -> float:
    """Extra δ of shuffling an (ε0, δ0)-LDP (not pure) randomizer: (e^ε + 1)(1 + e^−ε0/2)·n·δ0.

    Feldman, McMillan, Talwar (FOCS 2021), Thm 3.8: if shuffling pure ε0-LDP randomizers gives
    (ε, δ), shuffling (ε0, δ0)-LDP ones gives (ε, δ + this term); the δ̃ of Chowdhury & Zhou 2022, Lemma B.4.
    The accountants already add it for `ShuffledDpEvent(..., local_delta=δ0)` (`central_event`);
    this is the formula on its own, for reports and for checking the paper's arithmetic.
    """
    check_epsilon(epsilon)
    check_epsilon(epsilon0, "epsilon0")
    delta0 = check_delta(delta0, "delta0")
    n = check_positive_int(n, "n")
    return local_delta_term(epsilon, epsilon0, delta0, n)


@dataclasses.dataclass(frozen=True)
class GaussianShuffleProtocol:
    """P_Amp of Chowdhury & Zhou (ICML 2022) on one batch of `num_users` users: R_Amp -> S_Amp -> A_Amp (Algs. 2-4).

    Inputs per user: a vector v (‖v‖₂ <= 1) and a symmetric matrix X (‖X‖_F <= 1), e.g. v = φ·y and
    X = φφᵀ with ‖φ‖ <= 1, |y| <= 1 (Chowdhury & Zhou (ICML 2022) Assumption 3.1). Noise: v + N(0, σ²I), X + N with
    N_ij = N_ji ~ N(0, σ_M²) i.i.d. for i <= j. `sigma_matrix` defaults to `sigma` (the paper's σ1 = σ2).
    """

    dim: int
    num_users: int
    sigma: float
    sigma_matrix: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_positive_int(self.dim, "dim"))
        object.__setattr__(self, "num_users", check_positive_int(self.num_users, "num_users"))
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        sm = self.sigma if self.sigma_matrix is None else check_positive(self.sigma_matrix, "sigma_matrix")
        object.__setattr__(self, "sigma_matrix", sm)

    @property
    def matrix_sigma(self) -> float:
        """σ_M, the matrix noise's standard deviation (`sigma_matrix`; `sigma` when that is None)."""
        return self.sigma if self.sigma_matrix is None else self.sigma_matrix

    @classmethod
    def from_local_privacy(cls, epsilon0: float, delta0: float, dim: int, batch_size: int) -> GaussianShuffleProtocol:
        """σ = 4√(2 log(2.5/δ0))/ε0 for a target local (ε0, δ0) (Chowdhury & Zhou 2022, Cor. B.3, any B)."""
        return cls(dim=dim, num_users=batch_size, sigma=gaussian_ldp_sigma(epsilon0, delta0))

    # -- the three parts of the protocol -------------------------------------------------------

    def _check_inputs(self, vectors: np.ndarray, matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vectors = check_finite_array(vectors, "vectors", ndim=3)
        matrices = check_finite_array(matrices, "matrices", ndim=4)
        n, d = self.num_users, self.dim
        if vectors.shape[1:] != (n, d):
            raise ValueError(f"vectors must have shape (runs, {n}, {d}), got {vectors.shape}")
        if matrices.shape[1:] != (n, d, d) or matrices.shape[0] != vectors.shape[0]:
            raise ValueError(f"matrices must have shape ({vectors.shape[0]}, {n}, {d}, {d}), got {matrices.shape}")
        transposed = np.swapaxes(matrices, -1, -2)
        # exact symmetry (e.g. φφᵀ) is checked in one pass; the tolerance check only when it fails
        if not (np.array_equal(matrices, transposed) or np.allclose(matrices, transposed)):
            raise ValueError("matrices must be symmetric")
        bound = (1.0 + 1e-9) ** 2  # squared norms, one fused pass each (no sqrt, no temporaries)
        if np.einsum("rni,rni->rn", vectors, vectors).max() > bound:
            raise ValueError(
                "vectors must have L2 norm <= 1 (Chowdhury & Zhou (ICML 2022) Assumption 3.1); clip them first"
            )
        if np.einsum("rnij,rnij->rn", matrices, matrices).max() > bound:
            raise ValueError(
                "matrices must have Frobenius norm <= 1 (Chowdhury & Zhou (ICML 2022) Assumption 3.1); clip them first"
            )
        return vectors, matrices

    def _matrix_noise(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        iu, ju = _triu(self.dim)
        vals = gaussian(rng, self.matrix_sigma, size + (iu.size,))
        out = np.empty(size + (self.dim, self.dim))
        out[..., iu, ju] = vals
        out[..., ju, iu] = vals
        return out

    def randomize(
        self, rng: np.random.Generator, vectors: np.ndarray, matrices: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """R_Amp (Alg. 2): fresh noise per user; returns the messages (runs, n, d) and (runs, n, d, d)."""
        vectors, matrices = self._check_inputs(vectors, matrices)
        m1 = vectors + gaussian(rng, self.sigma, vectors.shape)
        m2 = matrices + self._matrix_noise(rng, matrices.shape[:2])
        return m1, m2

    def shuffle(self, rng: np.random.Generator, m1: np.ndarray, m2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """S_Amp (Alg. 3): two independent uniform permutations (the paper leaves this open)."""
        return shuffle(rng, m1), shuffle(rng, m2)

    @staticmethod
    def analyze(y1: np.ndarray, y2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A_Amp (Alg. 4): the sums of the shuffled messages."""
        return y1.sum(axis=1), y2.sum(axis=1)

    def run(
        self, rng: np.random.Generator, vectors: np.ndarray, matrices: np.ndarray, per_message: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """The analyzer's output (ũ, Ṽ) for each run.

        per_message=False (fast path): the output only depends on the sums, so draw
        Σv + N(0, nσ²I) and ΣX + symmetric N(0, nσ_M²) directly: the same distribution as
        randomizing, shuffling and summing every message (tested).
        """
        if per_message:
            return self.analyze(*self.shuffle(rng, *self.randomize(rng, vectors, matrices)))
        vectors, matrices = self._check_inputs(vectors, matrices)
        runs, n = vectors.shape[:2]
        root = math.sqrt(n)
        u = vectors.sum(axis=1) + gaussian(rng, self.sigma * root, (runs, self.dim))
        v = matrices.sum(axis=1) + root * self._matrix_noise(rng, (runs,))
        return u, v

    # -- privacy ------------------------------------------------------------------------------

    def local_event(self, vector_sensitivity: float = 2.0, matrix_sensitivity: float = 2.0) -> dp_accounting.DpEvent:
        """One user's two messages: Gaussian mechanisms with the given L2 sensitivities (the paper's
        2 and 2 under replace-one with ‖v‖ <= 1, ‖X‖_F <= 1; the matrix one is measured on the upper
        triangle, which is what the noise protects). Composed, they are one Gaussian mechanism with
        noise multiplier 1/√((Δv/σ)² + (ΔM/σ_M)²).
        """
        dv = check_positive(vector_sensitivity, "vector_sensitivity")
        dm = check_positive(matrix_sensitivity, "matrix_sensitivity")
        return dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / math.hypot(dv / self.sigma, dm / self.matrix_sigma))

    def sum_event(self, vector_sensitivity: float = 2.0, matrix_sensitivity: float = 2.0) -> dp_accounting.DpEvent:
        """The analyzer's output (ũ, Ṽ) alone: a Gaussian mechanism with noise σ√n on the sums
        (noise multiplier 1/√((Δv/(σ√n))² + (ΔM/(σ_M√n))²)). It is post-processing of the shuffled
        view, so its ε is a lower bound on the shuffled view's and the exact target for audits that
        observe the released sums (Chowdhury & Zhou (ICML 2022), Remark 3.4: ε_sum <= ε_true <= ε_LDP)."""
        local = self.local_event(vector_sensitivity, matrix_sensitivity)
        return dp_accounting.GaussianDpEvent(noise_multiplier=local.noise_multiplier * math.sqrt(self.num_users))

    def local_epsilon(self, delta0: float, vector_sensitivity: float = 2.0, matrix_sensitivity: float = 2.0) -> float:
        """Exact ε0 of the local randomizer at δ0 (analytic Gaussian mechanism, Balle & Wang 2018,
        via dp-accounting), rounded up by the bisection tolerance so that it is never optimistic."""
        delta0 = check_open_unit(delta0, "delta0")
        nm = self.local_event(vector_sensitivity, matrix_sensitivity).noise_multiplier
        return float(get_epsilon_gaussian(nm, delta0)) + 1e-9

    def central_event(self, delta0: float) -> ShuffledDpEvent:
        """The shuffled batch: `ShuffledDpEvent(ε0, n, local_delta=δ0)` with ε0 = `local_epsilon(δ0)`.

        The Gaussian randomizer is (ε0, δ0)-LDP, not pure; the event carries δ0, so every accountant
        adds the FMT21 Thm 3.8 term (`fmt21_local_delta_term`) to the δ it reports.
        """
        delta0 = check_open_unit(delta0, "delta0")
        return ShuffledDpEvent(local_epsilon=self.local_epsilon(delta0), num_users=self.num_users, local_delta=delta0)

    def sum_noise_std(self) -> tuple[float, float]:
        """Std of each entry of the analyzer's error: σ√n (vector), σ_M√n (matrix)."""
        return self.sigma * math.sqrt(self.num_users), self.matrix_sigma * math.sqrt(self.num_users)
