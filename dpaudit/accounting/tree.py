"""Flatten a `DpEvent` tree into branches of merged leaves, before any accountant computes.

A *branch* is a multiset of leaf events composed sequentially (adaptively): leaf -> count.
A `ParallelComposedDpEvent` over disjoint users contributes one alternative branch per child:
one user is in at most one child, so the guarantee of the tree is the worst branch (McSherry
2009, parallel composition; it holds under adaptivity because the children a user is not in
contribute no privacy loss). `SelfComposedDpEvent(e, k)`, `ComposedDpEvent([e] * k)` and k
separate compositions all give the same branch {e: k}: counts are merged here, once, so no
accountant can drop a count, and identical events are computed once whatever the count.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import attr
import dp_accounting
import numpy as np

from dpaudit.accounting.events import ParallelComposedDpEvent

__all__ = ["MAX_BRANCHES", "Branch", "Flattened", "flatten", "leaf_key"]

# Parallel compositions inside sequential ones multiply the number of branches; beyond this
# many distinct branches the tree is refused rather than silently simplified.
MAX_BRANCHES = 4096

Branch = dict  # leaf key -> count (int >= 1)


def _field_types(value: Any) -> tuple:
    """The types of an event's fields, recursively: attrs equality says
    GaussianDpEvent(True) == GaussianDpEvent(1.0) (and their hashes agree), the key must not."""
    if not attr.has(type(value)):
        return (type(value),)
    return (type(value),) + tuple(_field_types(getattr(value, f.name)) for f in attr.fields(type(value)))


def leaf_key(event: dp_accounting.DpEvent) -> Hashable:
    """A hashable key equal for equal leaves of equal field types (the event itself when it is
    hashable, with its field types)."""
    try:
        hash(event)
        return (event, _field_types(event))
    except TypeError:  # attrs events with list fields (e.g. step_counts) are unhashable
        return (type(event).__module__, type(event).__qualname__, repr(event))


def _branch_id(branch: Branch) -> frozenset:
    return frozenset(branch.items())


def _dedupe(branches: Iterable[Branch]) -> list[Branch]:
    seen: dict[frozenset, Branch] = {}
    for b in branches:
        seen.setdefault(_branch_id(b), b)
    return list(seen.values())


def _scale(branches: list[Branch], count: int) -> list[Branch]:
    return [{k: c * count for k, c in b.items()} for b in branches]


def _product(left: list[Branch], right: list[Branch]) -> list[Branch]:
    if len(left) * len(right) > MAX_BRANCHES:
        raise ValueError(
            f"event tree has more than {MAX_BRANCHES} distinct parallel branches; "
            "compose the parallel parts at the top level of the tree"
        )
    out = []
    for a in left:
        for b in right:
            merged = dict(a)
            for k, c in b.items():
                merged[k] = merged.get(k, 0) + c
            out.append(merged)
    return _dedupe(out)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"count must be a non-negative integer, got {value!r}")
    value = int(value)
    if value < 0:
        raise ValueError(f"count must be a non-negative integer, got {value!r}")
    return value


class Flattened:
    """Branches of an event tree plus the leaf objects their keys stand for."""

    __slots__ = ("branches", "leaves")

    def __init__(self, branches: list[Branch] | None = None, leaves: dict | None = None) -> None:
        self.branches: list[Branch] = branches if branches is not None else [{}]
        self.leaves: dict[Hashable, dp_accounting.DpEvent] = leaves if leaves is not None else {}

    def compose(self, other: Flattened, count: int = 1) -> Flattened:
        """Sequential composition of self with `count` copies of `other` (a new object)."""
        count = _count(count)
        if count == 0:
            return Flattened(list(self.branches), dict(self.leaves))
        leaves = dict(self.leaves)
        leaves.update(other.leaves)
        return Flattened(_product(self.branches, _scale(other.branches, count)), leaves)

    def compose_inplace(self, other: Flattened, count: int = 1) -> None:
        """Sequential composition in place; cheap when `other` is one leaf and self one branch."""
        count = _count(count)
        if count == 0:
            return
        self.leaves.update(other.leaves)
        if len(other.branches) == 1 and len(self.branches) == 1:
            mine = self.branches[0]
            for k, c in other.branches[0].items():
                mine[k] = mine.get(k, 0) + c * count
            return
        self.branches = _product(self.branches, _scale(other.branches, count))


def flatten(event: dp_accounting.DpEvent, count: int = 1) -> Flattened:
    """Flatten `event` (composed `count` times) into merged branches; validates counts and types."""
    count = _count(count)
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {event!r}")
    leaves: dict[Hashable, dp_accounting.DpEvent] = {}

    def walk(e: dp_accounting.DpEvent) -> list[Branch]:
        if not isinstance(e, dp_accounting.DpEvent):
            raise TypeError(f"event tree must hold DpEvent objects, got {e!r}")
        if isinstance(e, dp_accounting.NoOpDpEvent):
            return [{}]
        if isinstance(e, dp_accounting.SelfComposedDpEvent):
            k = _count(e.count)
            return [{}] if k == 0 else _scale(walk(e.event), k)
        if isinstance(e, dp_accounting.ComposedDpEvent):
            out: list[Branch] = [{}]
            for child in e.events:
                out = _product(out, walk(child))
            return out
        if isinstance(e, ParallelComposedDpEvent):
            out = []
            for child in e.events:
                out.extend(walk(child))
            if len(out) > MAX_BRANCHES:
                raise ValueError(f"event tree has more than {MAX_BRANCHES} distinct parallel branches")
            return _dedupe(out)
        key = leaf_key(e)
        leaves[key] = e
        return [{key: 1}]

    branches = [{}] if count == 0 else _scale(walk(event), count)
    return Flattened(branches, leaves)
