"""The target's outputs: checked, brought to float64/int64 rows, and held to the shape of the first batch.

The probe's batch fixes an `OutputSpec` (row shape, discrete or real); every later batch of every
chunk must match it, so a target whose outputs change shape mid-audit fails naming the input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["OutputSpec", "draw", "normalise"]


@dataclass(frozen=True)
class OutputSpec:
    """What every batch of outputs must look like: the row shape and whether it is discrete."""

    row_shape: tuple[int, ...]
    discrete: bool

    @property
    def width(self) -> int:
        """Number of entries in one output row (1 for a scalar output)."""
        return int(np.prod(self.row_shape)) if self.row_shape else 1


def normalise(raw: Any, size: int, which: str) -> tuple[np.ndarray, OutputSpec]:
    """Check one batch of target outputs and bring it to float64/int64, 1-D or 2-D."""
    call = f"target({which}, rng, size={size})"
    try:
        out = np.asarray(raw)
    except ValueError:  # numpy's "inhomogeneous shape": rows of different lengths
        raise ValueError(
            f"{call} returned rows of different lengths; every run must give an output of the same shape"
        ) from None
    if out.ndim == 0 or out.shape[0] != size:
        got = "a scalar" if out.ndim == 0 else f"{out.shape[0]} rows"
        raise ValueError(f"{call} returned {got}; expected first axis of length {size}")
    kind = out.dtype.kind
    if kind == "O" and out.ndim == 1 and any(np.ndim(row) > 0 for row in out):
        raise ValueError(f"{call} returned rows of different lengths; every run must give an output of the same shape")
    if out.ndim > 1 and 0 in out.shape[1:]:
        raise ValueError(f"{call} returned rows with no entries (shape {out.shape}); each run must output something")
    if kind == "u" and out.dtype.itemsize == 8 and out.size and int(out.max()) > np.iinfo(np.int64).max:
        raise ValueError(
            f"{call} returned unsigned integers >= 2**63, which the auditor's int64 cannot hold "
            "exactly; return them as int64 (e.g. subtract 2**63) or as float"
        )
    if kind in "biu":
        out = out.astype(np.int64, copy=False)
        discrete = True
    elif kind == "f":
        out = out.astype(np.float64, copy=False)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{call} returned NaN or infinite values")
        discrete = False
    else:
        raise ValueError(f"{call} must return numbers (bool, int or float), got dtype {out.dtype}")
    spec = OutputSpec(tuple(int(s) for s in out.shape[1:]), discrete)
    out = out.reshape(size) if spec.width == 1 else out.reshape(size, spec.width)
    return out, spec


def draw(target: Callable, data: Any, rng: np.random.Generator, size: int, spec: OutputSpec, which: str) -> np.ndarray:
    """Run the target `size` times on `data`, checked against the outputs of the probe."""
    out, got = normalise(target(data, rng, size), size, which)
    if got != spec:
        raise ValueError(
            f"target({which}, ...) returned rows of shape {got.row_shape} ({'discrete' if got.discrete else 'real'}); "
            f"the probe gave {spec.row_shape} ({'discrete' if spec.discrete else 'real'}): outputs must be consistent"
        )
    return out
