"""Private-GLM: the jointly private GLM bandit for adversarial contexts (Sarmasarkar, Algorithm 2, §6).

A rarely-switching GLM-UCB (Sawarni et al.'s RS-GLinUCB) whose design matrices come from two binary-tree
mechanisms with symmetric Gaussian node noise (`dpaudit.mechanisms.BinaryTree`), one leaf per round each:
    Criterion I (exploration): if max_x ‖x‖²_{V⁻¹} ≥ threshold, play argmax_x ‖x‖_{V⁻¹}, V-leaf x xᵀ, H-leaf 0,
        and refit θ̂_o on the exploration rounds T_o (at most count1_cutoff private optimiser calls);
    otherwise: if the running max of det H_s has doubled since the last switch τ (and count2 < count2_cutoff),
        switch: τ ← t, H_τ ← H_t, refit θ̂_τ on the other rounds; keep the arms with UCB_o ≥ max LCB_o
        (eqs. 16-17, radius γ√κ‖x‖_{V⁻¹} around θ̂_o) and play argmax ⟨x, θ̂⟩ + β‖x‖_{H_τ⁻¹} (eq. 18);
        H-leaf min(μ̇(⟨x, θ̂_o⟩)/e, 1/κ*)·x xᵀ (clipped so the sensitivity holds unconditionally), V-leaf 0.
Constants are those of the authors' experiment code (the regime of Table 2); the paper's
theoretical constants make exploration last beyond T at these sizes. Each optimiser call runs at the
(ε_o, δ_o) of the advanced-composition split of ε/3 over the cap (the authors' `per_step_budget_auto`).
Two optimisers (`PrivateGLMParams.optimizer`):
- "dp-gd" (default): noisy projected full-batch gradient descent with Gaussian noise on the clipped
  gradient sum, zCDP-calibrated (a central DP-GD);
- "dp-sgd": the authors' optimiser (Remark A.1; their `solve_glm_mle_dp_sgd_epsilon`): per-example
  clipping at 0.2, step 10/√t, ridge 1e-5, no projection, epochs chosen from ε_o by the authors' table,
  the average of the epoch-end iterates after 10 burn-in epochs; batches are Poisson-sampled at rate q
  (the authors draw shuffled fixed-size batches of min(2048, n), which their sampled-without-replacement
  RDP does not describe), the noise is calibrated by RDP on dp-accounting's PoissonSampledDpEvent
  (`dp_sgd_noise_multiplier`) and its std is the multiplier times the replace-one sensitivity 2C
  (`sgd_noise="code"` reproduces the authors' z·C).
Runs are vectorised; rounds are sequential.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import dp_accounting
import numpy as np

from dpaudit.accounting.calibration import calibrate
from dpaudit.algorithms.glm.claims import glm_tree_sigma
from dpaudit.algorithms.glm.environment import GLMData, GLMEnvironment, get_link
from dpaudit.mechanisms import BinaryTree, TreeStream, gaussian
from dpaudit.mechanisms.shuffle_gd import advanced_composition, project_ball
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "OPTIMIZERS",
    "PRIVATE_GLM_OBSERVABLES",
    "AuthorsFirstCommitTree",
    "PrivateGLMConstants",
    "PrivateGLMParams",
    "PrivateGLMResult",
    "authors_sgd_epochs",
    "dp_gd_sigma",
    "dp_sgd_noise_multiplier",
    "private_glm_constants",
    "private_glm_target",
    "run_private_glm",
    "sgd_steps",
    "split_budget",
    "zcdp_rho",
]

OPTIMIZERS = ("dp-gd", "dp-sgd")
SGD_NOISE = ("replace-one", "code")
TREE_QUERIES = ("correct", "ab8fd16")
PRIVATE_GLM_OBSERVABLES = ("actions_after", "explore_count_after", "released_v", "released_h", "theta")


def split_budget(epsilon: float, delta: float, count: int, switch: int = 10) -> tuple[float, float]:
    """Per-call (ε0, δ0) so that `count` calls compose to (ε, δ) (the authors' per_step_budget_auto):
    basic composition (ε/k, δ/k) for k ≤ switch, else the largest ε0 with advanced composition
    ε0√(2k ln(2/δ)) + kε0(e^ε0 − 1) ≤ ε at δ' = δ/2, δ0 = δ/(2k) (bisection, rounded down)."""
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    k = check_positive_int(count, "count")
    if k <= switch:
        return epsilon / k, delta / k
    lo, hi = 0.0, epsilon
    for _ in range(100):
        mid = (lo + hi) / 2
        if mid > 0 and advanced_composition(mid, delta / (2 * k), k, delta / 2)[0] <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo, delta / (2 * k)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The ρ with ρ + 2√(ρ ln(1/δ)) = ε (zCDP → (ε, δ), Bun-Steinke 2016 Prop. 1.3), so ρ-zCDP ⇒ (ε, δ)."""
    epsilon = check_epsilon(epsilon)
    log_inv = math.log(1.0 / check_open_unit(delta, "delta"))
    return (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2


def dp_gd_sigma(epsilon: float, delta: float, iterations: int, clip: float) -> float:
    """Std of the Gaussian noise on each clipped-gradient sum so that `iterations` steps are (ε, δ)-DP:
    replace-one sensitivity 2·clip, ρ per step = (2 clip)²/(2σ²), total ρ = zcdp_rho(ε, δ)."""
    rho = zcdp_rho(epsilon, delta)
    return 2.0 * clip * math.sqrt(iterations / (2.0 * rho))


def authors_sgd_epochs(epsilon0: float) -> int:
    """Epochs of one DP-SGD call from its per-call ε0 (the authors' table in `Private_RS_GLinUCB`):
    15 if ε0 ≤ 0.1, 25 if ≤ 0.3, 50 if ≤ 1, 75 if ≤ 2, else 100."""
    for bound, epochs in ((0.1, 15), (0.3, 25), (1.0, 50), (2.0, 75)):
        if epsilon0 <= bound:
            return epochs
    return 100


def sgd_steps(epochs: int, sampling_rate: float) -> int:
    """Steps of one DP-SGD call: `epochs` passes of max(1, ⌊1/q⌋) Poisson-sampled steps each (an epoch
    sees every example once in expectation, as the authors' n // batch steps of batch q·n)."""
    return check_positive_int(epochs, "sgd_epochs") * max(1, math.floor(1.0 / sampling_rate))


@functools.lru_cache(maxsize=256)
def dp_sgd_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int) -> float:
    """Smallest noise multiplier z (noise std over the sensitivity) with which `steps` releases of the
    Poisson-subsampled Gaussian, dp-accounting's SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(z)), steps), are (ε, δ)-DP by RDP (Mironov, Talwar, Zhang 2019, the curve of
    dp-accounting's RdpAccountant): `dpaudit.accounting.calibrate`, whose answer was evaluated and meets
    the target. The authors calibrate the same way with sampling without replacement (their
    `compute_noise_multiplier`)."""
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    q = check_open_unit(sampling_rate, "sampling_rate") if sampling_rate != 1.0 else 1.0
    k = check_positive_int(steps, "steps")
    return calibrate(
        lambda z: sgd_call_event(z, q, k), epsilon, delta, lower=0.1, upper=1e3, accountant="rdp", rtol=1e-6
    )


def sgd_call_event(noise_multiplier: float, sampling_rate: float, steps: int) -> dp_accounting.DpEvent:
    """One DP-SGD call: `steps` releases of the Poisson-subsampled Gaussian at rate q, noise multiplier z."""
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps
    )


class AuthorsFirstCommitTree:
    """The V/H tree of the authors' first commit (ab8fd16, `BinaryTreeMechanism`), vectorised over runs.

    Heap of 2^h nodes (h = ⌈log2 T⌉ + 1, root 1, leaf of count c at c + 2^(h-1) − 1), one noise matrix
    (Z + Zᵀ)/2, Z ~ N(0, σ²), per node drawn up front; `insert` adds the leaf to its ancestors and returns
    the query: Σ over the leaf and its ancestors `i` with i even of (sum + noise) of node i − 1, plus the
    leaf's own (sum + noise). Even heap indices are *left* children, so the nodes read are not the dyadic
    cover of [1, c] (the bug that d9c93e1 "Binary tree bug fixed" fixed): the prefix over-counts (about
    2× at c = 1100) and varies erratically. Kept only to reproduce Table 2 (Sarmasarkar, §8)."""

    def __init__(self, horizon: int, sigma: float, dim: int, rng: np.random.Generator, runs: int) -> None:
        self.height = math.ceil(math.log2(check_positive_int(horizon, "horizon"))) + 1
        size = 2**self.height
        self.sums = np.zeros((runs, size, dim, dim))
        z = rng.normal(0.0, sigma, size=(runs, size, dim, dim)) if sigma > 0 else np.zeros((runs, size, dim, dim))
        self.noise = 0.5 * (z + np.swapaxes(z, -1, -2))
        self.noise[:, 0] = 0.0
        self.count = 0

    def insert(self, leaf: np.ndarray) -> np.ndarray:
        """Insert one (runs, d, d) leaf; return the authors' query (before λI and projection)."""
        self.count += 1
        index = self.count + 2 ** (self.height - 1) - 1
        node = index
        while node > 0:
            self.sums[:, node] += leaf
            node //= 2
        read = [index]
        node = index
        while node > 0:
            if node % 2 == 0:
                read.append(node - 1)
            node //= 2
        return (self.sums[:, read] + self.noise[:, read]).sum(axis=1)


@dataclasses.dataclass(frozen=True)
class PrivateGLMParams:
    """Parameters of Private-GLM; `epsilon=None` gives the non-private counterpart (noiseless trees, exact
    optimiser, no call caps: an RS-GLinUCB-style baseline with the same rules).

    tree_calibration: "code" — each tree zCDP-calibrated to (ε/3, δ/3) with leaf bound C_V = 1, C_H = 1/κ*
    (authors' code); "paper" — σ² = 36 m log²(32/δ)/(κ*² ε²) for both trees (Lemma I.4: calibrated to 1/κ*,
    which under-noises the V tree by κ*). centre: "code" uses (θ̂_o + θ̂_τ)/2 as the UCB centre, "paper" θ̂_τ.
    v_leaf: "paper" x xᵀ, "code" x xᵀ/(1 + ‖x‖²_{V⁻¹}). exploration_in_exploit_data: the code also feeds
    T_o rounds to θ̂_τ. optimizer: "dp-gd" or "dp-sgd" (module docstring). optimizer_iterations, clip: the
    DP-GD (clip ≥ 1 never binds: ‖(μ − r)x‖ ≤ 1). The DP-SGD's knobs (the authors' values as defaults):
    sgd_clip C (per-example ℓ2 clip, 0.2), sgd_lr (η_t = sgd_lr/√t, 10), sgd_ridge (λ‖θ‖², 1e-5),
    sgd_epochs (None: `authors_sgd_epochs(ε_o)`), sgd_burn_in (epochs before averaging, 10),
    sgd_sampling_rate q (Poisson rate; 1 is the authors' full batch, which their code uses whenever
    n ≤ 2048), sgd_noise: "replace-one" (std 2C·z: replacing one example moves the clipped sum by up
    to 2C) or "code" (the authors' std C·z, which their replace-one RDP accounting over-credits by 2).
    switching: "determinant" (Alg. 2: the running max of det H_s doubles since τ) or "eigenvalue" (the
    authors' code at HEAD: λ_max(H_τ^{-1/2} H_t H_τ^{-1/2}) > 1 + 5/(8√d) + 0.05). Both read released H's only.
    """

    epsilon: float | None = 4.0
    delta: float = 0.02
    zeta: float = 0.02
    tree_calibration: str = "code"
    centre: str = "code"
    v_leaf: str = "paper"
    exploration_in_exploit_data: bool = True
    optimizer_iterations: int = 100
    clip: float = 1.0
    switching: str = "determinant"
    optimizer: str = "dp-gd"
    sgd_clip: float = 0.2
    sgd_lr: float = 10.0
    sgd_ridge: float = 1e-5
    sgd_epochs: int | None = None
    sgd_burn_in: int = 10
    sgd_sampling_rate: float = 1.0
    sgd_noise: str = "replace-one"
    count2_factor: float = 3.0
    tree_query: str = "correct"

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            check_epsilon(self.epsilon)
        check_open_unit(self.delta, "delta")
        check_open_unit(self.zeta, "zeta")
        check_choice(self.tree_calibration, ("code", "paper"), "tree_calibration")
        check_choice(self.centre, ("code", "paper"), "centre")
        check_choice(self.v_leaf, ("paper", "code"), "v_leaf")
        check_choice(self.switching, ("determinant", "eigenvalue"), "switching")
        check_positive_int(self.optimizer_iterations, "optimizer_iterations")
        if not (math.isfinite(self.clip) and self.clip > 0):
            raise ValueError(f"clip must be positive and finite, got {self.clip!r}")
        check_choice(self.optimizer, OPTIMIZERS, "optimizer")
        check_choice(self.sgd_noise, SGD_NOISE, "sgd_noise")
        check_positive(self.sgd_clip, "sgd_clip")
        check_positive(self.sgd_lr, "sgd_lr")
        check_nonnegative(self.sgd_ridge, "sgd_ridge")
        if check_positive(self.sgd_sampling_rate, "sgd_sampling_rate") > 1:
            raise ValueError(f"sgd_sampling_rate must lie in (0, 1], got {self.sgd_sampling_rate!r}")
        if self.sgd_epochs is not None:
            check_positive_int(self.sgd_epochs, "sgd_epochs")
        check_int_at_least(self.sgd_burn_in, 0, "sgd_burn_in")
        check_choice(self.tree_query, TREE_QUERIES, "tree_query")
        check_positive(self.count2_factor, "count2_factor")

    @property
    def private(self) -> bool:
        """Whether the algorithm is private (an epsilon is set)."""
        return self.epsilon is not None

    @property
    def dp_epsilon(self) -> float:
        """epsilon of the private variant; ValueError for the non-private one (epsilon None)."""
        if self.epsilon is None:
            raise ValueError("PrivateGLM with epsilon=None is not private: it has no epsilon")
        return self.epsilon


@dataclasses.dataclass(frozen=True)
class PrivateGLMConstants:
    """λ, λ_min, γ, β, Criterion I threshold, call caps, per-call budgets, tree σ's, optimiser σ's (the std
    of the Gaussian on each clipped-gradient sum); for the DP-SGD also its epochs, steps per call and noise
    multipliers z (std over the replace-one sensitivity 2C), per sequence (o: θ̂_o, tau: θ̂_τ)."""

    lam: float
    lam_min: float
    lam_max: float
    gamma: float
    beta: float
    threshold: float
    count1_cutoff: int
    count2_cutoff: int
    call_budget_o: tuple[float, float]
    call_budget_tau: tuple[float, float]
    sigma_v: float
    sigma_h: float
    sigma_opt_o: float
    sigma_opt_tau: float
    depth: int
    sgd_epochs_o: int = 0
    sgd_epochs_tau: int = 0
    sgd_steps_o: int = 0
    sgd_steps_tau: int = 0
    noise_multiplier_o: float = 0.0
    noise_multiplier_tau: float = 0.0


def private_glm_constants(
    params: PrivateGLMParams, horizon: int, dim: int, kappa: float, kappa_star: float, S: float, R: float = 1.0
) -> PrivateGLMConstants:
    """The authors' experiment constants, for horizon T, dimension d and the instance's κ, κ*, S:
    λ = 2 ln(4/δ) ln²(4T/ζ)/(εκ*) + 0.75 d ln(4T/ζ)/R², λ_max/min = λ ± 1.5 ln(4/δ) ln²(4T/ζ)/(εκ*),
    γ = RS√(d ln(T/ζ)), β = 4√(d ln(T/ζ)), Criterion I at ‖x‖²_{V⁻¹} > 1/(0.01 κ R⁴ S² d),
    count1 = max(1, ⌊d R² κ γ² ln T/20000⌋), count2 = max(1, ⌊f log2(λ_max/λ_min + T/(κ*² λ_min d))⌋) with f = `count2_factor`.
    """
    T = check_positive_int(horizon, "horizon")
    d = check_positive_int(dim, "dim")
    p = params
    base = 0.75 * d * math.log(4 * T / p.zeta) / R**2
    gamma = R * S * math.sqrt(d * math.log(T / p.zeta))
    beta = 4.0 * math.sqrt(d * math.log(T / p.zeta))
    threshold = 1.0 / (0.01 * kappa * R**4 * S**2 * d)
    depth = math.ceil(math.log2(T)) + 1
    if not p.private:
        big = 10 * T
        e = p.sgd_epochs or authors_sgd_epochs(math.inf)
        k = sgd_steps(e, p.sgd_sampling_rate)
        return PrivateGLMConstants(
            base,
            base,
            base,
            gamma,
            beta,
            threshold,
            big,
            big,
            (math.inf, 0.0),
            (math.inf, 0.0),
            0.0,
            0.0,
            0.0,
            0.0,
            depth,
            e,
            e,
            k,
            k,
            0.0,
            0.0,
        )
    eps, delta = p.dp_epsilon, p.delta
    noise_term = math.log(4 / delta) * math.log(4 * T / p.zeta) ** 2 / (eps * kappa_star)
    lam = 2.0 * noise_term + base
    lam_max, lam_min = lam + 1.5 * noise_term, lam - 1.5 * noise_term
    c1 = max(1, math.floor(d * R**2 * kappa * gamma**2 * math.log(T) / 20000))
    c2 = max(1, math.floor(p.count2_factor * math.log2(lam_max / lam_min + T / (kappa_star**2 * lam_min * d))))
    b_o = split_budget(eps / 3, delta / 3, c1)
    b_tau = split_budget(eps / 3, delta / 3, c2)
    if p.tree_calibration == "code":
        rho_node = zcdp_rho(eps / 3, delta / 3) / depth
        sigma_v = 1.0 / math.sqrt(2 * rho_node)
        sigma_h = (1.0 / kappa_star) / math.sqrt(2 * rho_node)
    else:
        sigma_v = sigma_h = glm_tree_sigma(eps, delta, T, kappa_star)
    if p.optimizer == "dp-gd":
        it = p.optimizer_iterations
        return PrivateGLMConstants(
            lam,
            lam_min,
            lam_max,
            gamma,
            beta,
            threshold,
            c1,
            c2,
            b_o,
            b_tau,
            sigma_v,
            sigma_h,
            dp_gd_sigma(b_o[0], b_o[1], it, p.clip),
            dp_gd_sigma(b_tau[0], b_tau[1], it, p.clip),
            depth,
        )
    q = float(p.sgd_sampling_rate)
    e_o, e_tau = (
        (p.sgd_epochs, p.sgd_epochs) if p.sgd_epochs else (authors_sgd_epochs(b_o[0]), authors_sgd_epochs(b_tau[0]))
    )
    k_o, k_tau = sgd_steps(e_o, q), sgd_steps(e_tau, q)
    z_o, z_tau = dp_sgd_noise_multiplier(*b_o, q, k_o), dp_sgd_noise_multiplier(*b_tau, q, k_tau)
    scale = (2.0 if p.sgd_noise == "replace-one" else 1.0) * p.sgd_clip
    return PrivateGLMConstants(
        lam,
        lam_min,
        lam_max,
        gamma,
        beta,
        threshold,
        c1,
        c2,
        b_o,
        b_tau,
        sigma_v,
        sigma_h,
        z_o * scale,
        z_tau * scale,
        depth,
        e_o,
        e_tau,
        k_o,
        k_tau,
        z_o,
        z_tau,
    )


@dataclasses.dataclass(frozen=True, eq=False)
class PrivateGLMResult:
    """actions (runs, T) arm indices; regret (runs, T) cumulative; explore (runs, T) whether t ∈ T_o;
    switches (runs, T) whether θ̂_τ was refitted at t; calls_o, calls_tau (runs,); theta_o, theta_tau
    (runs, d) final estimates; with release=True also V, H (runs, T, d, d): the released noisy prefix sums
    (plus λI, before projection) each round used."""

    actions: np.ndarray
    regret: np.ndarray
    explore: np.ndarray
    switches: np.ndarray
    calls_o: np.ndarray
    calls_tau: np.ndarray
    theta_o: np.ndarray
    theta_tau: np.ndarray
    constants: PrivateGLMConstants
    released: dict[str, np.ndarray] | None = None


def _project_psd(m: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Symmetrise, clip eigenvalues at `floor` (post-processing); return the matrix and its inverse."""
    w, u = np.linalg.eigh((m + np.swapaxes(m, -1, -2)) / 2)
    w = np.maximum(w, floor)
    return (u * w[..., None, :]) @ np.swapaxes(u, -1, -2), (u / w[..., None, :]) @ np.swapaxes(u, -1, -2)


def _fit(rng, link, theta0, X, y, mask, sigma, iterations, clip, radius, private):
    """Noisy projected GD on the average loss over masked rows, warm-started at theta0 (runs, d).

    Step η = 1/sup μ̇ (the loss's public smoothness bound for ‖x‖ ≤ 1); the average of the iterates after
    the first half is returned (post-processing of the noisy steps)."""
    n = np.maximum(mask.sum(axis=1), 1.0)[:, None]
    eta = 1.0 / link.sup_derivative
    theta = theta0.copy()
    avg = np.zeros_like(theta)
    keep = 0
    for i in range(iterations):
        z = np.einsum("rnd,rd->rn", X, theta)
        g = ((link.mean(z) - y) * mask)[..., None] * X
        norm = np.linalg.norm(g, axis=2, keepdims=True)
        g = g * np.minimum(1.0, clip / np.maximum(norm, 1e-300))
        s = g.sum(axis=1)
        if private:
            s = s + gaussian(rng, sigma, s.shape)
        theta = project_ball(theta - eta * s / n, radius)
        if i >= iterations // 2:
            avg += theta
            keep += 1
    return avg / keep


def _fit_sgd(rng, link, theta0, X, y, mask, sigma, epochs, steps, params: PrivateGLMParams):
    """The authors' DP-SGD on the masked rows, from theta0 (runs, d), with Poisson-sampled batches.

    Per step t: each row enters with probability q; s = Σ clip_C((μ(⟨x, θ⟩) − y) x) over the batch plus
    N(0, sigma² I); θ ← θ − (sgd_lr/√t)(s/(q n) + 2 sgd_ridge θ), n the rows of the call (the authors'
    mean over a batch of q n). Returned: the mean of the epoch-end iterates after `sgd_burn_in` epochs
    (the last iterate when there are none), post-processing of the noisy steps."""
    p = params
    q, C = float(p.sgd_sampling_rate), p.sgd_clip
    n = np.maximum(mask.sum(axis=1), 1.0)[:, None]
    per_epoch = steps // epochs
    theta = theta0.copy()
    avg = np.zeros_like(theta)
    keep = 0
    for i in range(steps):
        batch = mask if q == 1.0 else mask * (rng.random(mask.shape) < q)
        z = np.einsum("rnd,rd->rn", X, theta)
        g = ((link.mean(z) - y) * batch)[..., None] * X
        norm = np.linalg.norm(g, axis=2, keepdims=True)
        s = (g * np.minimum(1.0, C / np.maximum(norm, 1e-300))).sum(axis=1)
        if p.private:
            s = s + gaussian(rng, sigma, s.shape)
        theta = theta - p.sgd_lr / math.sqrt(i + 1) * (s / (q * n) + 2.0 * p.sgd_ridge * theta)
        if (i + 1) % per_epoch == 0 and (i + 1) // per_epoch > p.sgd_burn_in:
            avg += theta
            keep += 1
    return avg / keep if keep else theta


def _optimise(rng, link, theta0, X, y, mask, sigma, epochs, steps, params: PrivateGLMParams, radius: float):
    """One private optimiser call per selected run: `_fit` (DP-GD) or `_fit_sgd` (DP-SGD)."""
    if params.optimizer == "dp-sgd":
        return _fit_sgd(rng, link, theta0, X, y, mask, sigma, epochs, steps, params)
    return _fit(rng, link, theta0, X, y, mask, sigma, params.optimizer_iterations, params.clip, radius, params.private)


@dataclasses.dataclass
class _Rounds:
    """Private-GLM's per-run state over the rounds (mutated in place by the steps below)."""

    v_prefix: np.ndarray
    h_prefix: np.ndarray
    h_tau_inv: np.ndarray
    maxdet_cur: np.ndarray
    maxdet_tau: np.ndarray
    theta_o: np.ndarray
    theta_tau: np.ndarray
    calls_o: np.ndarray
    calls_tau: np.ndarray
    X: np.ndarray
    Y: np.ndarray
    explore: np.ndarray
    switches: np.ndarray
    actions: np.ndarray
    inst: np.ndarray

    @classmethod
    def start(cls, runs: int, T: int, d: int, lam: float) -> _Rounds:
        maxdet = np.full(runs, lam**d)
        return cls(
            np.zeros((runs, d, d)),
            np.zeros((runs, d, d)),
            np.broadcast_to(np.eye(d) / lam, (runs, d, d)).copy(),
            maxdet,
            maxdet.copy(),
            np.zeros((runs, d)),
            np.zeros((runs, d)),
            np.zeros(runs, dtype=np.int64),
            np.zeros(runs, dtype=np.int64),
            np.zeros((runs, T, d)),
            np.zeros((runs, T)),
            np.zeros((runs, T), dtype=bool),
            np.zeros((runs, T), dtype=bool),
            np.zeros((runs, T), dtype=np.int64),
            np.zeros((runs, T)),
        )


def _switching(
    st: _Rounds, params: PrivateGLMParams, c: PrivateGLMConstants, h_now: np.ndarray, exp_now: np.ndarray, d: int
) -> np.ndarray:
    """Criterion II on exploitation rounds: the running max of det H_s doubled since τ (or the
    eigenvalue variant), while the count of θ̂_τ refits stays below its cutoff."""
    st.maxdet_cur = np.maximum(st.maxdet_cur, np.linalg.det(h_now))
    if params.switching == "determinant":
        grown = st.maxdet_cur > 2.0 * st.maxdet_tau
    else:
        grown = np.linalg.eigvals(st.h_tau_inv @ h_now).real.max(axis=1) > 1 + 5 / (8 * math.sqrt(d)) + 0.05
    return (~exp_now) & grown & (st.calls_tau < c.count2_cutoff)


def _switch(
    st: _Rounds,
    sw: np.ndarray,
    t: int,
    h_now: np.ndarray,
    rng: np.random.Generator,
    link,
    params: PrivateGLMParams,
    c: PrivateGLMConstants,
    S: float,
) -> None:
    """At a switch: τ = t, H_τ = H_t, and θ̂_τ refit on the exploitation rounds so far (noisy optimiser)."""
    idx = np.nonzero(sw)[0]
    st.maxdet_tau[idx] = st.maxdet_cur[idx]
    st.h_tau_inv[idx] = np.linalg.inv(h_now[idx])
    mask = (~st.explore[idx, :t]) if not params.exploration_in_exploit_data else np.ones((idx.size, t), bool)
    if t > 0:
        start = st.theta_tau[idx] if params.centre == "paper" else (st.theta_o[idx] + st.theta_tau[idx]) / 2
        st.theta_tau[idx] = _optimise(
            rng,
            link,
            start,
            st.X[idx, :t],
            st.Y[idx, :t],
            mask.astype(float),
            c.sigma_opt_tau,
            c.sgd_epochs_tau,
            c.sgd_steps_tau,
            params,
            S,
        )
    st.calls_tau[idx] += 1
    st.switches[idx, t] = True


def _choose(
    st: _Rounds,
    arms: np.ndarray,
    norms2: np.ndarray,
    exp_now: np.ndarray,
    params: PrivateGLMParams,
    c: PrivateGLMConstants,
    kappa: float,
) -> np.ndarray:
    """Exploration: the arm of largest ‖x‖_{V⁻¹}; exploitation: eliminate with θ̂_o, then UCB on H_τ."""
    width_v = np.sqrt(np.maximum(norms2, 0.0))
    lin_o = st.theta_o @ arms.T
    rad = c.gamma * math.sqrt(kappa) * width_v
    keep = (lin_o + rad) >= (lin_o - rad).max(axis=1, keepdims=True)
    centre = st.theta_tau if params.centre == "paper" else (st.theta_o + st.theta_tau) / 2
    width_h = np.sqrt(np.maximum(np.einsum("kd,rde,ke->rk", arms, st.h_tau_inv, arms), 0.0))
    ucb = np.where(keep, centre @ arms.T + c.beta * width_h, -np.inf)
    return np.where(exp_now, norms2.argmax(axis=1), ucb.argmax(axis=1))


def _refit_o(
    st: _Rounds,
    exp_now: np.ndarray,
    t: int,
    rng: np.random.Generator,
    link,
    params: PrivateGLMParams,
    c: PrivateGLMConstants,
    S: float,
) -> None:
    """θ̂_o refit on the exploration rounds after every exploration round, up to count1_cutoff calls."""
    fit_o = exp_now & (st.calls_o < c.count1_cutoff)
    if fit_o.any():
        idx = np.nonzero(fit_o)[0]
        mask = st.explore[idx, : t + 1].astype(float)
        start = (st.theta_o[idx] + st.theta_tau[idx]) / 2
        st.theta_o[idx] = _optimise(
            rng,
            link,
            start,
            st.X[idx, : t + 1],
            st.Y[idx, : t + 1],
            mask,
            c.sigma_opt_o,
            c.sgd_epochs_o,
            c.sgd_steps_o,
            params,
            S,
        )
        st.calls_o[idx] += 1


def run_private_glm(
    env: GLMEnvironment,
    data: GLMData,
    params: PrivateGLMParams,
    rng: np.random.Generator,
    release: bool = False,
    S: float | None = None,
) -> PrivateGLMResult:
    """Private-GLM (Sarmasarkar, Alg. 2) on every run of `data`; S defaults to ‖θ*‖ (the known bound).

    Each round: project the released V and H, decide exploration, test the switching criterion (and
    refit θ̂_τ), choose the arm, insert the round's leaves into the V and H trees, refit θ̂_o.
    """
    link = get_link(env.link)
    runs, T = data.seeds.shape
    if env.horizon != T:
        raise ValueError(f"data must hold horizon {env.horizon} rounds, got {T}")
    d, S = env.dim, env.S if S is None else S
    kappa, kappa_star = env.kappa, env.kappa_star
    c = private_glm_constants(params, T, d, kappa, kappa_star, S)
    tv: AuthorsFirstCommitTree | TreeStream
    th: AuthorsFirstCommitTree | TreeStream
    if params.tree_query == "ab8fd16":
        tv = AuthorsFirstCommitTree(T, c.sigma_v, d, rng, runs)
        th = AuthorsFirstCommitTree(T, c.sigma_h, d, rng, runs)
    else:
        tv = BinaryTree(T, "gaussian", c.sigma_v, (d, d), symmetric=True, symmetrize="average").start(rng, runs)
        th = BinaryTree(T, "gaussian", c.sigma_h, (d, d), symmetric=True, symmetrize="average").start(rng, runs)
    eye = np.eye(d)
    st = _Rounds.start(runs, T, d, c.lam)
    rel_v = np.zeros((runs, T, d, d)) if release else None
    rel_h = np.zeros((runs, T, d, d)) if release else None
    rows = np.arange(runs)
    kappa_cap = 1.0 / kappa_star
    for t in range(T):
        arms = env.contexts[t]  # (K, d)
        v_raw = st.v_prefix + c.lam * eye
        h_raw = st.h_prefix + c.lam * eye
        if rel_v is not None and rel_h is not None:
            rel_v[:, t], rel_h[:, t] = v_raw, h_raw
        _, v_inv = _project_psd(v_raw, c.lam_min)
        h_now, _ = _project_psd(h_raw, c.lam_min)
        norms2 = np.einsum("kd,rde,ke->rk", arms, v_inv, arms)
        exp_now = norms2.max(axis=1) >= c.threshold
        sw = _switching(st, params, c, h_now, exp_now, d)
        if sw.any():
            _switch(st, sw, t, h_now, rng, link, params, c, S)
        a = _choose(st, arms, norms2, exp_now, params, c, kappa)
        x = arms[a]
        st.actions[:, t] = a
        st.inst[:, t] = env.regret(t, a)
        st.X[:, t], st.Y[:, t] = x, env.rewards(data, t, a)
        st.explore[:, t] = exp_now
        outer = x[:, :, None] * x[:, None, :]
        outer_v = outer / (1.0 + norms2[rows, a])[:, None, None] if params.v_leaf == "code" else outer
        scal = np.minimum(link.derivative(np.einsum("rd,rd->r", x, st.theta_o)) / math.e, kappa_cap)
        st.v_prefix = tv.insert(np.where(exp_now[:, None, None], outer_v, 0.0))
        st.h_prefix = th.insert(np.where(exp_now[:, None, None], 0.0, scal[:, None, None] * outer))
        _refit_o(st, exp_now, t, rng, link, params, c, S)
    released = {"V": rel_v, "H": rel_h} if rel_v is not None and rel_h is not None else None
    return PrivateGLMResult(
        st.actions,
        np.cumsum(st.inst, axis=1),
        st.explore,
        st.switches,
        st.calls_o,
        st.calls_tau,
        st.theta_o,
        st.theta_tau,
        c,
        released,
    )


def private_glm_target(
    params: PrivateGLMParams, observable: str = "actions_after", after: int = 0
) -> Callable[[tuple[GLMEnvironment, GLMData], np.random.Generator, int], np.ndarray]:
    """An audit target `target(data, rng, size) -> array` with first axis `size`.

    data: a pair (GLMEnvironment, GLMData) whose first run's reward seeds are the users' data (build the
    neighbour with `GLMEnvironment.neighbour`). observable: "actions_after" (the arms given to users
    after+1..T, the JDP observable: never user `after`'s own), "explore_count_after" (|T_o ∩ (after, T]|,
    what Lemma 6.1 protects), "released_v" / "released_h" (white-box: every released prefix sum, flattened),
    "theta" (final θ̂_o and θ̂_τ).
    """
    check_choice(observable, PRIVATE_GLM_OBSERVABLES, "observable")
    after = check_int_at_least(after, 0, "after")

    def target(data: tuple[GLMEnvironment, GLMData], rng: np.random.Generator, size: int) -> np.ndarray:
        env, users = data
        size = check_positive_int(size, "size")
        if after >= env.horizon:
            raise ValueError(f"after must be < horizon {env.horizon}, got {after}")
        rep = GLMData(np.repeat(users.seeds[:1], size, axis=0), np.repeat(users.pinned[:1], size, axis=0))
        res = run_private_glm(env, rep, params, rng, release=observable.startswith("released"))
        if observable == "actions_after":
            return res.actions[:, after + 1 :]
        if observable == "explore_count_after":
            return res.explore[:, after + 1 :].sum(axis=1)
        if observable == "theta":
            return np.concatenate([res.theta_o, res.theta_tau], axis=1)
        assert res.released is not None  # run with release=True for the released observables
        return res.released["V" if observable == "released_v" else "H"].reshape(size, -1)

    target.__name__ = f"private-glm_{observable}"
    return target
