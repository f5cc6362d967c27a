"""Engineered likelihood-ratio scores: per-coordinate terms, discrete parts of mixed outputs, float bits.

The score families of `dpaudit.audit.scores` see a real vector through linear projections only and a
discrete output through the joint category of the whole row.  Three things escape them (measured on
the StatDP / DP-Sniper benchmark, benchmarks/peers/):

- independent noise on many coordinates, each carrying a little privacy loss: the log-likelihood
  ratio of shifted Laplace vectors is a sum of clipped terms, sum_j (|x_j - m1_j| - |x_j - m0_j|) / b_j
  (each term lies in [-|m0_j - m1_j| / b_j, +|m0_j - m1_j| / b_j]), which no projection reproduces;
- outputs that mix flags and real values (the sparse vector technique's "below" / "aborted"
  sentinels next to noisy answers): every row is distinct, so the joint category fails, and the
  sentinels (-1000) dominate any projection;
- scalar real outputs whose floating-point representation leaks: Mironov, "On Significance of the
  Least Significant Bits for Differential Privacy" (ACM CCS 2012), shows that x + Laplace computed in
  doubles has input-dependent sets of reachable outputs, visible in the exponent and trailing zeros.

`CoordinateLogRatio` is a naive-Bayes log-likelihood ratio: per coordinate, the estimated log ratio
of each repeated value ("atom": a flag, a sentinel, an integer) and, for the other (continuous)
values, the log ratio of being continuous plus the shifted-Laplace term above with locations
(medians) and scale (mean absolute deviation) fitted on the fit half.  Fitted log ratios and shifts
are soft-thresholded by one standard error (a coordinate without signal adds ~no noise).  With
`whiten=True` the coordinates are first decorrelated by the inverse Cholesky factor of the pooled
covariance: for prefix sums (lower-triangular sums of independent noise) this recovers the
independent increments.  `AtomPatternLogRatio` is the joint category log ratio of the discrete part
of the rows (which atom each coordinate holds, continuous entries coded alike).
`PatternValueLogRatio` adds to that ratio a rank term of the released values given the pattern (the
likelihood ratio of a row factorises as P(pattern) * density(values | pattern)); its slope is one
number shared by all (pattern, coordinate) cells, so it is estimated from every continuous entry,
and its events are chosen among 64 thresholds reaching into the tails (fewer candidates, less
selection noise charged: `dpaudit.audit.selection`).  On SVT3 (Lyu, Su, Li, PVLDB 2017, Alg. 3) the
log ratio given the first 'above' query falls with the released answer; the pattern alone caps the
bound near 0.11 at 10^6 runs, the pattern with the values near 0.16 (benchmarks/peers/).
`FloatBitLogRatio` is the category log ratio of a bit feature of scalar float outputs (trailing
zero bits of the mantissa with the exponent, or the low mantissa byte); opt-in (`float_bits`).

Each family is one more candidate of the auditor's selection step (chosen on the selection split,
so the estimation split's Clopper-Pearson bounds stay valid whatever is fitted here).  Likelihood-
ratio ("Neyman-Pearson") events are the optimal distinguishing events; F. Lu et al., "A General
Framework for Auditing Differentially Private Machine Learning" (NeurIPS 2022) audit with them, and
DP-Sniper (Bichsel et al., IEEE S&P 2021) learns approximations of them with classifiers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dpaudit.audit.blas import one_blas_thread
from dpaudit.audit.kernels import coordinate_log_ratio
from dpaudit.audit.scores import Rows, RowScore, Score, row_blocks, row_keys

__all__ = [
    "AtomPatternLogRatio",
    "ColumnStats",
    "CoordinateLogRatio",
    "FitRows",
    "FloatBitLogRatio",
    "PatternValueBlock",
    "PatternValueLogRatio",
    "atoms_of",
    "column_stats",
    "fit_feature_scores",
    "mean_abs_deviation",
]

#: A value is an atom of its coordinate when it occurs at least this many times in the fit rows.
_ATOM_MIN_COUNT = 8
#: Columns with at most this many distinct values are wholly discrete (every value an atom).
_DISCRETE_MAX = 64
#: At most this many coordinates get their own terms (wider outputs: projections only).
_MAX_COORDINATES = 4096
#: Bins of the continuous entries in the atom-pattern families (1: continuous entries coded alike).
_PATTERN_BINS = (1, 4)
#: A pattern family is kept when it has at most this many distinct codes per fitted row.
_MAX_DISTINCT_FRACTION = 0.5
#: A (pattern, coordinate) cell gets its own rank term when it holds this many continuous entries
#: in each fit sample (fewer: the pattern's log ratio alone).
_CELL_MIN_COUNT = 32
#: At most this many (pattern, coordinate) cells of rank terms in a pattern-value family.
_MAX_CELLS = 1 << 14
#: Knots (pooled quantiles) of each cell's empirical CDF.
_RANK_KNOTS = 65
#: Decimals kept of each Laplace term (far above float rounding, far below any useful resolution);
#: None keeps the raw float term (tests only: it shows the float artefact this guards against).
_TERM_DECIMALS: int | None = 9
#: Standard errors subtracted from each fitted log ratio / location shift (soft thresholding).
_SHRINK_Z = 1.0
#: The names of the families fitted on the atoms of the coordinate score.
_PATTERN_NAMES = (
    *(f"atom-pattern-log-ratio-{bins}" for bins in _PATTERN_BINS),
    "pattern-value-log-ratio",
    "pattern-value-log-ratio-mixed",
    "pattern-value-log-ratio-discrete",
)


def _soft(value: np.ndarray, se: np.ndarray) -> np.ndarray:
    return np.sign(value) * np.maximum(np.abs(value) - _SHRINK_Z * se, 0.0)


def mean_abs_deviation(values: np.ndarray, center: Any) -> np.float64:
    """np.mean(np.abs(values - center)), the same number, with one temporary of the values' size instead of two."""
    deviation = np.subtract(values, center)
    return np.mean(np.abs(deviation, out=deviation))


def atoms_of(column0: np.ndarray, column1: np.ndarray) -> np.ndarray:
    """The sorted atoms of one coordinate: all values if few distinct, else values repeated >= 8 times."""
    joined = np.concatenate([column0, column1])
    pooled = np.sort(joined)  # as np.unique sorts
    if len(pooled) == 0 or np.isnan(pooled[-1]):  # NaNs sort last: np.unique's rule for equal NaNs
        values, counts = np.unique(joined, return_counts=True)
        return values if len(values) <= _DISCRETE_MAX else values[counts >= _ATOM_MIN_COUNT]
    # np.unique's values and counts without its index arrays: each run of equal values is kept by its
    # first entry, and a run holds at least _ATOM_MIN_COUNT entries when it reaches that many places on.
    first = np.empty(len(pooled), dtype=bool)
    first[0] = True
    np.not_equal(pooled[1:], pooled[:-1], out=first[1:])
    if np.count_nonzero(first) <= _DISCRETE_MAX:
        return pooled[first]
    reach = _ATOM_MIN_COUNT - 1
    return pooled[: len(pooled) - reach][first[: len(pooled) - reach] & (pooled[reach:] == pooled[:-reach])]


@dataclass(frozen=True, eq=False)
class ColumnStats:
    """One coordinate of both inputs' rows: its atoms (`atoms_of`) and the medians of its entries that are
    not atoms, d0's, d1's and both pooled, each as np.median gives it (None: left to np.median)."""

    atoms: np.ndarray
    median0: np.float64 | None = None
    median1: np.float64 | None = None
    median: np.float64 | None = None


def column_stats(column0: np.ndarray, column1: np.ndarray) -> ColumnStats:
    """`ColumnStats` of one coordinate, from each input's entries sorted.

    One sort of each input's entries, where `atoms_of` sorts both together and np.median partitions
    each input's and the pooled entries again (np.median of 10^6 doubles takes longer than their
    sort).  The results are the same arrays and numbers: when no entry is NaN and the zeros (if any)
    have one sign, entries that compare equal are bit for bit the same, so every sorted order of them
    is the same array; atoms are read off it as `atoms_of` reads them, medians as np.median takes them
    (np.mean of the one or two middle entries; the pooled ones by `_kth_of_two`).  Otherwise (a NaN,
    or both 0.0 and -0.0) the atoms are `atoms_of`'s and the medians left to np.median."""
    s0, s1 = np.sort(column0), np.sort(column1)
    if not _one_order(s0, s1):
        return ColumnStats(atoms_of(column0, column1))
    atoms = _sorted_atoms(s0, s1)
    r0 = s0[~_in_sorted(s0, atoms)[0]] if len(atoms) else s0
    r1 = s1[~_in_sorted(s1, atoms)[0]] if len(atoms) else s1
    return ColumnStats(atoms, _sorted_median(r0), _sorted_median(r1), _merged_median(r0, r1))


def _one_order(s0: np.ndarray, s1: np.ndarray) -> bool:
    """Whether the ascending arrays s0, s1 hold no NaN (they sort last) and no zeros of both signs: entries
    that compare equal are then the same bits, and any sorted order of them the same array."""
    if len(s0) == 0 or len(s1) == 0 or np.isnan(s0[-1]) or np.isnan(s1[-1]):
        return False
    signs = np.concatenate(
        [np.signbit(s[np.searchsorted(s, 0.0, side="left") : np.searchsorted(s, 0.0, side="right")]) for s in (s0, s1)]
    )
    return len(signs) == 0 or bool(np.all(signs == signs[0]))


def _run_starts(s: np.ndarray) -> np.ndarray:
    """The first entry of each run of equal values of an ascending array (a mask)."""
    first = np.empty(len(s), dtype=bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return first


def _sorted_atoms(s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    """`atoms_of` the entries of the ascending arrays s0, s1 (`_one_order`): all distinct values if at most
    `_DISCRETE_MAX`, else those repeated at least `_ATOM_MIN_COUNT` times in both together, each of which is
    repeated at least half as often in one of them."""
    first0, first1 = _run_starts(s0), _run_starts(s1)
    if np.count_nonzero(first0) <= _DISCRETE_MAX and np.count_nonzero(first1) <= _DISCRETE_MAX:
        values = np.union1d(s0[first0], s1[first1])
        if len(values) <= _DISCRETE_MAX:
            return values
    reach = (_ATOM_MIN_COUNT + 1) // 2 - 1  # a run reaching this many places on holds half the count
    heads = []
    for s, first in ((s0, first0), (s1, first1)):
        m = max(len(s) - reach, 0)
        heads.append(s[:m][first[:m] & (s[reach:] == s[:m])])
    cand = np.union1d(*heads)
    counts = sum(np.searchsorted(s, cand, side="right") - np.searchsorted(s, cand, side="left") for s in (s0, s1))
    return cand[counts >= _ATOM_MIN_COUNT]


def _sorted_median(r: np.ndarray) -> np.float64 | None:
    """np.median of an ascending array: the mean (np.mean) of its one or two middle entries; None if empty."""
    n = len(r)
    if n == 0:
        return None
    return np.mean(r[n // 2 : n // 2 + 1] if n % 2 else r[n // 2 - 1 : n // 2 + 1], axis=0)


def _merged_median(a: np.ndarray, b: np.ndarray) -> np.float64 | None:
    """np.median of the entries of two ascending arrays together, from their order statistics."""
    n = len(a) + len(b)
    if n == 0:
        return None
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    return np.mean(np.array([_kth_of_two(a, b, k) for k in middle]), axis=0)


def _kth_of_two(a: np.ndarray, b: np.ndarray, k: int) -> np.float64:
    """The k-th smallest (from 0) entry of two ascending arrays together: the k + 1 smallest are the i
    smallest of a and the k + 1 - i smallest of b for the least i with a[i] >= b[k - i] (binary search)."""
    lo, hi = max(0, k + 1 - len(b)), min(k + 1, len(a))
    while lo < hi:
        i = (lo + hi) // 2
        if a[i] < b[k - i]:
            lo = i + 1
        else:
            hi = i
    j = k + 1 - lo
    if lo == 0:
        return b[j - 1]
    if j == 0:
        return a[lo - 1]
    return max(a[lo - 1], b[j - 1])


class FitRows:
    """The rows of d0 and d1 runs that families are fitted on, with what several fitters use computed
    once, on first use: the rows as float64 (runs, width) arrays (`x0`, `x1`; float64 contiguous inputs
    as they are), each coordinate's atoms and medians (`columns`, column by column: no float64 copy of
    the rows), the whitening transform (`whitening`), the whitened coordinates and their atoms and
    medians.  `fit_feature_scores`, `dpaudit.audit.classifier.fit_classifier_scores` and the chain and
    masked families take one to share them; each array and number is the one a fitter alone computes.
    The rows are read, never written."""

    def __init__(self, rows0: np.ndarray, rows1: np.ndarray) -> None:
        self.rows0 = rows0.reshape(len(rows0), -1)
        self.rows1 = rows1.reshape(len(rows1), -1)

    @cached_property
    def x0(self) -> np.ndarray:
        """d0's rows as a float64 (runs, width) array."""
        return np.ascontiguousarray(self.rows0, dtype=np.float64)

    @cached_property
    def x1(self) -> np.ndarray:
        """d1's rows as a float64 (runs, width) array."""
        return np.ascontiguousarray(self.rows1, dtype=np.float64)

    @cached_property
    def columns(self) -> list[ColumnStats]:
        """`column_stats` of each coordinate (of the float64 values)."""
        return [
            column_stats(np.asarray(self.rows0[:, j], dtype=np.float64), np.asarray(self.rows1[:, j], dtype=np.float64))
            for j in range(self.rows0.shape[1])
        ]

    @property
    def atoms(self) -> list[np.ndarray]:
        """`atoms_of` each coordinate, pooled over both inputs."""
        return [c.atoms for c in self.columns]

    @cached_property
    def whitening(self) -> np.ndarray | None:
        """`_whitening` of the rows: the inverse Cholesky factor of the pooled covariance, or None."""
        return _whitening(self.x0, self.x1)

    @cached_property
    def whitened(self) -> tuple[np.ndarray, np.ndarray]:
        """x @ w.T for each input's rows, w = `whitening` (not None)."""
        w = self.whitening
        if w is None:
            raise ValueError("the pooled covariance of these rows is not positive definite: no whitened coordinates")
        with one_blas_thread():  # tall, thin products (`dpaudit.audit.chunks.estimation_chunk`)
            return self.x0 @ w.T, self.x1 @ w.T

    @cached_property
    def whitened_columns(self) -> list[ColumnStats]:
        """`column_stats` of each whitened coordinate."""
        z0, z1 = self.whitened
        return [column_stats(z0[:, j], z1[:, j]) for j in range(z0.shape[1])]


def _in_sorted(values: np.ndarray, sorted_atoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(is an atom, index of the atom) for each value."""
    if len(sorted_atoms) == 0:
        return np.zeros(len(values), dtype=bool), np.zeros(len(values), dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_atoms, values), len(sorted_atoms) - 1)
    return sorted_atoms[pos] == values, pos


@dataclass(frozen=True, eq=False)
class CoordinateLogRatio(RowScore):
    """sum_j t_j(z_j), z = x (or x @ transform.T): atom log ratios, else continuous log ratio + Laplace term.

    t_j(z) = lr_j[a] if z is atom a of coordinate j, else cont_j + (|z - m1_j| - |z - m0_j|) / b_j
    (the Laplace log-likelihood ratio; 0 where no continuous part was fitted).
    """

    atom_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    atom_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    atom_ratios: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cont_ratio: np.ndarray = field(default_factory=lambda: np.zeros(0))
    loc0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    loc1: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inv_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    transform: np.ndarray | None = None
    name: str = "coordinate-log-ratio"
    learned: bool = True

    @classmethod
    def evaluate_group(cls, scores: Sequence[RowScore], rows: Rows) -> list[np.ndarray]:
        return [s.values(rows.coordinates(s.transform)) for s in scores if isinstance(s, CoordinateLogRatio)]

    def values(self, z: np.ndarray) -> np.ndarray:
        """sum_j t_j(z_j) for the coordinates z (n, width), by blocks of rows; each block's terms are
        computed for all coordinates at once (transposed, one row per coordinate) and summed over the
        coordinates in their order, from 0, as one column at a time would.  Without atoms, a large batch
        may be computed row by row by the compiled kernel instead: the same numbers (`dpaudit.audit.kernels`)."""
        if not len(self.atom_values):
            compiled = coordinate_log_ratio(z, self.loc0, self.loc1, self.inv_scale, self.cont_ratio, _TERM_DECIMALS)
            if compiled is not None:
                return compiled
        n, width = z.shape
        total = np.empty(n)
        idle = np.flatnonzero(~(self.inv_scale > 0))
        # atom_columns is ascending: the atoms of column j are one slice
        starts = np.searchsorted(self.atom_columns, np.arange(width + 1))
        with_atoms = np.flatnonzero(starts[1:] > starts[:-1])
        loc0, loc1 = self.loc0[:, None], self.loc1[:, None]
        inv, ratio = self.inv_scale[:, None], self.cont_ratio[:, None]
        cap = np.abs(self.loc1 - self.loc0)[:, None] * inv
        shifted = bool(np.any(self.cont_ratio != 0))
        for block in row_blocks(n, width):
            zt = z[block].T
            term, other = np.empty(zt.shape), np.empty(zt.shape)  # one contiguous row per coordinate
            np.subtract(zt, loc1, out=term)
            np.abs(term, out=term)
            np.subtract(zt, loc0, out=other)
            np.abs(other, out=other)
            np.subtract(term, other, out=term)
            np.multiply(term, inv, out=term)
            # Rounded, then clipped to its exact range: on the plateaus the rounding error of the
            # line above depends on the low-order bits of x, which for x + Laplace in doubles depend
            # on the input (Mironov CCS 2012); the default families must not see float artefacts.
            if _TERM_DECIMALS is not None:
                np.round(term, _TERM_DECIMALS, out=term)
                np.clip(term, -cap, cap, out=term)
            if shifted:  # adding 0 would only turn -0.0 terms into 0.0, which the sum from 0 does anyway
                np.add(term, ratio, out=term)
            term[idle] = self.cont_ratio[idle, None]
            for j in with_atoms:
                lo, hi = starts[j], starts[j + 1]
                hit, pos = _in_sorted(zt[j], self.atom_values[lo:hi])
                np.copyto(term[j], self.atom_ratios[lo:hi][pos], where=hit)
            acc = total[block]
            acc.fill(0.0)
            for row in term:
                acc += row
        return total

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "coordinates": len(self.cont_ratio),
            "atoms": len(self.atom_values),
            "whitened": self.transform is not None,
        }


@dataclass(frozen=True, eq=False)
class AtomPatternLogRatio(Score):
    """Estimated log P0/P1 of the discrete part of a row: per coordinate the index of its atom, or for
    a continuous entry -1 - (its bin among `bin_edges` of that coordinate; one bin when `bins` is 1)."""

    atom_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    atom_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    width: int = 0
    #: (width, bins - 1) inner quantile edges of the continuous entries of each coordinate.
    bin_edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    name: str = "atom-pattern-log-ratio"
    learned: bool = True

    def codes(self, outputs: np.ndarray) -> np.ndarray:
        """Per-coordinate codes (rows, width) of `outputs`: the index of the coordinate's atom, or
        -1 - (the bin among `bin_edges`) for a continuous entry.
        """
        x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        out = np.full(x.shape, -1, dtype=np.int64)
        for j in range(x.shape[1]):
            hit, pos = _in_sorted(x[:, j], self.atom_values[self.atom_columns == j])
            cont = -1 - (np.searchsorted(self.bin_edges[j], x[:, j]) if self.bin_edges.shape[1] else 0)
            out[:, j] = np.where(hit, pos, cont)
        return out

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        k = row_keys(self.codes(outputs))
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[pos] == k, self.values[pos], 0.0)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "categories": len(self.keys), "atoms": len(self.atom_values)}


@dataclass(frozen=True, eq=False)
class PatternValueBlock:
    """One block of coordinates of a `PatternValueLogRatio` (fitted parameters, see there)."""

    columns: np.ndarray
    atom_columns: np.ndarray
    atom_values: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    #: (len(keys), len(columns)) slope of the rank term of each (pattern, coordinate) cell (0: none).
    slopes: np.ndarray
    #: (len(keys), len(columns), _RANK_KNOTS) pooled quantiles of the cell's continuous entries.
    knots: np.ndarray

    def codes(self, x: np.ndarray) -> np.ndarray:
        """Per entry of the block: the index of its atom, or -1 for a continuous entry."""
        out = np.empty((len(x), len(self.columns)), dtype=np.int64)
        for i, j in enumerate(self.columns):
            hit, pos = _in_sorted(x[:, j], self.atom_values[self.atom_columns == i])
            out[:, i] = np.where(hit, pos, -1)
        return out

    def __call__(self, x: np.ndarray) -> np.ndarray:
        codes = self.codes(x)
        k = row_keys(codes)
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        known = self.keys[pos] == k
        total = np.where(known, self.values[pos], 0.0)
        cells = np.nonzero(self.slopes)
        if len(cells[0]) == 0:
            return total
        levels = np.linspace(0.0, 1.0, self.knots.shape[2])
        # rows grouped by pattern once: each cell then touches only its own rows
        order = np.argsort(np.where(known, pos, -1), kind="stable")
        bounds = np.searchsorted(np.where(known, pos, -1)[order], np.arange(len(self.keys) + 1))
        for p, i in zip(*cells):
            rows = order[bounds[p] : bounds[p + 1]]
            rows = rows[codes[rows, i] == -1]
            rank = np.interp(x[rows, self.columns[i]], self.knots[p, i], levels)
            total[rows] += self.slopes[p, i] * (rank - 0.5)
        return total


@dataclass(frozen=True, eq=False)
class PatternValueLogRatio(Score):
    """Joint log ratio of the discrete pattern and the released values, summed over blocks.

    For each block B of coordinates and row x: lr_B[p] + sum_{j in B, x_j continuous}
    beta_{p,j} * (F_{p,j}(x_j) - 1/2), where p is the row's atom pattern on B (which atom each
    coordinate holds, continuous entries coded alike), lr_B[p] its estimated log P0/P1, F_{p,j} the
    pooled empirical CDF of coordinate j *among the rows of pattern p* and beta_{p,j} the slope of a
    log ratio linear in that rank: with pooled ranks uniform and log p0/p1 = beta (F - 1/2) + o(beta),
    E0[F] - E1[F] = beta / 12, so beta = 12 (mean rank under d0 - under d1), soft-thresholded by one
    standard error (12 sqrt((1/n0 + 1/n1) / 12)).  The rank makes the term robust to heavy tails and
    to the value's shape given the pattern (for the sparse vector technique the released answer given
    which query was the first 'above' is far from a shifted Laplace: its log ratio falls with v).  The likelihood
    ratio of a row factorises as P(pattern) * density(values | pattern); blocks are summed as if
    independent (exact for algorithms run side by side on independent noise).
    """

    blocks: tuple[PatternValueBlock, ...] = ()
    name: str = "pattern-value-log-ratio"
    learned: bool = True
    #: Events chosen among at most 64 thresholds (dpaudit.audit.selection._coarse_candidates).
    coarse_thresholds: bool = True

    @property
    def keys(self) -> np.ndarray:
        """All fitted pattern keys (their number decides whether the auditor refits this family)."""
        return np.concatenate([b.keys for b in self.blocks]) if self.blocks else np.zeros(0)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        total = np.zeros(len(x))
        for block in self.blocks:
            total += block(x)
        return total

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "blocks": [len(b.columns) for b in self.blocks],
            "patterns": [len(b.keys) for b in self.blocks],
        }


def _fit_block(
    x0: np.ndarray, x1: np.ndarray, columns: np.ndarray, coord: CoordinateLogRatio
) -> PatternValueBlock | None:
    a_cols, a_vals = [], []
    for i, j in enumerate(columns):
        atoms = coord.atom_values[coord.atom_columns == j]
        a_cols.append(np.full(len(atoms), i, dtype=np.int64))
        a_vals.append(atoms)
    block = PatternValueBlock(
        columns=columns,
        atom_columns=np.concatenate(a_cols),
        atom_values=np.concatenate(a_vals).astype(np.float64),
        keys=np.zeros(0),
        values=np.zeros(0),
        slopes=np.zeros((0, len(columns))),
        knots=np.zeros((0, len(columns), _RANK_KNOTS)),
    )
    c0, c1 = block.codes(x0), block.codes(x1)
    keys, values = _category_ratios(row_keys(c0), row_keys(c1))
    n0, n1 = len(x0), len(x1)
    if not 2 <= len(keys) <= _MAX_DISTINCT_FRACTION * (n0 + n1) or len(keys) * len(columns) > _MAX_CELLS:
        return None
    g0 = np.searchsorted(keys, row_keys(c0))
    g1 = np.searchsorted(keys, row_keys(c1))
    shape = (len(keys), len(columns))
    slopes, knots = np.zeros(shape), np.zeros(shape + (_RANK_KNOTS,))
    levels = np.linspace(0.0, 1.0, _RANK_KNOTS)
    sums, counts = [0.0, 0.0], [0, 0]
    for i, j in enumerate(columns):
        m0_, m1_ = c0[:, i] == -1, c1[:, i] == -1
        k0 = np.bincount(g0[m0_], minlength=len(keys))
        k1 = np.bincount(g1[m1_], minlength=len(keys))
        for p in np.flatnonzero((k0 >= _CELL_MIN_COUNT) & (k1 >= _CELL_MIN_COUNT)):
            v0, v1 = x0[m0_ & (g0 == p), j], x1[m1_ & (g1 == p), j]
            cell = np.quantile(np.concatenate([v0, v1]), levels)
            if not cell[-1] > cell[0]:
                continue
            r0, r1 = np.interp(v0, cell, levels), np.interp(v1, cell, levels)
            sums[0] += r0.sum() - 0.5 * len(r0)
            sums[1] += r1.sum() - 0.5 * len(r1)
            counts[0] += len(r0)
            counts[1] += len(r1)
            slopes[p, i] = 1.0
            knots[p, i] = cell
    if counts[0] and counts[1]:
        se = 12.0 * np.sqrt((1 / counts[0] + 1 / counts[1]) / 12.0)
        slopes *= float(_soft(np.array(12.0 * (sums[0] / counts[0] - sums[1] / counts[1])), np.array(se)))
    # Kept even when every fitted parameter was shrunk to 0 (a constant score wins no event).
    return PatternValueBlock(
        columns=columns,
        atom_columns=block.atom_columns,
        atom_values=block.atom_values,
        keys=keys,
        values=values,
        slopes=slopes,
        knots=knots,
    )


def _pattern_value_scores(
    x0: np.ndarray, x1: np.ndarray, coord: CoordinateLogRatio, wanted: Callable[[str], bool] = lambda name: True
) -> list[Score]:
    """The pattern-value family on all coordinates as one block, and (when the output has both) on
    each of two blocks alone: the coordinates with continuous entries ("-mixed"), the wholly discrete
    ones ("-discrete"); only the `wanted` names.  (Their sum was tried too: on SVT3 and SVT4 side by side
    the noisy pattern ratios of the sparse half cost more than they add, 0.159 -> 0.117 at 10^6 runs, seed 1.)"""
    d = x0.shape[1]
    out: list[Score] = []
    whole = _fit_block(x0, x1, np.arange(d), coord) if wanted("pattern-value-log-ratio") else None
    if whole is not None:
        out.append(PatternValueLogRatio(blocks=(whole,), name="pattern-value-log-ratio"))
    mixed = np.flatnonzero(coord.inv_scale > 0)
    discrete = np.setdiff1d(np.arange(d), mixed)
    if len(mixed) and len(discrete):
        for label, cols in (("mixed", mixed), ("discrete", discrete)):
            if not wanted(f"pattern-value-log-ratio-{label}"):
                continue
            block = _fit_block(x0, x1, cols, coord)
            if block is not None:
                out.append(PatternValueLogRatio(blocks=(block,), name=f"pattern-value-log-ratio-{label}"))
    return out


_MANTISSA = (1 << 52) - 1
#: The bit features of `float_bit_keys`, each fitted as its own `FloatBitLogRatio` ("float-bit-log-ratio-<kind>").
FLOAT_BIT_KINDS = ("exponent-trailing-zeros", "low-byte")


def float_bit_keys(values: np.ndarray, kind: str) -> np.ndarray:
    """Integer bit features of float64 values (IEEE 754 binary64).

    "exponent-trailing-zeros": sign, biased exponent and the number of trailing zero bits of the
    52-bit mantissa (52 for a zero mantissa); "low-byte": the lowest 8 mantissa bits.
    """
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    mant = bits & np.uint64(_MANTISSA)
    if kind == "low-byte":
        return (mant & np.uint64(0xFF)).astype(np.int64)
    low = mant & (~mant + np.uint64(1))  # lowest set bit (0 for a zero mantissa)
    with np.errstate(divide="ignore"):
        tz = np.where(mant == 0, 52, np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)).astype(np.int64))
    exp = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    sign = (bits >> np.uint64(63)).astype(np.int64)
    return (sign << 20) | (exp << 6) | tz


@dataclass(frozen=True, eq=False)
class FloatBitLogRatio(Score):
    """Estimated log P0/P1 of a bit feature (`float_bit_keys`) of scalar float outputs."""

    kind: str = "exponent-trailing-zeros"
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "float-bit-log-ratio"
    learned: bool = True

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        k = float_bit_keys(np.asarray(outputs, dtype=np.float64).reshape(len(outputs)), self.kind)
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[pos] == k, self.values[pos], 0.0)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "feature": self.kind, "categories": len(self.keys)}


def _category_ratios(k0: np.ndarray, k1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and their add-1/2 smoothed log ratios, soft-thresholded by one s.e."""
    keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    c0 = np.bincount(inverse[: len(k0)], minlength=len(keys)) + 0.5
    c1 = np.bincount(inverse[len(k0) :], minlength=len(keys)) + 0.5
    lr = np.log(c0 / len(k0)) - np.log(c1 / len(k1))
    return keys, _soft(lr, np.sqrt(1 / c0 + 1 / c1))


def _coordinate_score(
    x0: np.ndarray, x1: np.ndarray, transform: np.ndarray | None, name: str, stats: list[ColumnStats] | None = None
) -> CoordinateLogRatio | None:
    """The per-coordinate log ratio of the rows x0, x1 (coordinates z, whitened by `transform` or not), with
    each coordinate's atoms and medians `stats` (None: `column_stats` of each)."""
    d = x0.shape[1]
    n0, n1 = len(x0), len(x1)
    a_cols, a_vals, a_lrs = [], [], []
    cont = np.zeros(d)
    loc0, loc1, inv_scale = np.zeros(d), np.zeros(d), np.zeros(d)
    for j in range(d):
        c0, c1 = x0[:, j], x1[:, j]
        st = column_stats(c0, c1) if stats is None else stats[j]
        atoms = st.atoms
        if len(atoms):
            h0, p0 = _in_sorted(c0, atoms)
            h1, p1 = _in_sorted(c1, atoms)
            k0 = np.bincount(p0[h0], minlength=len(atoms)) + 0.5
            k1 = np.bincount(p1[h1], minlength=len(atoms)) + 0.5
            lr = _soft(np.log(k0 / n0) - np.log(k1 / n1), np.sqrt(1 / k0 + 1 / k1))
            a_cols.append(np.full(len(atoms), j))
            a_vals.append(atoms)
            a_lrs.append(lr)
            r0, r1 = c0[~h0], c1[~h1]
        else:  # no atom: every entry is continuous (the columns' own values, in order)
            r0, r1 = c0, c1
        if len(r0) < 2 or len(r1) < 2:
            continue
        c0n, c1n = len(r0) + 0.5, len(r1) + 0.5
        cont[j] = _soft(np.log(c0n / n0) - np.log(c1n / n1), np.sqrt(1 / c0n + 1 / c1n))
        m0 = np.median(r0) if st.median0 is None else st.median0
        m1 = np.median(r1) if st.median1 is None else st.median1
        b = 0.5 * (mean_abs_deviation(r0, m0) + mean_abs_deviation(r1, m1))
        if not b > 0:
            continue
        # The median of n Laplace(b) draws has standard error about b / sqrt(n).
        shift = _soft(np.array(m0 - m1), np.array(b * np.sqrt(1 / len(r0) + 1 / len(r1))))
        mid = 0.5 * (m0 + m1)
        loc0[j], loc1[j], inv_scale[j] = mid + 0.5 * shift, mid - 0.5 * shift, 1.0 / b
    if not a_cols and not np.any(inv_scale):
        return None

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return CoordinateLogRatio(
        atom_columns=cat(a_cols, np.int64),
        atom_values=cat(a_vals, np.float64),
        atom_ratios=cat(a_lrs, np.float64),
        cont_ratio=cont,
        loc0=loc0,
        loc1=loc1,
        inv_scale=inv_scale,
        transform=transform,
        name=name,
    )


def _whitening(x0: np.ndarray, x1: np.ndarray) -> np.ndarray | None:
    """Inverse Cholesky factor of the pooled covariance (None if it is not positive definite).

    Covariances by einsum rather than np.cov: np.cov's threaded BLAS product of a tall, thin matrix
    took ~3 s instead of ~0.1 s per call on a busy 2-core machine (its threads wait for cores)."""
    covs = []
    for x in (x0, x1):
        xc = x - x.mean(axis=0)
        covs.append(np.einsum("ij,ik->jk", xc, xc) / max(len(x) - 1, 1))
    cov = 0.5 * (covs[0] + covs[1])
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return None
    inv = np.linalg.inv(chol)
    return inv if np.all(np.isfinite(inv)) else None


def fit_feature_scores(
    fit0: np.ndarray,
    fit1: np.ndarray,
    float_bits: bool = False,
    shared: FitRows | None = None,
    names: Collection[str] | None = None,
) -> list[Score]:
    """The engineered families for outputs shaped like fit0 / fit1 (see the module docstring).

    Vectors (2-D): the per-coordinate log ratio; for all-continuous real vectors also its whitened
    version; for rows mixing atoms and continuous values also the atom-pattern log ratio.
    Scalar floats with `float_bits`: the bit-feature log ratios.
    `shared`, the `FitRows` of fit0 / fit1, shares their atoms and whitening with other fitters; with `names`,
    only the scores of those names are fitted (each one as among all of them).
    """

    def wanted(name: str) -> bool:
        return names is None or name in names

    out: list[Score] = []
    if fit0.ndim == 1:
        if float_bits and fit0.dtype.kind == "f":
            for kind in FLOAT_BIT_KINDS:
                name = f"float-bit-log-ratio-{kind}"  # one name per feature: a refit finds the chosen one
                if not wanted(name):
                    continue
                keys, values = _category_ratios(float_bit_keys(fit0, kind), float_bit_keys(fit1, kind))
                if len(keys) >= 2 and np.any(values != 0):
                    out.append(FloatBitLogRatio(kind=kind, keys=keys, values=values, name=name))
        return out
    rows = FitRows(fit0, fit1) if shared is None else shared
    x0, x1 = rows.x0, rows.x1
    d = x0.shape[1]
    if d > _MAX_COORDINATES or len(x0) < 4 or len(x1) < 4:
        return out
    # an atom anywhere makes the coordinate score (never None then) hold atoms
    has_atoms = any(len(a) for a in rows.atoms)
    coord = None
    if wanted("coordinate-log-ratio") or (has_atoms and any(wanted(n) for n in _PATTERN_NAMES)):
        coord = _coordinate_score(x0, x1, None, "coordinate-log-ratio", rows.columns)
    if coord is not None and wanted(coord.name):
        out.append(coord)
    if fit0.dtype.kind == "f" and not has_atoms and d >= 2 and wanted("whitened-coordinate-log-ratio"):
        w = rows.whitening
        if w is not None:
            white = _coordinate_score(*rows.whitened, w, "whitened-coordinate-log-ratio", rows.whitened_columns)
            if white is not None:
                out.append(white)
    if coord is not None and has_atoms and np.any(coord.inv_scale > 0):
        for bins in _PATTERN_BINS:
            if not wanted(f"atom-pattern-log-ratio-{bins}"):
                continue
            edges = _bin_edges(x0, x1, coord, bins)
            pattern = AtomPatternLogRatio(
                atom_columns=coord.atom_columns, atom_values=coord.atom_values, width=d, bin_edges=edges
            )
            keys, values = _category_ratios(row_keys(pattern.codes(x0)), row_keys(pattern.codes(x1)))
            if 2 <= len(keys) <= _MAX_DISTINCT_FRACTION * (len(x0) + len(x1)) and np.any(values != 0):
                out.append(
                    AtomPatternLogRatio(
                        atom_columns=coord.atom_columns,
                        atom_values=coord.atom_values,
                        keys=keys,
                        values=values,
                        width=d,
                        bin_edges=edges,
                        name=f"atom-pattern-log-ratio-{bins}",
                    )
                )
        out.extend(_pattern_value_scores(x0, x1, coord, wanted))
    return out


def _bin_edges(x0: np.ndarray, x1: np.ndarray, coord: CoordinateLogRatio, bins: int) -> np.ndarray:
    """Inner pooled quantiles of the continuous (non-atom) entries of each coordinate."""
    d = x0.shape[1]
    edges = np.zeros((d, bins - 1))
    if bins == 1:
        return edges
    levels = np.arange(1, bins) / bins
    for j in range(d):
        col = np.concatenate([x0[:, j], x1[:, j]])
        hit, _ = _in_sorted(col, coord.atom_values[coord.atom_columns == j])
        rest = col[~hit]
        edges[j] = np.quantile(rest, levels) if len(rest) else np.inf
    return edges
