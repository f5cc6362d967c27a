"""GLM contextual environments (Sarmasarkar, "Shuffle and Joint DP for Generalized Linear
Contextual Bandits", §4 and App. A; Sarmasarkar (shuffle/joint-DP GLM bandits)).

Round t shows a set X_t of K arms in the unit ball of R^d; pulling x gives r ~ Bernoulli(μ(⟨x, θ*⟩)) with
the logistic link μ = sigmoid or the probit link μ = Φ (R = 1). Instance constants (eqs. 3-4):
κ = max 1/μ̇(⟨x, θ*⟩) and κ* = 1/max μ̇(⟨x, θ*⟩) over all arms of all rounds.

A user is one round: (X_t, u_t), with u_t ~ U(0, 1) the user's reward seed, r_t = 1{u_t < μ(⟨x_t, θ*⟩)}
for whichever arm is played (the same law as the papers' rewards). Neighbours replace one user's
context set, reward, or both (§1.3: replace-one); a reward neighbour pins r_t to a value whatever the arm.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import special

from dpaudit.validation import check_choice, check_finite_array, check_int_at_least, check_positive, check_positive_int

__all__ = ["LINKS", "NEIGHBOUR_KINDS", "GLMData", "GLMEnvironment", "Link", "get_link", "paper_glm_environment"]

NEIGHBOUR_KINDS = ("context", "reward", "both")


@dataclasses.dataclass(frozen=True)
class Link:
    """A GLM link: mean μ(z), derivative μ̇(z), sup_z μ̇ (so 1/sup μ̇ is a data-free lower bound on κ*) and
    sup_z |μ̈| (bounds the error of a linearly interpolated μ; None if unknown)."""

    name: str
    mean: Callable[[np.ndarray], np.ndarray]
    derivative: Callable[[np.ndarray], np.ndarray]
    sup_derivative: float
    sup_second_derivative: float | None = None


def _sigmoid_dot(z: np.ndarray) -> np.ndarray:
    s = special.expit(z)
    return s * (1.0 - s)


def _normal_pdf(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * np.square(z)) / math.sqrt(2.0 * math.pi)


LINKS = {
    # sup|σ''| = sup|σ(1−σ)(1−2σ)| = 1/(6√3), at σ = 1/2 ± 1/(2√3); sup|Φ''| = sup|z φ(z)| = φ(1)
    "logistic": Link("logistic", special.expit, _sigmoid_dot, 0.25, 1.0 / (6.0 * math.sqrt(3.0))),
    "probit": Link(
        "probit", special.ndtr, _normal_pdf, 1.0 / math.sqrt(2.0 * math.pi), math.exp(-0.5) / math.sqrt(2.0 * math.pi)
    ),
}


def get_link(name: str) -> Link:
    """The link named `name` ("logistic" or "probit")."""
    return LINKS[check_choice(name, tuple(LINKS), "link")]


@dataclasses.dataclass(frozen=True, eq=False)
class GLMData:
    """Users' reward seeds u (runs, T) in (0, 1) and pinned rewards (runs, T), NaN where not pinned."""

    seeds: np.ndarray
    pinned: np.ndarray

    def __post_init__(self) -> None:
        u = np.asarray(self.seeds, dtype=float)
        if u.ndim != 2:
            raise ValueError(f"seeds must have shape (runs, horizon), got {u.shape}")
        p = np.asarray(self.pinned, dtype=float)
        if p.shape != u.shape:
            raise ValueError(f"pinned must have shape {u.shape}, got {p.shape}")
        ok = np.isnan(p) | ((p >= 0) & (p <= 1))
        if not ok.all():
            raise ValueError("pinned rewards must lie in [0, 1] (or NaN for not pinned)")
        object.__setattr__(self, "seeds", u)
        object.__setattr__(self, "pinned", p)

    @property
    def runs(self) -> int:
        """Number of runs."""
        return self.seeds.shape[0]


@dataclasses.dataclass(frozen=True, eq=False)
class GLMEnvironment:
    """θ* (d,), the context sets (T, K, d) shared by all runs (as in the authors' environment), a link."""

    theta: np.ndarray
    contexts: np.ndarray
    link: str = "logistic"

    def __post_init__(self) -> None:
        theta = check_finite_array(self.theta, "theta", ndim=1)
        ctx = check_finite_array(self.contexts, "contexts", ndim=3)
        if ctx.shape[2] != theta.size or ctx.shape[0] < 1 or ctx.shape[1] < 1:
            raise ValueError(f"contexts must have shape (T, K, {theta.size}), got {ctx.shape}")
        if np.any(np.linalg.norm(ctx, axis=2) > 1 + 1e-9):
            raise ValueError("contexts must lie in the unit ball (Assumption 4.2)")
        get_link(self.link)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "contexts", ctx)

    @property
    def dim(self) -> int:
        """Dimension d."""
        return self.theta.size

    @property
    def n_arms(self) -> int:
        """Number of arms K per round."""
        return self.contexts.shape[1]

    @property
    def horizon(self) -> int:
        """Number of rounds T."""
        return self.contexts.shape[0]

    @property
    def S(self) -> float:
        """||θ*||_2, the norm bound S of the papers' analysis."""
        return float(np.linalg.norm(self.theta))

    @functools.cached_property
    def means(self) -> np.ndarray:
        """μ(⟨x, θ*⟩) of every arm, (T, K)."""
        return get_link(self.link).mean(self.contexts @ self.theta)

    @functools.cached_property
    def kappa(self) -> float:
        """κ = max over all arms of 1/μ̇(⟨x, θ*⟩) (eq. 4)."""
        return float(1.0 / get_link(self.link).derivative(self.contexts @ self.theta).min())

    @functools.cached_property
    def kappa_star(self) -> float:
        """κ* = 1/max over all arms of μ̇(⟨x, θ*⟩) (eq. 4)."""
        return float(1.0 / get_link(self.link).derivative(self.contexts @ self.theta).max())

    def sample(self, rng: np.random.Generator, runs: int) -> GLMData:
        """Independent reward seeds for `runs` runs."""
        runs = check_positive_int(runs, "runs")
        return GLMData(rng.random((runs, self.horizon)), np.full((runs, self.horizon), np.nan))

    def rewards(self, data: GLMData, t: int, arm: np.ndarray) -> np.ndarray:
        """r_t of every run for the arm index `arm` (runs,): 1{u_t < μ(⟨x, θ*⟩)} unless pinned."""
        mu = self.means[t, arm]
        r = (data.seeds[:, t] < mu).astype(float)
        pin = data.pinned[:, t]
        return np.where(np.isnan(pin), r, pin)

    def regret(self, t: int, arm: np.ndarray) -> np.ndarray:
        """max_x μ(⟨x, θ*⟩) − μ(⟨x_t, θ*⟩) at round t (expected-reward regret, eq. 1)."""
        m = self.means[t]
        return m.max() - m[arm]

    def neighbour(
        self, data: GLMData, t: int, kind: str, new_contexts: np.ndarray | None = None, new_reward: float = 1.0
    ) -> tuple[GLMEnvironment, GLMData]:
        """The (environment, data) pair that differs in user t only (0-based).

        kind "context": X_t becomes `new_contexts` (K, d) (default: the arms reflected, −X_t);
        "reward": r_t is pinned to `new_reward` in every run; "both": both changes.
        """
        check_choice(kind, NEIGHBOUR_KINDS, "kind")
        t = check_int_at_least(t, 0, "t")
        if t >= self.horizon:
            raise ValueError(f"t must be < horizon {self.horizon}, got {t}")
        env, out = self, data
        if kind in ("context", "both"):
            new = -self.contexts[t] if new_contexts is None else check_finite_array(new_contexts, "new_contexts", 2)
            if new.shape != self.contexts.shape[1:]:
                raise ValueError(f"new_contexts must have shape {self.contexts.shape[1:]}, got {new.shape}")
            ctx = self.contexts.copy()
            ctx[t] = new
            env = GLMEnvironment(self.theta, ctx, self.link)
        if kind in ("reward", "both"):
            if not 0.0 <= new_reward <= 1.0:
                raise ValueError(f"new_reward must lie in [0, 1], got {new_reward!r}")
            pinned = data.pinned.copy()
            pinned[:, t] = new_reward
            out = GLMData(data.seeds, pinned)
        return env, out


def paper_glm_environment(
    rng: np.random.Generator, dim: int, n_arms: int, horizon: int, S: float, link: str = "probit"
) -> GLMEnvironment:
    """The authors' generator (public code of Sarmasarkar (shuffle/joint-DP GLM bandits), for its §8
    experiments; their `environment.GLMBandit` with full_norm=True), draw for draw from `rng`: θ* = S·u/‖u‖ with u ~ U[−1, 1]^d first, then for every round
    and arm a Gaussian direction (d normals) scaled by one U^{1/d}. With rng = default_rng(seed) this is
    their instance of that seed (env seed 109832: κ = 18.39, 56.44, 222.15 at S = 2, 2.5, 3, Table 2)."""
    d = check_positive_int(dim, "dim")
    k = check_positive_int(n_arms, "n_arms")
    t = check_positive_int(horizon, "horizon")
    S = check_positive(S, "S")
    u = rng.uniform(-1.0, 1.0, d)
    # per arm rng.normal(size=d), then rng.uniform(): the loop keeps the authors' order of draws from
    # the one stream (vectorised draws would take all normals first and give another instance)
    g = np.empty((t, k, d))
    r = np.empty((t, k, 1))
    normal, uniform = rng.normal, rng.uniform
    for i in range(t):
        for j in range(k):
            g[i, j] = normal(0.0, 1.0, d)
            r[i, j, 0] = uniform(0.0, 1.0)
    ctx = g / np.linalg.norm(g, axis=2, keepdims=True) * r ** (1.0 / d)
    return GLMEnvironment(S * u / np.linalg.norm(u), ctx, link)
