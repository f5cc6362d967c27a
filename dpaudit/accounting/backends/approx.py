"""The `approx` accountant: (epsilon, delta) composition theorems over per-release (eps0, delta0)
guarantees or privacy profiles (`dpaudit.accounting.composition`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import dp_accounting
import numpy as np

from dpaudit.accounting import binomial, composition, shuffle
from dpaudit.accounting.backends.base import Backend
from dpaudit.accounting.curves import gaussian_delta, gaussian_epsilon
from dpaudit.accounting.events import BinomialDpEvent, EpsilonDeltaDpEvent, ShuffledDpEvent
from dpaudit.accounting.leaves import pure_epsilon
from dpaudit.accounting.tree import Branch

__all__ = ["ApproxBackend"]


def _profile(leaf: dp_accounting.DpEvent) -> Callable[[float], float] | None:
    """epsilon0(delta0) of a leaf whose (eps, delta) trade-off is not a single point."""
    if isinstance(leaf, dp_accounting.GaussianDpEvent):
        mu = 1.0 / leaf.noise_multiplier
        return lambda d: gaussian_epsilon(mu, d)
    if isinstance(leaf, ShuffledDpEvent):
        e0, n, d0 = leaf.local_epsilon, leaf.num_users, leaf.local_delta
        # below the local delta there is no guarantee: inf, so that fraction of delta is never chosen
        return lambda d: math.inf if d < d0 else shuffle.shuffled_epsilon(e0, n, d, d0)
    if isinstance(leaf, BinomialDpEvent):
        args = (leaf.trials, leaf.probability, leaf.sensitivity)
        return lambda d: binomial.binomial_epsilon(*args, d)
    return None


def _delta_profile(leaf: dp_accounting.DpEvent) -> Callable[[float], float]:
    """delta0(eps0) of a profile leaf (the inverse view of `_profile`)."""
    if isinstance(leaf, dp_accounting.GaussianDpEvent):
        mu = 1.0 / leaf.noise_multiplier
        return lambda e: gaussian_delta(mu, e)
    if isinstance(leaf, BinomialDpEvent):
        args = (leaf.trials, leaf.probability, leaf.sensitivity)
        return lambda e: binomial.binomial_delta(*args, e)
    e0, n, d0 = leaf.local_epsilon, leaf.num_users, leaf.local_delta
    return lambda e: shuffle.shuffled_delta(e0, n, e, d0)


_PROFILE_FRACTIONS = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)


class ApproxBackend(Backend):
    """Best of basic composition, DRV advanced composition, KOV's heterogeneous bound (Thm 3.5),
    and KOV's optimal homogeneous composition (Thm 3.3; per group with an equal delta split when a
    branch holds several distinct leaves). Leaves with a privacy profile (Gaussian: exact analytic
    profile; shuffled: FMT numerical; binomial count: exact, `dpaudit.accounting.binomial`) get a
    per-leaf delta0 chosen from a grid of fractions of delta (every choice is valid; the best is kept)."""

    name = "approx"

    def unsupported_reason(self, leaf):
        if isinstance(leaf, BinomialDpEvent) and leaf.trials > binomial.MAX_TRIALS:
            return f"its binomial tails are exact to {binomial.MAX_TRIALS:.3g} trials, here {leaf.trials:.3g}"
        if pure_epsilon(leaf) is not None or isinstance(leaf, EpsilonDeltaDpEvent) or _profile(leaf) is not None:
            return None
        return "no (epsilon, delta) guarantee per release is known to this accountant"

    @staticmethod
    def _fixed(branch: Branch, leaves: dict):
        """Split a branch into fixed (eps, delta, count) groups and profile groups."""
        fixed, prof = [], []
        for k, c in branch.items():
            leaf = leaves[k]
            pe = pure_epsilon(leaf)
            if pe is not None:
                fixed.append((pe, 0.0, c))
            elif isinstance(leaf, EpsilonDeltaDpEvent):
                fixed.append((leaf.epsilon, leaf.delta, c))
            else:
                prof.append((_profile(leaf), c))
        return fixed, prof

    @staticmethod
    def _eps_fixed(groups, delta: float) -> float:
        if not groups:
            return 0.0
        e = np.array([g[0] for g in groups])
        d = np.array([g[1] for g in groups])
        c = np.array([g[2] for g in groups], dtype=float)
        if np.any(np.isinf(e)):
            return math.inf
        cands = []
        be, bd = composition.basic(e, d, c)
        if bd <= delta:
            cands.append(be)
        cands.append(composition.kov_heterogeneous_epsilon(e, d, c, delta))
        if len(groups) == 1:
            e0, d0, k = groups[0]
            cands.append(composition.drv_epsilon(e0, d0, int(k), delta))
            cands.append(composition.OptimalHomogeneous(e0, d0, int(k)).epsilon(delta))
        else:
            share = delta / len(groups)
            cands.append(
                math.fsum(
                    min(
                        composition.OptimalHomogeneous(e0, d0, int(k)).epsilon(share),
                        composition.kov_heterogeneous_epsilon([e0], [d0], [k], share),
                    )
                    for e0, d0, k in groups
                )
            )
        return min(cands)

    def branch_epsilon(self, branch, leaves, delta):
        """Best of the composition theorems; profile leaves get a share of `delta` from a grid of
        fractions (inf at delta = 0 when the branch holds a profile leaf).
        """
        fixed, prof = self._fixed(branch, leaves)
        if not prof:
            return self._eps_fixed(fixed, delta)
        if delta == 0.0:
            return math.inf
        n_prof = sum(c for _, c in prof)
        best = math.inf
        # a single release with a profile and nothing else: all of delta goes to it
        fractions = _PROFILE_FRACTIONS + ((1.0,) if n_prof == 1 and not fixed else ())
        for f in fractions:
            d0 = f * delta / n_prof
            groups = fixed + [(fn(d0), d0, c) for fn, c in prof]
            best = min(best, self._eps_fixed(groups, delta))
        return best

    def branch_delta(self, branch, leaves, epsilon):
        """Best of the composition theorems; profile leaves get one eps0 from a geometric grid on
        [epsilon / (10 k), epsilon] (k the number of profile releases) and their delta0 at it.
        """
        fixed, prof = self._fixed(branch, leaves)
        if not prof:
            return self._delta_fixed(fixed, epsilon)
        # every profile leaf gets the same eps0 from a geometric grid, delta0 = its profile at eps0
        k_prof = sum(c for _, c in prof)
        dprof = [(_delta_profile(leaves[k]), c) for k, c in branch.items() if _profile(leaves[k]) is not None]
        best = 1.0
        for eps0 in np.geomspace(epsilon / (10 * k_prof), epsilon, 40):
            groups = fixed + [(float(eps0), fn(float(eps0)), c) for fn, c in dprof]
            best = min(best, self._delta_fixed(groups, epsilon))
        return best

    @staticmethod
    def _delta_fixed(groups, epsilon: float) -> float:
        if not groups:
            return 0.0
        e = np.array([g[0] for g in groups])
        d = np.array([g[1] for g in groups])
        c = np.array([g[2] for g in groups], dtype=float)
        if np.any(np.isinf(e)):
            return 1.0
        cands = []
        be, bd = composition.basic(e, d, c)
        if be <= epsilon:
            cands.append(bd)
        cands.append(composition.kov_heterogeneous_delta(e, d, c, epsilon))
        if len(groups) == 1:
            e0, d0, k = groups[0]
            cands.append(composition.drv_delta(e0, d0, int(k), epsilon))
            cands.append(composition.OptimalHomogeneous(e0, d0, int(k)).delta(epsilon))
        return min(1.0, min(cands))
