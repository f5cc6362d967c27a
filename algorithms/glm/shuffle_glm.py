"""ShuffleGLM: the multi-round shuffle-private batched GLM bandit for stochastic contexts (Sarmasarkar, Alg. 1, §5).

Batches 𝓑_1..𝓑_M fixed in advance (eqs. 6-7); the policy is fixed inside a batch, so a whole batch is
simulated at once for all runs.
- Batch 1 (warm-up): x_t ~ π^G(X_t), the G-optimal design of the round's arm set; V = P2(x xᵀ; Δ = 1) + λI
  (Cheu et al.'s shuffled matrix sum, `BitSumProtocol`) and θ̂_1 = P_GD (`ShuffleGradientDescent`), both at
  (ε/2, δ/2) over the batch's users.
- Batch k ≥ 2: prune X_t sequentially with UCB_j < max LCB_j for j < k (eqs. 13-14, radius γ√κ‖x‖_{V_j⁻¹},
  V_1 = V, V_j = H_j); scale x̃ = √(μ̇(⟨x, θ̂_1⟩)/β(x))·x with β(x) = exp(R min(2S, γ√κ‖x‖_{V⁻¹})) (eqs. 11-12);
  x_t ~ π^G of the scaled set; H_k = P2(c_t x xᵀ; Δ = 1/κ*) + λI with c_t = μ̇(⟨x, θ̂_1⟩)/β(x) clipped to 1/κ*
  (so the sensitivity holds without the paper's probability-1−1/T² event); θ̂_k = P_GD on the batch.
Each batch uses only its own users (parallel composition across batches, §5 "Protocol instantiation").
λ follows eq. 8 with σ the real per-entry noise of the V protocol; γ follows eq. 9 with ν the P_GD error
bound of eq. 128 (both overridable: at the paper's constants the confidence widths exceed the reward range
for T in the thousands, so batch 1 fills the horizon and the algorithm only explores).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from dpaudit.algorithms.glm.environment import GLMData, GLMEnvironment, get_link
from dpaudit.algorithms.shuffle_claims import bit_sum_protocol, shuffle_gradient_descent
from dpaudit.mechanisms.shuffle_gd import PGD_SAMPLERS, glm_gradients, pgd_iterations, project_ball
from dpaudit.mechanisms.vector_sum import BitSumProtocol
from dpaudit.validation import check_choice, check_epsilon, check_open_unit, check_positive, check_positive_int

__all__ = [
    "SHUFFLE_GLM_OBSERVABLES",
    "ShuffleGLMParams",
    "ShuffleGLMResult",
    "g_optimal_design",
    "run_shuffle_glm",
    "shuffle_glm_batches",
    "shuffle_glm_target",
]

SHUFFLE_GLM_OBSERVABLES = ("released", "actions")


def g_optimal_design(
    arms: np.ndarray, mask: np.ndarray | None = None, iterations: int = 60, ridge: float = 1e-6
) -> np.ndarray:
    """Approximate G-optimal design π over each arm set (Lemma 4.3; Fedorov-Wynn / Frank-Wolfe on log det).

    arms (..., K, d), mask (..., K) of available arms. Step towards the arm maximising g(x) = xᵀA(π)⁻¹x with
    A(π) = Σ π_x x xᵀ + ridge I, at the exact line-search step (g*/d − 1)/(g* − 1) (Kiefer-Wolfowitz: at the
    optimum max g = d; a distribution with max g ≤ 2d is what Lemma 4.3 asks for).
    """
    arms = np.asarray(arms, dtype=float)
    _, d = arms.shape[-2:]
    mask = np.ones(arms.shape[:-1], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != arms.shape[:-1]:
        raise ValueError(f"mask must have shape {arms.shape[:-1]}, got {mask.shape}")
    avail = mask & (np.linalg.norm(arms, axis=-1) > 0)
    avail = np.where(avail.any(axis=-1, keepdims=True), avail, mask)
    pi = avail / np.maximum(avail.sum(axis=-1, keepdims=True), 1)
    outer = arms[..., :, None] * arms[..., None, :]
    eye = ridge * np.eye(d)
    for _ in range(iterations):
        a = np.einsum("...k,...kij->...ij", pi, outer) + eye
        g = np.einsum("...ki,...ij,...kj->...k", arms, np.linalg.inv(a), arms)
        g = np.where(avail, g, -np.inf)
        best = g.argmax(axis=-1)
        gmax = np.take_along_axis(g, best[..., None], axis=-1)[..., 0]
        step = np.clip((gmax / d - 1.0) / np.maximum(gmax - 1.0, 1e-12), 0.0, 1.0)
        pi = pi * (1.0 - step[..., None])
        np.put_along_axis(pi, best[..., None], np.take_along_axis(pi, best[..., None], -1) + step[..., None], -1)
    return pi


def shuffle_glm_batches(horizon: int, batches: int, first_batch: float) -> np.ndarray:
    """Batch end points: B_1 = first_batch, B_2 = α, B_k = α√B_{k−1} (eqs. 6-7) with
    α = T^{1/(2(1 − 2^{−M+1}))}, the last batch truncated at T (and batches after T dropped)."""
    T = check_positive_int(horizon, "horizon")
    m = check_positive_int(batches, "batches")
    alpha = T ** (1.0 / (2.0 * (1.0 - 2.0 ** (-m + 1)))) if m > 1 else float(T)
    sizes = [check_positive(first_batch, "first_batch")]
    for k in range(2, m + 1):
        sizes.append(alpha if k == 2 else alpha * math.sqrt(sizes[-1]))
    ends = np.minimum(np.cumsum(np.ceil(sizes)).astype(np.int64), T)
    ends[-1] = T
    return np.unique(ends)


@dataclasses.dataclass(frozen=True)
class ShuffleGLMParams:
    """Parameters of ShuffleGLM; epsilon=None runs the same batches with exact sums and exact GD.

    batches M (default ⌈log2 log2 T⌉); first_batch B_1 (default eq. 6 with φ = √κ e^{3S} γ²/S);
    lam, gamma (default eqs. 8-9); lipschitz L of the per-user gradient (1 for R = 1, with the
    regulariser added by the analyzer); pgd_iterations (default Alg. 7's T_it); root_kappa_later: the √κ
    factor in UCB_k for k ≥ 2 (eq. 13; Lemma E.9 has none); pgd_sampler: how P_GD draws its rounding
    Bernoullis (`ShuffleGradientDescent.run_glm`: "bits", the default, with the link table, or "uniform", the
    generic P_GD's stream; the same law).
    """

    epsilon: float | None = 4.0
    delta: float = 0.02
    batches: int | None = None
    first_batch: float | None = None
    lam: float | None = None
    gamma: float | None = None
    lipschitz: float = 1.0
    pgd_iterations: int | None = None
    root_kappa_later: bool = True
    design_iterations: int = 40
    pgd_sampler: str = "bits"

    def __post_init__(self) -> None:
        check_choice(self.pgd_sampler, PGD_SAMPLERS, "pgd_sampler")
        if self.epsilon is not None:
            check_epsilon(self.epsilon)
        check_open_unit(self.delta, "delta")
        for name in ("batches", "pgd_iterations", "design_iterations"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), name)
        for name in ("first_batch", "lam", "gamma"):
            if getattr(self, name) is not None:
                check_positive(getattr(self, name), name)
        check_positive(self.lipschitz, "lipschitz")

    @property
    def private(self) -> bool:
        """Whether the algorithm is private (an epsilon is set)."""
        return self.epsilon is not None

    @property
    def dp_epsilon(self) -> float:
        """epsilon of the private variant; ValueError for the non-private one (epsilon None)."""
        if self.epsilon is None:
            raise ValueError("ShuffleGLM with epsilon=None is not private: it has no epsilon")
        return self.epsilon


@dataclasses.dataclass(frozen=True, eq=False)
class ShuffleGLMResult:
    """actions (runs, T) arm indices; regret (runs, T) cumulative; batch_ends; thetas (runs, M, d) the
    released θ̂_k; matrices (runs, M, d, d) the released V, H_2.. (with λI); lam, gamma used;
    iterations the P_GD rounds per batch."""

    actions: np.ndarray
    regret: np.ndarray
    batch_ends: np.ndarray
    thetas: np.ndarray
    matrices: np.ndarray
    lam: float
    gamma: float
    iterations: tuple[int, ...]


def _matrix_protocol(epsilon: float, delta: float, n: int, d: int, bound: float) -> BitSumProtocol:
    return bit_sum_protocol(epsilon, delta, n, d, num_labels=d * (d + 1) // 2, bound=bound)


def _sample(rng: np.random.Generator, pi: np.ndarray) -> np.ndarray:
    """One index per row of the distributions pi (..., K)."""
    c = np.cumsum(pi, axis=-1)
    u = rng.random(pi.shape[:-1] + (1,)) * c[..., -1:]
    return np.minimum((u > c).sum(axis=-1), pi.shape[-1] - 1)


@dataclasses.dataclass(frozen=True)
class _Schedule:
    """ShuffleGLM's constants for one run length: λ (eq. 8), γ, and the batch ends (eqs. 6-7)."""

    lam: float
    gamma: float
    ends: np.ndarray


def _schedule(env: GLMEnvironment, params: ShuffleGLMParams, T: int, S: float, R: float) -> _Schedule:
    """λ and γ from the warm-up V release's noise level (eq. 10 with the protocol's real variance), and the
    batch ends with B_1 from eq. 6 unless `params.first_batch` is given."""
    d, kappa = env.dim, env.kappa
    m = params.batches or max(1, math.ceil(math.log2(max(math.log2(T), 1.0))))
    delta = params.delta
    if params.private:
        eps = params.dp_epsilon
        sigma = math.sqrt(_matrix_protocol(eps / 2, delta / 2, T, d, 1.0).noise_variance_bound())
        nu = R * S**2 / eps * math.sqrt(d * math.log(T * d / delta) ** 3)
    else:
        sigma, nu = 0.0, 0.0
    lam = params.lam or 20 * d * R * math.log(T) + 6 * sigma * math.sqrt(math.log(2 * d * m * T / delta))
    gamma = params.gamma or (
        30 * R * S * math.sqrt(d * R * math.log(T) + 12 * sigma * math.sqrt(math.log(2 * d * m * T / delta)))
        + math.sqrt(4 * R * S * nu)
    )
    if params.first_batch is None:
        alpha = T ** (1.0 / (2.0 * (1.0 - 2.0 ** (-m + 1)))) if m > 1 else float(T)
        first = (math.sqrt(kappa) * math.exp(3 * S) * d**2 * gamma**2 / S * alpha) ** (2.0 / 3.0)
    else:
        first = params.first_batch
    return _Schedule(lam, gamma, shuffle_glm_batches(T, m, first))


def _batch_design(
    ctx: np.ndarray,
    k: int,
    thetas: np.ndarray,
    inv_mats: np.ndarray,
    link,
    params: ShuffleGLMParams,
    gamma: float,
    kappa: float,
    S: float,
    R: float,
    runs: int,
) -> np.ndarray:
    """Batch k's sampling design π over each round's arms: G-optimal on the raw contexts for batch 1; later,
    on the arms surviving every earlier batch's elimination, G-optimal on the contexts scaled by μ'/β (Alg. 1)."""
    if k == 0:
        return np.broadcast_to(g_optimal_design(ctx, iterations=params.design_iterations), (runs,) + ctx.shape[:2])
    mask = np.ones((runs,) + ctx.shape[:2], dtype=bool)
    for j in range(k):
        lin = np.einsum("nkd,rd->rnk", ctx, thetas[:, j])
        w = np.sqrt(np.maximum(np.einsum("nki,rij,nkj->rnk", ctx, inv_mats[:, j], ctx), 0.0))
        rad = gamma * (math.sqrt(kappa) if (j == 0 or params.root_kappa_later) else 1.0) * w
        lcb = np.where(mask, lin - rad, -np.inf).max(axis=2, keepdims=True)
        mask &= (lin + rad) >= lcb
    wv = np.sqrt(np.maximum(np.einsum("nki,rij,nkj->rnk", ctx, inv_mats[:, 0], ctx), 0.0))
    beta = np.exp(R * np.minimum(2 * S, gamma * math.sqrt(kappa) * wv))
    scal = link.derivative(np.einsum("nkd,rd->rnk", ctx, thetas[:, 0])) / beta
    return g_optimal_design(np.sqrt(scal)[..., None] * ctx[None], mask, iterations=params.design_iterations)


def _leaf_weights(
    x: np.ndarray,
    k: int,
    thetas: np.ndarray,
    inv_mats: np.ndarray,
    link,
    gamma: float,
    kappa: float,
    kappa_star: float,
    S: float,
    R: float,
) -> np.ndarray:
    """Weights of the users' x xᵀ in batch k's matrix: 1 in batch 1, else min(μ'(xᵀθ̂_1)/β, 1/κ*)."""
    if k == 0:
        return np.ones(x.shape[:2])
    c = link.derivative(np.einsum("rnd,rd->rn", x, thetas[:, 0]))
    wv_t = np.sqrt(np.maximum(np.einsum("rni,rij,rnj->rn", x, inv_mats[:, 0], x), 0.0))
    return np.minimum(c / np.exp(R * np.minimum(2 * S, gamma * math.sqrt(kappa) * wv_t)), 1.0 / kappa_star)


def _estimate(
    x: np.ndarray,
    r: np.ndarray,
    params: ShuffleGLMParams,
    n: int,
    d: int,
    lam: float,
    S: float,
    link,
    rng: np.random.Generator,
    runs: int,
) -> tuple[np.ndarray, int]:
    """(θ̄, rounds): P_GD over the shuffled GLM gradients of the users' (x, r) (private, the fused
    `ShuffleGradientDescent.run_glm`), or exact projected GD on the mean gradient."""
    delta = params.delta
    if params.private:
        eps = params.dp_epsilon
        it = params.pgd_iterations or pgd_iterations(eps / 2, delta / 2, n, d)
        pgd = shuffle_gradient_descent(n, d, eps / 2, delta / 2, params.lipschitz, S, iterations=it, regularization=lam)
        if params.pgd_sampler == "uniform":
            return pgd.run_glm(rng, x, r, link.mean, sampler="uniform").theta_bar, it
        return pgd.run_glm(rng, x, r, link.mean, link_curvature=link.sup_second_derivative).theta_bar, it
    it = params.pgd_iterations or 200
    theta = np.zeros((runs, d))
    total = np.zeros_like(theta)
    eta = 1.0 / link.sup_derivative
    grads = glm_gradients(x, r, link.mean)
    for _ in range(it):
        g = grads(theta).mean(axis=1) + lam / n * theta
        theta = project_ball(theta - eta * g, S)
        total += theta
    return total / it, it


def run_shuffle_glm(
    env: GLMEnvironment, data: GLMData, params: ShuffleGLMParams, rng: np.random.Generator, S: float | None = None
) -> ShuffleGLMResult:
    """ShuffleGLM (Sarmasarkar, Alg. 1) on every run of `data`; S defaults to ‖θ*‖, κ and κ* to the instance's.

    Each batch: its design (`_batch_design`), the users' arms and rewards, the shuffled sum of their
    weighted x xᵀ (+ λI), and θ̂ by P_GD (`_estimate`).
    """
    link = get_link(env.link)
    runs, T = data.seeds.shape
    if env.horizon != T:
        raise ValueError(f"data must hold horizon {env.horizon} rounds, got {T}")
    d, R = env.dim, 1.0
    S = env.S if S is None else check_positive(S, "S")
    kappa, kappa_star = env.kappa, env.kappa_star
    sched = _schedule(env, params, T, S, R)
    lam, gamma, ends = sched.lam, sched.gamma, sched.ends
    starts = np.concatenate([[0], ends[:-1]])
    nb = ends.size
    actions = np.zeros((runs, T), dtype=np.int64)
    inst = np.zeros((runs, T))
    thetas = np.zeros((runs, nb, d))
    mats = np.zeros((runs, nb, d, d))
    inv_mats = np.zeros((runs, nb, d, d))
    iters: list[int] = []
    eye = np.eye(d)
    for k, (s, e) in enumerate(zip(starts, ends)):
        n = int(e - s)
        ctx = env.contexts[s:e]  # (n, K, d), shared by the runs
        pi = _batch_design(ctx, k, thetas, inv_mats, link, params, gamma, kappa, S, R, runs)
        a = _sample(rng, pi)  # (runs, n)
        x = ctx[np.arange(n)[None, :], a]  # (runs, n, d)
        mu = env.means[s:e][np.arange(n)[None, :], a]
        pinned = data.pinned[:, s:e]
        r = np.where(np.isnan(pinned), (data.seeds[:, s:e] < mu).astype(float), pinned)
        actions[:, s:e] = a
        inst[:, s:e] = env.means[s:e].max(axis=1)[None, :] - mu
        weight = _leaf_weights(x, k, thetas, inv_mats, link, gamma, kappa, kappa_star, S, R)
        outer = weight[..., None, None] * x[..., :, None] * x[..., None, :]
        bound = 1.0 if k == 0 else 1.0 / kappa_star
        if params.private:
            released = _matrix_protocol(params.dp_epsilon / 2, params.delta / 2, n, d, bound).sum_matrices(rng, outer)
        else:
            released = outer.sum(axis=1)
        mats[:, k] = released + lam * eye
        w_eig, u_eig = np.linalg.eigh(mats[:, k])
        w_eig = np.maximum(w_eig, lam * 1e-3)  # post-processing: keep the released matrix invertible
        inv_mats[:, k] = (u_eig / w_eig[:, None, :]) @ np.swapaxes(u_eig, -1, -2)
        thetas[:, k], it = _estimate(x, r, params, n, d, lam, S, link, rng, runs)
        iters.append(int(it))
    return ShuffleGLMResult(
        actions, np.cumsum(inst, axis=1), ends, thetas, mats, float(lam), float(gamma), tuple(iters)
    )


def shuffle_glm_target(
    params: ShuffleGLMParams, observable: str = "released"
) -> Callable[[tuple[GLMEnvironment, GLMData], np.random.Generator, int], np.ndarray]:
    """An audit target `target(data, rng, size) -> array` with first axis `size`.

    data: a pair (GLMEnvironment, GLMData) whose first run's reward seeds are the users' data.
    observable: "released" (the analyzer's outputs of every batch: V, H_k and θ̂_k, flattened; the shuffle
    model's view up to post-processing) or "actions" (every user's arm).
    """
    check_choice(observable, SHUFFLE_GLM_OBSERVABLES, "observable")

    def target(data: tuple[GLMEnvironment, GLMData], rng: np.random.Generator, size: int) -> np.ndarray:
        env, users = data
        size = check_positive_int(size, "size")
        rep = GLMData(np.repeat(users.seeds[:1], size, axis=0), np.repeat(users.pinned[:1], size, axis=0))
        res = run_shuffle_glm(env, rep, params, rng)
        if observable == "actions":
            return res.actions
        return np.concatenate([res.matrices.reshape(size, -1), res.thetas.reshape(size, -1)], axis=1)

    target.__name__ = f"shuffle-glm_{observable}"
    return target
