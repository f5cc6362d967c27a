"""Stochastic K-armed environments, the papers' instances, and a fixed reward table.

Every environment serves R independent runs at once. Means may be shared, shape (K,), or
per run, shape (R, K) (Chowdhury & Zhou (ICLR 2023) averages over random instances, one per run). Rewards lie
in [0, 1], the sensitivity assumption of both papers (Hu, Huang, Mehta, §2, Chowdhury & Zhou 2023, §2).

An environment answers three kinds of requests, all vectorised over runs:
- `stream(rng, size)`: a callable (t, arms) -> rewards of round t (0-based) for each run,
  for algorithms that decide every round;
- `segment_sums(rng, arms, start, length, rows=None)`: the sum of one arm's rewards over
  rounds [start, start + length) in each of the runs `rows` (default: all, in order), drawn directly from the sum's exact law where one
  exists (binomial for Bernoulli arms, prefix sums for a table);
- `vector_sums(rng, start, length, size)`: all K coordinates summed over a block (full
  information, Hu, Huang, Mehta's (arXiv:2102.07929) FTNL, Alg. 2).
`rounded_segment_sums` does the same for the randomized-rounding encoding of Chowdhury & Zhou (ICLR 2023, Alg. 1), and
`window(rng, arms, start, width)` gives one arm's rewards over the next rounds of each run.

`RewardTable` is a fixed dataset: row t is user/round t's reward vector X(t) in [0,1]^K.
`RewardTable.neighbour(t, row)` changes exactly one user (Hu, Huang, Mehta (arXiv:2102.07929), §2.2: one round's whole
reward vector; Chowdhury & Zhou (ICLR 2023), Sec. 2: one user's reward, i.e. the coordinate the schedule reads).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from scipy import stats

from dpaudit.validation import check_choice, check_finite_array, check_int_at_least, check_positive

__all__ = [
    "HHM_SETTINGS",
    "INSTANCES",
    "REWARD_MODELS",
    "BernoulliArms",
    "ClippedGaussianArms",
    "Environment",
    "RewardTable",
    "authors_instances",
    "check_means",
    "cz_means",
    "instance_rewards",
    "make_environment",
]

# Hu, Huang, Mehta, §6 / App. I: three mean vectors, K = 5 (settings 1 and 2 from Sajed & Sheffet 2019).
HHM_SETTINGS: dict[str, tuple[float, ...]] = {
    "hhm-1": (0.75, 0.70, 0.70, 0.70, 0.70),
    "hhm-2": (0.75, 0.625, 0.5, 0.375, 0.25),
    "hhm-3": (0.75, 0.15, 0.15, 0.15, 0.15),
}
# Chowdhury & Zhou 2023, §7 / App. J: mu_a ~ U[0.5 - gap/2, 0.5 + gap/2], gap 0.5 (easy) or 0.1 (hard), K = 10.
CZ_GAPS: dict[str, float] = {"easy": 0.5, "hard": 0.1}
INSTANCES: tuple[str, ...] = (*HHM_SETTINGS, *CZ_GAPS)
REWARD_MODELS: tuple[str, ...] = ("bernoulli", "gaussian")
_CHUNK = 1 << 22  # elements per chunk when rewards must be drawn user by user


def check_means(means, name: str = "means") -> np.ndarray:
    """Means as a float array of shape (K,) or (R, K) with K >= 2 and every entry in [0, 1]."""
    arr = check_finite_array(means, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (K,) or (runs, K), got shape {arr.shape}")
    if arr.shape[-1] < 2:
        raise ValueError(f"{name} must describe K >= 2 arms, got K = {arr.shape[-1]}")
    if np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"{name} must lie in [0, 1], got values in [{arr.min()}, {arr.max()}]")
    return arr


def cz_means(rng: np.random.Generator, instance: str, runs: int, n_arms: int = 10) -> np.ndarray:
    """One random instance per run, shape (runs, n_arms): mu ~ U[0.5 - gap/2, 0.5 + gap/2].

    Chowdhury & Zhou 2023, App. J and the authors' code: `mu = gap*rand(K) + (0.5 - gap/2)`, gap 0.5 / 0.1.
    """
    check_choice(instance, tuple(CZ_GAPS), "instance")
    check_int_at_least(n_arms, 2, "n_arms")
    gap = CZ_GAPS[instance]
    return gap * rng.random((runs, n_arms)) + (0.5 - gap / 2)


def authors_instances(instance: str, runs: int, n_arms: int = 10) -> np.ndarray:
    """Chowdhury & Zhou's (ICLR 2023, Sec. 7) instances exactly as their public code (footnote 5) draws them, shape (runs, n_arms).

    Run r (0-based) uses `np.random.seed(r); mu = gap * np.random.rand(K) + (0.5 - gap/2)` (gap 0.5 easy,
    0.1 hard; the authors' MABPrivate.py), i.e. `RandomState(r).rand(K)`: the first runs are the
    instances behind the authors' figures, whatever the simulation's seed.
    """
    check_choice(instance, tuple(CZ_GAPS), "instance")
    check_int_at_least(runs, 1, "runs")
    check_int_at_least(n_arms, 2, "n_arms")
    gap = CZ_GAPS[instance]
    return np.stack([gap * np.random.RandomState(r).rand(n_arms) + (0.5 - gap / 2) for r in range(runs)])


def _arm_means(means: np.ndarray, arms, rows) -> np.ndarray:
    """mu of `arms` in runs `rows` (all runs 0..len(arms)-1 when rows is None)."""
    arms = np.asarray(arms)
    if means.ndim == 1:
        return means[arms]
    rows = np.arange(arms.shape[0]) if rows is None else np.asarray(rows)
    return means[rows, arms]


def _rows(means: np.ndarray, size: int) -> np.ndarray:
    """Means broadcast to (size, K); per-run means must have exactly `size` rows."""
    if means.ndim == 2 and means.shape[0] != size:
        raise ValueError(f"per-run means have {means.shape[0]} rows but size is {size}")
    return np.broadcast_to(means, (size, means.shape[-1]))


@dataclasses.dataclass(frozen=True, eq=False)
class BernoulliArms:
    """Arm a pays Bernoulli(mu_a); a block sum of n pulls is Binomial(n, mu_a) exactly."""

    means: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", check_means(self.means))

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return self.means.shape[-1]

    def stream(self, rng: np.random.Generator, size: int) -> Callable[[int, np.ndarray], np.ndarray]:
        """A callable (t, arms) -> rewards (size,) of round t for each run's arm `arms[i]`."""
        mu = _rows(self.means, size)
        rows = np.arange(size)
        block = max(1, _CHUNK // max(size, 1))
        first, u = -(1 << 62), np.empty((0, size))  # the block of uniforms for rounds first, first + 1, ...

        def draw(t: int, arms: np.ndarray) -> np.ndarray:
            nonlocal first, u
            if not first <= t < first + block:
                first, u = t, rng.random((block, size))
            return (u[t - first] < mu[rows, arms]).astype(float)

        return draw

    def segment_sums(self, rng, arms, start, length, rows=None) -> np.ndarray:
        """Sum of `arms[i]`'s rewards over rounds [start[i], start[i] + length[i]) in each of the runs `rows`
        (default: all, in order).

        Drawn exactly: Binomial(length, mu_a).
        """
        return rng.binomial(np.asarray(length), _arm_means(self.means, arms, rows)).astype(float)

    def window(self, rng, arms, start, width: int) -> np.ndarray:
        """Rewards of `arms[i]` at rounds start[i] .. start[i]+width-1, shape (runs, width)."""
        mu = _arm_means(self.means, arms, None)
        return (rng.random((mu.size, width)) < mu[:, None]).astype(float)

    def vector_sums(self, rng, start: int, length: int, size: int) -> np.ndarray:
        """All K arms' rewards summed over rounds [start, start + length), shape (size, K).

        Drawn exactly: Binomial(length, mu_a) per arm.
        """
        return rng.binomial(length, _rows(self.means, size)).astype(float)

    def rounded_segment_sums(self, rng, arms, start, length, g: int, rows=None) -> np.ndarray:
        """Sum of x_hat = floor(x g) + Ber(frac(x g)): for x in {0, 1} this is g * Binomial."""
        return (g * self.segment_sums(rng, arms, start, length, rows)).astype(np.int64)


@dataclasses.dataclass(frozen=True, eq=False)
class ClippedGaussianArms:
    """Arm a pays clip(N(mu_a, std^2), 0, 1) (Chowdhury & Zhou's (ICLR 2023) experiments, Sec. 7 and App. J, std 0.1, clipped as in its code).

    No closed form exists for a block sum, so block sums are drawn user by user (in chunks).
    """

    means: np.ndarray
    std: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "means", check_means(self.means))
        check_positive(self.std, "std")

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return self.means.shape[-1]

    @property
    def reward_means(self) -> np.ndarray:
        """E[clip(N(mu, std^2), 0, 1)] = mu + std(phi(a) - phi(b)) - mu Phi(-a) + (1 - mu) Phi(-b), a = mu/std,
        b = (1 - mu)/std: the arms' real mean rewards (clipping moves mu = 0.25 by 2e-4 at std 0.1), so the
        pseudo-regret built on them is the expected realised regret the authors report."""
        mu, sd = self.means, self.std
        a, b = mu / sd, (1.0 - mu) / sd
        return mu + sd * (stats.norm.pdf(a) - stats.norm.pdf(b)) - mu * stats.norm.sf(a) + (1.0 - mu) * stats.norm.sf(b)

    @property
    def reward_variances(self) -> np.ndarray:
        """Var[clip(N(mu, std^2), 0, 1)] = E[Y^2] - E[Y]^2 with, for l = -mu/std, u = (1 - mu)/std and
        D = Phi(u) - Phi(l): E[Y^2] = (mu^2 + std^2) D + 2 mu std (phi(l) - phi(u)) + std^2 (l phi(l) - u phi(u)) + Phi(-u)
        (the truncated normal's moments plus the mass clipped to 1). The spread of the realised regret the authors'
        code reports around the pseudo-regret (Chowdhury & Zhou, ICLR 2023, Sec. 7) comes from these variances."""
        mu, sd = self.means, self.std
        lo, hi = -mu / sd, (1.0 - mu) / sd
        mass = stats.norm.cdf(hi) - stats.norm.cdf(lo)
        pl, ph = stats.norm.pdf(lo), stats.norm.pdf(hi)
        second = (mu**2 + sd**2) * mass + 2.0 * mu * sd * (pl - ph) + sd**2 * (lo * pl - hi * ph) + stats.norm.sf(hi)
        return np.maximum(second - self.reward_means**2, 0.0)  # round-off near a degenerate arm: never negative

    def _draw(self, rng, mu: np.ndarray) -> np.ndarray:
        return np.clip(mu + self.std * rng.standard_normal(mu.shape), 0.0, 1.0)

    def stream(self, rng: np.random.Generator, size: int):
        """A callable (t, arms) -> rewards (size,) of round t for each run's arm `arms[i]`."""
        mu = _rows(self.means, size)
        rows = np.arange(size)
        block = max(1, _CHUNK // max(size, 1))
        first, z = -(1 << 62), np.empty((0, size))  # the block of normals for rounds first, first + 1, ...

        def draw(t: int, arms: np.ndarray) -> np.ndarray:
            nonlocal first, z
            if not first <= t < first + block:
                first, z = t, rng.standard_normal((block, size))
            return np.clip(mu[rows, arms] + self.std * z[t - first], 0.0, 1.0)

        return draw

    def _per_user(self, rng, mu: np.ndarray, length: np.ndarray, transform) -> np.ndarray:
        """sum_{i < length[j]} transform(X_ij) with X_ij ~ clip(N(mu[j], std^2)), in chunks of runs."""
        out = np.zeros(mu.shape[0], dtype=float)
        length = np.broadcast_to(np.asarray(length, dtype=np.int64), mu.shape)
        j = 0
        while j < mu.shape[0]:
            csum = np.cumsum(length[j:])
            k = max(1, int(np.searchsorted(csum, _CHUNK, side="right")))
            lens = length[j : j + k]
            total = int(lens.sum())
            if total:
                x = transform(self._draw(rng, np.repeat(mu[j : j + k], lens)))
                idx = np.repeat(np.arange(k), lens)
                out[j : j + k] = np.bincount(idx, weights=x, minlength=k)
            j += k
        return out

    def segment_sums(self, rng, arms, start, length, rows=None) -> np.ndarray:
        """Sum of `arms[i]`'s rewards over rounds [start[i], start[i] + length[i]) in each of the runs `rows`
        (default: all, in order).

        Drawn user by user (no closed form).
        """
        return self._per_user(rng, _arm_means(self.means, arms, rows), length, lambda x: x)

    def window(self, rng, arms, start, width: int) -> np.ndarray:
        """Rewards of `arms[i]` at rounds start[i] .. start[i]+width-1, shape (runs, width)."""
        mu = _arm_means(self.means, arms, None)
        return self._draw(rng, np.repeat(mu[:, None], width, axis=1))

    def vector_sums(self, rng, start: int, length: int, size: int) -> np.ndarray:
        """All K arms' rewards summed over rounds [start, start + length), shape (size, K).

        Drawn user by user (no closed form).
        """
        mu = _rows(self.means, size)
        flat = self._per_user(rng, mu.reshape(-1), np.full(mu.size, length), lambda x: x)
        return flat.reshape(mu.shape)

    def rounded_segment_sums(self, rng, arms, start, length, g: int, rows=None) -> np.ndarray:
        """Sum of the randomized-rounding codes floor(x g) + Ber(frac(x g)) of `arms[i]`'s rewards
        (Chowdhury & Zhou, ICLR 2023, Alg. 1 line 20), drawn user by user.
        """
        mu = _arm_means(self.means, arms, rows)

        def encode(x: np.ndarray) -> np.ndarray:
            xg = x * g
            low = np.floor(xg)
            return low + (rng.random(x.shape) < xg - low)

        return np.rint(self._per_user(rng, mu, length, encode)).astype(np.int64)


@dataclasses.dataclass(frozen=True, eq=False)
class RewardTable:
    """A fixed dataset: rewards[t, a] in [0, 1] is round/user t's reward for arm a.

    The same table serves every run (the audits' D and D'); runs differ only in the
    algorithm's coins. Pseudo-regret uses the column means as the arms' means.
    """

    rewards: np.ndarray
    _prefix: np.ndarray = dataclasses.field(init=False, repr=False)  # cumulative sums, row 0 zero
    _ones: np.ndarray | None = dataclasses.field(init=False, repr=False)  # int64 cumulative counts of a 0/1 table

    def __post_init__(self) -> None:
        arr = check_finite_array(self.rewards, "rewards", ndim=2)
        if arr.shape[1] < 2:
            raise ValueError(f"rewards must have K >= 2 columns, got {arr.shape[1]}")
        if np.any(arr < 0) or np.any(arr > 1):
            raise ValueError("rewards must lie in [0, 1]")
        arr = arr.copy()
        arr.setflags(write=False)
        object.__setattr__(self, "rewards", arr)
        prefix = np.vstack([np.zeros((1, arr.shape[1])), np.cumsum(arr, axis=0)])
        object.__setattr__(self, "_prefix", prefix)
        ones = None
        if np.all((arr == 0) | (arr == 1)):
            ones = np.vstack([np.zeros((1, arr.shape[1]), np.int64), np.cumsum(arr, axis=0, dtype=np.int64)])
        object.__setattr__(self, "_ones", ones)

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return self.rewards.shape[1]

    @property
    def horizon(self) -> int:
        """Number of rounds T in the table."""
        return self.rewards.shape[0]

    @property
    def means(self) -> np.ndarray:
        """Column means: the arms' means for pseudo-regret."""
        return self.rewards.mean(axis=0)

    def neighbour(self, t: int, row) -> RewardTable:
        """The table with round t's reward vector replaced by `row` (scalar or length K)."""
        t = check_int_at_least(t, 0, "t")
        if t >= self.horizon:
            raise ValueError(f"t must be < {self.horizon}, got {t}")
        new = self.rewards.copy()
        new[t] = np.broadcast_to(np.asarray(row, dtype=float), (self.n_arms,))
        return RewardTable(new)

    def _check_end(self, end) -> None:
        if np.any(np.asarray(end) > self.horizon):
            raise ValueError(f"the algorithm needs more than the table's {self.horizon} rounds")

    def stream(self, rng, size: int):
        """A callable (t, arms) -> rewards[t, arms]; ValueError past the table's last round."""

        def draw(t: int, arms: np.ndarray) -> np.ndarray:
            self._check_end(t + 1)
            return self.rewards[t, arms]

        return draw

    def segment_sums(self, rng, arms, start, length, rows=None) -> np.ndarray:
        """Sum of `arms[i]`'s rewards over rounds [start[i], start[i] + length[i]) in each of the runs `rows`
        (default: all, in order).

        Read from the table's prefix sums; ValueError past its last round.
        """
        start = np.asarray(start, dtype=np.int64)
        end = start + np.asarray(length, dtype=np.int64)
        self._check_end(end)
        return self._prefix[end, arms] - self._prefix[start, arms]

    def window(self, rng, arms, start, width: int) -> np.ndarray:
        """rewards[start[i] + k, arms[i]] for k < width; rounds past the table read its last row."""
        pos = np.minimum(np.asarray(start)[:, None] + np.arange(width), self.horizon - 1)
        return self.rewards[pos, np.asarray(arms)[:, None]]

    def vector_sums(self, rng, start: int, length: int, size: int) -> np.ndarray:
        """All K arms' rewards summed over rounds [start, start + length), shape (size, K).

        Read from the table's prefix sums (the same in every run); ValueError past its last round.
        """
        self._check_end(start + length)
        return np.broadcast_to(self._prefix[start + length] - self._prefix[start], (size, self.n_arms)).copy()

    def rounded_segment_sums(self, rng, arms, start, length, g: int, rows=None) -> np.ndarray:
        """Randomized rounding user by user (Chowdhury & Zhou 2023, Alg. 1 line 20) on the table's entries.

        On a 0/1 table x g is an integer, so the sums are g times the integer prefix counts; the coins the
        rounding would compare against are still drawn, so the generator ends where the general path leaves it.
        """
        start = np.broadcast_to(np.asarray(start, dtype=np.int64), np.shape(arms))
        length = np.broadcast_to(np.asarray(length, dtype=np.int64), np.shape(arms))
        self._check_end(start + length)
        if self._ones is not None:
            _discard_uniforms(rng, int(length.sum()))
            return g * (self._ones[start + length, arms] - self._ones[start, arms])
        idx = np.repeat(np.arange(len(arms)), length)
        rounds = np.repeat(start - np.cumsum(length) + length, length) + np.arange(int(length.sum()))
        xg = self.rewards[rounds, np.repeat(arms, length)] * g
        low = np.floor(xg)
        enc = low + (rng.random(xg.shape) < xg - low)
        return np.rint(np.bincount(idx, weights=enc, minlength=len(arms))).astype(np.int64)


def _discard_uniforms(rng: np.random.Generator, count: int, block: int = 1 << 20) -> None:
    """Draw `count` uniforms and drop them, by blocks: the generator ends where `rng.random(count)` leaves it."""
    buffer = np.empty(min(count, block))
    for done in range(0, count, block):
        rng.random(out=buffer[: min(block, count - done)])


Environment = BernoulliArms | ClippedGaussianArms | RewardTable


def instance_rewards(instance: str | None, means=None) -> str:
    """The reward law an instance comes with: 'gaussian' (clip(N(mu, 0.1^2), 0, 1)) for Chowdhury & Zhou's
    (ICLR 2023, Sec. 7) easy/hard instances, as in their experiments and code; 'bernoulli' otherwise."""
    return "gaussian" if means is None and instance in CZ_GAPS else "bernoulli"


def make_environment(
    rng: np.random.Generator,
    runs: int,
    *,
    instance: str | None = None,
    means=None,
    n_arms: int | None = None,
    rewards: str | None = None,
    std: float = 0.1,
) -> BernoulliArms | ClippedGaussianArms:
    """Build the environment the CLI and the reproduction scripts name.

    `means` (explicit vector) wins over `instance`; `instance` is one of Hu, Huang, Mehta's (arXiv:2102.07929)
    settings ('hhm-1', 'hhm-2' of §6, 'hhm-3' of App. I.3, K = 5) or Chowdhury & Zhou's (ICLR 2023, Sec. 7) 'easy' / 'hard'
    instances: run r gets the authors' instance r (`authors_instances`, K = `n_arms`, default 10; `rng` is
    then unused). `rewards` is 'bernoulli' or 'gaussian' (clipped N(mu, std^2)); None takes the instance's
    own law (`instance_rewards`).
    """
    rewards = instance_rewards(instance, means) if rewards is None else rewards
    check_choice(rewards, REWARD_MODELS, "rewards")
    if means is not None:
        mu = check_means(means)
        if n_arms is not None and mu.shape[-1] != n_arms:
            raise ValueError(f"n_arms = {n_arms} does not match the {mu.shape[-1]} means given")
    else:
        instance = check_choice(instance or "hhm-1", INSTANCES, "instance")
        if instance in HHM_SETTINGS:
            mu = np.array(HHM_SETTINGS[instance])
            if n_arms is not None and n_arms != mu.size:
                raise ValueError(f"instance {instance!r} has K = {mu.size} arms, got n_arms = {n_arms}")
        else:
            mu = authors_instances(instance, runs, 10 if n_arms is None else n_arms)
    return BernoulliArms(mu) if rewards == "bernoulli" else ClippedGaussianArms(mu, std)
