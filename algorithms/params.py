"""Parsers of `dpaudit regret` parameter values shared by the algorithm families' registrations."""

from __future__ import annotations

__all__ = ["float_list", "optional_float"]


def float_list(text: str) -> tuple[float, ...]:
    """Parse '0.9,0.5,0.5' into a tuple of floats (the --means option)."""
    try:
        return tuple(float(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise ValueError(f"means must be comma-separated numbers, got {text!r}") from None


def optional_float(text: str) -> float | None:
    """Parse a float, or None for '', 'none' or 'auto' (the algorithm's default)."""
    return None if text.strip().lower() in ("", "none", "auto") else float(text)
