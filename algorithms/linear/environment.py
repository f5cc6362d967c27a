"""Linear contextual environments: the papers' instance generator and fixed tables for audits.

A linear contextual bandit (Chowdhury & Zhou, ICML 2022, §1/§3.1): at round t user t
arrives with context c_t; every action a has a feature vector phi(c_t, a) in R^d and the reward
satisfies E[y_t | c_t, a_t] = <theta*, phi(c_t, a_t)>. Here a context *is* its (K, d) array of
action features. Every environment serves R independent runs at once (leading axis).

Two sources of rounds:
- `LinearEnvironment`: random instances by the generator of Chowdhury & Zhou 2022, §5 (following Vaswani et al.
  2020): theta* and every feature vector are a uniformly random (d-1)-dim vector of norm 1/sqrt(2)
  with 1/sqrt(2) appended, so all have norm 1 and every mean <theta*, x> lies in [0, 1]; rewards
  are Bernoulli(mean). `contexts="fixed"` keeps one feature set per run for all rounds (what the
  authors' code simulates, Chowdhury & Zhou (ICML 2022), §5 footnote 7); `contexts="iid"` draws a fresh set every round.
- `ContextTable`: a fixed table of users (features and the reward each action would get), the
  same for all runs; `neighbour` replaces one user's context, rewards or both (Chowdhury & Zhou (ICML 2022),
  App. D footnote 10: a user's data is her context and her reward responses to all actions).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Protocol

import numpy as np

from dpaudit.validation import (
    check_choice,
    check_finite_array,
    check_int_at_least,
    check_positive_int,
)

__all__ = [
    "INSTANCES",
    "NEIGHBOUR_KINDS",
    "Block",
    "ContextTable",
    "Environment",
    "LinearEnvironment",
    "authors_instances",
    "linear_environment",
    "paper_vectors",
]

NEIGHBOUR_KINDS = ("context", "reward", "both")


@dataclasses.dataclass(frozen=True, eq=False)
class Block:
    """Rounds t0 .. t0+n-1 of R runs: features (R, n, K, d) and means (R, n, K).

    `table_rewards` (R or 1, n, K) holds fixed reward responses (tables); when it is None the
    reward of an action is Bernoulli(mean).
    """

    t0: int
    features: np.ndarray
    means: np.ndarray
    table_rewards: np.ndarray | None = None

    @property
    def rounds(self) -> int:
        """Number of rounds n in the block."""
        return self.features.shape[1]

    def rewards(self, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Rewards (R, n) of the chosen `actions` (R, n)."""
        if self.table_rewards is not None:
            return _gather(self.table_rewards, actions)
        mu = _gather(self.means, actions)
        return (rng.random(mu.shape) < mu).astype(float)

    def chosen_features(self, actions: np.ndarray) -> np.ndarray:
        """Features (R, n, d) of the chosen `actions` (R, n)."""
        return _gather(self.features, actions)

    def regret(self, actions: np.ndarray) -> np.ndarray:
        """Per-round pseudo-regret (R, n): max_a mean - mean of the chosen action."""
        means = np.broadcast_to(self.means, actions.shape + self.means.shape[2:])
        chosen = _gather(means, actions)
        if means.strides[1] == 0:  # the same means at every round of the block
            return np.broadcast_to(means[:, :1].max(axis=2), chosen.shape) - chosen
        return means.max(axis=2) - chosen


def _gather(values: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """values[r, j, actions[r, j], ...] for values (R or 1, n, K, ...) and actions (R, n).

    A block whose rounds share their values (stride 0 on the round axis) is read from round 0.
    """
    runs, n = actions.shape
    rows = np.arange(runs)[:, None] if values.shape[0] == runs else np.zeros((1, 1), dtype=np.intp)
    if values.strides[1] == 0:
        return values[:, 0][rows, actions]
    return values[rows, np.arange(n)[None, :], actions]


class Environment(Protocol):
    """What the linear-bandit algorithms read: dimension, number of actions, runs and blocks of rounds."""

    @property
    def dim(self) -> int:
        """Feature dimension d."""

    @property
    def n_arms(self) -> int:
        """Number of actions K."""

    @property
    def runs(self) -> int:
        """Number of independent runs R."""

    @property
    def horizon(self) -> int:
        """Number of rounds T."""

    def block(self, t0: int, n: int, rng: np.random.Generator) -> Block:
        """Rounds t0 .. t0+n-1 of every run (`rng` draws whatever the environment draws fresh)."""


def paper_vectors(rng: np.random.Generator, shape: tuple[int, ...], dim: int) -> np.ndarray:
    """Unit vectors of Chowdhury & Zhou 2022, §5: a uniform (d-1)-dim direction scaled to 1/sqrt(2), then 1/sqrt(2).

    For d = 1 the vector is (1,). Returns an array of shape `shape + (dim,)`.
    """
    dim = check_positive_int(dim, "dim")
    half = 1.0 / np.sqrt(2.0)
    if dim == 1:
        return np.ones(shape + (1,))
    g = rng.standard_normal(shape + (dim - 1,))
    norms = np.linalg.norm(g, axis=-1, keepdims=True)
    norms[norms == 0.0] = 1.0  # a zero draw has probability 0; avoid 0/0 in that case
    head = half * g / norms
    return np.concatenate([head, np.full(shape + (1,), half)], axis=-1)


@dataclasses.dataclass(frozen=True, eq=False)
class LinearEnvironment:
    """R random linear-bandit instances (theta* of shape (R, d)) with Bernoulli rewards.

    `fixed_features` (R, K, d) is used at every round when `contexts == "fixed"`; with
    `contexts == "iid"` each block draws fresh features by `paper_vectors`.
    """

    theta: np.ndarray
    horizon: int
    n_arms: int
    contexts: str = "fixed"
    fixed_features: np.ndarray | None = None

    def __post_init__(self) -> None:
        theta = check_finite_array(self.theta, "theta", ndim=2)
        check_choice(self.contexts, ("fixed", "iid"), "contexts")
        check_positive_int(self.horizon, "horizon")
        check_int_at_least(self.n_arms, 2, "n_arms")
        if self.contexts == "fixed":
            if self.fixed_features is None:
                raise ValueError("fixed_features must be given when contexts='fixed'")
            f = check_finite_array(self.fixed_features, "fixed_features", ndim=3)
            if f.shape != (theta.shape[0], self.n_arms, theta.shape[1]):
                raise ValueError(
                    f"fixed_features must have shape {(theta.shape[0], self.n_arms, theta.shape[1])}, got {f.shape}"
                )
            object.__setattr__(self, "fixed_features", f)
        object.__setattr__(self, "theta", theta)

    @property
    def runs(self) -> int:
        """Number of runs R (instances)."""
        return self.theta.shape[0]

    @property
    def dim(self) -> int:
        """Feature dimension d."""
        return self.theta.shape[1]

    def block(self, t0: int, n: int, rng: np.random.Generator) -> Block:
        """Rounds t0..t0+n-1: fixed features broadcast over rounds, or fresh i.i.d. features."""
        if self.contexts == "fixed":
            assert self.fixed_features is not None  # checked in __post_init__
            feats = np.broadcast_to(self.fixed_features[:, None], (self.runs, n, self.n_arms, self.dim))
            means = np.broadcast_to(self._fixed_means[:, None], (self.runs, n, self.n_arms))
        else:
            feats = paper_vectors(rng, (self.runs, n, self.n_arms), self.dim)
            means = (feats.reshape(self.runs, n * self.n_arms, self.dim) @ self.theta[:, :, None]).reshape(
                self.runs, n, self.n_arms
            )
        return Block(t0, feats, means)

    @functools.cached_property
    def _fixed_means(self) -> np.ndarray:
        return (self.fixed_features @ self.theta[:, :, None])[..., 0]


INSTANCES = ("random", "authors")


def authors_instances(dim: int, runs: int, n_arms: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The instances of Chowdhury & Zhou's (ICML 2022, §5 fn. 7) public code, run r = their run r: (theta (runs, d), features (runs, K, d)).

    Their LinBanditPrivate.py draws, after `np.random.seed(2)` and for run = 0, 1, ... in order: X = randn(K, d-1) with
    rows normalised and a 1 appended, the first d rows replaced by the "basis" (eye(d) with its last column set to 1),
    then theta = randn(d-1) scaled to norm 0.5 with 0.5 appended; run r's instance depends on the draws of runs < r.
    Their features have norm sqrt(2) (basis row d-1: norm 1) and theta norm 1/sqrt(2); returned here as X/sqrt(2) and
    sqrt(2) theta, so ||x|| <= 1 and ||theta|| = 1 (Assumption 3.1 and the §5 description: unit vectors, a
    1/sqrt(2) entry appended), with the same arms and the same means x^T theta in [0, 1].
    """
    dim = check_int_at_least(dim, 2, "dim")
    runs = check_positive_int(runs, "runs")
    n_arms = check_int_at_least(n_arms, dim, "n_arms")
    state = np.random.RandomState(2)
    thetas, feats = [], []
    basis = np.eye(dim)
    basis[:, -1] = 1.0
    for _ in range(runs):
        x = state.randn(n_arms, dim - 1)
        x /= np.sqrt(np.square(x).sum(axis=1))[:, None]
        x = np.hstack((x, np.ones((n_arms, 1))))
        x[:dim] = basis
        th = state.randn(dim - 1)
        th *= 0.5 / np.sqrt(np.square(th).sum())
        thetas.append(np.append(th, 0.5) * np.sqrt(2.0))
        feats.append(x / np.sqrt(2.0))
    return np.array(thetas), np.array(feats)


def linear_environment(
    rng: np.random.Generator,
    runs: int,
    horizon: int,
    dim: int = 5,
    n_arms: int = 100,
    contexts: str = "fixed",
    instances: str = "random",
) -> LinearEnvironment:
    """Chowdhury & Zhou's (ICML 2022) simulation instances (§5, App. G): one random theta* (and arm set) per run.

    instances="random" draws them from `rng` by the paper's description (`paper_vectors`); "authors" takes the
    authors' code's own instances (`authors_instances`: run r is their run r, fixed arm set, `rng` unused).
    Defaults are the paper's d = 5, K = 100; it uses T = 20000 and 50 runs.
    """
    runs = check_positive_int(runs, "runs")
    dim = check_positive_int(dim, "dim")
    n_arms = check_int_at_least(n_arms, 2, "n_arms")
    check_choice(contexts, ("fixed", "iid"), "contexts")
    check_choice(instances, INSTANCES, "instances")
    if instances == "authors":
        if contexts != "fixed":
            raise ValueError("instances='authors' has one fixed arm set per run: contexts must be 'fixed'")
        theta, fixed = authors_instances(dim, runs, n_arms)
        return LinearEnvironment(theta=theta, horizon=horizon, n_arms=n_arms, contexts="fixed", fixed_features=fixed)
    theta = paper_vectors(rng, (runs,), dim)
    features = paper_vectors(rng, (runs, n_arms), dim) if contexts == "fixed" else None
    return LinearEnvironment(theta=theta, horizon=horizon, n_arms=n_arms, contexts=contexts, fixed_features=features)


@dataclasses.dataclass(frozen=True, eq=False)
class ContextTable:
    """A fixed input of `horizon` users, identical in every run (for audits).

    features (T, K, d): user t's action features; rewards (T, K): the reward user t would give
    to each action; means (T, K) for pseudo-regret (defaults to the rewards).
    """

    features: np.ndarray
    rewards: np.ndarray
    means: np.ndarray | None = None
    runs: int = 1

    def __post_init__(self) -> None:
        f = check_finite_array(self.features, "features", ndim=3)
        r = check_finite_array(self.rewards, "rewards", ndim=2)
        if r.shape != f.shape[:2]:
            raise ValueError(f"rewards must have shape {f.shape[:2]}, got {r.shape}")
        if f.shape[1] < 2:
            raise ValueError(f"features must offer at least 2 actions (arms), got {f.shape[1]}")
        m = r if self.means is None else check_finite_array(self.means, "means", ndim=2)
        if m.shape != r.shape:
            raise ValueError(f"means must have shape {r.shape}, got {m.shape}")
        check_positive_int(self.runs, "runs")
        object.__setattr__(self, "features", f)
        object.__setattr__(self, "rewards", r)
        object.__setattr__(self, "means", m)

    @property
    def horizon(self) -> int:
        """Number of users T in the table."""
        return self.features.shape[0]

    @property
    def mean_table(self) -> np.ndarray:
        """The means (T, K): the rewards when none were given (`__post_init__` sets them)."""
        assert self.means is not None  # set in __post_init__
        return self.means

    @property
    def n_arms(self) -> int:
        """Number of actions K."""
        return self.features.shape[1]

    @property
    def dim(self) -> int:
        """Feature dimension d."""
        return self.features.shape[2]

    def with_runs(self, runs: int) -> ContextTable:
        """The same table served to `runs` independent runs."""
        return dataclasses.replace(self, runs=check_positive_int(runs, "runs"))

    def block(self, t0: int, n: int, rng: np.random.Generator) -> Block:
        """Rounds t0..t0+n-1 of the table, broadcast over the runs (rng unused: the table is fixed)."""
        sl = slice(t0, t0 + n)
        shape = (self.runs, n)
        feats = np.broadcast_to(self.features[None, sl], shape + self.features.shape[1:])
        means = np.broadcast_to(self.mean_table[None, sl], shape + (self.n_arms,))
        return Block(t0, feats, means, table_rewards=self.rewards[None, sl])

    def neighbour(
        self,
        user: int,
        kind: str = "both",
        features: np.ndarray | None = None,
        rewards: np.ndarray | None = None,
    ) -> ContextTable:
        """The table with the user of round `user` replaced: her context, her rewards, or both.

        Replace-one, unique users (Chowdhury & Zhou 2022, Def. 2.1). `features` (K, d) and `rewards` (K,) give the
        replacement; by default the features are negated and the rewards mapped y -> 1 - y (inside
        [0, 1]) or y -> -y (otherwise).
        """
        user = check_int_at_least(user, 0, "user")
        return self.neighbour_rounds((user,), kind, features, rewards)

    def neighbour_rounds(
        self,
        rounds: tuple[int, ...] | list[int],
        kind: str = "both",
        features: np.ndarray | None = None,
        rewards: np.ndarray | None = None,
    ) -> ContextTable:
        """The table with one returning user replaced at every round in `rounds` (user level,
        Chowdhury & Zhou (ICML 2022) Assumption 4.1 / Def D.4); replacement as in `neighbour`, the same at each round."""
        check_choice(kind, NEIGHBOUR_KINDS, "kind")
        idx = sorted({check_int_at_least(t, 0, "user") for t in rounds})
        if not idx:
            raise ValueError("rounds must name at least one round")
        if idx[-1] >= self.horizon:
            raise ValueError(f"user must be < {self.horizon}, got {idx[-1]}")
        if features is not None:
            features = check_finite_array(features, "features", ndim=2)
            if features.shape != self.features.shape[1:]:
                raise ValueError(f"features must have shape {self.features.shape[1:]}, got {features.shape}")
        if rewards is not None:
            rewards = check_finite_array(rewards, "rewards", ndim=1)
            if rewards.shape != self.rewards.shape[1:]:
                raise ValueError(f"rewards must have shape {self.rewards.shape[1:]}, got {rewards.shape}")
        f = self.features.copy()
        r = self.rewards.copy()
        m = self.mean_table.copy()
        tie_means = np.array_equal(self.mean_table, self.rewards)  # means are the rewards: keep them equal
        for t in idx:
            if kind in ("context", "both"):
                f[t] = -self.features[t] if features is None else features
            if kind in ("reward", "both"):
                old = self.rewards[t]
                if rewards is None:
                    r[t] = 1.0 - old if np.all((old >= 0) & (old <= 1)) else -old
                else:
                    r[t] = rewards
                if tie_means:
                    m[t] = r[t]
        return ContextTable(features=f, rewards=r, means=m, runs=self.runs)
