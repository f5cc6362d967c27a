"""Names that moved keep working from their old module, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable

__all__ = ["forward"]


def forward(old: str, new: str) -> tuple[list[str], Callable[[str], Any]]:
    """(`__all__`, `__getattr__`) for the old module `old` whose names now live in module `new`."""
    target = importlib.import_module(new)

    def __getattr__(name: str) -> Any:
        if not hasattr(target, name):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} moved to {new}.{name}", DeprecationWarning, stacklevel=2)
        return getattr(target, name)

    return list(target.__all__), __getattr__
