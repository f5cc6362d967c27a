"""Optional compiled kernels (numba) of two score evaluations, giving the numbers of their numpy paths bit for bit.

- `pooled_feature_sums`: the pooled features of `dpaudit.audit.classifier.LogisticScore` for rows without atoms:
  per row, over the continuous coordinates in their order and from 0, the sums of sign(u), clip(u, -k, k) for k
  in 0.25, 1, 4 and min(|u|, 4), u = round((z_j - c_j) b_j, 9);
- `coordinate_log_ratio`: `dpaudit.audit.features.CoordinateLogRatio.values` for rows without atoms.

Each does in one pass over the rows what the numpy path does in about fifteen array operations, with the same IEEE
operations in the same order: numba's default floating point neither reassociates nor fuses a multiply and an add,
np.rint rounds half to even as numpy's does, and away from NaN the clips and signs are numpy's comparisons.
So the values are the numpy path's, and the estimation split's counts and the selection split's events with them;
a NaN (a NaN coordinate, inf - inf) sends the whole batch back to the numpy path (the kernel returns False).
On a 250,000-run chunk of an 8-wide Laplace vector the three scores they compute in an audit of 10^7 runs per side
(a pooled logistic regression, two coordinate log ratios) took 31 ms instead of 57 ms.

They run when numba is installed (`pip install dpaudit[fast]`), for batches of at least `MIN_ROWS` rows, once the
process has scored `WARM_ROWS` rows in such batches by the numpy paths: importing numba and loading the compiled
kernels (cached on disk; compiled on first use) takes about 0.5 s, what the numpy paths take for about 10^7 rows,
so an audit too short to gain from them (10^6 runs per side score about 8 million) never loads them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__ = ["MIN_ROWS", "WARM_ROWS", "coordinate_log_ratio", "pooled_feature_sums"]

#: Batches of fewer rows are left to the numpy paths.
MIN_ROWS = 1 << 15
#: Rows a process scores by the numpy paths (in batches of at least `MIN_ROWS` rows) before it loads the kernels.
WARM_ROWS = 10_000_000
_numpy_rows = 0


def _pooled_feature_sums(
    z: np.ndarray, cont: np.ndarray, center: np.ndarray, inv_scale: np.ndarray, out: np.ndarray
) -> bool:
    """out[:, i] = the five pooled features of row z[i] (module docstring); False at a NaN.

    np.round(v, 9) is np.rint(v * 1e9) / 1e9 (numpy's three operations).  Away from NaN, numpy's clip(v, -k, k)
    is min(max(v, -k), k) and its sign is (v > 0) - (v < 0) (0.0 for both zeros); a tie of max or min is v = k,
    the same number, whichever operand is taken."""
    u = np.empty(len(cont))
    for i in range(z.shape[0]):
        for r in range(len(cont)):
            u[r] = np.rint((z[i, cont[r]] - center[r]) * inv_scale[r] * 1e9) / 1e9
        s0 = s1 = s2 = s3 = s4 = 0.0
        for r in range(len(cont)):
            v = u[r]
            if v != v:
                return False
            s0 += (v > 0.0) - (v < 0.0)
            s1 += min(max(v, -0.25), 0.25)
            s2 += min(max(v, -1.0), 1.0)
            m = min(max(v, -4.0), 4.0)
            s3 += m
            s4 += abs(m)  # min(|v|, 4) = |clip(v, -4, 4)|
        out[0, i] = s0
        out[1, i] = s1
        out[2, i] = s2
        out[3, i] = s3
        out[4, i] = s4
    return True


def _coordinate_log_ratio(
    z: np.ndarray,
    loc0: np.ndarray,
    loc1: np.ndarray,
    inv_scale: np.ndarray,
    cap: np.ndarray,
    cont_ratio: np.ndarray,
    idle: np.ndarray,
    rounded: bool,
    shifted: bool,
    out: np.ndarray,
) -> bool:
    """out[i] = sum_j t_j(z[i, j]) from 0, as `CoordinateLogRatio.values` computes it without atoms (rounding and
    clipping as in `_pooled_feature_sums`); False at a NaN.  A clip's tie between the zeros of a cap of 0 may keep
    either zero: a sum from +0.0 is the same with either (x + -0.0 = x, and 0.0 + -0.0 = 0.0)."""
    for i in range(z.shape[0]):
        acc = 0.0
        for j in range(z.shape[1]):
            if idle[j]:
                t = cont_ratio[j]
            else:
                t = (abs(z[i, j] - loc1[j]) - abs(z[i, j] - loc0[j])) * inv_scale[j]
                if t != t:
                    return False
                if rounded:
                    t = min(max(np.rint(t * 1e9) / 1e9, -cap[j]), cap[j])
                if shifted:
                    t = t + cont_ratio[j]
            acc += t
        out[i] = acc
    return True


def _kernels(rows: int) -> tuple[Any, Any] | None:
    """The compiled kernels for a batch of `rows` rows, or None: numba missing, a batch below `MIN_ROWS`, or the
    process still below `WARM_ROWS` (this batch then counts towards it)."""
    global _numpy_rows
    if rows < MIN_ROWS:
        return None
    if _numpy_rows < WARM_ROWS:
        _numpy_rows += rows
        return None
    return _compiled()


@functools.cache
def _compiled() -> tuple[Any, Any] | None:
    """The two kernels compiled by numba (on first use, cached on disk), or None without numba."""
    try:
        import numba
    except ImportError:
        return None
    jit = functools.partial(numba.njit, cache=True, nogil=True)
    return jit(_pooled_feature_sums), jit(_coordinate_log_ratio)


def pooled_feature_sums(z: np.ndarray, inv_scale: np.ndarray, center: np.ndarray, decimals: int) -> np.ndarray | None:
    """The (5, rows) pooled features of the coordinates z (rows, width) for the scales `inv_scale` (0: not
    continuous) and centers `center`, u rounded to `decimals`, or None: no kernels for the batch (`_kernels`),
    decimals other than 9, a NaN."""
    kernels = _kernels(len(z)) if decimals == 9 else None
    if kernels is None:
        return None
    cont = np.flatnonzero(inv_scale > 0)
    out = np.empty((5, len(z)))
    done = kernels[0](z, cont, np.ascontiguousarray(center[cont]), np.ascontiguousarray(inv_scale[cont]), out)
    return out if done else None


def coordinate_log_ratio(
    z: np.ndarray,
    loc0: np.ndarray,
    loc1: np.ndarray,
    inv_scale: np.ndarray,
    cont_ratio: np.ndarray,
    decimals: int | None,
) -> np.ndarray | None:
    """`CoordinateLogRatio.values` of the coordinates z (rows, width) without atoms (its terms rounded to `decimals`
    and clipped when not None), or None: no kernels for the batch (`_kernels`), decimals other than 9 or None, a NaN."""
    kernels = _kernels(len(z)) if decimals in (9, None) else None
    if kernels is None:
        return None
    cap = np.abs(loc1 - loc0) * inv_scale  # as the numpy path computes it
    idle = ~(inv_scale > 0)
    shifted = bool(np.any(cont_ratio != 0))
    out = np.empty(len(z))
    done = kernels[1](z, loc0, loc1, inv_scale, cap, cont_ratio, idle, decimals is not None, shifted, out)
    return out if done else None
