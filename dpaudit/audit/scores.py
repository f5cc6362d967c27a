"""Score functions: each maps a batch of outputs (one row per run) to one real number per run.

The auditor tests events {sign * score(output) > t}.  A score is either fixed (the output itself
for scalar outputs, or a user's function) or learned on the "fit" half of the selection split:

- `CategoryLogRatio`: for discrete outputs (integer scalars or vectors: actions, decisions,
  halting patterns), the estimated log likelihood ratio of each distinct row; thresholding it gives
  the sets of outcomes whose likelihood ratio is above a level, i.e. the Neyman-Pearson family
  (the Neyman-Pearson ordering; F. Lu et al., "A General Framework for Auditing Differentially
  Private Machine Learning", NeurIPS 2022, audit with likelihood-ratio tests too).
- `Projection`: for real vectors, a linear projection fitted on the fit half: the difference of
  means, and Fisher's linear discriminant Sigma^-1 (m0 - m1) (the likelihood ratio direction for
  Gaussians with a shared covariance); and each coordinate when there are few.
- `GaussianLogRatio`: the log-likelihood ratio of Gaussian fits with separate covariances
  (quadratic discriminant), for differences in spread rather than location.

All scores are picklable values, so they travel to process pools and Dask workers.

`score_values` evaluates the scores of one batch of outputs together: the scores of coordinates
(`RowScore`) share each transform's coordinates z = x @ transform.T, and scores with the same features
share those (`RowScore.group_key`); each score's values are bit-identical to its own call.  `ScoreValues`
does the same for scores asked for one at a time, each computed once.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.blas import one_blas_thread

__all__ = [
    "CategoryLogRatio",
    "GaussianLogRatio",
    "Identity",
    "Projection",
    "RowScore",
    "Rows",
    "Score",
    "ScoreValues",
    "UserScore",
    "category_log_ratios",
    "fit_scores",
    "row_blocks",
    "row_keys",
    "score_values",
]

#: A category family is only fitted when there are at most this many distinct rows per fitted row
#: (otherwise nearly every row is a singleton and its estimated likelihood ratio is noise).
_MAX_DISTINCT_FRACTION = 0.5
#: Standard deviations by which the fitted log-determinants must differ to fit a Gaussian ratio.
_SPREAD_Z = 3.0
#: Rows looked at first to rule the category family out quickly.
_PREFIX = 2048
#: Coordinates are scored one by one when the rows have at most this many entries.
_MAX_COORDINATE_SCORES = 8
#: Entries (rows x width) per block of a `RowScore`'s evaluation: the block's temporaries stay in the
#: CPU cache (a chunk's columns do not); at least `_MIN_BLOCK_ROWS` rows, so wide outputs take few blocks.
_BLOCK_ENTRIES = 1 << 16
_MIN_BLOCK_ROWS = 4096


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """One sortable key per row: the value itself for 1-D outputs, else the row's bytes.

    Integer rows are keyed as int64 whatever their stored width, so keys made from compactly
    stored selection runs match those of the estimation runs.
    """
    dtype = np.int64 if outputs.dtype.kind in "biu" else np.float64
    rows = np.ascontiguousarray(outputs, dtype=dtype)
    if rows.ndim == 1:
        return rows
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


class Score(abc.ABC):
    """Base class: `score(outputs) -> float64 array of shape (len(outputs),)`.

    `learned` scores were fitted on the fit half of the selection split and are evaluated on its
    other half when events are chosen.
    """

    name: str = "score"
    learned: bool = False

    @abc.abstractmethod
    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        """One real number per row of `outputs`."""

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description of the score and its fitted parameters."""
        return {"name": self.name}


class Rows:
    """A batch of outputs as float64 rows (n, width), with each transform's coordinates z = x @ transform.T
    computed once (the scores of one batch share them; nothing outlives the batch).  z is one product over
    the whole batch, never by blocks: a BLAS product's rounding may depend on how many rows it multiplies."""

    def __init__(self, outputs: np.ndarray) -> None:
        self.scalar = np.asarray(outputs).ndim == 1
        self.x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        self._z: dict[tuple, np.ndarray] = {}

    def coordinates(self, transform: np.ndarray | None) -> np.ndarray:
        """x @ transform.T (x itself for None), computed once per transform's bytes and layout."""
        if transform is None:
            return self.x
        key = (transform.shape, transform.strides, transform.dtype.str, transform.tobytes())
        if key not in self._z:
            # one BLAS thread: a tall, thin product (`dpaudit.audit.chunks.estimation_chunk`); threads share
            # out the entries, never one entry's sum over the width, so the values do not depend on them
            with one_blas_thread():
                self._z[key] = self.x @ transform.T
        return self._z[key]


def row_blocks(n: int, width: int) -> Iterator[slice]:
    """Consecutive row slices covering n rows of `width` entries, each about `_BLOCK_ENTRIES` entries."""
    size = max(_BLOCK_ENTRIES // max(width, 1), _MIN_BLOCK_ROWS)
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


class RowScore(Score):
    """A score computed from `Rows`: scores of one type with equal `group_key` are evaluated together by
    `evaluate_group`, which computes what they share once."""

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return type(self).evaluate_group([self], Rows(outputs))[0]

    def group_key(self) -> Hashable:
        """Scores of one type with equal keys share their work (default: none shared)."""
        return id(self)

    @classmethod
    @abc.abstractmethod
    def evaluate_group(cls, scores: Sequence[RowScore], rows: Rows) -> list[np.ndarray]:
        """Each score's values on `rows` (all of `scores` have this type and one `group_key`)."""


def score_values(scores: Sequence[Score], outputs: np.ndarray) -> list[np.ndarray]:
    """Each score's values on `outputs` (as its own call gives them), shared work done once (module docstring)."""
    values: dict[int, np.ndarray] = {}
    groups: dict[tuple[type[RowScore], Hashable], list[RowScore]] = {}
    for sc in scores:
        if isinstance(sc, RowScore):
            group = groups.setdefault((type(sc), sc.group_key()), [])
            if all(g is not sc for g in group):
                group.append(sc)
        elif id(sc) not in values:
            values[id(sc)] = sc(outputs)
    if groups:
        rows = Rows(outputs)
        for (cls, _), group in groups.items():
            for sc, v in zip(group, cls.evaluate_group(group, rows)):
                values[id(sc)] = v
    return [values[id(sc)] for sc in scores]


class ScoreValues:
    """Scores' values on one batch of outputs, each computed once and as its own call gives it; the scores
    of coordinates (`RowScore`) share the batch's `Rows`, so each transform's coordinates are computed once."""

    def __init__(self, outputs: np.ndarray) -> None:
        self.outputs = outputs
        self._rows: Rows | None = None
        # by id, the score kept beside its values so that its id stays its own
        self._values: dict[int, tuple[Score, np.ndarray]] = {}

    def __call__(self, score: Score) -> np.ndarray:
        """The values of `score` on the batch."""
        if id(score) not in self._values:
            if isinstance(score, RowScore):
                if self._rows is None:
                    self._rows = Rows(self.outputs)
                values = type(score).evaluate_group([score], self._rows)[0]
            else:
                values = score(self.outputs)
            self._values[id(score)] = (score, values)
        return self._values[id(score)][1]


@dataclass(frozen=True, eq=False)
class Identity(Score):
    """The output itself (scalar outputs)."""

    name: str = "identity"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.asarray(outputs, dtype=np.float64).reshape(len(outputs))


@dataclass(frozen=True, eq=False)
class Projection(Score):
    """<row, weights> for real or integer vectors; weights fitted on the fit half."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "projection"
    learned: bool = True

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1) @ self.weights

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "weights": [float(w) for w in self.weights]}


@dataclass(frozen=True, eq=False)
class GaussianLogRatio(Score):
    """log N(x; m0, S0) - log N(x; m1, S1) with means and covariances fitted on the fit half.

    The likelihood ratio of Gaussian fits (quadratic discriminant): thresholding it gives two-sided
    and elliptical events, which catch a difference in spread (e.g. noise scaled to the data) that
    no threshold on a projection catches.
    """

    mean0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mean1: np.ndarray = field(default_factory=lambda: np.zeros(0))
    precision0: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    precision1: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    offset: float = 0.0
    name: str = "gaussian-log-ratio"
    learned: bool = True

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        a = x - self.mean0
        b = x - self.mean1
        return (
            0.5 * (np.einsum("ij,ij->i", b @ self.precision1, b) - np.einsum("ij,ij->i", a @ self.precision0, a))
            + self.offset
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "mean0": self.mean0.tolist(), "mean1": self.mean1.tolist()}


@dataclass(frozen=True, eq=False)
class CategoryLogRatio(Score):
    """Estimated log P0(row)/P1(row) per distinct row (add-1/2 smoothing); unseen rows score 0."""

    keys: np.ndarray = field(default_factory=lambda: np.zeros(0))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "category-log-ratio"
    learned: bool = True

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        k = row_keys(outputs)
        pos = np.searchsorted(self.keys, k)
        pos = np.minimum(pos, len(self.keys) - 1)
        hit = self.keys[pos] == k
        return np.where(hit, self.values[pos], 0.0)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "categories": len(self.keys)}


@dataclass(frozen=True, eq=False)
class UserScore(Score):
    """A user's function of the outputs; it must return one finite real number per run."""

    fn: Callable[[np.ndarray], Any] | None = None
    name: str = "user"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.dtype.kind in "iu" and outputs.dtype != np.int64:
            outputs = outputs.astype(np.int64)  # the user sees int64 rows, as from the target
        if self.fn is None:
            raise TypeError("a UserScore needs the user's function fn")
        s = np.asarray(self.fn(outputs), dtype=np.float64)
        if s.shape != (len(outputs),):
            raise ValueError(f"score must return one number per run: expected shape ({len(outputs)},), got {s.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError("score returned NaN or infinite values")
        return s

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "function": getattr(self.fn, "__qualname__", repr(self.fn))}


def _category_score(fit0: np.ndarray, fit1: np.ndarray) -> CategoryLogRatio | None:
    k0, k1 = row_keys(fit0), row_keys(fit1)
    # Cheap early exit for continuous outputs: a prefix of mostly distinct rows.
    head = np.unique(np.concatenate([k0[:_PREFIX], k1[:_PREFIX]]))
    if len(head) > _MAX_DISTINCT_FRACTION * min(len(k0) + len(k1), 2 * _PREFIX):
        return None
    pooled = np.sort(np.concatenate([k0, k1]))
    distinct = 1 + np.count_nonzero(pooled[1:] != pooled[:-1])
    if distinct > _MAX_DISTINCT_FRACTION * len(pooled) or distinct < 2:
        return None
    keys, values = category_log_ratios(k0, k1)
    return CategoryLogRatio(keys=keys, values=values)


def category_log_ratios(k0: np.ndarray, k1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct keys of d0's keys k0 and d1's k1, and each one's add-1/2 smoothed log ratio
    log((c0 + 1/2) / n0) - log((c1 + 1/2) / n1), c the key's counts and n the numbers of keys."""
    keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    c0 = np.bincount(inverse[: len(k0)], minlength=len(keys))
    c1 = np.bincount(inverse[len(k0) :], minlength=len(keys))
    return keys, np.log((c0 + 0.5) / len(k0)) - np.log((c1 + 0.5) / len(k1))


def _ridged_cov(x: np.ndarray) -> np.ndarray:
    d = x.shape[1]
    cov = np.var(x, ddof=1).reshape(1, 1) if d == 1 else np.cov(x, rowvar=False).reshape(d, d)
    # Ridge term keeps the covariance invertible when coordinates are constant or collinear.
    return cov + 1e-9 * max(float(np.trace(cov)) / d, 1e-12) * np.eye(d)


def _gaussian_ratio(
    x0: np.ndarray, x1: np.ndarray, covs: Callable[[], tuple[np.ndarray, np.ndarray]]
) -> GaussianLogRatio | None:
    """The Gaussian log ratio of the float64 rows x0, x1 whose `_ridged_cov` are covs()."""
    if len(x0) < 2 or len(x1) < 2:
        return None
    c0, c1 = covs()
    (s0, logdet0), (s1, logdet1) = np.linalg.slogdet(c0), np.linalg.slogdet(c1)
    if s0 <= 0 or s1 <= 0:
        return None
    # Only when the spreads differ: log det of a sample covariance has standard deviation about
    # sqrt(2d/n) for Gaussian data (delta method); with equal spreads this score only adds selection noise.
    d = x0.shape[1]
    if abs(logdet0 - logdet1) < _SPREAD_Z * np.sqrt(2 * d / len(x0) + 2 * d / len(x1)):
        return None
    p0, p1 = np.linalg.inv(c0), np.linalg.inv(c1)
    if not (np.all(np.isfinite(p0)) and np.all(np.isfinite(p1))):
        return None
    return GaussianLogRatio(
        mean0=x0.mean(axis=0), mean1=x1.mean(axis=0), precision0=p0, precision1=p1, offset=0.5 * (logdet1 - logdet0)
    )


def _projections(x0: np.ndarray, x1: np.ndarray, covs: Callable[[], tuple[np.ndarray, np.ndarray]]) -> list[Projection]:
    """The projections of the float64 rows x0, x1 whose `_ridged_cov` are covs()."""
    d = x0.shape[1]
    diff = x0.mean(axis=0) - x1.mean(axis=0)
    out: list[Projection] = []
    if np.any(diff != 0):
        out.append(Projection(weights=diff, name="difference-of-means"))
        c0, c1 = covs()
        fisher = np.linalg.solve(0.5 * (c0 + c1), diff)
        if np.all(np.isfinite(fisher)):
            out.append(Projection(weights=fisher, name="fisher-discriminant"))
    if d <= _MAX_COORDINATE_SCORES:
        for j in range(d):
            w = np.zeros(d)
            w[j] = 1.0
            out.append(Projection(weights=w, name=f"coordinate-{j}", learned=False))
    return out


def fit_scores(fit0: np.ndarray, fit1: np.ndarray) -> list[Score]:
    """The score families for outputs shaped like `fit0`/`fit1` (rows of d0 and d1 runs).

    Scalars: the identity, plus the category log-ratio when they take few distinct values.
    Vectors: projections (difference of means, Fisher discriminant, coordinates when few), plus the
    category log-ratio when rows repeat (discrete outputs such as action sequences).
    Both: the Gaussian log-likelihood ratio (spread differences).
    """
    x0 = np.asarray(fit0.reshape(len(fit0), -1), dtype=np.float64)  # float64 rows as they are: only read
    x1 = np.asarray(fit1.reshape(len(fit1), -1), dtype=np.float64)
    covs = functools.cache(lambda: (_ridged_cov(x0), _ridged_cov(x1)))  # shared by both fits, once
    scores: list[Score] = [Identity()] if fit0.ndim == 1 else list(_projections(x0, x1, covs))
    gauss = _gaussian_ratio(x0, x1, covs)
    if gauss is not None:
        scores.append(gauss)
    cat = _category_score(fit0, fit1)
    if cat is not None:
        scores.append(cat)
    return scores
