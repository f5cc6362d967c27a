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
from collections.abc import Callable

import dp_accounting
import numpy as np

from dpaudit.mechanisms._pgd_kernel import table_round
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
    "PGD_SAMPLERS",
    "PgdRelease",
    "ShuffleGradientDescent",
    "advanced_composition",
    "clip_rows",
    "glm_gradients",
    "pgd_iterations",
    "pgd_round_privacy",
    "pgd_step_size",
    "project_ball",
    "random_bits16",
    "round_with_bits",
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
    return (
        2.0
        * check_positive(diameter, "diameter")
        / (check_positive(lipschitz, "lipschitz") * math.sqrt(check_positive_int(iterations, "iterations")))
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
    def _rounds(self) -> int:
        """T_it (`iterations`, filled in by __post_init__)."""
        assert self.iterations is not None
        return self.iterations

    @property
    def _eta(self) -> float:
        """The step size (`step_size`, filled in by __post_init__)."""
        assert self.step_size is not None
        return self.step_size

    @property
    def _bits(self) -> BitSumProtocol:
        """The vector-sum protocol (`protocol`, required by __post_init__)."""
        assert self.protocol is not None
        return self.protocol

    @property
    def round_privacy(self) -> tuple[float, float]:
        """(ε_it, δ_it) of `pgd_round_privacy`."""
        return pgd_round_privacy(self.epsilon, self.delta, self._rounds)

    def run(self, rng: np.random.Generator, gradients: Gradients, runs: int, per_message: bool = False) -> PgdRelease:
        """Run P_GD for `runs` independent runs.

        gradients(theta) takes θ of shape (runs, d) and returns every user's gradient ∇ℓ(θ, z_i)
        at it, shape (runs, n, d) (e.g. `glm_gradients`); each is clipped to norm L before it is
        randomized. per_message=True sends every bit through the shuffler (small sizes only).
        """
        runs = check_positive_int(runs, "runs")
        n, d, t_it = self.num_users, self.dim, self._rounds
        theta = project_ball(np.zeros((runs, d)), self.radius)
        iterates = np.empty((runs, t_it, d))
        sums = np.empty((runs, t_it, d))
        for t in range(t_it):
            iterates[:, t] = theta
            grads = check_finite_array(gradients(theta), "gradients")
            if grads.shape != (runs, n, d):
                raise ValueError(f"gradients must return shape {(runs, n, d)}, got {grads.shape}")
            released = self._bits.sum_vectors(rng, clip_rows(grads, self.lipschitz), per_message)
            sums[:, t] = released
            mean_grad = released / n + (self.regularization / n) * theta
            theta = project_ball(theta - self._eta * mean_grad, self.radius)
        return PgdRelease(iterates.mean(axis=1), iterates, sums)

    def run_glm(
        self,
        rng: np.random.Generator,
        features: np.ndarray,
        rewards: np.ndarray,
        link: Callable[[np.ndarray], np.ndarray],
        link_curvature: float | None = None,
        sampler: str = "bits",
    ) -> PgdRelease:
        """`run` with `glm_gradients(features, rewards, link)`, fused: the same law of every release.

        A GLM gradient is c_i·x_i with c_i = μ(⟨x_i, θ⟩) − r_i, so clipping it to norm L scales c_i by
        min(1, L/(|c_i|‖x_i‖)) with ‖x_i‖ computed once; each label's count is Σ_i x̂_i + Bin(n·b, p) with
        x̂_i = ⌊s_i⌋ + Bernoulli(s_i − ⌊s_i⌋) for s_i = (v_i + Δ)g/Δ' ∈ [0, cap] (Cheu, Joseph, Mao, Peng,
        "Shuffle private stochastic convex optimization", ICLR 2022, randomized rounding of the vector-sum
        randomizer), summed over the users.

        sampler: how the rounding Bernoullis are drawn (the law is the same):
        - "uniform": x̂ = ⌈s − U⌉ with one float64 uniform per user and label, then the binomial noise: the very
          draws of `run` (`BitSumProtocol.counts`), so on one seed the same release, bit for bit;
        - "bits" (default): 16 random bits B per user and label, U = (B + V)/2¹⁶ with V ~ U[0, 1) drawn only when
          B = ⌊2¹⁶·frac(s)⌋ (probability 2⁻¹⁶), so 1{U < frac(s)} is exactly Bernoulli(frac(s))
          (`round_with_bits`). With `link_curvature` = sup|μ''| given, μ is first read from a table (linear
          interpolation, error <= h²/8·sup|μ''|) and the exact μ is evaluated only for the entries whose rounding
          that error could change (`_GlmRounding`; compiled by numba when installed, `dpaudit[fast]`): the same
          x̂ as computing μ everywhere, on the same draws.
        features (runs, n, d) or (n, d); rewards likewise.
        """
        features = check_finite_array(features, "features")
        rewards = check_finite_array(rewards, "rewards")
        check_choice(sampler, PGD_SAMPLERS, "sampler")
        if link_curvature is not None:
            link_curvature = check_nonnegative(link_curvature, "link_curvature")
        if features.shape[:-1] != rewards.shape:
            raise ValueError(f"rewards must have shape {features.shape[:-1]}, got {rewards.shape}")
        n, d, t_it = self.num_users, self.dim, self._rounds
        if features.shape[-2:] != (n, d):
            raise ValueError(f"features must end in shape {(n, d)}, got {features.shape}")
        runs = features.shape[0] if features.ndim == 3 else 1
        if sampler == "uniform":
            return self._run_glm_uniform(rng, features, rewards, link, runs)
        x = np.broadcast_to(features, (runs, n, d))
        r = np.ascontiguousarray(np.broadcast_to(rewards, (runs, n)), dtype=float)
        rounding = _GlmRounding(self._bits, self.lipschitz, x, r, link, self.radius, link_curvature)
        noise_trials = n * self._bits.b
        theta = project_ball(np.zeros((runs, d)), self.radius)
        iterates = np.empty((runs, t_it, d))
        sums = np.empty((runs, t_it, d))
        for t in range(t_it):
            iterates[:, t] = theta
            counts = rounding.counts(rng, theta) + rng.binomial(noise_trials, self._bits.p, (runs, d))
            released = self._bits.analyze(counts)
            sums[:, t] = released
            theta = project_ball(theta - self._eta * (released / n + (self.regularization / n) * theta), self.radius)
        return PgdRelease(iterates.mean(axis=1), iterates, sums)

    def _run_glm_uniform(
        self,
        rng: np.random.Generator,
        features: np.ndarray,
        rewards: np.ndarray,
        link: Callable[[np.ndarray], np.ndarray],
        runs: int,
    ) -> PgdRelease:
        """`run_glm` with sampler="uniform": per round one uniform per user and label, then the binomial noise,
        as `BitSumProtocol.counts` draws them; x̂ = ⌈s − U⌉ = ⌊s⌋ + 1{U < s − ⌊s⌋}, summed by a matrix product."""
        n, d, t_it = self.num_users, self.dim, self._rounds
        x = np.broadcast_to(features, (runs, n, d))
        r = np.broadcast_to(rewards, (runs, n))
        proto, lip = self._bits, self.lipschitz
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
            theta = project_ball(theta - self._eta * (released / n + (self.regularization / n) * theta), self.radius)
        return PgdRelease(iterates.mean(axis=1), iterates, sums)

    # -- privacy ------------------------------------------------------------------------------

    def round_event(self) -> dp_accounting.DpEvent:
        """One round: the vector-sum protocol's event (`BitSumProtocol.event`: a binomial count
        per label, composed over the d labels; the exact mechanism, accountable at any b)."""
        return self._bits.event()

    def event(self) -> dp_accounting.DpEvent:
        """All rounds: SelfComposedDpEvent(round_event, T_it) (each user is in every round)."""
        return dp_accounting.SelfComposedDpEvent(self.round_event(), self._rounds)


PGD_SAMPLERS = ("bits", "uniform")
_BITS = 16  # random bits per rounding Bernoulli in the "bits" sampler
_BITS_UNIT = 2.0**-_BITS
# bit generators whose random_raw words are uniform on all 64 bits (MT19937's carry 32)
_FULL_WORD_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)
_TABLE_STEP = 2.0**-10  # h of the link table: error h²/8·sup|μ''| <= 3e-8 for the probit and logistic links
_TABLE_MAX_POINTS = 1 << 22
_SCALAR_ENTRIES = 32  # up to this many entries to fix up, `_GlmRounding._exact_sums` loops in Python


def random_bits16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Independent uniform integers in [0, 2¹⁶), uint16 of `shape`: the bit generator's 64-bit words
    (`random_raw`) split in four where every bit of a word is uniform, else `Generator.integers`."""
    size = math.prod(shape)
    bg = rng.bit_generator
    if isinstance(bg, _FULL_WORD_GENERATORS):
        return bg.random_raw(-(-size // 4)).view(np.uint16)[:size].reshape(shape)
    return rng.integers(0, 1 << _BITS, size=shape, dtype=np.uint16)


def round_with_bits(rng: np.random.Generator, values: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Randomized rounding x̂ = ⌊s⌋ + 1{U < s − ⌊s⌋}, exactly Bernoulli(s − ⌊s⌋) above ⌊s⌋, for s >= 0.

    U = (B + V)/2¹⁶ with B the given uniform 16-bit integers and V ~ U[0, 1) drawn from `rng` (in C order)
    only where B = ⌊t⌋ < t for t = 2¹⁶(s − ⌊s⌋) (probability <= 2⁻¹⁶): elsewhere 1{U < s − ⌊s⌋} = 1{B < ⌊t⌋}
    whatever V. The arithmetic is exact (s − ⌊s⌋ by Sterbenz's lemma, ×2¹⁶ a power of two), so the law is
    the rounding of Cheu, Joseph, Mao, Peng (ICLR 2022) at the float64 value s itself.
    """
    floor = np.floor(values)
    t = (values - floor) * (1 << _BITS)
    t_floor = np.floor(t)
    up = bits < t_floor
    tie = (bits == t_floor) & (t > t_floor)
    if tie.any():
        where = np.nonzero(tie)
        up[where] = rng.random(where[0].size) < (t - t_floor)[where]
    return floor + up


class _GlmRounding:
    """The "bits" sampler of `ShuffleGradientDescent.run_glm`: each round, the users' rounded gradient entries
    x̂ (runs, d, n) for the current θ, exactly as `round_with_bits` on the exact values would give on the same
    draws (16 random bits per entry first, then the tie uniforms in C order of the entries).

    With a link table (sup|μ''| known), μ(⟨x, θ⟩) is interpolated with error e <= h²/8·sup|μ''| (+1e-12 for
    round-off), which moves each s = x_k·c·g/Δ' + L·g/Δ' by at most m = max|x_k g/Δ'|·e (norm clipping of c is
    1-Lipschitz); q = s − B/2¹⁶ then gives x̂ = ⌈q⌉ unless frac(q) lies in [0, 2⁻¹⁶) (a tie), so the entries
    whose q is within m (+2⁻³⁰) of an integer or of an integer + 2⁻¹⁶ are recomputed from the exact μ and
    the rest keep ⌈q⌉: the same x̂ as the exact path, with μ evaluated on a few users per round.
    """

    def __init__(
        self,
        proto: BitSumProtocol,
        lipschitz: float,
        x: np.ndarray,
        r: np.ndarray,
        link: Callable[[np.ndarray], np.ndarray],
        radius: float,
        curvature: float | None,
    ) -> None:
        runs, n, d = x.shape
        self.shape = (runs, d, n)
        self.link, self.lip = link, lipschitz
        self.r = np.ascontiguousarray(r, dtype=float)
        scale = proto.g / proto.unit
        self.offset, self.cap = lipschitz * scale, float(proto.cap)
        self.x_norm = np.linalg.norm(x, axis=-1)
        self.x_norm_max = float(self.x_norm.max())
        self.x_t = np.ascontiguousarray(np.swapaxes(x, 1, 2))  # (runs, d, n)
        self.x_scaled = self.x_t * scale
        self.ones = np.ones((n, 1))
        self.table: tuple[np.ndarray, np.ndarray, float, int] | None = None  # (values, slopes, shift, last)
        if curvature is not None:
            h = _TABLE_STEP
            half = h * math.ceil((radius * self.x_norm_max * (1.0 + 2.0**-20) + 4.0 * h) / h)  # |⟨x, θ⟩| < half
            points = round(2.0 * half / h) + 1
            if points <= _TABLE_MAX_POINTS:
                values = np.asarray(link(-half + h * np.arange(points)), dtype=float)
                self.table = (values[:-1].copy(), np.diff(values), half / h, points - 2)
                self.z_limit = half - 2.0 * h
                # u = ⟨x, θ⟩/h + half/h in one product: x/h with a last row of ones against (θ, half/h)
                self.x_grid = np.concatenate([self.x_t / h, np.ones((runs, 1, n))], axis=1)
                self.theta_grid = np.empty((runs, 1, d + 1))
                self.link_error = h * h / 8.0 * curvature + 1e-12
                self.margin = float(np.abs(self.x_scaled).max()) * self.link_error + 2.0**-30
                self.u, self.frac, self.c, self.tmp = (np.empty((runs, 1, n)) for _ in range(4))
                self.index = np.empty((runs, 1, n), dtype=np.intp)
                self.q, self.xhat = np.empty(self.shape), np.empty(self.shape)
                self.flag = np.empty(self.shape, dtype=bool)
                self.sums = np.empty((runs, d))

    def margins(self, theta: np.ndarray, runs: np.ndarray | slice, users: np.ndarray | slice) -> np.ndarray:
        """⟨x_i, θ⟩ = Σ_k x_ik θ_k, summed in the order k = 0..d−1 elementwise (so a subset gets the same values)."""
        th = theta[runs] if isinstance(runs, np.ndarray) else theta[:, None, :]
        z = self.x_t[runs, 0, users] * th[..., 0]
        for k in range(1, self.shape[1]):
            z += self.x_t[runs, k, users] * th[..., k]
        return z

    def exact_values(self, z: np.ndarray, r: np.ndarray, x_norm: np.ndarray, x_scaled: np.ndarray) -> np.ndarray:
        """s = clip((μ(z) − r)·min(1, L/(|μ(z) − r|‖x‖))·x_k·g/Δ' + L·g/Δ', 0, cap), elementwise (broadcast)."""
        c = self.link(z) - r
        c *= self.lip / np.maximum(np.abs(c) * x_norm, self.lip)  # exactly 1 where the gradient is not clipped
        s = x_scaled * c
        s += self.offset
        return np.clip(s, 0.0, self.cap, out=s)

    def counts(self, rng: np.random.Generator, theta: np.ndarray) -> np.ndarray:
        """Σ_users x̂ per run and label (runs, d) at θ (runs, d), before the noise: 16 bits per entry drawn first,
        then the tie uniforms (`round_with_bits`) in C order of the (run, label, user) entries."""
        bits = random_bits16(rng, self.shape)
        if self.table is not None:
            out = self._counts_table(rng, theta, bits, self.table)
            if out is not None:
                return out
        z = self.margins(theta, slice(None), slice(None))
        s = self.exact_values(z[:, None, :], self.r[:, None, :], self.x_norm[:, None, :], self.x_scaled)
        return np.matmul(round_with_bits(rng, s, bits), self.ones)[..., 0]

    def _exact_sums(
        self, rng: np.random.Generator, theta: np.ndarray, bits: np.ndarray, flat: np.ndarray
    ) -> np.ndarray:
        """Σ x̂ per run and label (runs, d) over the entries `flat` (ascending flat (run, label, user) indices),
        from the exact link: `margins`, `exact_values` and `round_with_bits` on those entries, entry by entry in
        Python floats when they are few (the same IEEE operations in the same order, so the same x̂ and draws)."""
        runs, d, n = self.shape
        if flat.size > _SCALAR_ENTRIES:
            run_label, users = np.divmod(flat, n)
            rr = run_label // d
            s = self.exact_values(
                self.margins(theta, rr, users),
                self.r[rr, users],
                self.x_norm[rr, users],
                self.x_scaled.reshape(-1)[flat],
            )
            xhat = round_with_bits(rng, s, bits.reshape(-1)[flat])
            return np.bincount(run_label, weights=xhat, minlength=runs * d).reshape(runs, d)
        x_t, theta = self.x_t, np.asarray(theta, dtype=float)
        entries, margins = [], []
        for f in flat.tolist():
            run_label, i = divmod(f, n)
            a = run_label // d
            z = x_t[a, 0, i] * theta[a, 0]
            for k in range(1, d):
                z += x_t[a, k, i] * theta[a, k]
            entries.append((f, run_label, a, i))
            margins.append(z)
        mu = self.link(np.array(margins))
        out = np.zeros(runs * d)
        x_scaled, bits_flat, lip, unit = self.x_scaled.reshape(-1), bits.reshape(-1), self.lip, float(1 << _BITS)
        for (f, run_label, a, i), m in zip(entries, mu):
            c = m - self.r[a, i]
            c *= lip / max(abs(c) * self.x_norm[a, i], lip)
            value = min(max(x_scaled[f] * c + self.offset, 0.0), self.cap)
            floor = math.floor(value)
            t = (value - floor) * unit
            t_floor = math.floor(t)
            b = int(bits_flat[f])
            out[run_label] += floor + (b < t_floor or (b == t_floor and t > t_floor and rng.random() < t - t_floor))
        return out.reshape(runs, d)

    def _counts_table(
        self,
        rng: np.random.Generator,
        theta: np.ndarray,
        bits: np.ndarray,
        table: tuple[np.ndarray, np.ndarray, float, int],
    ) -> np.ndarray | None:
        """`counts` with the link `table`: the entries the table decides, plus `_exact_sums` over the others;
        None if some ⟨x, θ⟩ leaves the table (cannot happen for ‖θ‖ <= radius)."""
        values, slopes, shift, last = table
        if table_round is not None:
            if (
                table_round(
                    theta / _TABLE_STEP,
                    shift,
                    float(last),
                    self.x_t,
                    values,
                    slopes,
                    self.r,
                    self.x_norm,
                    self.lip,
                    self.x_scaled,
                    self.offset,
                    bits,
                    _BITS_UNIT,
                    self.margin,
                    self.sums,
                    self.flag,
                    self.frac[0, 0],
                )
                < 0
            ):
                return None
            flat = np.flatnonzero(self.flag)
            return self.sums + self._exact_sums(rng, theta, bits, flat) if flat.size else self.sums.copy()
        u, frac, c, tmp, index, q, xhat, flag = (
            self.u,
            self.frac,
            self.c,
            self.tmp,
            self.index,
            self.q,
            self.xhat,
            self.flag,
        )
        self.theta_grid[:, 0, :-1] = theta
        self.theta_grid[:, 0, -1] = shift
        # |⟨x, θ⟩| <= ‖θ‖·max‖x‖ (up to round-off, the 1e-9) below half − 2h keeps u in [2, last − 1]
        if (
            math.sqrt(float(np.max(np.einsum("ij,ij->i", theta, theta)))) * self.x_norm_max * (1.0 + 1e-9)
            >= self.z_limit
        ):
            return None
        np.matmul(self.theta_grid, self.x_grid, out=u)  # ⟨x, θ⟩/h + half/h
        np.copyto(index, u, casting="unsafe")  # ⌊u⌋ (u >= 0)
        np.subtract(u, index, out=frac)
        np.take(values, index, out=c)
        np.take(slopes, index, out=tmp)
        np.multiply(tmp, frac, out=tmp)
        np.add(c, tmp, out=c)
        np.subtract(c, self.r[:, None, :], out=c)
        if (max(c.max(), -c.min()) + self.link_error) * self.x_norm_max > self.lip:  # clipping may act
            np.multiply(c, self.lip / np.maximum(np.abs(c) * self.x_norm[:, None, :], self.lip), out=c)
        np.multiply(self.x_scaled, c, out=q)
        np.multiply(bits, -_BITS_UNIT, out=xhat)
        xhat += self.offset
        q += xhat  # q = s − B/2¹⁶
        np.ceil(q, out=xhat)  # x̂ = ⌈q⌉ away from the flagged band
        np.subtract(xhat, q, out=q)  # ⌈q⌉ − q ∈ [0, 1); a tie is ⌈q⌉ − q ∈ (1 − 2⁻¹⁶, 1)
        centre = 0.5 * (1.0 - _BITS_UNIT)
        q -= centre
        np.abs(q, out=q)
        np.greater(q, centre - self.margin, out=flag)
        flat = np.flatnonzero(flag)
        sums = np.matmul(xhat, self.ones)[..., 0]
        if flat.size == 0:
            return sums
        runs, d, n = self.shape
        sums -= np.bincount(flat // n, weights=xhat.reshape(-1)[flat], minlength=runs * d).reshape(runs, d)
        return sums + self._exact_sums(rng, theta, bits, flat)


def glm_gradients(features: np.ndarray, rewards: np.ndarray, link: Callable[[np.ndarray], np.ndarray]) -> Gradients:
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
