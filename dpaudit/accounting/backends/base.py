"""The accountants' common base: per-branch answers, the worst branch wins, support and cost checks.

A backend answers for one branch (a multiset of leaves composed sequentially); the tree's
answer is the worst branch (parallel composition, see `dpaudit.accounting.tree`). Per-leaf
results are cached by leaf (least recently used dropped first), so identical releases are
computed once whatever their count.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable

import dp_accounting

from dpaudit.accounting.tree import Branch, Flattened

__all__ = ["BRANCH_PLD_CACHE_LIMIT", "CACHE_LIMIT", "PLD_CACHE_LIMIT", "Backend", "Keyed", "cached"]


# Sizes of the per-backend caches (calibration and long runs create many distinct leaves;
# a PLD can take megabytes).
CACHE_LIMIT = 4096
PLD_CACHE_LIMIT = 64
BRANCH_PLD_CACHE_LIMIT = 16


@dataclasses.dataclass(frozen=True, eq=False)
class Keyed:
    """A value handed to a cached function together with the key it is cached by: equal and
    hashed by `key` alone (for a leaf, `tree.leaf_key`, which also tells GaussianDpEvent(True)
    from GaussianDpEvent(1.0); events with list fields are unhashable themselves)."""

    key: Hashable
    value: object

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyed) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def cached(function, maxsize: int = CACHE_LIMIT):
    """`functools.lru_cache` with typed keys (1 and 1.0 apart), for one backend's own cache."""
    return functools.lru_cache(maxsize=maxsize, typed=True)(function)


class Backend:
    """Base: per-branch answers, worst branch wins; subclasses define the leaf support."""

    name = ""

    def __init__(self) -> None:
        self._reason = cached(lambda leaf: self.unsupported_reason(leaf.value))

    def unsupported_reason(self, leaf: dp_accounting.DpEvent) -> str | None:
        """None if the leaf is supported, else a short reason."""
        raise NotImplementedError

    def reason(self, key: Hashable, leaf: dp_accounting.DpEvent) -> str | None:
        """`unsupported_reason(leaf)`, cached by the leaf's key."""
        return self._reason(Keyed(key, leaf))

    def cost_reason(self, branch: Branch, leaves: dict) -> tuple[dp_accounting.DpEvent, str] | None:
        """None when answering for `branch` is cheap enough, else (the costliest leaf, why):
        an accountant refuses what would take too long rather than hold up the others."""
        return None

    def first_unsupported(self, flat: Flattened) -> tuple[dp_accounting.DpEvent, str] | None:
        """The first leaf this backend refuses and why (an unsupported leaf, else the costliest leaf of
        a branch too costly to answer for), or None when it can answer for the whole tree.
        """
        for key, leaf in flat.leaves.items():
            r = self.reason(key, leaf)
            if r is not None:
                return leaf, r
        for branch in flat.branches:
            cost = self.cost_reason(branch, flat.leaves)
            if cost is not None:
                return cost
        return None

    def branch_epsilon(self, branch: Branch, leaves: dict, delta: float) -> float:
        """Smallest epsilon this backend proves for one branch (its leaves composed sequentially) at `delta`.

        `branch` maps a leaf key to its count, `leaves` a leaf key to its DpEvent; inf when no finite
        epsilon is proved. Never optimistic: the value may be loose, never below the true epsilon.
        """
        raise NotImplementedError

    def branch_delta(self, branch: Branch, leaves: dict, epsilon: float) -> float:
        """Smallest delta this backend proves for one branch (its leaves composed sequentially) at `epsilon`.

        `branch` maps a leaf key to its count, `leaves` a leaf key to its DpEvent; 1 when nothing better
        is proved. Never optimistic: the value may be loose, never below the true delta.
        """
        raise NotImplementedError

    def epsilon(self, flat: Flattened, delta: float) -> float:
        """epsilon at `delta` of the whole tree: the worst branch's `branch_epsilon` (parallel composition)."""
        return max(self.branch_epsilon(b, flat.leaves, delta) for b in flat.branches)

    def delta(self, flat: Flattened, epsilon: float) -> float:
        """delta at `epsilon` of the whole tree: the worst branch's `branch_delta` (parallel composition)."""
        return max(self.branch_delta(b, flat.leaves, epsilon) for b in flat.branches)
