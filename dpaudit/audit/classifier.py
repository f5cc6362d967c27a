"""A learned classifier family: L2-regularised logistic regression on engineered features.

DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021, Sec. IV) trains a classifier p(d0 | output) and
thresholds it; a logistic regression's logit is a linear model of log P0/P1, so thresholding it gives
approximate Neyman-Pearson events.  Here the regression is fitted on the fit half of the auditor's
selection split only (labels: 1 for runs on d0, 0 for runs on d1, equal sizes so the logit is the log
likelihood ratio plus a constant), and it is one more candidate of the selection step: the estimation
split's Clopper-Pearson bounds stay valid whatever is fitted.  numpy and scipy's L-BFGS only (no
scikit-learn: the model is small, and a dependency-free fit keeps the scores picklable plain arrays).

Features of a row x (or of z = x @ transform.T, `transform` the inverse Cholesky factor of the pooled
covariance, which turns prefix sums back into independent increments), per coordinate j:
- one indicator per atom (a value repeated in the fit rows: flags, sentinels such as -1000, integers;
  `dpaudit.audit.features.atoms_of`), and one for "continuous" when the coordinate has both;
- for continuous entries, with u = (z_j - c_j) / b_j (c_j the pooled median, b_j the pooled mean
  absolute deviation of the continuous entries): sign(u), clip(u, -k, k) for k in 0.25, 1, 4 and
  min(|u|, 4).  The Laplace log-likelihood ratio of a shift, clip(2u, -s, s) for a shift of s scale
  units centred on c_j, is a combination of these (exactly for s in {0.5, 2, 8}, and sign(u) s for
  small s), so the linear model spans the per-coordinate likelihood-ratio terms of shifted Laplace
  noise; min(|u|, 4) catches a difference in spread;
- scalar float outputs with `float_bits`: also the IEEE 754 bit features of Mironov, "On Significance
  of the Least Significant Bits for Differential Privacy" (ACM CCS 2012): the 8 lowest mantissa bits
  and one-hot trailing-zero counts (0..15, 16+).
The "-pooled" variant sums each continuous feature over the (whitened) coordinates (5 features in all): the
model in which every coordinate carries the same shift, e.g. one value released several times with
independent noise (the benchmarks' LaplaceParallel, or prefix sums after whitening), where separate
per-coordinate weights would be mostly noise at 10^6 runs (each coordinate's shift is below its
standard error) but their common weight is not.
u is rounded to 9 decimals: the rounding error of z - c depends on the low-order bits of z, which for
x + Laplace in doubles depend on the input (Mironov 2012); the default families must not see float
artefacts (same guard as `dpaudit.audit.features`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize

from dpaudit.audit.blas import one_blas_thread
from dpaudit.audit.features import FitRows, float_bit_keys, mean_abs_deviation
from dpaudit.audit.kernels import pooled_feature_sums
from dpaudit.audit.scores import Rows, RowScore, Score, row_blocks

__all__ = ["LogisticScore", "fit_classifier_scores", "logistic_features"]

#: Clip levels (in scale units) of the continuous features.
_CLIPS = (0.25, 1.0, 4.0)
#: At most this many features (wider outputs: no classifier).
_MAX_FEATURES = 1024
#: At most this many coordinates get per-coordinate features.
_MAX_COORDINATES = 256
#: L2 penalty on the standardised weights, as lambda / 2 * |w|^2 added to the summed log loss.
_RIDGE = 1.0
#: Decimals kept of u (see the module docstring).
_U_DECIMALS = 9
_CONT_FEATURES = 2 + len(_CLIPS)  # sign, clips, |u|


@dataclass(frozen=True, eq=False)
class LogisticScore(RowScore):
    """logit(x) = w . (phi(x) - mean) / std: a logistic regression on the features phi (module docstring)."""

    center: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inv_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    atom_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    atom_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    has_cont_flag: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    transform: np.ndarray | None = None
    pooled: bool = False
    float_bits: bool = False
    feature_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    feature_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "logistic-regression"
    learned: bool = True

    def features(self, outputs: np.ndarray) -> np.ndarray:
        """The feature matrix phi(x) of `outputs`, one row per output (`logistic_features`)."""
        return logistic_features(outputs, self)

    def group_key(self) -> Hashable:
        """The feature parameters: logistic scores with equal ones share their feature columns."""
        arrays = (self.center, self.inv_scale, self.atom_columns, self.atom_values, self.has_cont_flag)
        layout = None if self.transform is None else (self.transform.strides, _array_key(self.transform))
        return (tuple(_array_key(a) for a in arrays), layout, self.pooled, self.float_bits)

    @classmethod
    def evaluate_group(cls, scores: Sequence[RowScore], rows: Rows) -> list[np.ndarray]:
        """sum_k w_k (phi_k - mean_k) / scale_k for each score, the columns phi_k computed once per block of
        rows for all of them (no feature matrix; the pooled features of a large batch possibly by the compiled
        kernel, `_pooled_columns`); each sum runs over k in order, skipping zero weights."""
        group = [s for s in scores if isinstance(s, LogisticScore)]
        z = rows.coordinates(group[0].transform)
        coefs = [s.weights / s.feature_scale for s in group]
        totals = [np.full(len(z), -float(c @ s.feature_mean)) for c, s in zip(coefs, group)]
        pooled = _pooled_columns(z, rows.scalar, group[0])
        if pooled is not None:  # the same columns, so the same sums
            scratch = np.empty(len(z))
            for k, col in enumerate(pooled):
                for coef, total in zip(coefs, totals):
                    if coef[k] != 0:
                        total += np.multiply(col, coef[k], out=scratch)
            return totals
        for block in row_blocks(len(z), z.shape[1]):
            parts = [t[block] for t in totals]
            scratch = np.empty(len(parts[0]))
            for k, col in enumerate(_columns(z[block], rows.x[block], rows.scalar, group[0])):
                for coef, part in zip(coefs, parts):
                    if coef[k] != 0:
                        part += np.multiply(col, coef[k], out=scratch)
        return totals

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "features": len(self.weights),
            "pooled": self.pooled,
            "whitened": self.transform is not None,
            "atoms": len(self.atom_values),
        }


def _array_key(a: np.ndarray) -> tuple:
    return (a.dtype.str, a.shape, a.tobytes())


def _columns(z: np.ndarray, x: np.ndarray, scalar: bool, p: LogisticScore) -> Iterator[np.ndarray]:
    """The columns of phi for rows with coordinates z and float64 rows x (see the module docstring).

    The continuous features are computed for all coordinates at once (one row of u per continuous
    coordinate), each entry as one coordinate's column alone would compute it."""
    n, width = z.shape
    zt = z.T
    cont = np.flatnonzero(p.inv_scale > 0)
    row_of = [-1] * width
    for r, j in enumerate(cont.tolist()):
        row_of[j] = r
    u = np.empty((len(cont), n))
    np.subtract(zt if len(cont) == width else zt[cont], p.center[cont, None], out=u)
    np.multiply(u, p.inv_scale[cont, None], out=u)
    starts = np.searchsorted(p.atom_columns, np.arange(width + 1))
    indicators: dict[int, list[np.ndarray]] = {}
    hits: dict[int, np.ndarray] = {}
    for j in np.flatnonzero(starts[1:] > starts[:-1]).tolist():
        hit = np.zeros(n, dtype=bool)
        indicators[j] = []
        for a in p.atom_values[starts[j] : starts[j + 1]]:
            eq = zt[j] == a
            hit |= eq
            indicators[j].append(eq.astype(np.float64))
        hits[j] = hit
        if row_of[j] >= 0:
            u[row_of[j], hit] = 0.0
    np.round(u, _U_DECIMALS, out=u)
    f = np.empty((_CONT_FEATURES, len(cont), n))
    np.sign(u, out=f[0])
    for i, k in enumerate(_CLIPS):
        np.clip(u, -k, k, out=f[1 + i])
    # min(|u|, c) for the largest clip c, as |clip(u, -c, c)|: the same numbers, one pass fewer
    np.abs(f[len(_CLIPS)], out=f[-1])
    for j in range(width):
        yield from indicators.get(j, [])
        if row_of[j] >= 0:
            if p.has_cont_flag[j]:
                yield (~hits[j] if j in hits else np.ones(n, dtype=bool)).astype(np.float64)
            if not p.pooled:
                yield from f[:, row_of[j]]
    if p.pooled:
        # each feature summed over the coordinates in their order, from 0: all features at once
        totals = np.zeros((_CONT_FEATURES, n))
        for r in range(len(cont)):
            totals += f[:, r]
        yield from totals
    if scalar and p.float_bits:
        low = float_bit_keys(x[:, 0], "low-byte")
        for b in range(8):
            yield ((low >> b) & 1).astype(np.float64)
        tz = float_bit_keys(x[:, 0], "exponent-trailing-zeros") & 63
        for t in range(17):
            yield (np.minimum(tz, 16) == t).astype(np.float64)


def _pooled_columns(z: np.ndarray, scalar: bool, p: LogisticScore) -> np.ndarray | None:
    """The columns of phi by the compiled kernel (`dpaudit.audit.kernels.pooled_feature_sums`) when they are the five
    pooled features alone (no atoms, no "continuous" flags, no bit features), else None (also without the kernel)."""
    if not p.pooled or len(p.atom_values) or np.any(p.has_cont_flag) or (scalar and p.float_bits):
        return None
    return pooled_feature_sums(z, p.inv_scale, p.center, _U_DECIMALS)


def _feature_columns(outputs: np.ndarray, p: LogisticScore) -> Iterator[np.ndarray]:
    """The columns of phi(outputs), one at a time (see the module docstring)."""
    rows = Rows(outputs)
    yield from _columns(rows.coordinates(p.transform), rows.x, rows.scalar, p)


def logistic_features(outputs: np.ndarray, p: LogisticScore) -> np.ndarray:
    """The feature matrix phi(outputs) of the fitted parameters `p` (see the module docstring)."""
    rows = Rows(outputs)
    out = np.empty((len(outputs), _feature_count(p, rows.scalar)), order="F")  # by column
    _write_features(out, rows.coordinates(p.transform), rows.x, rows.scalar, p)
    return out


def _write_features(out: np.ndarray, z: np.ndarray, x: np.ndarray, scalar: bool, p: LogisticScore) -> None:
    """phi of the rows with coordinates z and float64 rows x written into the first columns of `out`."""
    pooled = _pooled_columns(z, scalar, p)
    if pooled is not None:
        for k, col in enumerate(pooled):
            out[:, k] = col
        return
    for block in row_blocks(len(z), z.shape[1]):
        for k, col in enumerate(_columns(z[block], x[block], scalar, p)):
            out[block, k] = col


def _feature_count(p: LogisticScore, scalar: bool) -> int:
    """The number of columns `_feature_columns` yields for the parameters `p`."""
    cont = np.flatnonzero(p.inv_scale > 0)
    n = len(p.atom_values) + int(np.count_nonzero(p.has_cont_flag[cont]))
    n += _CONT_FEATURES if p.pooled else _CONT_FEATURES * len(cont)
    return n + (8 + 17 if scalar and p.float_bits else 0)


def _fit_weights(f0: np.ndarray, f1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Standardisation and L2-regularised logistic weights (label 1 on d0) of the feature rows f0, f1;
    None if nothing varies (`_fit_design`)."""
    n0, k = f0.shape
    xa = np.empty((n0 + len(f1), k + 1))
    xa[:n0, :k], xa[n0:, :k] = f0, f1
    return _fit_design(xa, n0)


def _fit_design(xa: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """`_fit_weights` on the feature rows in the first k columns of xa (n, k + 1), d0's first n0 rows: xa
    is standardised in place, its last column set to the intercept's 1.

    The loss is minimised by L-BFGS in the coordinates v = L^T w, L L^T = X^T X / 4 + diag(penalty)
    the Hessian at w = 0 (the data's own preconditioner, one Gram matrix): there the Hessian is close
    to the identity and L-BFGS stops after about 8 loss evaluations where the raw coordinates took
    60-75 on the one-hot features of the SVT rows of benchmarks/peers/ (collinear within a coordinate),
    and at a lower loss.  The minimiser is the same; only the path to it changes."""
    k = xa.shape[1] - 1
    y = np.concatenate([np.ones(n0), np.zeros(len(xa) - n0)])
    # Standardised in place, the intercept as a last column (not penalised; equal class sizes, so it
    # stays near 0): one matrix of n x (k + 1), no temporaries of its size.
    xs = xa[:, :k]
    xa[:, k] = 1.0
    mean = np.einsum("ij->j", xs) / len(y)
    xs -= mean
    scale = np.sqrt(np.einsum("ij,ij->j", xs, xs) / len(y))
    keep = scale > 0
    if not np.any(keep):
        return None
    scale = np.where(keep, scale, 1.0)
    xs /= scale
    xs[:, ~keep] = 0.0
    pen = np.full(k + 1, _RIDGE)
    pen[-1] = 0.0
    # Positive definite: the penalty covers every column but the intercept, whose entry is n / 4.
    with one_blas_thread():
        # one thread: a threaded BLAS on a busy machine waits for its threads (0.3 s alone, 2-15 s
        # with a second process running, measured at 6e5 x 108)
        chol = np.linalg.cholesky(0.25 * (xa.T @ xa) + np.diag(pen))

    # the loss's vectors of n, reused by every evaluation (each entry computed as by the plain expressions)
    t, val, r = np.empty(len(xa)), np.empty(len(xa)), np.empty(len(xa))

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        w = solve_triangular(chol, v, lower=True, trans="T")
        # einsum, not BLAS: these tall, thin products are memory-bound (same reason as above).
        np.einsum("ij,j->i", xa, w, out=t)
        # log(1 + e^t) - y t, stably
        np.logaddexp(0.0, t, out=val)
        np.subtract(val, np.multiply(y, t, out=r), out=val)
        # sigmoid(t) - y = 0.5 (1 + tanh(t / 2)) - y
        np.multiply(t, 0.5, out=r)
        np.tanh(r, out=r)
        np.add(r, 1.0, out=r)
        np.multiply(r, 0.5, out=r)
        np.subtract(r, y, out=r)
        grad = np.einsum("ij,i->j", xa, r) + pen * w
        return float(val.sum() + 0.5 * np.sum(pen * w * w)), solve_triangular(chol, grad, lower=True)

    res = minimize(loss, np.zeros(xa.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 200})
    w = solve_triangular(chol, np.asarray(res.x), lower=True, trans="T")[:-1]
    if not np.all(np.isfinite(w)) or not np.any(w != 0):
        return None
    return mean, scale, np.where(keep, w, 0.0)


def _fit_one(
    rows: FitRows,
    transform: np.ndarray | None,
    pooled: bool,
    float_bits: bool,
    scalar: bool,
    name: str,
) -> LogisticScore | None:
    """The logistic score of one feature layout fitted on `rows` (its coordinates whitened by
    `transform`, then without atoms, or the raw ones with their atoms)."""
    x0, x1 = rows.x0, rows.x1
    z0, z1 = rows.whitened if transform is not None else (x0, x1)
    d = z0.shape[1]
    center, inv_scale = np.zeros(d), np.zeros(d)
    has_cont = np.zeros(d, dtype=bool)
    a_cols, a_vals = [], []
    n_feat = 0
    # whitened coordinates are taken without atoms: their median is of all entries
    stats = rows.whitened_columns if transform is not None else rows.columns
    for j in range(d):
        atoms = np.zeros(0) if transform is not None else stats[j].atoms
        median = stats[j].median if len(stats[j].atoms) == len(atoms) else None
        pooled_col = np.concatenate([z0[:, j], z1[:, j]])
        rest = pooled_col[~np.isin(pooled_col, atoms)] if len(atoms) else pooled_col
        a_cols.append(np.full(len(atoms), j, dtype=np.int64))
        a_vals.append(atoms)
        n_feat += len(atoms)
        if len(rest) >= 4:
            c = float(np.median(rest) if median is None else median)
            b = float(mean_abs_deviation(rest, c))
            if b > 0:
                center[j], inv_scale[j] = c, 1.0 / b
                has_cont[j] = len(atoms) > 0
                n_feat += int(has_cont[j]) + (0 if pooled else _CONT_FEATURES)
    if pooled:
        if np.count_nonzero(inv_scale) < 2 or any(len(a) for a in a_vals):
            return None
        n_feat += _CONT_FEATURES
    if n_feat == 0 or n_feat > _MAX_FEATURES:
        return None
    shell = LogisticScore(
        center=center,
        inv_scale=inv_scale,
        atom_columns=np.concatenate(a_cols),
        atom_values=np.concatenate(a_vals).astype(np.float64),
        has_cont_flag=has_cont,
        transform=transform,
        pooled=pooled,
        float_bits=float_bits and scalar,
        name=name,
    )
    # the features of both inputs written straight into the design matrix (d0's rows first)
    n0, k = len(x0), _feature_count(shell, scalar)
    xa = np.empty((n0 + len(x1), k + 1))
    _write_features(xa[:n0], z0, x0, scalar, shell)
    _write_features(xa[n0:], z1, x1, scalar, shell)
    fitted = _fit_design(xa, n0)
    del xa
    if fitted is None:
        return None
    mean, scale, w = fitted
    return LogisticScore(
        center=center,
        inv_scale=inv_scale,
        atom_columns=shell.atom_columns,
        atom_values=shell.atom_values,
        has_cont_flag=has_cont,
        transform=transform,
        pooled=pooled,
        float_bits=shell.float_bits,
        feature_mean=mean,
        feature_scale=scale,
        weights=w,
        name=name,
    )


def fit_classifier_scores(
    fit0: np.ndarray, fit1: np.ndarray, float_bits: bool = False, shared: FitRows | None = None
) -> list[Score]:
    """The logistic-regression family for outputs shaped like fit0 / fit1 (see the module docstring).

    Vectors with atoms (discrete or mixed outputs): "logistic-regression" (per-coordinate features).
    All-continuous real vectors: "logistic-regression-whitened-pooled" ("logistic-regression-pooled"
    when the pooled covariance is singular); their per-coordinate model is `coordinate-log-ratio`'s
    naive-Bayes Laplace terms, fitted without an optimiser.  Scalars: only with `float_bits` (float outputs), the
    per-value and bit features ("logistic-regression"); a scalar's own ordering is already the
    identity family.  `shared`, the `dpaudit.audit.features.FitRows` of fit0 / fit1, shares their atoms
    and whitening with other fitters.
    """
    if len(fit0) < 8 or len(fit1) < 8:
        return []
    scalar = fit0.ndim == 1
    if scalar and not (float_bits and fit0.dtype.kind == "f"):
        return []
    rows = FitRows(fit0, fit1) if shared is None else shared
    d = rows.x0.shape[1]
    if d > _MAX_COORDINATES:
        return []
    continuous = not scalar and fit0.dtype.kind == "f" and all(len(a) == 0 for a in rows.atoms)
    out: list[Score] = []
    if not continuous:
        plain = _fit_one(rows, None, False, float_bits, scalar, "logistic-regression")
        if plain is not None:
            out.append(plain)
        return out
    if d < 2:
        return out
    # One pooled variant: on whitened coordinates (independent coordinates are only rescaled; prefix
    # sums become increments), on the raw ones when the covariance is singular.
    w = rows.whitening
    sc = (
        _fit_one(rows, w, True, False, False, "logistic-regression-whitened-pooled")
        if w is not None
        else _fit_one(rows, None, True, False, False, "logistic-regression-pooled")
    )
    if sc is not None:
        out.append(sc)
    return out
