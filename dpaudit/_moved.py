"""Names that moved keep working from their old module, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["forward"]


def forward(old: str, new: str | Mapping[str, str]) -> tuple[list[str], Callable[[str], Any]]:
    """(`__all__`, `__getattr__`) for the old module `old` whose names now live elsewhere.

    `new` is the module now holding every name of `old` (its `__all__`), or {name: module} for names
    that went to several modules (then only those names are forwarded, and a module that keeps names
    of its own lists them in its `__all__` itself; each module is imported when one of its names is
    first asked for).
    """
    homes = dict.fromkeys(importlib.import_module(new).__all__, new) if isinstance(new, str) else dict(new)

    def __getattr__(name: str) -> Any:
        if isinstance(new, str):
            home = new if hasattr(importlib.import_module(new), name) else None
        else:
            home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} moved to {home}.{name}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), name)

    return list(homes), __getattr__
