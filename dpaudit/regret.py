"""Regret statistics: cumulative pseudo-regret curves over independent runs, and their plots.

Pseudo-regret after t rounds: R(t) = sum_{s<=t} (mu* - mu_{A_s}) (Hu, Huang & Mehta, "Optimal
Algorithms for Private Online Learning in a Stochastic Environment", arXiv 2021, eq. 2; Chowdhury &
Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023, §2), recorded on a grid
of checkpoints, one row per independent run. Intervals are normal-approximation (CLT over runs):
mean +- z_{(1+level)/2} * sd / sqrt(runs), which needs at least two runs (one run: NaN, no interval).
Time-average regret R(t)/t is what Chowdhury & Zhou's figures plot (ICLR 2023, Figs. 1-4).
Plots use matplotlib's Agg backend and are written atomically (temp file + os.replace).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["RegretCurves", "plot_curves", "plot_final"]


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
        """Number of independent runs."""
        return self.regret.shape[0]

    @property
    def horizon(self) -> int:
        """Number of rounds T: the last checkpoint."""
        return int(self.checkpoints[-1])

    def mean(self) -> np.ndarray:
        """Mean cumulative pseudo-regret at each checkpoint."""
        return self.regret.mean(axis=0)

    def band(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation confidence band of the mean at each checkpoint; NaN with one run
        (the spread over runs, hence the interval, needs at least two)."""
        m = self.mean()
        if self.runs < 2:
            return np.full_like(m, np.nan), np.full_like(m, np.nan)
        se = self.regret.std(axis=0, ddof=1) / np.sqrt(self.runs)
        z = stats.norm.ppf(0.5 + level / 2)
        return m - z * se, m + z * se

    @property
    def final_mean(self) -> float:
        """Mean cumulative pseudo-regret at the horizon."""
        return float(self.mean()[-1])

    @property
    def final_ci(self) -> tuple[float, float]:
        """95% interval of the final mean regret; (nan, nan) with one run."""
        lo, hi = self.band(0.95)
        return float(lo[-1]), float(hi[-1])

    def time_average(self) -> np.ndarray:
        """Mean time-average regret R(t)/t at each checkpoint."""
        return self.mean() / self.checkpoints

    def time_average_band(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """`band` divided by the checkpoints: the confidence band of the mean time-average regret R(t)/t."""
        lo, hi = self.band(level)
        return lo / self.checkpoints, hi / self.checkpoints

    def to_json(self, points: bool = False) -> dict[str, Any]:
        """Summary as JSON: algorithm, horizon, runs, final mean and 95% interval (null with one
        run), privacy, params.

        points=True adds the checkpoints with the mean curve and its band (null with one run).
        """
        lo, hi = self.final_ci
        out: dict[str, Any] = {
            "type": "RegretCurves",
            "algorithm": self.algorithm,
            "horizon": self.horizon,
            "runs": self.runs,
            "final_mean": self.final_mean,
            "final_ci": [lo, hi] if self.runs >= 2 else None,
            "final_time_average": self.final_mean / self.horizon,
            "privacy": _jsonable(dict(self.privacy)),
            "params": _jsonable(dict(self.params)),
        }
        if points:
            blo, bhi = self.band()
            out["checkpoints"] = self.checkpoints.tolist()
            out["mean"] = self.mean().tolist()
            out["band"] = [blo.tolist(), bhi.tolist()] if self.runs >= 2 else None
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    return value


def _save(fig, path: str | os.PathLike) -> None:
    """Write the figure atomically (`dpaudit._io.atomic_write`): a reader never sees half a plot."""
    from dpaudit._io import atomic_write

    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, dpi=fig.dpi, bbox_inches="tight"))


def plot_curves(
    curves: Sequence[RegretCurves],
    path: str | os.PathLike,
    *,
    time_average: bool = False,
    title: str | None = None,
    log_x: bool = False,
    level: float = 0.95,
) -> None:
    """Mean regret curves with shaded confidence bands, one line per `RegretCurves`.

    time_average=True plots R(t)/t (Chowdhury & Zhou's figures, ICLR 2023, Figs. 1-4); otherwise cumulative R(t)
    (Hu et al.'s, §6).
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    if not curves:
        raise ValueError("curves must hold at least one RegretCurves")
    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    ax = fig.add_subplot()
    for c in curves:
        y = c.time_average() if time_average else c.mean()
        lo, hi = c.time_average_band(level) if time_average else c.band(level)
        label = c.params.get("label", c.algorithm) if isinstance(c.params, Mapping) else c.algorithm
        (line,) = ax.plot(c.checkpoints, y, label=str(label))
        ax.fill_between(c.checkpoints, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("time-average regret R(t)/t" if time_average else "cumulative pseudo-regret R(t)")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def plot_final(
    series: Mapping[str, tuple[Sequence[float], Sequence[RegretCurves]]],
    path: str | os.PathLike,
    *,
    title: str | None = None,
    xlabel: str = "epsilon",
) -> None:
    """Final regret R(T) with 95% intervals against a parameter (Hu, Huang & Mehta Fig. 5: regret vs epsilon).

    series maps a label to (x values, one RegretCurves per x value).
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    ax = fig.add_subplot()
    for label, (xs, cs) in series.items():
        if len(xs) != len(cs):
            raise ValueError(f"series {label!r}: {len(xs)} x values but {len(cs)} curves")
        m = np.array([c.final_mean for c in cs])
        ci = np.array([c.final_ci for c in cs])
        ax.errorbar(xs, m, yerr=[m - ci[:, 0], ci[:, 1] - m], marker="o", capsize=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("final regret R(T)")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)
