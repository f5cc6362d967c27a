"""Validation at the public boundary: one place, clear messages naming the parameter."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_open_unit",
    "check_positive_int",
    "check_int_at_least",
    "check_choice",
    "check_finite_array",
    "shorten",
]


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return `epsilon` as a float if it lies in (0, inf), else raise ValueError."""
    value = _real(name, epsilon)
    if not (0.0 < value < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {epsilon!r}")
    return value


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return `delta` as a float if it lies in [0, 1), else raise ValueError."""
    value = _real(name, delta)
    if not (0.0 <= value < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {delta!r}")
    return value


def check_positive(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in (0, inf), else raise ValueError."""
    v = _real(name, value)
    if not (0.0 < v < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in [0, inf), else raise ValueError."""
    v = _real(name, value)
    if not (0.0 <= v < math.inf):
        raise ValueError(f"{name} must be non-negative and finite, got {value!r}")
    return v


def check_probability(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in [0, 1], else raise ValueError."""
    v = _real(name, value)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return v


def check_open_unit(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in (0, 1), else raise ValueError."""
    v = _real(name, value)
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return v


def check_int_at_least(value: Any, minimum: int, name: str) -> int:
    """Return `value` as an int if it is an integer >= `minimum`, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive_int(value: Any, name: str) -> int:
    """Return `value` as an int if it is an integer >= 1, else raise ValueError."""
    return check_int_at_least(value, 1, name)


def check_choice(value: Any, choices: tuple[str, ...] | list[str], name: str) -> str:
    """Return `value` if it is one of `choices`, else raise ValueError listing them."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(map(str, choices))}")
    return value


def check_finite_array(value: Any, name: str, ndim: int | None = None) -> np.ndarray:
    """Return `value` as a float array if every entry is finite (and it has `ndim` axes)."""
    arr = np.asarray(value, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def shorten(text: Any, limit: int = 120) -> str:
    """`repr(text)` for a message, its middle elided when longer than `limit` characters (a 5000-character
    path or number is shown by its ends)."""
    shown = repr(text)
    if len(shown) <= limit:
        return shown
    keep = (limit - 5) // 2
    return f"{shown[:keep]}...{shown[-keep:]} ({len(str(text))} characters)"
