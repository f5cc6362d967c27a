"""Regret statistics: cumulative pseudo-regret curves over independent runs.

Pseudo-regret after t rounds: R(t) = sum_{s<=t} (mu* - mu_{A_s}), recorded on a grid of
checkpoints, one row per independent run. Intervals are normal-approximation (CLT over runs).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np
from scipy import stats

__all__ = ["RegretCurves"]


@dataclasses.dataclass(frozen=True, eq=False)
class RegretCurves:
    """Cumulative pseudo-regret of `runs` independent runs at `checkpoints` (1-based rounds).

    regret has shape (runs, len(checkpoints)); `privacy` is the algorithm's declared claim
    (JSON-serialisable); `params` the parameters that reproduce the run.
    """

    algorithm: str
    checkpoints: np.ndarray
    regret: np.ndarray
    privacy: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        cp = np.asarray(self.checkpoints)
        rg = np.asarray(self.regret, dtype=float)
        if cp.ndim != 1 or cp.size == 0:
            raise ValueError(f"checkpoints must be a non-empty 1-d array, got shape {cp.shape}")
        if np.any(np.diff(cp) <= 0) or cp[0] < 1:
            raise ValueError("checkpoints must be increasing rounds >= 1")
        if rg.ndim != 2 or rg.shape[1] != cp.size:
            raise ValueError(f"regret must have shape (runs, {cp.size}), got {rg.shape}")
        if not np.all(np.isfinite(rg)):
            raise ValueError("regret must be finite")
        object.__setattr__(self, "checkpoints", cp)
        object.__setattr__(self, "regret", rg)

    @property
    def runs(self) -> int:
        return self.regret.shape[0]

    @property
    def horizon(self) -> int:
        return int(self.checkpoints[-1])

    def mean(self) -> np.ndarray:
        """Mean cumulative pseudo-regret at each checkpoint."""
        return self.regret.mean(axis=0)

    def band(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation confidence band of the mean at each checkpoint."""
        m = self.mean()
        if self.runs < 2:
            return m.copy(), m.copy()
        se = self.regret.std(axis=0, ddof=1) / np.sqrt(self.runs)
        z = stats.norm.ppf(0.5 + level / 2)
        return m - z * se, m + z * se

    @property
    def final_mean(self) -> float:
        return float(self.mean()[-1])

    @property
    def final_ci(self) -> tuple[float, float]:
        lo, hi = self.band(0.95)
        return float(lo[-1]), float(hi[-1])
