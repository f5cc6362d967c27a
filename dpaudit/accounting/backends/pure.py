"""The `pure` accountant: basic composition of pure-DP releases."""

from __future__ import annotations

import math

from dpaudit.accounting.backends.base import Backend
from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.accounting.guarantees import pure_delta
from dpaudit.accounting.leaves import pure_epsilon
from dpaudit.accounting.tree import Branch

__all__ = ["PureBackend"]


class PureBackend(Backend):
    """Basic composition of pure-DP leaves: epsilon = sum of count * eps_leaf (parallel: max).
    delta(eps) uses the randomized-response dominance (`guarantees.pure_delta`)."""

    name = "pure"

    def unsupported_reason(self, leaf):
        if pure_epsilon(leaf) is None:
            if isinstance(leaf, EpsilonDeltaDpEvent):
                return "it is not pure DP (delta > 0)"
            return "it is not pure DP"
        return None

    def total(self, branch: Branch, leaves: dict) -> float:
        """Basic composition of the branch: sum of count * eps_leaf (Dwork, Roth, "The Algorithmic
        Foundations of Differential Privacy", FnT TCS 2014, Thm 3.16), 0 for an empty branch.
        """
        return math.fsum(c * pure_epsilon(leaves[k]) for k, c in branch.items()) if branch else 0.0

    def branch_epsilon(self, branch, leaves, delta):
        """The branch's `total`, whatever `delta`."""
        return self.total(branch, leaves)

    def branch_delta(self, branch, leaves, epsilon):
        """`guarantees.pure_delta` of the branch's `total` at `epsilon`."""
        return pure_delta(self.total(branch, leaves), epsilon)
