"""The `shuffle` accountant: amplification by shuffling (`dpaudit.accounting.shuffle`)."""

from __future__ import annotations

import math

from dpaudit.accounting import shuffle
from dpaudit.accounting.backends.approx import ApproxBackend
from dpaudit.accounting.events import ShuffledDpEvent
from dpaudit.accounting.leaves import nonprivate

__all__ = ["ShuffleBackend", "shuffled_epsilon"]


class ShuffleBackend(ApproxBackend):
    """Amplification by shuffling (FMT 2021): a shuffled (eps0, delta0)-LDP release over n users
    gets `shuffle.shuffled_epsilon` / `shuffle.shuffled_delta` (min of eps0, Thm 3.1 closed form,
    numerical bound; for delta0 > 0 with the Thm 3.8 term added to delta); several shuffled
    releases compose like `approx` (best of basic, DRV, KOV) over their per-release profiles."""

    name = "shuffle"

    def unsupported_reason(self, leaf):
        if isinstance(leaf, ShuffledDpEvent) or nonprivate(leaf):
            return None
        return "the shuffle accountant only accounts for ShuffledDpEvent releases"

    @staticmethod
    def _check_local_delta(branch, leaves, delta: float) -> None:
        """Raise when delta is below what the releases' local deltas add up to: no composition
        theorem (nor Thm 3.8) gives any guarantee there."""
        total = math.fsum(
            c * leaves[k].local_delta for k, c in branch.items() if isinstance(leaves[k], ShuffledDpEvent)
        )
        if total > 0.0 and delta < total:
            raise ValueError(
                f"delta={delta!r} must be at least the sum of the shuffled releases' local_delta ({total:.3g}): "
                "(eps0, delta0)-LDP randomizers give no guarantee below it"
            )

    def branch_epsilon(self, branch, leaves, delta):
        """One shuffled release: `shuffled_epsilon` directly; otherwise `ApproxBackend.branch_epsilon`.
        Raises ValueError when `delta` is below the sum of the releases' local deltas.
        """
        self._check_local_delta(branch, leaves, delta)
        if len(branch) == 1:
            ((k, c),) = branch.items()
            leaf = leaves[k]
            if c == 1 and isinstance(leaf, ShuffledDpEvent):
                return shuffled_epsilon(leaf.local_epsilon, leaf.num_users, delta, leaf.local_delta)
        return super().branch_epsilon(branch, leaves, delta)

    def branch_delta(self, branch, leaves, epsilon):
        """One shuffled release: `shuffle.shuffled_delta` directly; otherwise `ApproxBackend.branch_delta`."""
        if len(branch) == 1:
            ((k, c),) = branch.items()
            leaf = leaves[k]
            if c == 1 and isinstance(leaf, ShuffledDpEvent):
                return shuffle.shuffled_delta(leaf.local_epsilon, leaf.num_users, epsilon, leaf.local_delta)
        return super().branch_delta(branch, leaves, epsilon)


def shuffled_epsilon(local_epsilon: float, num_users: int, delta: float, local_delta: float = 0.0) -> float:
    """`shuffle.shuffled_epsilon`: min(eps0, FMT Thm 3.1, FMT numerical) at `delta`; FMT Thm 3.8
    for a local delta0 > 0."""
    return shuffle.shuffled_epsilon(local_epsilon, num_users, delta, local_delta)
