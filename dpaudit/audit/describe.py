"""Stable text descriptions of targets: the same object gives the same text in every process.

Reports and checkpoints name the audited target.  `repr` of functions and of most objects embeds a
memory address (`<function f at 0x7f...>`), different in every run; here functions and classes are
named by `module.qualname`, `functools.partial` and dataclass instances by their parts, arrays by
shape, dtype and a digest of their bytes, and any address left in other reprs is removed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from typing import Any

import numpy as np

__all__ = ["describe_target"]

#: Longest description kept (dataclass targets can hold large parameter sets).
MAX_LENGTH = 2000
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _name(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    return f"{module}.{qualname}" if module else qualname


def _describe(obj: Any) -> str:
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return repr(obj)
    if isinstance(obj, np.generic):
        return repr(obj.item())
    if isinstance(obj, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()[:16]
        return f"array(shape={obj.shape}, dtype={obj.dtype}, sha256={digest})"
    if isinstance(obj, functools.partial):
        parts = [_describe(a) for a in obj.args] + [f"{k}={_describe(v)}" for k, v in obj.keywords.items()]
        return f"partial({', '.join([_describe(obj.func), *parts])})"
    if isinstance(obj, (list, tuple)):
        inner = ", ".join(_describe(v) for v in obj)
        return f"[{inner}]" if isinstance(obj, list) else f"({inner}{',' if len(obj) == 1 else ''})"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{_describe(k)}: {_describe(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
        owner = getattr(obj, "__self__", None)  # bound method: its object, then the method's name
        if owner is not None and not isinstance(owner, type) and not _is_module(owner):
            return f"{_describe(owner)}.{obj.__name__}"
        return _name(obj)
    if dataclasses.is_dataclass(obj):
        fields = [f"{f.name}={_describe(getattr(obj, f.name))}" for f in dataclasses.fields(obj) if f.repr]
        return f"{_name(type(obj))}({', '.join(fields)})"
    return _ADDRESS.sub("", repr(obj))


def _is_module(obj: Any) -> bool:
    return type(obj).__name__ == "module"


def describe_target(target: Any, name: str | None = None) -> str:
    """`name` if given, else a description of `target` that does not depend on memory addresses.

    Functions: "module.qualname"; partials: "partial(func, args...)"; dataclass instances:
    "module.Class(field=...)"; other objects: their repr without " at 0x..." parts.  Cut to
    `MAX_LENGTH` characters.
    """
    if name is not None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"target_name must be a non-empty string, got {name!r}")
        return name
    text = _ADDRESS.sub("", _describe(target))
    return text if len(text) <= MAX_LENGTH else text[:MAX_LENGTH] + "…"
