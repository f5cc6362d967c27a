"""Private-GLM and ShuffleGLM in the shape of `dpaudit.interface.PrivateAlgorithm`.

Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits":
Algorithm 2 (Private-GLM, (ε, δ)-JDP, Theorem 6.2) and Algorithm 1 (ShuffleGLM, (ε, δ)-SDP, Theorem 5.1).
Data are pairs (GLMEnvironment, GLMData): the context sets and the users' reward coins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from dpaudit.algorithms.glm.environment import GLMData, GLMEnvironment
from dpaudit.algorithms.glm.privacy import private_glm_privacy, shuffle_glm_privacy
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, PrivateGLMResult, private_glm_target, run_private_glm
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams, ShuffleGLMResult, run_shuffle_glm, shuffle_glm_target
from dpaudit.interface import Target
from dpaudit.privacy import Privacy
from dpaudit.validation import check_positive_int

__all__ = ["PrivateGLM", "ShuffleGLM"]


@dataclasses.dataclass(frozen=True)
class PrivateGLM:
    """Private-GLM with `params` (Algorithm 2)."""

    params: PrivateGLMParams
    name = "private-glm"

    def run(
        self, data: tuple[GLMEnvironment, GLMData], rng: np.random.Generator, *, release: bool = False
    ) -> PrivateGLMResult:
        """Every run of the users `data[1]` in the environment `data[0]`; `release` keeps the tree releases."""
        env, users = data
        return run_private_glm(env, users, self.params, rng, release=release)

    def target(self, observable: str = "actions_after", after: int = 0) -> Target:
        """See `private_glm_target`."""
        return private_glm_target(self.params, observable, after)

    def privacy(self, horizon: int, *, env: GLMEnvironment) -> Privacy:
        """Claimed (Thm 6.2) vs corrected privacy over `horizon` users of `env` (its d, κ, κ* and S)."""
        return private_glm_privacy(self.params, horizon, env.dim, env.kappa, env.kappa_star, env.S)


@dataclasses.dataclass(frozen=True)
class ShuffleGLM:
    """ShuffleGLM with `params` (Algorithm 1)."""

    params: ShuffleGLMParams
    name = "shuffle-glm"

    def run(self, data: tuple[GLMEnvironment, GLMData], rng: np.random.Generator) -> ShuffleGLMResult:
        """Every run of the users `data[1]` in the environment `data[0]`."""
        env, users = data
        return run_shuffle_glm(env, users, self.params, rng)

    def target(self, observable: str = "released") -> Target:
        """See `shuffle_glm_target`."""
        return shuffle_glm_target(self.params, observable)

    def privacy(
        self, horizon: int, *, dim: int, batch_sizes: Sequence[int], iterations: Sequence[int] | None = None
    ) -> Privacy:
        """Claimed (Thm 5.1) vs corrected privacy of a run whose batches (summing to `horizon` users) have
        `batch_sizes` (a run's `batch_ends` differenced) and `iterations` P_GD rounds each."""
        sizes = [check_positive_int(n, "batch_sizes") for n in batch_sizes]
        if sum(sizes) != check_positive_int(horizon, "horizon"):
            raise ValueError(f"batch_sizes must sum to horizon={horizon}, got {sizes}")
        return shuffle_glm_privacy(self.params, sizes, dim, None if iterations is None else list(iterations))
