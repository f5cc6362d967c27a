"""Moved to `dpaudit.privacy` (core, so that core can type what algorithms declare); this name keeps
working with a DeprecationWarning."""

import warnings
from typing import Any

import dpaudit.privacy as _moved

__all__ = list(_moved.__all__)


def __getattr__(name: str) -> Any:
    if not hasattr(_moved, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"{__name__}.{name} moved to dpaudit.privacy.{name}", DeprecationWarning, stacklevel=2)
    return getattr(_moved, name)
