"""Targets of the multi-armed entries built from an algorithm's parts: the SecAgg server's and a user's view,
Shuffle-SE's decoded sum, and one release of Dist-DP-SE at the paper's size.

Each is a module-level frozen dataclass `target(data, rng, size)` (not a closure), so the auditor can ship
it to a process pool or a Dask cluster.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import numpy as np

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.audits.build import Observe
from dpaudit.mechanisms.secagg import LocalSecAgg, PolyaSecAgg

__all__ = ["BatchRelease", "ServerView", "ShuffleDecoded", "UserMessage"]


@dataclasses.dataclass(frozen=True)
class ServerView:
    """target(data, rng, size): the SecAgg output ŷ (server's view) of `protocol` on the users' rewards `data`,
    run user by user (`protocol.run`) so per-user bugs act as they would."""

    protocol: PolyaSecAgg

    def __call__(self, data, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.protocol.run(rng, np.broadcast_to(np.asarray(data, dtype=float), (size, np.size(data)))).aggregate


@dataclasses.dataclass(frozen=True)
class UserMessage:
    """target(data, rng, size): user 1's message y_1 = (x̂_1 + η_1) mod m in `protocol` (the local model's view)."""

    protocol: LocalSecAgg

    def __call__(self, data, rng: np.random.Generator, size: int) -> np.ndarray:
        x = np.broadcast_to(np.asarray(data, dtype=float), (size, np.size(data)))
        return cast(np.ndarray, self.protocol.run(rng, x).messages)[:, 0]  # the user-by-user path keeps them


@dataclasses.dataclass(frozen=True)
class ShuffleDecoded:
    """target(data, rng, size): the analyzer's decoded sum ŷ = decode(C) (mod m) of one Shuffle-SE release of
    `users` users, read from the server's count C at flattened `column` of the aggregates (-1: not released)."""

    algorithm: BatchSE
    horizon: int
    column: int
    users: int

    def __call__(self, data, rng: np.random.Generator, size: int) -> np.ndarray:
        ones = Observe(self.algorithm, self.horizon, "aggregates", (self.column,), -1.0)(data, rng, size)
        decoded = self.algorithm.secagg(self.users, self.horizon).decode(
            np.maximum(ones, 0).astype(np.int64), self.users
        )
        return np.where(ones < 0, -1, decoded)


@dataclasses.dataclass(frozen=True)
class BatchRelease:
    """target(x, rng, size): the server's view y = (x̂_1 + Σ_i η_i) mod m of one release of `users` users of
    `algorithm` at `horizon` (its own SecAgg parameters g, τ, m and noise law), user 1's reward x[0] encoded by
    randomized rounding (Chowdhury & Zhou (ICLR 2023), Alg. 1 line 20) and every other user's reward 0 (their
    encodings are public constants of the pair, so they do not change the loss)."""

    algorithm: BatchSE
    users: int
    horizon: int

    def __call__(self, data, rng: np.random.Generator, size: int) -> np.ndarray:
        proto = self.algorithm.secagg(self.users, self.horizon)
        xg = float(np.asarray(data, dtype=float).reshape(-1)[0]) * proto.params.g
        low = np.floor(xg)
        enc = (low + (rng.random(size) < xg - low)).astype(np.int64)
        return np.mod(enc + self.algorithm.noise_total(rng, size, self.users, self.horizon), proto.params.m)
