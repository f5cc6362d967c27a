"""Shared shape of every multi-armed / full-information algorithm: run, target, privacy.

`algo.run(env, rng, size, horizon)` simulates `size` independent runs and returns an
`Outcome` (actions run-length encoded, released statistics). `algo.target(horizon, observable)`
turns it into the auditor's contract `target(data, rng, size) -> array` whose first axis is
`size`: `data` is an environment or a `RewardTable` (the neighbouring inputs), the
observable is 'actions', 'pulls' or the name of a released statistic.
"""

from __future__ import annotations

import abc
from collections.abc import Callable

import numpy as np

from dpaudit.algorithms.mab.environment import RewardTable
from dpaudit.algorithms.mab.outcome import Outcome
from dpaudit.privacy import Privacy
from dpaudit.validation import check_int_at_least, check_positive_int

__all__ = ["Algorithm", "resolve_horizon"]


def resolve_horizon(env, horizon: int | None) -> int:
    """The horizon T: given, or the number of rows of a reward table; T >= K is required."""
    if horizon is None:
        if not isinstance(env, RewardTable):
            raise ValueError("horizon must be given for a stochastic environment")
        horizon = env.horizon
    return check_int_at_least(horizon, env.n_arms, "horizon (T >= K)")


class Algorithm(abc.ABC):
    """Base class of the multi-armed family, an `interface.PrivateAlgorithm`: subclasses define `name`,
    `privacy(horizon)` and `_run(env, rng, size, horizon)`."""

    name = "algorithm"

    @abc.abstractmethod
    def privacy(self, horizon: int) -> Privacy:
        """The declared privacy of a run of `horizon` rounds."""

    @abc.abstractmethod
    def _run(self, env, rng: np.random.Generator, size: int, horizon: int) -> Outcome:
        """`size` independent runs of `horizon` rounds on `env`."""

    def run(self, env, rng: np.random.Generator, size: int, horizon: int | None = None) -> Outcome:
        """Simulate `size` independent runs on `env` for `horizon` rounds."""
        size = check_positive_int(size, "size")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._run(env, rng, size, resolve_horizon(env, horizon))

    def target(self, horizon: int | None = None, observable: str = "actions") -> Callable[..., np.ndarray]:
        """The auditor's `target(data, rng, size)`: one row per run of the chosen observable."""

        def target(data, rng: np.random.Generator, size: int) -> np.ndarray:
            out = self.run(data, rng, size, horizon)
            if observable == "actions":
                return out.actions()
            if observable == "pulls":
                return out.pulls()
            if observable not in out.statistics:
                known = ", ".join(["actions", "pulls", *out.statistics])
                raise ValueError(f"unknown observable {observable!r}; known: {known}")
            return np.asarray(out.statistics[observable]).reshape(size, -1)

        target.__name__ = f"{self.name}_{observable}"
        return target
