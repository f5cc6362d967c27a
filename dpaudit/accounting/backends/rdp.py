"""The `rdp` accountant: Renyi DP curves on a grid of orders, summed, converted to (epsilon, delta)."""

from __future__ import annotations

import math
from collections.abc import Hashable

import dp_accounting
import numpy as np
from dp_accounting import NeighboringRelation as NeighborRel
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

from dpaudit.accounting import randomized_response
from dpaudit.accounting.backends.base import Backend, Keyed, cached
from dpaudit.accounting.curves import half_square_up, laplace_rdp, poisson_gaussian_rdp, skellam_rdp
from dpaudit.accounting.errors import UnsupportedEventError
from dpaudit.accounting.events import (
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    KaryRandomizedResponseDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)
from dpaudit.accounting.guarantees import pure_rdp, rdp_delta, rdp_epsilon
from dpaudit.accounting.leaves import TINY, nonprivate, pure_epsilon, rr_parameters, trivially_private
from dpaudit.accounting.tree import Branch

__all__ = ["RDP_ORDERS", "RdpBackend", "check_orders"]


ULP = float(np.finfo(float).eps)


RDP_ORDERS = np.array(
    sorted(
        set(rdp_lib.DEFAULT_RDP_ORDERS)
        | {float(x) for x in (72, 80, 96, 112, 160, 192, 224, 320, 384, 448, 640, 768, 896)}
        | {float(2**j) for j in range(11, 21)}
        | {float(3 * 2**j) for j in range(10, 20)}
    ),
    dtype=float,
)


_RDP_RELATIONS = (NeighborRel.REPLACE_ONE, NeighborRel.ADD_OR_REMOVE_ONE, NeighborRel.REPLACE_SPECIAL)


def check_orders(orders) -> np.ndarray:
    """RDP orders as a float array: at least one, each a finite real above 1 (TypeError naming `orders` for a
    non-sequence or a non-number, ValueError for an order <= 1 or an empty sequence, which would make every
    answer inf)."""
    if isinstance(orders, (str, bytes)) or not np.iterable(orders):
        raise TypeError(f"orders must be a sequence of RDP orders above 1, got {orders!r}")
    values = [_order(o) for o in orders]
    if not values:
        raise ValueError("orders must hold at least one RDP order above 1, got an empty sequence")
    return np.array(values, dtype=float)


def _order(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"orders must hold real numbers above 1, got {value!r}")
    if not (1.0 < float(value) < math.inf):
        raise ValueError(f"orders must hold finite real numbers above 1, got {value!r}")
    return float(value)


class RdpBackend(Backend):
    """Renyi DP: per-leaf RDP curves on a fixed grid of orders, summed, converted by the optimal
    RDP -> (eps, delta) conversion (dp-accounting's). Parallel branches: worst branch.

    Curves: dp-accounting's `RdpAccountant` for its events (replace-one relation where it
    supports it, else the relation its analysis is stated for); Skellam (`skellam_rdp`);
    discrete Gaussian alpha * D^2/(2 sigma^2) (Canonne, Kamath, Steinke 2020, Thm 4: zCDP);
    Laplace (`curves.laplace_rdp`: dp-accounting's form cancels to 0 for a tiny epsilon);
    k-ary randomized response from eps0 and k in log space (`randomized_response.rdp`, for
    dp-accounting's `RandomizedResponseDpEvent` too, whose own curve reads the rounded p);
    pure leaves without an exact curve (discrete Laplace, EpsilonDelta with delta = 0): the
    binary-RR curve (`guarantees.pure_rdp`)."""

    name = "rdp"

    def __init__(self, orders: np.ndarray | None = None) -> None:
        super().__init__()
        self.orders = RDP_ORDERS if orders is None else check_orders(orders)
        self._leaf_curve = cached(self._checked_curve)

    def relation(self, leaf) -> NeighborRel | None:
        """The first neighbouring relation (replace-one preferred) under which dp-accounting's
        RdpAccountant supports `leaf`; a support check only, nothing is computed."""
        for rel in _RDP_RELATIONS:
            if rdp_lib.RdpAccountant(self.orders, neighboring_relation=rel).supports(leaf):
                return rel
        return None

    def _dp_accounting_curve(self, leaf) -> np.ndarray | None:
        rel = self.relation(leaf)
        if rel is None:
            return None
        if (
            rel is NeighborRel.ADD_OR_REMOVE_ONE
            and isinstance(leaf, dp_accounting.PoissonSampledDpEvent)
            and isinstance(leaf.event, dp_accounting.GaussianDpEvent)
        ):
            return poisson_gaussian_rdp(leaf.sampling_probability, leaf.event.noise_multiplier, self.orders)
        return rdp_lib.RdpAccountant(self.orders, neighboring_relation=rel).compose(leaf).rdp

    @staticmethod
    def _own_curve(leaf) -> bool:
        """Leaves whose curve dpaudit computes itself (see `_curve`)."""
        if isinstance(leaf, (ShuffledDpEvent, EpsilonDeltaDpEvent)) and pure_epsilon(leaf) is None:
            return False
        return nonprivate(leaf) or isinstance(
            leaf,
            (
                dp_accounting.GaussianDpEvent,
                dp_accounting.LaplaceDpEvent,
                SkellamDpEvent,
                DiscreteGaussianDpEvent,
                dp_event.DiscreteLaplaceDpEvent,
                EpsilonDeltaDpEvent,
                KaryRandomizedResponseDpEvent,
                dp_accounting.RandomizedResponseDpEvent,
            ),
        )

    def _curve(self, leaf) -> np.ndarray | None:
        if nonprivate(leaf):
            return np.full_like(self.orders, np.inf)
        if isinstance(leaf, SkellamDpEvent):
            return skellam_rdp(self.orders, leaf.variance, leaf.l1_sensitivity, leaf.l2_sensitivity)
        if isinstance(leaf, (dp_accounting.GaussianDpEvent, DiscreteGaussianDpEvent)):
            # alpha r^2 / 2 with r = sensitivity / sigma (Mironov 2017, Prop. 7; CKS 2020, Thm 4);
            # products, not **, so sigma ~ 1e-300 gives inf rather than OverflowError; rounded up
            r = (
                1.0 / leaf.noise_multiplier
                if isinstance(leaf, dp_accounting.GaussianDpEvent)
                else leaf.sensitivity / leaf.sigma
            )
            return self.orders * half_square_up(r) * (1 + 2 * ULP)
        if isinstance(leaf, dp_accounting.LaplaceDpEvent):
            return laplace_rdp(1.0 / leaf.noise_multiplier, self.orders)
        if isinstance(leaf, (ShuffledDpEvent, EpsilonDeltaDpEvent)) and pure_epsilon(leaf) is None:
            return None
        if isinstance(leaf, (KaryRandomizedResponseDpEvent, dp_accounting.RandomizedResponseDpEvent)):
            rr = rr_parameters(leaf)  # None: one bucket, or p = 1 with k = 1 (the output ignores the input)
            return np.zeros_like(self.orders) if rr is None else randomized_response.rdp(*rr, self.orders)
        if isinstance(leaf, (dp_event.DiscreteLaplaceDpEvent, EpsilonDeltaDpEvent)):
            eps = pure_epsilon(leaf)
            return None if eps is None else pure_rdp(eps, self.orders)
        return self._dp_accounting_curve(leaf)

    def unsupported_reason(self, leaf):
        # decided without computing the curve: it is computed once, at the first query (`leaf_curve`)
        if isinstance(leaf, EpsilonDeltaDpEvent) and leaf.delta > 0:
            return "an (epsilon, delta > 0) black box has no RDP curve"
        if isinstance(leaf, ShuffledDpEvent):
            return "no RDP bound for amplification by shuffling is implemented"
        if self._own_curve(leaf) or self.relation(leaf) is not None:
            return None
        return "dp-accounting's RDP accountant does not support it"

    def _checked_curve(self, keyed: Keyed) -> np.ndarray:
        leaf = keyed.value
        curve = self._curve(leaf)
        if curve is None:  # `unsupported_reason` refuses such a leaf before any curve is asked for
            raise UnsupportedEventError("rdp", leaf, "no RDP curve is known for it", ())
        if not trivially_private(leaf):
            # a positive divergence that underflowed (sigma ~ 1e300) must not read as 0:
            # at delta = 0 an all-zero curve would claim epsilon = 0
            curve = np.maximum(curve, TINY)
        return curve

    def leaf_curve(self, key: Hashable, leaf) -> np.ndarray:
        """The leaf's RDP curve on `orders`, cached by the leaf's key."""
        return self._leaf_curve(Keyed(key, leaf))

    def branch_curve(self, branch: Branch, leaves: dict) -> np.ndarray:
        """The branch's RDP curve on `orders`: sum of count * leaf curve (Mironov, "Renyi Differential
        Privacy", CSF 2017, Prop. 1).
        """
        total = np.zeros_like(self.orders)
        for k, c in branch.items():
            total = total + c * self.leaf_curve(k, leaves[k])
        return total

    def branch_epsilon(self, branch, leaves, delta):
        """`guarantees.rdp_epsilon` of the branch's curve at `delta`."""
        return rdp_epsilon(self.orders, self.branch_curve(branch, leaves), delta)

    def branch_delta(self, branch, leaves, epsilon):
        """`guarantees.rdp_delta` of the branch's curve at `epsilon`."""
        return rdp_delta(self.orders, self.branch_curve(branch, leaves), epsilon)
