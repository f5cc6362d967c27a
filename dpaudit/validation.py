"""Validation at the public boundary: one place, clear messages naming the parameter.

An argument of the wrong type (a string for a number, a non-integral float for a count, 1 for a flag) raises
TypeError; one of the right type with a bad value (a negative epsilon, NaN, an unknown choice) raises ValueError.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "check_bool",
    "check_choice",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_int_at_least",
    "check_nonnegative",
    "check_open_unit",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "shorten",
]


def _real(name: str, value: Any) -> float:
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {shorten(value)} ({type(value).__name__})")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return `epsilon` as a float if it lies in (0, inf); TypeError for a non-number, else ValueError."""
    value = _real(name, epsilon)
    if not (0.0 < value < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {epsilon!r}")
    return value


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return `delta` as a float if it lies in [0, 1); TypeError for a non-number, else ValueError."""
    value = _real(name, delta)
    if not (0.0 <= value < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {delta!r}")
    return value


def check_positive(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in (0, inf); TypeError for a non-number, else ValueError."""
    v = _real(name, value)
    if not (0.0 < v < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in [0, inf); TypeError for a non-number, else ValueError."""
    v = _real(name, value)
    if not (0.0 <= v < math.inf):
        raise ValueError(f"{name} must be non-negative and finite, got {value!r}")
    return v


def check_probability(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in [0, 1]; TypeError for a non-number, else ValueError."""
    v = _real(name, value)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return v


def check_open_unit(value: Any, name: str) -> float:
    """Return `value` as a float if it lies in (0, 1); TypeError for a non-number, else ValueError."""
    v = _real(name, value)
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return v


def check_int_at_least(value: Any, minimum: int, name: str) -> int:
    """Return `value` as an int if it is an integer >= `minimum`. An integral float (3.0, 1e5) counts as its
    integer; TypeError for any other non-integer (2.5, inf, NaN, "3", True), ValueError below `minimum`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise TypeError(f"{name} must be an integer >= {minimum}, got {shorten(value)} ({type(value).__name__})")
        value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive_int(value: Any, name: str) -> int:
    """Return `value` as an int if it is an integer >= 1 (`check_int_at_least`)."""
    return check_int_at_least(value, 1, name)


def check_bool(value: Any, name: str) -> bool:
    """Return `value` as a bool if it is True or False (a numpy bool too); TypeError otherwise (1, "yes", None)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {shorten(value)} ({type(value).__name__})")
    return bool(value)


def check_choice(value: Any, choices: tuple[str, ...] | list[str], name: str) -> str:
    """Return `value` if it is one of `choices`; TypeError for a non-string, else ValueError listing them."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a string, one of {', '.join(map(str, choices))}; got {shorten(value)} "
            f"({type(value).__name__})"
        )
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(map(str, choices))}")
    return value


def check_finite_array(value: Any, name: str, ndim: int | None = None) -> np.ndarray:
    """Return `value` as a float array if every entry is finite (and it has `ndim` axes). TypeError for entries
    that are not real numbers (strings, None, complex), ValueError for a wrong shape or a non-finite entry."""
    try:
        raw = np.asarray(value)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} must be a rectangular array of real numbers, got {shorten(value)}") from None
    if raw.dtype.kind not in "biuf" and not (raw.dtype.kind == "O" and all(map(_is_real, raw.flat))):
        raise TypeError(f"{name} must be an array of real numbers, got {shorten(value)} (dtype {raw.dtype})")
    arr = np.asarray(raw, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _is_real(value: Any) -> bool:
    """Whether `value` is a real number (a Fraction or a numpy scalar too), not a bool."""
    return isinstance(value, (Real, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))


def shorten(text: Any, limit: int = 120) -> str:
    """`repr(text)` for a message, its middle elided when longer than `limit` characters (a 5000-character
    path or number is shown by its ends)."""
    shown = repr(text)
    if len(shown) <= limit:
        return shown
    keep = (limit - 5) // 2
    return f"{shown[:keep]}...{shown[-keep:]} ({len(str(text))} characters)"
