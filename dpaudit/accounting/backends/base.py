"""The accountants' common base: per-branch answers, the worst branch wins, support and cost checks.

A backend answers for one branch (a multiset of leaves composed sequentially); the tree's
answer is the worst branch (parallel composition, see `dpaudit.accounting.tree`). Per-leaf
results are cached by leaf, so identical releases are computed once whatever their count.
"""

from __future__ import annotations

from typing import Hashable

import dp_accounting

from dpaudit.accounting.tree import Branch, Flattened

__all__ = ["Backend", "remember", "CACHE_LIMIT", "PLD_CACHE_LIMIT", "BRANCH_PLD_CACHE_LIMIT"]


# Per-leaf caches are emptied when they reach these sizes (calibration and long sessions create
# many distinct leaves; a PLD can take megabytes).
CACHE_LIMIT = 4096
PLD_CACHE_LIMIT = 64
BRANCH_PLD_CACHE_LIMIT = 16


def remember(cache: dict, key, value, limit: int = CACHE_LIMIT):
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


class Backend:
    """Base: per-branch answers, worst branch wins; subclasses define the leaf support."""

    name = ""

    def __init__(self) -> None:
        self._reasons: dict[Hashable, str | None] = {}

    def unsupported_reason(self, leaf: dp_accounting.DpEvent) -> str | None:
        """None if the leaf is supported, else a short reason."""
        raise NotImplementedError

    def reason(self, key: Hashable, leaf: dp_accounting.DpEvent) -> str | None:
        if key not in self._reasons:
            return remember(self._reasons, key, self.unsupported_reason(leaf))
        return self._reasons[key]

    def cost_reason(self, branch: Branch, leaves: dict) -> tuple[dp_accounting.DpEvent, str] | None:
        """None when answering for `branch` is cheap enough, else (the costliest leaf, why):
        an accountant refuses what would take too long rather than hold up the others."""
        return None

    def first_unsupported(self, flat: Flattened) -> tuple[dp_accounting.DpEvent, str] | None:
        for key, leaf in flat.leaves.items():
            r = self.reason(key, leaf)
            if r is not None:
                return leaf, r
        for branch in flat.branches:
            r = self.cost_reason(branch, flat.leaves)
            if r is not None:
                return r
        return None

    def branch_epsilon(self, branch: Branch, leaves: dict, delta: float) -> float:
        raise NotImplementedError

    def branch_delta(self, branch: Branch, leaves: dict, epsilon: float) -> float:
        raise NotImplementedError

    def epsilon(self, flat: Flattened, delta: float) -> float:
        return max(self.branch_epsilon(b, flat.leaves, delta) for b in flat.branches)

    def delta(self, flat: Flattened, epsilon: float) -> float:
        return max(self.branch_delta(b, flat.leaves, epsilon) for b in flat.branches)
