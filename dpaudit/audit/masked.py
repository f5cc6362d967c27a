"""The masked-value family: outputs whose real values are hidden among sentinels.

Some algorithms release, per query, either a sentinel (a flag, "below" coded 0, "aborted" coded
-1000) or a noisy real value: the numerical sparse vector technique (Wang, Ding, Wang, Kifer, Zhang,
"Proving Differential Privacy with Shadow Execution", PLDI 2019, its Numerical SVT), SVT3 of Lyu,
Su, Li ("Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 2017, Alg. 3),
a flag with a value released only when the flag is up.  The likelihood ratio of such a row
factorises as P(pattern of sentinels) * density(real values | pattern); with exchangeable queries
the pattern's ratio depends on how many entries hold each sentinel, and the values' ratio is a sum
of per-value terms.  What defeats the other families there (measured on the StatDP / DP-Sniper
benchmark, benchmarks/peers/, NumericalSVT row): linear scores see the sentinels (-1000) rather
than the values; per-pattern and per-coordinate estimates spread a tiny privacy loss over many
cells, each below its own standard error.

`MaskedValueScore` is a logistic regression (label 1 on d0, equal class sizes, so its logit is an
estimate of log P0/P1 up to a constant: the DP-Sniper reading, Bichsel, Steffen, Bogunovic, Vechev,
IEEE S&P 2021, Sec. IV) on a handful of summary features of a row x:

- the pattern: for each sentinel a of the shared alphabet (values repeated in the fit rows,
  `dpaudit.audit.features.atoms_of`, pooled over the coordinates), n_a(x) = #{j : x_j = a} (the
  number of real entries is the width minus their sum);
- the masked values: with u_j = (x_j - c_j) / b for the real entries (c_j the pooled median of
  coordinate j's real entries, or of all real entries when it has fewer than 64; b the pooled mean
  absolute deviation) and 0 for sentinels, the sums over j of sign(u_j) and clip(u_j, -4, 4).  The
  Laplace log-likelihood ratio of a shift s (in units of b) is clip(2 u', -s, s) around the
  midpoint, ~ s sign(u) for a small shift: a sum of such terms over the released values is spanned
  for s << 1 by one weight, and a Gaussian shift's linear term approximately by the clipped sum.

A handful of weights (one per sentinel, two for the values) is fitted from all the fit rows, so
each is well determined where a per-pattern or per-coordinate estimate is not.  Measured on the
NumericalSVT row at 10^6 runs (expected bound of the chosen event over 8 selection draws, the
ceiling being 0.033): with a free log ratio per sentinel-count type as well, 0.024 (the noisier
candidate is chosen half of the time); counts only, 0.029; more clip levels (1 and 4) add nothing.

The score is one more candidate of the auditor's selection step.  With so few weights it is fitted
and thresholded on the whole selection split, like `dpaudit.audit.chain` (on the NumericalSVT row,
fitting on one half and choosing on the other gave 0.025 on average over 8 selection draws, the whole
split 0.029); either way the events are functions of the selection runs only, so the estimation
split's Clopper-Pearson bounds stay valid whatever is fitted here.  u is rounded to 9
decimals: the rounding error of x - c depends on the low-order bits of x, which for x + Laplace in
doubles depend on the input (Mironov, "On Significance of the Least Significant Bits for
Differential Privacy", ACM CCS 2012); the default families must not see float artefacts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.classifier import _fit_weights
from dpaudit.audit.features import FitRows, atoms_of
from dpaudit.audit.scores import Score

__all__ = ["MaskedValueScore", "fit_masked_scores", "masked_features"]

#: At most this many sentinel values shared by the coordinates (more: not an "atoms + values" output).
_MAX_SENTINELS = 8
#: At most this many coordinates.
_MAX_WIDTH = 4096
#: A coordinate gets its own centre when it has at least this many real entries (both inputs pooled).
_OWN_CENTRE_MIN = 64
#: At least this many real entries per input for the family to be fitted.
_MIN_REAL = 32
#: Clip levels (in units of b) of the summed value features (after sign(u)).
_CLIPS = (4.0,)
#: Decimals kept of u (see the module docstring).
_U_DECIMALS = 9


@dataclass(frozen=True, eq=False)
class MaskedValueScore(Score):
    """logit(x) = w . (phi(x) - mean) / scale, phi the counts of each sentinel and the summed
    masked-value features of the module docstring."""

    alphabet: np.ndarray = field(default_factory=lambda: np.zeros(0))
    center: np.ndarray = field(default_factory=lambda: np.zeros(0))
    inv_scale: float = 0.0
    feature_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    feature_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "masked-value-log-ratio"
    learned: bool = True
    #: Events chosen among at most 64 thresholds (dpaudit.audit.selection._coarse_candidates).
    coarse_thresholds: bool = True

    def features(self, outputs: np.ndarray) -> np.ndarray:
        """The feature matrix phi(x) of `outputs`, one row per output (`masked_features`)."""
        return masked_features(outputs, self)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        f = masked_features(outputs, self)
        return ((f - self.feature_mean) / self.feature_scale) @ self.weights

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sentinels": [float(a) for a in self.alphabet], "features": len(self.weights)}


def _counts(x: np.ndarray, alphabet: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, len(alphabet)) counts of each sentinel per row, and the (n, d) mask of real entries."""
    pos = np.minimum(np.searchsorted(alphabet, x), len(alphabet) - 1)
    hit = alphabet[pos] == x
    counts = np.stack([np.count_nonzero(hit & (pos == i), axis=1) for i in range(len(alphabet))], axis=1)
    return counts.astype(np.int64), ~hit


def masked_features(outputs: np.ndarray, p: MaskedValueScore) -> np.ndarray:
    """The feature matrix phi(outputs) of the fitted parameters `p` (module docstring): pattern part
    (counts of each sentinel), then the summed value features."""
    x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
    counts, real = _counts(x, p.alphabet)
    u = np.where(real, np.round((x - p.center) * p.inv_scale, _U_DECIMALS), 0.0)
    values = [np.sign(u).sum(axis=1)] + [np.clip(u, -k, k).sum(axis=1) for k in _CLIPS]
    pattern = [counts[:, i].astype(np.float64) for i in range(counts.shape[1])]
    return np.stack(pattern + values, axis=1)


def fit_masked_scores(fit0: np.ndarray, fit1: np.ndarray, shared: FitRows | None = None) -> list[Score]:
    """The masked-value family for outputs shaped like fit0 / fit1 (see the module docstring;
    `shared`: their `FitRows`, whose atoms other families use too).

    Only for vectors (2-D) holding both sentinels (at most 8 shared values) and real values (at
    least 32 per input): "masked-value-log-ratio".
    """
    if fit0.ndim < 2 or fit0.dtype.kind != "f" or len(fit0) < 8 or len(fit1) < 8:
        return []
    d = fit0[0].size
    if d > _MAX_WIDTH:
        return []
    # float64 rows are read as they are (a copy of the whole selection split is its size again)
    x0 = np.asarray(fit0.reshape(len(fit0), -1), dtype=np.float64)
    x1 = np.asarray(fit1.reshape(len(fit1), -1), dtype=np.float64)
    per_column = [atoms_of(x0[:, j], x1[:, j]) for j in range(d)] if shared is None else shared.atoms
    alphabet = np.unique(np.concatenate(per_column)) if d else np.zeros(0)
    if not 1 <= len(alphabet) <= _MAX_SENTINELS:
        return []
    (_, r0), (_, r1) = _counts(x0, alphabet), _counts(x1, alphabet)
    if r0.sum() < _MIN_REAL or r1.sum() < _MIN_REAL:
        return []
    pooled_x, pooled_r = np.concatenate([x0, x1]), np.concatenate([r0, r1])
    overall = float(np.median(pooled_x[pooled_r]))
    center = np.full(d, overall)
    for j in range(d):
        col = pooled_x[pooled_r[:, j], j]
        if len(col) >= _OWN_CENTRE_MIN:
            center[j] = float(np.median(col))
    dev = np.abs(pooled_x - center)[pooled_r]
    b = float(np.mean(dev))
    if not b > 0 or not np.isfinite(b):
        return []
    shell = MaskedValueScore(alphabet=alphabet, center=center, inv_scale=1.0 / b)
    fitted = _fit_weights(masked_features(x0, shell), masked_features(x1, shell))
    if fitted is None:
        return []
    mean, scale, w = fitted
    return [
        MaskedValueScore(
            alphabet=alphabet, center=center, inv_scale=1.0 / b, feature_mean=mean, feature_scale=scale, weights=w
        )
    ]
