"""The `zcdp` accountant: rho and xi add under composition, converted to (epsilon, delta)."""

from __future__ import annotations

import math

from dpaudit.accounting.backends.base import Backend
from dpaudit.accounting.curves import zcdp_of_leaf
from dpaudit.accounting.errors import UnsupportedEventError
from dpaudit.accounting.guarantees import zcdp_delta, zcdp_epsilon

__all__ = ["ZcdpBackend"]


class ZcdpBackend(Backend):
    """zCDP: rho and xi add under composition (Bun, Steinke 2016, Lemma 2.3); conversion to
    (eps, delta) of Canonne, Kamath, Steinke 2020 (Prop. 12 / Cor. 13, inf over real alpha)."""

    name = "zcdp"

    def unsupported_reason(self, leaf):
        if zcdp_of_leaf(leaf) is None:
            return "no zCDP bound is known for it"
        return None

    def branch_zcdp(self, branch, leaves) -> tuple[float, float]:
        """(rho, xi) of the branch: count-weighted sums of the leaves' (Bun, Steinke, "Concentrated
        Differential Privacy", TCC 2016, Lemma 2.3).
        """
        rho = xi = 0.0
        for k, c in branch.items():
            bound = zcdp_of_leaf(leaves[k])
            if bound is None:  # `unsupported_reason` refuses such a leaf before any branch is accounted
                raise UnsupportedEventError("zcdp", leaves[k], "no zCDP bound is known for it", ())
            r, x = bound
            rho += c * r
            xi += c * x
        return rho, xi

    def branch_epsilon(self, branch, leaves, delta):
        """`guarantees.zcdp_epsilon` of the branch's (rho, xi) at `delta` (inf for an infinite rho)."""
        rho, xi = self.branch_zcdp(branch, leaves)
        return math.inf if math.isinf(rho) else zcdp_epsilon(rho, delta, xi)

    def branch_delta(self, branch, leaves, epsilon):
        """`guarantees.zcdp_delta` of the branch's (rho, xi) at `epsilon` (1 for an infinite rho)."""
        rho, xi = self.branch_zcdp(branch, leaves)
        return 1.0 if math.isinf(rho) else zcdp_delta(rho, epsilon, xi)
