"""P_GD: multi-round shuffle-private projected gradient descent (Sarmasarkar, App. T, Alg. 7).

Cheu, Joseph, Mao, Peng (2021), Lemma B.4, as used by Sarmasarkar ("Shuffle and Joint
Differential Privacy for Generalized Linear Contextual Bandits") for θ̂_k of ShuffleGLM:

    T_it = ε² n² / (d log³(n d / δ))            (iterations; at least 1, rounded down)
    η    = 2D / (L √T_it)                        (D = diameter of Θ = 2S for the ball ‖θ‖ <= S)
    θ_0  = Π_Θ(0)
    for t = 0 .. T_it − 1:
        ḡ_t = (1/n) · P1(∇ℓ(θ_t, z_1), ..., ∇ℓ(θ_t, z_n))   at (ε_it, δ_it), Δ = L
        θ_{t+1} = Π_Θ(θ_t − η ḡ_t)
    return θ̄ = (1/T_it) Σ_{t<T_it} θ_t

with ε_it = ε / (2√(2 T_it log(1/δ))) and δ_it = δ / (T_it + 1); every user takes part in every
round with a fresh randomizer. P1 is the shuffled vector sum (`BitSumProtocol`). Privacy (Lemma
T.2): (ε, δ) by advanced composition over the T_it rounds (Dwork-Roth Thm 3.20).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import dp_accounting
import numpy as np

from dpaudit.mechanisms.vector_sum import VECTOR_SUM_RANGES, BitSumProtocol
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_finite_array,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "pgd_iterations",
    "pgd_step_size",
    "pgd_round_privacy",
    "advanced_composition",
    "project_ball",
    "clip_rows",
    "PgdRelease",
    "ShuffleGradientDescent",
    "glm_gradients",
]

Gradients = Callable[[np.ndarray], np.ndarray]


def pgd_iterations(epsilon: float, delta: float, num_users: int, dim: int, log_power: int = 3) -> int:
    """T_it = max(1, ⌊ε² n² / (d log^k(n d/δ))⌋) with k = 3 (Sarmasarkar, Alg. 7 / Lemma T.2).

    Sarmasarkar's (shuffle/joint DP GLM bandits) Lemma E.4 writes a single log (k = 1); `log_power` selects that reading.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    n = check_positive_int(num_users, "num_users")
    d = check_positive_int(dim, "dim")
    k = check_positive_int(log_power, "log_power")
    return max(1, math.floor(epsilon**2 * n**2 / (d * math.log(n * d / delta) ** k)))


def pgd_step_size(diameter: float, lipschitz: float, iterations: int) -> float:
    """η = 2D/(L√T) (Sarmasarkar, Lemma T.2, with D the diameter of Θ and L the gradient bound)."""
    return 2.0 * check_positive(diameter, "diameter") / (
        check_positive(lipschitz, "lipschitz") * math.sqrt(check_positive_int(iterations, "iterations"))
    )


def pgd_round_privacy(epsilon: float, delta: float, iterations: int) -> tuple[float, float]:
    """Per-round budget of Sarmasarkar, Alg. 7: ε_it = ε/(2√(2T log(1/δ))), δ_it = δ/(T+1)."""
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    t = check_positive_int(iterations, "iterations")
    return epsilon / (2.0 * math.sqrt(2.0 * t * math.log(1.0 / delta))), delta / (t + 1)


def advanced_composition(epsilon0: float, delta0: float, count: int, delta_prime: float) -> tuple[float, float]:
    """k-fold adaptive composition of (ε0, δ0)-DP mechanisms (Dwork, Rothblum, Vadhan 2010;
    Dwork-Roth Thm 3.20): (ε0√(2k ln(1/δ')) + kε0(e^ε0 − 1), kδ0 + δ')."""
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    delta0 = check_open_unit(delta0, "delta0") if delta0 != 0 else 0.0
    k = check_positive_int(count, "count")
    delta_prime = check_open_unit(delta_prime, "delta_prime")
    eps = epsilon0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * epsilon0 * math.expm1(epsilon0)
    return eps, k * delta0 + delta_prime


def _shrink(norm: np.ndarray, limit: float) -> np.ndarray:
    """min(1, limit/norm), without dividing by tiny norms."""
    over = norm > limit
    return np.where(over, limit / np.where(over, norm, 1.0), 1.0)


def project_ball(theta: np.ndarray, radius: float) -> np.ndarray:
    """Π onto {‖θ‖₂ <= S}: radial scaling of the rows of `theta` (runs, d)."""
    return theta * _shrink(np.linalg.norm(theta, axis=-1, keepdims=True), radius)


def clip_rows(vectors: np.ndarray, bound: float) -> np.ndarray:
    """Scale each vector (last axis) to L2 norm <= bound (enforces the sensitivity Δ = L).

    Entries are then clamped to [−bound, bound]: the scaling can overshoot by one rounding unit,
    and the vector-sum randomizer accepts only entries in that range.
    """
    scaled = vectors * _shrink(np.linalg.norm(vectors, axis=-1, keepdims=True), bound)
    return np.clip(scaled, -bound, bound)


@dataclasses.dataclass(frozen=True)
class PgdRelease:
    """theta_bar (runs, d): the output θ̄; iterates (runs, T, d): θ_0..θ_{T−1}; gradient_sums
    (runs, T, d): the analyzer's estimate of Σ_i ∇ℓ(θ_t, z_i) each round (what the shuffle reveals,
    up to an affine map of the label counts)."""

    theta_bar: np.ndarray
    iterates: np.ndarray
    gradient_sums: np.ndarray


@dataclasses.dataclass(frozen=True)
class ShuffleGradientDescent:
    """P_GD over `num_users` users in dimension `dim` for a target (ε, δ) (Sarmasarkar, App. T).

    lipschitz: L, the bound on each user's gradient norm (gradients are clipped to it, so the
    sensitivity holds whatever the data); radius: S, Θ = {‖θ‖ <= S} (D = 2S). iterations and
    step_size default to the paper's formulas; protocol: the per-round `BitSumProtocol` (d labels,
    bound L), required: `dpaudit.algorithms.shuffle_claims.shuffle_gradient_descent` gives the paper's
    eq. 127 at (ε_it, δ_it); pass one with fewer noise bits, e.g. an author-code b, to audit it.
    regularization λ adds (λ/n)·θ to the averaged gradient on the analyzer side (data independent,
    so post-processing; the paper folds λ_max/(2n)‖θ‖² into ℓ and L instead).
    """

    num_users: int
    dim: int
    epsilon: float
    delta: float
    lipschitz: float
    radius: float
    iterations: int | None = None
    step_size: float | None = None
    regularization: float = 0.0
    range: str = "paper"
    protocol: BitSumProtocol | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_users", check_positive_int(self.num_users, "num_users"))
        object.__setattr__(self, "dim", check_positive_int(self.dim, "dim"))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_open_unit(self.delta, "delta"))
        object.__setattr__(self, "lipschitz", check_positive(self.lipschitz, "lipschitz"))
        object.__setattr__(self, "radius", check_positive(self.radius, "radius"))
        object.__setattr__(self, "regularization", check_nonnegative(self.regularization, "regularization"))
        check_choice(self.range, VECTOR_SUM_RANGES, "range")
        t = (
            pgd_iterations(self.epsilon, self.delta, self.num_users, self.dim)
            if self.iterations is None
            else check_positive_int(self.iterations, "iterations")
        )
        object.__setattr__(self, "iterations", t)
        eta = pgd_step_size(2.0 * self.radius, self.lipschitz, t) if self.step_size is None else self.step_size
        object.__setattr__(self, "step_size", check_positive(eta, "step_size"))
        if self.protocol is None:
            raise ValueError(
                "protocol is required (a BitSumProtocol with num_labels = dim and bound = lipschitz); "
                "dpaudit.algorithms.shuffle_claims.shuffle_gradient_descent builds the paper's eq. 127 protocol"
            )
        p = self.protocol
        if (p.num_users, p.num_labels, p.bound) != (self.num_users, self.dim, self.lipschitz):
            raise ValueError(
                "protocol must have num_users, num_labels, bound = "
                f"{(self.num_users, self.dim, self.lipschitz)}, got {(p.num_users, p.num_labels, p.bound)}"
            )

    @property
    def round_privacy(self) -> tuple[float, float]:
        """(ε_it, δ_it) of `pgd_round_privacy`."""
        return pgd_round_privacy(self.epsilon, self.delta, self.iterations)

    def run(
        self, rng: np.random.Generator, gradients: Gradients, runs: int, per_message: bool = False
    ) -> PgdRelease:
        """Run P_GD for `runs` independent runs.

        gradients(theta) takes θ of shape (runs, d) and returns every user's gradient ∇ℓ(θ, z_i)
        at it, shape (runs, n, d) (e.g. `glm_gradients`); each is clipped to norm L before it is
        randomized. per_message=True sends every bit through the shuffler (small sizes only).
        """
        runs = check_positive_int(runs, "runs")
        n, d, t_it = self.num_users, self.dim, self.iterations
        theta = project_ball(np.zeros((runs, d)), self.radius)
        iterates = np.empty((runs, t_it, d))
        sums = np.empty((runs, t_it, d))
        for t in range(t_it):
            iterates[:, t] = theta
            grads = check_finite_array(gradients(theta), "gradients")
            if grads.shape != (runs, n, d):
                raise ValueError(f"gradients must return shape {(runs, n, d)}, got {grads.shape}")
            released = self.protocol.sum_vectors(rng, clip_rows(grads, self.lipschitz), per_message)
            sums[:, t] = released
            mean_grad = released / n + (self.regularization / n) * theta
            theta = project_ball(theta - self.step_size * mean_grad, self.radius)
        return PgdRelease(iterates.mean(axis=1), iterates, sums)

    def run_glm(
        self, rng: np.random.Generator, features: np.ndarray, rewards: np.ndarray,
        link: Callable[[np.ndarray], np.ndarray],
    ) -> PgdRelease:
        """`run` with `glm_gradients(features, rewards, link)`, fused: the same law, and on the same rng the
        same draws (per round one uniform per user and label, then the binomial noise), so the same release.

        A GLM gradient is c_i·x_i with c_i = μ(⟨x_i, θ⟩) − r_i, so clipping it to norm L scales c_i by
        min(1, L/(|c_i|‖x_i‖)) with ‖x_i‖ computed once; each label's count Σ_i x̂_i + Bin(n·b, p) takes
        x̂_i = ⌈s_i − U_i⌉ = ⌊s_i⌋ + 1{U_i < s_i − ⌊s_i⌋} for s_i = (v_i + Δ)g/Δ' ∈ [0, cap] (Cheu, Joseph,
        Mao, Peng, "Shuffle private stochastic convex optimization", ICLR 2022, randomized rounding of the
        vector-sum randomizer), summed by a matrix product. features (runs, n, d) or (n, d); rewards likewise.
        """
        features = check_finite_array(features, "features")
        rewards = check_finite_array(rewards, "rewards")
        if features.shape[:-1] != rewards.shape:
            raise ValueError(f"rewards must have shape {features.shape[:-1]}, got {rewards.shape}")
        n, d, t_it = self.num_users, self.dim, self.iterations
        if features.shape[-2:] != (n, d):
            raise ValueError(f"features must end in shape {(n, d)}, got {features.shape}")
        runs = features.shape[0] if features.ndim == 3 else 1
        x = np.broadcast_to(features, (runs, n, d))
        r = np.broadcast_to(rewards, (runs, n))
        proto, lip = self.protocol, self.lipschitz
        scale = proto.g / proto.unit
        x_norm = np.linalg.norm(x, axis=-1)
        x_norm_max = float(x_norm.max())
        x_t = np.ascontiguousarray(np.swapaxes(x, 1, 2))  # (runs, d, n)
        x_scaled = x_t * scale
        ones = np.ones((n, 1))
        noise_trials = n * proto.b  # Σ_users Bin(b, p) = Bin(n·b, p), drawn as `BitSumProtocol.counts` draws it
        s = np.empty((runs, d, n))
        theta = project_ball(np.zeros((runs, d)), self.radius)
        iterates = np.empty((runs, t_it, d))
        sums = np.empty((runs, t_it, d))
        for t in range(t_it):
            iterates[:, t] = theta
            c = link(np.matmul(theta[:, None, :], x_t)[:, 0]) - r
            if max(c.max(), -c.min()) * x_norm_max > lip:  # else no gradient is clipped
                c *= lip / np.maximum(np.abs(c) * x_norm, lip)  # = _shrink(‖c x‖, L): exactly 1 if unclipped
            np.multiply(x_scaled, c[:, None, :], out=s)
            s += lip * scale
            np.clip(s, 0.0, proto.cap, out=s)
            s -= np.swapaxes(rng.random((runs, n, d)), 1, 2)
            np.ceil(s, out=s)
            counts = np.matmul(s, ones)[..., 0] + rng.binomial(noise_trials, proto.p, (runs, d))
            released = proto.analyze(counts)
            sums[:, t] = released
            theta = project_ball(theta - self.step_size * (released / n + (self.regularization / n) * theta),
                                 self.radius)
        return PgdRelease(iterates.mean(axis=1), iterates, sums)

    # -- privacy ------------------------------------------------------------------------------

    def round_event(self) -> dp_accounting.DpEvent:
        """One round: the vector-sum protocol's event (`BitSumProtocol.event`: a binomial count
        per label, composed over the d labels; the exact mechanism, accountable at any b)."""
        return self.protocol.event()

    def event(self) -> dp_accounting.DpEvent:
        """All rounds: SelfComposedDpEvent(round_event, T_it) (each user is in every round)."""
        return dp_accounting.SelfComposedDpEvent(self.round_event(), self.iterations)


def glm_gradients(
    features: np.ndarray, rewards: np.ndarray, link: Callable[[np.ndarray], np.ndarray]
) -> Gradients:
    """Per-user gradients of the GLM negative log-likelihood, ∇θ ℓ = (μ(⟨x, θ⟩) − r)·x (Sarmasarkar, §4).

    features (runs, n, d) or (n, d), rewards (runs, n) or (n,); link μ, e.g. a sigmoid.
    """
    features = check_finite_array(features, "features")
    rewards = check_finite_array(rewards, "rewards")
    if features.shape[:-1] != rewards.shape:
        raise ValueError(f"rewards must have shape {features.shape[:-1]}, got {rewards.shape}")

    def gradients(theta: np.ndarray) -> np.ndarray:
        x = features if features.ndim == 3 else np.broadcast_to(features, (theta.shape[0],) + features.shape)
        r = rewards if rewards.ndim == 2 else np.broadcast_to(rewards, (theta.shape[0],) + rewards.shape)
        margin = np.einsum("rnd,rd->rn", x, theta)
        return (link(margin) - r)[..., None] * x

    return gradients
