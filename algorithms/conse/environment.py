"""Typed-patient two-arm experiment with potential outcomes (Li, Shi, Simchi-Levi, ICML 2024, §1.2).

Units t = 1..n arrive with a type x_t in {0..M-1} drawn from a possibly non-stationary schedule
P^t_X = (p^t_1..p^t_M) (Assumption 1.1: seasonal non-stationarity), and carry potential outcomes
(r_t(0|x_t), r_t(1|x_t)) in [0, 1]. The algorithm chooses a_t and sees r_t(a_t|x_t) only. A user is one
unit u_t = (x_t, r_t(0), r_t(1)); neighbouring datasets differ in one unit: its type, its outcomes, or both
(Li, Shi, Simchi-Levi (ICML 2024), §1.2 "differ in at most one time step").
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpaudit.validation import (
    check_choice,
    check_finite_array,
    check_int_at_least,
    check_positive_int,
    check_probability,
)

__all__ = ["NEIGHBOUR_KINDS", "PatientData", "PatientExperiment"]

NEIGHBOUR_KINDS = ("context", "reward", "both")


@dataclasses.dataclass(frozen=True, eq=False)
class PatientData:
    """One dataset per run: types (runs, n) int, potential outcomes y0, y1 (runs, n) float in [0, 1]."""

    types: np.ndarray
    y0: np.ndarray
    y1: np.ndarray

    def __post_init__(self) -> None:
        types = np.asarray(self.types)
        if types.ndim != 2:
            raise ValueError(f"types must have shape (runs, horizon), got {types.shape}")
        if not np.issubdtype(types.dtype, np.integer):
            raise TypeError(f"types must be non-negative integers, got dtype {types.dtype}")
        if types.size and types.min() < 0:
            raise ValueError("types must be non-negative integers")
        for name in ("y0", "y1"):
            y = check_finite_array(getattr(self, name), name, ndim=2)
            if y.shape != types.shape:
                raise ValueError(f"{name} must have shape {types.shape}, got {y.shape}")
            if y.size and (y.min() < 0.0 or y.max() > 1.0):
                raise ValueError(f"{name} must lie in [0, 1] (bounded rewards, Li, Shi, Simchi-Levi, §1.2)")
            object.__setattr__(self, name, y)
        object.__setattr__(self, "types", types.astype(np.int64, copy=False))

    @property
    def runs(self) -> int:
        """Number of runs (datasets)."""
        return self.types.shape[0]

    @property
    def horizon(self) -> int:
        """Number of patients n per run."""
        return self.types.shape[1]

    def repeat(self, size: int) -> PatientData:
        """Every run repeated `size` times in a row (np.repeat on the runs axis)."""
        return PatientData(np.repeat(self.types, size, 0), np.repeat(self.y0, size, 0), np.repeat(self.y1, size, 0))


@dataclasses.dataclass(frozen=True, eq=False)
class PatientExperiment:
    """Environment: per-type outcome means mu0[j], mu1[j] in [0, 1] and an arrival schedule.

    outcome="bernoulli": r(a|X_j) ~ Bernoulli(mu_a[j]); outcome="beta": Beta with mean mu_a[j] and
    concentration `concentration` (a continuous [0, 1] law). `weights` (M,) are the base type
    frequencies; `seasonality` in [0, 1) modulates them over time,
    p^t_j ∝ w_j (1 + seasonality * sin(2 pi (t / period + j / M))), which keeps f_j(n)/f_j(n/2) bounded
    (Assumption 1.1 (1)) and contains the stationary case (seasonality = 0).
    """

    mu0: np.ndarray
    mu1: np.ndarray
    weights: np.ndarray | None = None
    seasonality: float = 0.0
    period: float = 7.0
    outcome: str = "bernoulli"
    concentration: float = 4.0

    def __post_init__(self) -> None:
        mu0 = check_finite_array(self.mu0, "mu0", ndim=1)
        mu1 = check_finite_array(self.mu1, "mu1", ndim=1)
        if mu0.size == 0 or mu0.shape != mu1.shape:
            raise ValueError(f"mu0 and mu1 must be non-empty with equal shapes, got {mu0.shape}, {mu1.shape}")
        for name, mu in (("mu0", mu0), ("mu1", mu1)):
            if mu.min() < 0 or mu.max() > 1:
                raise ValueError(f"{name} must lie in [0, 1]")
        w = np.ones(mu0.size) if self.weights is None else check_finite_array(self.weights, "weights", ndim=1)
        if w.shape != mu0.shape or np.any(w <= 0):
            raise ValueError(f"weights must be positive with shape {mu0.shape}")
        s = check_probability(self.seasonality, "seasonality")
        if s >= 1.0:
            raise ValueError(f"seasonality must lie in [0, 1), got {self.seasonality!r}")
        if not (np.isfinite(self.period) and self.period > 0):
            raise ValueError(f"period must be positive and finite, got {self.period!r}")
        check_choice(self.outcome, ("bernoulli", "beta"), "outcome")
        if not (np.isfinite(self.concentration) and self.concentration > 0):
            raise ValueError(f"concentration must be positive and finite, got {self.concentration!r}")
        object.__setattr__(self, "mu0", mu0)
        object.__setattr__(self, "mu1", mu1)
        object.__setattr__(self, "weights", w / w.sum())

    @property
    def num_types(self) -> int:
        """Number of patient types."""
        return self.mu0.size

    @property
    def cate(self) -> np.ndarray:
        """Delta(X_j) = E r(1|X_j) - E r(0|X_j) (Li, Shi, Simchi-Levi, §1.2)."""
        return self.mu1 - self.mu0

    @property
    def variances(self) -> tuple[np.ndarray, np.ndarray]:
        """(sigma^2_{j0}, sigma^2_{j1}) of the outcome laws."""
        if self.outcome == "bernoulli":
            return self.mu0 * (1 - self.mu0), self.mu1 * (1 - self.mu1)
        c = self.concentration
        return self.mu0 * (1 - self.mu0) / (c + 1), self.mu1 * (1 - self.mu1) / (c + 1)

    def schedule(self, horizon: int) -> np.ndarray:
        """Arrival probabilities p^t (horizon, M)."""
        horizon = check_positive_int(horizon, "horizon")
        t = np.arange(horizon)[:, None]
        j = np.arange(self.num_types)[None, :]
        assert self.weights is not None  # normalised by __post_init__
        p = self.weights[None, :] * (1 + self.seasonality * np.sin(2 * np.pi * (t / self.period + j / self.num_types)))
        return p / p.sum(axis=1, keepdims=True)

    def expected_counts(self, horizon: int) -> np.ndarray:
        """f_j(m) = sum_{t<=m} p^t_j for m = 1..horizon, shape (horizon, M) (Li, Shi, Simchi-Levi, §1.2)."""
        return np.cumsum(self.schedule(horizon), axis=0)

    def _outcomes(self, rng: np.random.Generator, mu: np.ndarray) -> np.ndarray:
        if self.outcome == "bernoulli":
            return (rng.random(mu.shape) < mu).astype(float)
        c = self.concentration
        a = np.clip(mu * c, 1e-12, None)
        b = np.clip((1 - mu) * c, 1e-12, None)
        return rng.beta(a, b)

    def sample(self, rng: np.random.Generator, horizon: int, runs: int = 1) -> PatientData:
        """Draw `runs` independent datasets of `horizon` units (inverse-cdf types, independent outcomes)."""
        horizon = check_positive_int(horizon, "horizon")
        runs = check_positive_int(runs, "runs")
        cdf = np.cumsum(self.schedule(horizon), axis=1)
        cdf[:, -1] = 1.0
        u = rng.random((runs, horizon))
        types = (u[:, :, None] > cdf[None, :, :]).sum(axis=2)
        y0 = self._outcomes(rng, self.mu0[types])
        y1 = self._outcomes(rng, self.mu1[types])
        return PatientData(types, y0, y1)

    def neighbour(
        self,
        data: PatientData,
        t: int,
        kind: str,
        new_type: int | None = None,
        new_outcomes: tuple[float, float] | None = None,
    ) -> PatientData:
        """The dataset that differs from `data` in unit t (0-based) only, in every run.

        kind="context": the type becomes `new_type` (default: (x_t + 1) mod M), outcomes kept;
        kind="reward": the outcomes become `new_outcomes` (default: 1 - (y0, y1)), type kept;
        kind="both": both changes.
        """
        check_choice(kind, NEIGHBOUR_KINDS, "kind")
        t = check_int_at_least(t, 0, "t")
        if t >= data.horizon:
            raise ValueError(f"t must be < horizon {data.horizon}, got {t}")
        types, y0, y1 = data.types.copy(), data.y0.copy(), data.y1.copy()
        if kind in ("context", "both"):
            if new_type is None:
                types[:, t] = (types[:, t] + 1) % self.num_types
            else:
                new_type = check_int_at_least(new_type, 0, "new_type")
                if new_type >= self.num_types:
                    raise ValueError(f"new_type must be < {self.num_types}, got {new_type}")
                types[:, t] = new_type
        if kind in ("reward", "both"):
            if new_outcomes is None:
                y0[:, t], y1[:, t] = 1.0 - y0[:, t], 1.0 - y1[:, t]
            else:
                a, b = (check_probability(v, "new_outcomes") for v in new_outcomes)
                y0[:, t], y1[:, t] = a, b
        return PatientData(types, y0, y1)
