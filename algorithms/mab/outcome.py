"""What one call of an algorithm produced for R runs: its actions and the statistics it released.

Algorithms that play an arm for a block of rounds (elimination batches, lazy UCB between
index crossings, FTNL epochs) record the actions run-length encoded: `arms[i, s]` is played
for `lengths[i, s]` consecutive rounds (lengths sum to the horizon in every row). Regret and
audits read the same record: `actions()` expands it, `regret(gaps, checkpoints)` integrates
the pseudo-regret on a grid of rounds without expanding it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

__all__ = ["Outcome", "checkpoint_grid", "gaps", "segment_regret"]


def checkpoint_grid(horizon: int, points: int = 200) -> np.ndarray:
    """Increasing rounds in [1, horizon], half log-spaced and half evenly spaced, ending at horizon."""
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    half = max(points // 2, 1)
    grid = np.concatenate([np.geomspace(1, horizon, half), np.linspace(horizon / half, horizon, half)])
    return np.unique(np.clip(np.rint(grid).astype(np.int64), 1, horizon))


def gaps(means: np.ndarray) -> np.ndarray:
    """Delta_a = max_b mu_b - mu_a, per run if means has shape (R, K)."""
    return means.max(axis=-1, keepdims=True) - means


def segment_regret(arms: np.ndarray, lengths: np.ndarray, gap: np.ndarray, checkpoints: np.ndarray) -> np.ndarray:
    """Cumulative pseudo-regret sum_{s<=t} Delta_{A_s} at each checkpoint t, shape (R, C).

    Row i plays arms[i, s] for lengths[i, s] rounds in order. `gap` is (K,) or (R, K).
    """
    R, _ = arms.shape
    g = np.broadcast_to(gap, (R, gap.shape[-1]))
    seg_gap = np.take_along_axis(g, arms, axis=1)
    ends = np.cumsum(lengths, axis=1)
    creg = np.cumsum(seg_gap * lengths, axis=1)
    horizon = int(ends[0, -1])
    stride = horizon + 1
    # Rows are made one increasing sequence by an offset, so one searchsorted serves all rows.
    flat = (ends + stride * np.arange(R)[:, None]).ravel()
    cp = np.asarray(checkpoints, dtype=np.int64)
    q = (cp[None, :] + stride * np.arange(R)[:, None]).ravel()
    pos = np.searchsorted(flat, q, side="left")
    out = creg.ravel()[pos] - seg_gap.ravel()[pos] * (flat[pos] - q)
    return out.reshape(R, cp.size)


@dataclasses.dataclass(frozen=True, eq=False)
class Outcome:
    """Actions of `size` runs over `horizon` rounds, run-length encoded, plus released statistics.

    statistics maps a name to an array whose first axis is the run (noisy sums, aggregates...).
    """

    horizon: int
    n_arms: int
    arms: np.ndarray
    lengths: np.ndarray
    statistics: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.arms.shape != self.lengths.shape or self.arms.ndim != 2:
            raise ValueError(f"arms and lengths must share a 2-d shape, got {self.arms.shape} and {self.lengths.shape}")
        if not np.all(self.lengths.sum(axis=1) == self.horizon):
            raise ValueError("segment lengths must sum to the horizon in every run")

    @classmethod
    def from_actions(
        cls, actions: np.ndarray, n_arms: int, statistics: Mapping[str, np.ndarray] | None = None
    ) -> Outcome:
        """Run-length encode per-round actions of shape (size, horizon)."""
        a = np.asarray(actions)
        R, T = a.shape
        change = np.ones((R, T), dtype=bool)
        change[:, 1:] = a[:, 1:] != a[:, :-1]
        rows, cols = np.nonzero(change)
        counts = change.sum(axis=1)
        pos = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
        S = int(counts.max())
        starts = np.full((R, S), T, dtype=np.int64)
        starts[rows, pos] = cols
        arms = np.zeros((R, S), dtype=np.int64)
        arms[rows, pos] = a[rows, cols]
        lengths = np.diff(np.concatenate([starts, np.full((R, 1), T)], axis=1), axis=1)
        return cls(T, n_arms, arms, lengths, dict(statistics or {}))

    @property
    def size(self) -> int:
        """Number of runs."""
        return self.arms.shape[0]

    def actions(self) -> np.ndarray:
        """The arm played at every round, shape (size, horizon), 0-based arms (int16 when K allows)."""
        dtype = np.int16 if self.n_arms <= np.iinfo(np.int16).max else np.int64
        out = np.repeat(self.arms.ravel().astype(dtype), self.lengths.ravel())
        return out.reshape(self.size, self.horizon)

    def pulls(self) -> np.ndarray:
        """Number of pulls of each arm in each run, shape (size, K)."""
        out = np.zeros((self.size, self.n_arms), dtype=np.int64)
        np.add.at(out, (np.repeat(np.arange(self.size), self.arms.shape[1]), self.arms.ravel()), self.lengths.ravel())
        return out

    def regret(self, means: np.ndarray, checkpoints: np.ndarray) -> np.ndarray:
        """Cumulative pseudo-regret at `checkpoints`, shape (size, C)."""
        return segment_regret(self.arms, self.lengths, gaps(np.asarray(means, dtype=float)), checkpoints)


class SegmentLog:
    """Collects one (arm, length) column per step for all runs and builds an `Outcome`."""

    def __init__(self, size: int) -> None:
        self._arms: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []
        self.size = size

    def add(self, arms: np.ndarray | int, lengths: np.ndarray | int) -> None:
        self._arms.append(np.broadcast_to(np.asarray(arms, dtype=np.int64), (self.size,)))
        self._lengths.append(np.broadcast_to(np.asarray(lengths, dtype=np.int64), (self.size,)))

    def outcome(self, horizon: int, n_arms: int, statistics: Mapping[str, np.ndarray] | None = None) -> Outcome:
        arms = np.stack(self._arms, axis=1) if self._arms else np.zeros((self.size, 0), dtype=np.int64)
        lengths = np.stack(self._lengths, axis=1) if self._lengths else np.zeros((self.size, 0), dtype=np.int64)
        keep = lengths.any(axis=0)  # drop columns where no run played
        return Outcome(horizon, n_arms, arms[:, keep], lengths[:, keep], dict(statistics or {}))
