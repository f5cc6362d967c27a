"""The accountants: each turns flattened branches of leaves into epsilon(delta) and delta(epsilon).

A backend answers for one branch (a multiset of leaves composed sequentially); the tree's
answer is the worst branch (parallel composition, see `dpaudit.accounting.tree`). Per-leaf
results are cached by leaf, so identical releases are computed once whatever their count.
"""

from __future__ import annotations

import math
from typing import Callable, Hashable

import dp_accounting
import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy import stats
from scipy.special import gammaln, ive, log_ndtr

from dpaudit.accounting import binomial, composition, shuffle
from dpaudit.accounting.events import (
    BinomialDpEvent,
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)
from dpaudit.accounting.guarantees import pure_delta, pure_rdp, pure_to_zcdp, rdp_delta, rdp_epsilon, zcdp_delta, zcdp_epsilon
from dpaudit.accounting.leaves import pure_epsilon
from dpaudit.accounting.search import first_accepted_doubling, smallest_accepted
from dpaudit.accounting.tree import Branch, Flattened
from dpaudit.validation import check_positive

__all__ = ["Backend", "PureBackend", "ApproxBackend", "RdpBackend", "ZcdpBackend", "PldBackend", "ShuffleBackend", "RDP_ORDERS"]

NeighborRel = dp_accounting.NeighboringRelation

# Per-leaf caches are emptied when they reach these sizes (calibration and long sessions create
# many distinct leaves; a PLD can take megabytes).
_CACHE_LIMIT = 4096
_PLD_CACHE_LIMIT = 64
_BRANCH_PLD_CACHE_LIMIT = 16


def _remember(cache: dict, key, value, limit: int = _CACHE_LIMIT):
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
            return _remember(self._reasons, key, self.unsupported_reason(leaf))
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


def _nonprivate(leaf: dp_accounting.DpEvent) -> bool:
    return isinstance(leaf, dp_accounting.NonPrivateDpEvent)


_TINY = math.ulp(0.0)  # the smallest positive double: what a positive quantity that underflowed is raised to


def _trivially_private(leaf: dp_accounting.DpEvent) -> bool:
    """The release does not depend on the data (every divergence is exactly 0)."""
    if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
        return leaf.sampling_probability == 0.0 or _trivially_private(leaf.event)
    if isinstance(leaf, dp_accounting.ZCDpEvent):
        return leaf.rho == 0.0 and leaf.xi == 0.0
    return pure_epsilon(leaf) == 0.0


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
        return math.fsum(c * pure_epsilon(leaves[k]) for k, c in branch.items()) if branch else 0.0

    def branch_epsilon(self, branch, leaves, delta):
        return self.total(branch, leaves)

    def branch_delta(self, branch, leaves, epsilon):
        return pure_delta(self.total(branch, leaves), epsilon)


# ---------------------------------------------------------------------------------------------
# approx: (eps, delta) composition theorems over per-leaf (eps0, delta0) or privacy profiles


_ULP = float(np.finfo(float).eps)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def log_gaussian_delta(mu: float, epsilon: float) -> float:
    """log of the exact delta of the Gaussian mechanism with mu = sensitivity/sigma, rounded up:
    delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle, Wang, "Improving the Gaussian
    Mechanism for Differential Privacy", ICML 2018, Thm 8).

    Both terms are taken in log space (log_ndtr), so delta below 1e-308 keeps its value. The
    computed gap between the two log terms is widened by a bound on its round-off; where that
    round-off swamps the gap (mu below ~1e-8, the two terms agree to every digit) the bound
    delta <= Phi(x + mu/2) - Phi(x - mu/2) <= mu phi(dist(0, [x - mu/2, x + mu/2])), x = -eps/mu
    (e^eps >= 1; the integral of phi over an interval of length mu) is used instead: both are
    upper bounds, the smaller is returned. 0 (log = -inf) only when even that bound underflows
    its exponent range or mu = 0.
    """
    if mu == 0.0:
        return -math.inf
    if math.isinf(mu):
        return 0.0
    x = -epsilon / mu
    a = float(log_ndtr(x + mu / 2))
    b = epsilon + float(log_ndtr(x - mu / 2))
    if a == -math.inf:
        return -math.inf
    err = 8 * _ULP * (abs(a) + abs(b) + 1.0)
    gap = a - b + err
    formula = a + err + math.log(-math.expm1(-gap)) if gap < math.inf else a + err
    dist = max(0.0, -x - mu / 2)  # the interval [x - mu/2, x + mu/2] lies left of 0 when eps >= mu^2/2
    interval = math.log(mu) - 0.5 * dist * dist - _LOG_SQRT_2PI
    return min(0.0, formula, interval)


def gaussian_delta(mu: float, epsilon: float) -> float:
    """Exact delta of the Gaussian mechanism (`log_gaussian_delta`, rounded up): a positive delta
    below the smallest double is reported as the smallest positive double, never as 0."""
    ld = log_gaussian_delta(mu, epsilon)
    return 0.0 if ld == -math.inf else max(math.exp(ld), math.ulp(0.0))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon (bisection, rounded up) with `log_gaussian_delta(mu, eps) <= log delta`;
    inf at delta = 0 (the Gaussian mechanism is not pure DP) or for sigma below ~1e-6 of the
    sensitivity (beyond epsilon = 1e12: no meaningful guarantee)."""
    if delta <= 0.0 or math.isinf(mu):
        return math.inf
    target = math.log(delta)

    def accept(e: float) -> bool:
        return log_gaussian_delta(mu, e) <= target

    if accept(0.0):
        return 0.0
    hi = first_accepted_doubling(accept, 1.0, 1e12)
    if math.isinf(hi):
        return hi
    lo = 0.0 if hi == 1.0 else hi / 2
    return smallest_accepted(accept, lo, hi, rtol=1e-12, atol=1e-300)


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


# ---------------------------------------------------------------------------------------------
# rdp

RDP_ORDERS = np.array(
    sorted(
        set(rdp_lib.DEFAULT_RDP_ORDERS)
        | {float(x) for x in (72, 80, 96, 112, 160, 192, 224, 320, 384, 448, 640, 768, 896)}
        | {float(2**j) for j in range(11, 21)}
        | {float(3 * 2**j) for j in range(10, 20)}
    ),
    dtype=float,
)


def skellam_rdp(orders: np.ndarray, variance: float, l1: float, l2: float) -> np.ndarray:
    """RDP of the Skellam mechanism at `orders`.

    eps(a) = a l2^2/(2 var) + min(((2a-1) l2^2 + 6 l1)/(4 var^2), 3 l1/(2 var)) for integer a > 1
    (Agarwal, Kairouz, Liu, NeurIPS 2021, Thm 3.5, with var = 2 mu the Skellam variance). At a
    real order the bound of ceil(a) is used: Renyi divergence is non-decreasing in the order.
    """
    a = np.ceil(np.asarray(orders, dtype=float))
    with np.errstate(over="ignore", divide="ignore"):  # variance ~ 1e-300: the bound is inf, as it should be
        second = ((2 * a - 1) * l2 * l2 + 6 * l1) / (4 * variance) / variance
        return a * (l2 / (2 * variance)) * l2 + np.minimum(second, 3 * l1 / (2 * variance))


_RDP_RELATIONS = (NeighborRel.REPLACE_ONE, NeighborRel.ADD_OR_REMOVE_ONE, NeighborRel.REPLACE_SPECIAL)


def poisson_gaussian_rdp(q: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism (add/remove-one) at `orders`.

    At an integer order a >= 2: log A_a = log sum_{i=0}^{a} C(a, i) q^i (1-q)^(a-i) exp((i^2 - i)/(2 sigma^2))
    and eps(a) = log A_a / (a - 1) (Mironov, Talwar, Zhang 2019, Sec. 3.3). These are the terms of
    dp-accounting's `_compute_log_a_int`, evaluated as arrays (one log-gamma table serves every
    order) instead of a Python loop of a + 1 steps per order (5.2 million steps on RDP_ORDERS),
    and summed max-shifted (pairwise, error ~ log2(a) ulp). The result is raised by
    4 (a + 1) ulp * (|log A_a| + a |log(1-q)| + 2), a bound on the rounding error of dp-accounting's
    sequential log-sum, so it is never below dp-accounting's value (it exceeds it by < 1e-10 * max(1, eps(a))).
    Other orders (fractional, a <= 1, inf) and the degenerate q in {0, 1}, sigma = 0 go to
    dp-accounting unchanged.
    """
    orders = np.asarray(orders, dtype=float)
    q, sigma = float(q), float(noise_multiplier)
    out = np.empty_like(orders)
    if q > 0.0 and sigma > 0.0 and math.isinf(0.5 / sigma / sigma):
        # sigma below ~1e-154: the unsampled term alone makes every order infinite (and
        # dp-accounting's sigma**2 raises OverflowError)
        return np.full_like(orders, np.inf)
    integer = np.isfinite(orders) & (orders >= 2) & (np.floor(orders) == orders)
    if not (0.0 < q < 1.0 and sigma > 0.0):
        integer[:] = False
    if (~integer).any():
        acct = rdp_lib.RdpAccountant(orders[~integer], neighboring_relation=NeighborRel.ADD_OR_REMOVE_ONE)
        out[~integer] = acct.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))).rdp
    if integer.any():
        top = int(orders[integer].max())
        log_gamma = gammaln(np.arange(top + 1) + 1.0)  # log k! for k = 0..top
        log_q, log_1mq = math.log(q), math.log1p(-q)
        half_inv_var = 0.5 / sigma / sigma  # inf below sigma ~ 1e-154 (2 sigma^2 would underflow to 0)
        eps = np.finfo(float).eps
        for j in np.flatnonzero(integer):
            a = int(orders[j])
            if math.isinf(half_inv_var):  # the i = 2 term alone is infinite
                out[j] = math.inf
                continue
            i = np.arange(a + 1)
            terms = (log_gamma[a] - log_gamma[: a + 1] - log_gamma[a::-1]) + i * log_q + (a - i) * log_1mq
            terms = terms + (i * i - i) * half_inv_var
            peak = float(terms.max())
            log_a = peak + math.log(float(np.sum(np.exp(terms - peak))))
            log_a += 4 * (a + 1) * eps * (abs(log_a) + a * abs(log_1mq) + 2)
            out[j] = log_a / (a - 1)
    return out


def check_orders(orders) -> np.ndarray:
    """RDP orders as a float array: at least one, each a finite real above 1 (ValueError naming
    `orders` otherwise; no orders would make every answer inf)."""
    if isinstance(orders, (str, bytes)) or not np.iterable(orders):
        raise ValueError(f"orders must be a sequence of RDP orders above 1, got {orders!r}")
    values = [_order(o) for o in orders]
    if not values:
        raise ValueError("orders must hold at least one RDP order above 1, got an empty sequence")
    return np.array(values, dtype=float)


def _order(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"orders must hold real numbers above 1, got {value!r}")
    if not (1.0 < float(value) < math.inf):
        raise ValueError(f"orders must hold finite real numbers above 1, got {value!r}")
    return float(value)


class RdpBackend(Backend):
    """Renyi DP: per-leaf RDP curves on a fixed grid of orders, summed, converted by the optimal
    RDP -> (eps, delta) conversion (dp-accounting's). Parallel branches: worst branch.

    Curves: dp-accounting's `RdpAccountant` for its events (replace-one relation where it
    supports it, else the relation its analysis is stated for); Skellam (`skellam_rdp`);
    discrete Gaussian alpha * D^2/(2 sigma^2) (Canonne, Kamath, Steinke 2020, Thm 4: zCDP);
    pure leaves without an exact curve (discrete Laplace, EpsilonDelta with delta = 0): the
    binary-RR curve (`guarantees.pure_rdp`)."""

    name = "rdp"

    def __init__(self, orders: np.ndarray | None = None) -> None:
        super().__init__()
        self.orders = RDP_ORDERS if orders is None else check_orders(orders)
        self._curves: dict[Hashable, np.ndarray] = {}

    def _relation(self, leaf) -> NeighborRel | None:
        """The first neighbouring relation (replace-one preferred) under which dp-accounting's
        RdpAccountant supports `leaf`; a support check only, nothing is computed."""
        for rel in _RDP_RELATIONS:
            if rdp_lib.RdpAccountant(self.orders, neighboring_relation=rel).supports(leaf):
                return rel
        return None

    def _dp_accounting_curve(self, leaf) -> np.ndarray | None:
        rel = self._relation(leaf)
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
        return _nonprivate(leaf) or isinstance(
            leaf, (dp_accounting.GaussianDpEvent, SkellamDpEvent, DiscreteGaussianDpEvent,
                   dp_event.DiscreteLaplaceDpEvent, EpsilonDeltaDpEvent)
        )

    def _curve(self, leaf) -> np.ndarray | None:
        if _nonprivate(leaf):
            return np.full_like(self.orders, np.inf)
        if isinstance(leaf, SkellamDpEvent):
            return skellam_rdp(self.orders, leaf.variance, leaf.l1_sensitivity, leaf.l2_sensitivity)
        if isinstance(leaf, (dp_accounting.GaussianDpEvent, DiscreteGaussianDpEvent)):
            # alpha r^2 / 2 with r = sensitivity / sigma (Mironov 2017, Prop. 7; CKS 2020, Thm 4);
            # products, not **, so sigma ~ 1e-300 gives inf rather than OverflowError
            r = 1.0 / leaf.noise_multiplier if isinstance(leaf, dp_accounting.GaussianDpEvent) else leaf.sensitivity / leaf.sigma
            return self.orders * (0.5 * r * r)
        if isinstance(leaf, (ShuffledDpEvent, EpsilonDeltaDpEvent)) and pure_epsilon(leaf) is None:
            return None
        if isinstance(leaf, (dp_event.DiscreteLaplaceDpEvent, EpsilonDeltaDpEvent)):
            return pure_rdp(pure_epsilon(leaf), self.orders)
        return self._dp_accounting_curve(leaf)

    def unsupported_reason(self, leaf):
        # decided without computing the curve: it is computed once, at the first query (`leaf_curve`)
        if isinstance(leaf, EpsilonDeltaDpEvent) and leaf.delta > 0:
            return "an (epsilon, delta > 0) black box has no RDP curve"
        if isinstance(leaf, ShuffledDpEvent):
            return "no RDP bound for amplification by shuffling is implemented"
        if self._own_curve(leaf) or self._relation(leaf) is not None:
            return None
        return "dp-accounting's RDP accountant does not support it"

    def leaf_curve(self, key, leaf) -> np.ndarray:
        if key not in self._curves:
            curve = self._curve(leaf)
            if not _trivially_private(leaf):
                # a positive divergence that underflowed (sigma ~ 1e300) must not read as 0:
                # at delta = 0 an all-zero curve would claim epsilon = 0
                curve = np.maximum(curve, _TINY)
            return _remember(self._curves, key, curve)
        return self._curves[key]

    def branch_curve(self, branch: Branch, leaves: dict) -> np.ndarray:
        total = np.zeros_like(self.orders)
        for k, c in branch.items():
            total = total + c * self.leaf_curve(k, leaves[k])
        return total

    def branch_epsilon(self, branch, leaves, delta):
        return rdp_epsilon(self.orders, self.branch_curve(branch, leaves), delta)

    def branch_delta(self, branch, leaves, epsilon):
        return rdp_delta(self.orders, self.branch_curve(branch, leaves), epsilon)


# ---------------------------------------------------------------------------------------------
# zcdp


def zcdp_of_leaf(leaf) -> tuple[float, float] | None:
    """(rho, xi) of a leaf (`_zcdp_of_leaf`), a rho that underflowed raised to the smallest double."""
    pair = _zcdp_of_leaf(leaf)
    if pair is None or pair[0] > 0.0 or _trivially_private(leaf):
        return pair
    return _TINY, pair[1]


def _zcdp_of_leaf(leaf) -> tuple[float, float] | None:
    """(rho, xi) of a leaf, or None.

    Gaussian: rho = 1/(2 nm^2) (Bun, Steinke 2016, Prop. 1.6); discrete Gaussian D^2/(2 sigma^2)
    (CKS 2020, Thm 4); pure eps: eps^2/2 (Bun, Steinke 2016, Prop. 3.3); ZCDpEvent: its (rho, xi);
    Skellam: rho = l2^2/(2 var), xi = 3 l1/(2 var) + rho (the second branch of AKL 2021 Thm 3.5 at
    ceil(a) <= a + 1, so valid at every real order)."""
    if _nonprivate(leaf):
        return math.inf, 0.0
    if isinstance(leaf, dp_accounting.GaussianDpEvent):
        mu = 1.0 / leaf.noise_multiplier  # inf for a noise multiplier below 1/1.8e308: rho = inf
        return 0.5 * mu * mu, 0.0
    if isinstance(leaf, DiscreteGaussianDpEvent):
        r = leaf.sensitivity / leaf.sigma
        return 0.5 * r * r, 0.0
    if isinstance(leaf, dp_accounting.ZCDpEvent):
        return float(leaf.rho), float(leaf.xi)
    if isinstance(leaf, SkellamDpEvent):
        rho = leaf.l2_sensitivity / (2 * leaf.variance) * leaf.l2_sensitivity
        return rho, 3 * leaf.l1_sensitivity / (2 * leaf.variance) + rho
    pe = pure_epsilon(leaf)
    if pe is not None:
        return pure_to_zcdp(pe), 0.0
    return None


class ZcdpBackend(Backend):
    """zCDP: rho and xi add under composition (Bun, Steinke 2016, Lemma 2.3); conversion to
    (eps, delta) of Canonne, Kamath, Steinke 2020 (Prop. 12 / Cor. 13, inf over real alpha)."""

    name = "zcdp"

    def unsupported_reason(self, leaf):
        if zcdp_of_leaf(leaf) is None:
            return "no zCDP bound is known for it"
        return None

    def branch_zcdp(self, branch, leaves) -> tuple[float, float]:
        rho = xi = 0.0
        for k, c in branch.items():
            r, x = zcdp_of_leaf(leaves[k])
            rho += c * r
            xi += c * x
        return rho, xi

    def branch_epsilon(self, branch, leaves, delta):
        rho, xi = self.branch_zcdp(branch, leaves)
        return math.inf if math.isinf(rho) else zcdp_epsilon(rho, delta, xi)

    def branch_delta(self, branch, leaves, epsilon):
        rho, xi = self.branch_zcdp(branch, leaves)
        return 1.0 if math.isinf(rho) else zcdp_delta(rho, epsilon, xi)


# ---------------------------------------------------------------------------------------------
# pld


def skellam_pld(variance: float, sensitivity: int, vdi: float):
    """Pessimistic PLD of the scalar Skellam mechanism: X + Sk(var/2, var/2) vs X + D + Sk(var/2, var/2).

    pmf(x) = e^-var I_|x|(var) = ive(|x|, var) (Skellam 1946; the exponentially scaled Bessel
    function keeps it accurate for large variances, where scipy's skellam.logpmf is not, see
    digest 004). Outcomes are enumerated on [-T, T + D] with T = 15 sd + 50; the mass of the
    shifted distribution outside that range goes to the infinite privacy loss (pessimistic).
    """
    sd = math.sqrt(variance)
    t = int(math.ceil(15 * sd + 50))
    x = np.arange(-t, t + sensitivity + 1)
    with np.errstate(divide="ignore"):
        lower = np.log(ive(np.abs(x), variance))
        upper = np.log(ive(np.abs(x - sensitivity), variance))
    keep = np.isfinite(lower) & np.isfinite(upper)
    log_lower = {int(o): float(v) for o, v in zip(x[keep], lower[keep])}
    log_upper = {int(o): float(v) for o, v in zip(x[keep], upper[keep])}
    outside = 1.0 - math.fsum(np.exp(upper[keep]))
    if outside > 0:
        log_upper["outside"] = math.log(outside)  # absent from lower: infinite loss
    return pld_lib.from_two_probability_mass_functions(log_lower, log_upper, pessimistic_estimate=True, value_discretization_interval=vdi)


_MAX_ENUMERATED = 400_000  # beyond it (sd > 5000) approx reads the exact tails, at a fraction of the cost
_BINOMIAL_LOG_MASS_TRUNCATION = -40.0


def binomial_pld(trials: int, probability: float, sensitivity: int, vdi: float):
    """Pessimistic PLD of count + Bin(trials, p) against count + D + Bin(trials, p), both directions
    (symmetric=False: the binomial is skewed for p != 1/2).

    Outcomes within ±40 sd of the mean are enumerated with scipy's exact log-pmf; each
    distribution's mass outside the window goes to an outcome the other never takes (infinite
    privacy loss, so it only adds to delta), and so do outcomes of log-mass below
    `_BINOMIAL_LOG_MASS_TRUNCATION` (at most `_MAX_ENUMERATED` of them: < 10⁻¹² of delta), which keeps the
    support, hence self-composition over many labels, small.
    """
    n, p, d = int(trials), float(probability), int(sensitivity)
    sd = math.sqrt(n * p * (1 - p))
    lo, hi = max(0, math.floor(n * p - 40 * sd - 1)), min(n, math.ceil(n * p + 40 * sd + 1))
    x = np.arange(lo, hi + 1)
    logpmf = stats.binom.logpmf(x, n, p)
    base = {int(o): float(v) for o, v in zip(x, logpmf) if np.isfinite(v)}
    shifted = {int(o) + d: v for o, v in base.items()}
    outside = 1.0 - math.fsum(np.exp(list(base.values())))
    if outside > 0:
        base["outside (unshifted)"] = math.log(outside)
        shifted["outside (shifted)"] = math.log(outside)
    return pld_lib.from_two_probability_mass_functions(
        base, shifted, pessimistic_estimate=True, value_discretization_interval=vdi, symmetric=False,
        log_mass_truncation_bound=_BINOMIAL_LOG_MASS_TRUNCATION,
    )


class PldBackend(Backend):
    """Privacy loss distributions (dp-accounting's, pessimistic, discretisation interval
    `value_discretization_interval`): each distinct leaf's PLD is built once and self-composed
    `count` times (for randomized response too, which dp-accounting's PLD accountant does not
    do), then distinct leaves are composed."""

    name = "pld"

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        super().__init__()
        self.vdi = check_positive(value_discretization_interval, "value_discretization_interval")
        self._plds: dict[tuple, object] = {}
        # composed PLD per branch, keyed by the branch's (leaf key, count) pairs: a later
        # composition changes a count or adds a leaf, hence the key, so a stale PLD is never read
        self._branch_plds: dict[frozenset, object] = {}

    def unsupported_reason(self, leaf):
        if _nonprivate(leaf):
            return None
        if isinstance(leaf, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent,
                             dp_event.DiscreteLaplaceDpEvent, dp_accounting.RandomizedResponseDpEvent,
                             EpsilonDeltaDpEvent)):
            return None
        if isinstance(leaf, DiscreteGaussianDpEvent):
            if not float(leaf.sensitivity).is_integer():
                return "the discrete Gaussian PLD needs an integer sensitivity"
            r = leaf.sensitivity / leaf.sigma
            if math.isinf(r * r):  # dp-accounting divides by sigma^2, which underflows to 0
                return "sigma is too small for dp-accounting's discrete Gaussian PLD (sensitivity/sigma squared overflows)"
            return None
        if isinstance(leaf, BinomialDpEvent):
            sd = math.sqrt(leaf.trials * leaf.probability * (1 - leaf.probability))
            if 2 * 40 * sd + leaf.sensitivity > _MAX_ENUMERATED:
                return f"the binomial PLD enumerates ±40 sd outcomes, here more than {_MAX_ENUMERATED}"
            return None
        if isinstance(leaf, SkellamDpEvent):
            if leaf.l1_sensitivity == leaf.l2_sensitivity and float(leaf.l1_sensitivity).is_integer():
                return None
            return "the Skellam PLD is implemented for a scalar integer shift (l1 = l2, an integer) only"
        if isinstance(leaf, dp_accounting.PoissonSampledDpEvent) and isinstance(
            leaf.event, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)
        ):
            return None
        return "no privacy loss distribution is implemented for it"

    def _single(self, leaf, v: float):
        """PLD of one release of a non-Gaussian leaf (Gaussians are merged in `branch_pld`)."""
        if isinstance(leaf, dp_accounting.LaplaceDpEvent):
            p = pld_lib.from_laplace_mechanism(leaf.noise_multiplier, value_discretization_interval=v)
        elif isinstance(leaf, dp_event.DiscreteLaplaceDpEvent):
            p = pld_lib.from_discrete_laplace_mechanism(leaf.noise_parameter, sensitivity=int(leaf.sensitivity), value_discretization_interval=v)
        elif isinstance(leaf, dp_accounting.RandomizedResponseDpEvent):
            if leaf.num_buckets == 1 or leaf.noise_parameter == 1.0:
                return pld_lib.identity(v)
            p = pld_lib.from_randomized_response(
                leaf.noise_parameter, leaf.num_buckets, value_discretization_interval=v,
                neighboring_relation=NeighborRel.REPLACE_ONE,
            )
        elif isinstance(leaf, EpsilonDeltaDpEvent):
            p = pld_lib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(leaf.epsilon, leaf.delta), value_discretization_interval=v)
        elif isinstance(leaf, DiscreteGaussianDpEvent):
            p = pld_lib.from_discrete_gaussian_mechanism(leaf.sigma, sensitivity=int(leaf.sensitivity), value_discretization_interval=v)
        elif isinstance(leaf, SkellamDpEvent):
            p = skellam_pld(leaf.variance, int(leaf.l1_sensitivity), v)
        elif isinstance(leaf, BinomialDpEvent):
            p = binomial_pld(leaf.trials, leaf.probability, leaf.sensitivity, v)
        elif isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
            inner = leaf.event
            if isinstance(inner, dp_accounting.GaussianDpEvent):
                p = pld_lib.from_gaussian_mechanism(inner.noise_multiplier, value_discretization_interval=v, sampling_prob=leaf.sampling_probability)
            else:
                p = pld_lib.from_laplace_mechanism(inner.noise_multiplier, value_discretization_interval=v, sampling_prob=leaf.sampling_probability)
        else:  # pragma: no cover - guarded by unsupported_reason
            raise AssertionError(leaf)
        return p

    def leaf_pld(self, key, leaf, count: int, vdi: float):
        ck = (key, count, vdi)
        if ck not in self._plds:
            one = self._single(leaf, vdi) if count == 1 else self.leaf_pld(key, leaf, 1, vdi)
            return _remember(self._plds, ck, one.self_compose(count) if count > 1 else one, _PLD_CACHE_LIMIT)
        return self._plds[ck]

    # A leaf PLD spans privacy losses in [-eps0, eps0]; keep it to at most this many points by
    # coarsening the (still pessimistic) discretisation of branches with very large eps0.
    _MAX_POINTS = 20_000

    def branch_vdi(self, branch, leaves) -> float:
        eps0 = max((pure_epsilon(leaves[k]) or 0.0 for k in branch), default=0.0)
        return max(self.vdi, eps0 / self._MAX_POINTS) if math.isfinite(eps0) else self.vdi

    # Self-composing a PLD is an FFT over the support dp-accounting's own tail bounds give the
    # result; on 2 cores it takes ~1 s per 2.5 million points of it (measured: 1e4 Laplace
    # releases of eps0 = 0.1 at interval 1e-4, 4.8e6 points, 6 s; 3000 binary randomized
    # responses of eps0 = log 3, 1.4e7 points, 19 s). Beyond this many points the accountant refuses.
    MAX_POINTS_COMPOSED = 2_500_000

    @staticmethod
    def _composed_points(pld, count: int) -> int:
        """Length of the FFT that `pld.self_compose(count)` runs (dp-accounting's
        `compute_self_convolve_bounds`, tail mass 1e-15 as in `self_compose`), summed over the
        PLD's remove and add distributions."""
        total = 0
        for pmf in {id(p): p for p in (pld._pmf_remove, pld._pmf_add)}.values():
            probs = pmf.to_dense_pmf()._probs
            lo, hi = pld_common.compute_self_convolve_bounds(probs, count, 1e-15)
            total += hi - lo + 1
        return total

    @staticmethod
    def _gaussian_width(mu: float) -> float:
        """Privacy-loss range of a Gaussian PLD with mu = sensitivity/sigma, tails cut at 10 sd:
        mu^2 + 20 mu."""
        return mu * mu + 20 * mu

    def cost_reason(self, branch, leaves):
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest or math.isinf(mu) or any(self._infinite(leaves[k]) for k in branch):
            return None  # analytic Gaussian, or non-private: nothing is composed
        vdi = self.branch_vdi(branch, leaves)
        costs = {}
        for k, c in rest.items():
            leaf = leaves[k]
            if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
                inner = leaf.event
                width = self._gaussian_width(1.0 / inner.noise_multiplier) if isinstance(
                    inner, dp_accounting.GaussianDpEvent) else 2.0 / inner.noise_multiplier
                if width / vdi > self.MAX_POINTS_COMPOSED:  # even one such PLD would be too large to build
                    costs[k] = width / vdi
                    continue
            costs[k] = self._composed_points(self.leaf_pld(k, leaf, 1, vdi), c) if c > 1 else 0.0
        total = math.fsum(costs.values()) + (self._gaussian_width(mu) / vdi if mu > 0 else 0.0)
        if total <= self.MAX_POINTS_COMPOSED:
            return None
        worst = max(costs, key=costs.get) if costs else next(iter(rest))
        return leaves[worst], (
            f"composing these privacy loss distributions would take too long ({total:.3g} points > "
            f"{self.MAX_POINTS_COMPOSED:g}; {rest[worst]} releases of this one at "
            f"value_discretization_interval={vdi:g})"
        )

    @staticmethod
    def _infinite(leaf) -> bool:
        """Non-private, or pure with an infinite epsilon (a noise parameter of ~1e-308)."""
        pe = pure_epsilon(leaf)
        return _nonprivate(leaf) or (pe is not None and math.isinf(pe))

    @staticmethod
    def _gaussian_mu(branch, leaves) -> tuple[float, dict]:
        """Gaussian leaves compose exactly into one Gaussian: mu^2 = sum count / nm^2
        (Dong, Roth, Su 2022, Cor. 3.3); returns mu and the remaining leaves."""
        mu2, rest = 0.0, {}
        for k, c in branch.items():
            leaf = leaves[k]
            if isinstance(leaf, dp_accounting.GaussianDpEvent):
                inv = 1.0 / leaf.noise_multiplier  # products, not **: a huge float ** 2 raises OverflowError
                mu2 += c * inv * inv
            else:
                rest[k] = c
        return math.sqrt(mu2), rest

    def branch_pld(self, branch, leaves):
        """The branch's composed PLD (None when a leaf is non-private), built once per branch:
        repeated epsilon/delta queries cost only the query."""
        key = frozenset(branch.items())
        if key not in self._branch_plds:
            return _remember(self._branch_plds, key, self._compose_branch(branch, leaves), _BRANCH_PLD_CACHE_LIMIT)
        return self._branch_plds[key]

    def _compose_branch(self, branch, leaves):
        mu, rest = self._gaussian_mu(branch, leaves)
        if math.isinf(mu) or any(self._infinite(leaves[k]) for k in branch):
            return None
        vdi = self.branch_vdi(branch, leaves)
        pld = None
        if mu > 0:
            key = ("gaussian-mu", mu, vdi)
            if key not in self._plds:
                _remember(self._plds, key, pld_lib.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=vdi), _PLD_CACHE_LIMIT)
            pld = self._plds[key]
        for k, c in rest.items():
            p = self.leaf_pld(k, leaves[k], c, vdi)
            pld = p if pld is None else pld.compose(p)
        return pld

    def branch_epsilon(self, branch, leaves, delta):
        if not branch:
            return 0.0
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest:  # exact analytic profile, no discretisation (Balle, Wang 2018)
            return gaussian_epsilon(mu, delta) if delta > 0 else math.inf
        pld = self.branch_pld(branch, leaves)
        if pld is None:
            return math.inf
        budget = delta - (self.fft_slack(pld) if sum(branch.values()) > 1 else 0.0)
        return max(0.0, float(pld.get_epsilon_for_delta(budget))) if budget > 0 else math.inf

    def branch_delta(self, branch, leaves, epsilon):
        if not branch:
            return 0.0
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest:
            return gaussian_delta(mu, epsilon)
        pld = self.branch_pld(branch, leaves)
        if pld is None:
            return 1.0
        slack = self.fft_slack(pld) if sum(branch.values()) > 1 else 0.0  # one release: no FFT ran
        return min(1.0, float(pld.get_delta_for_epsilon(epsilon)) + slack)

    @staticmethod
    def fft_slack(pld) -> float:
        """A bound on the FFT round-off in a composed PLD's delta: each of its L probabilities is
        off by a few ulp (entries down to -2.6 ulp are seen), so the tail sums behind delta are off
        by at most 4 ulp * L. Without it, 1000 releases of (1, 0)-DP at interval 1e-2 read
        delta = 1e-12 where the exact value is 1.0124e-12 (KOV 2015 Thm 3.3)."""
        size = 0
        for pmf in {id(q): q for q in (pld._pmf_remove, pld._pmf_add)}.values():
            probs = getattr(pmf, "_probs", None)  # dense; a sparse one holds a dict of losses
            keys = list(getattr(pmf, "_loss_probs", {}))
            size += probs.size if probs is not None else (max(keys) - min(keys) + 1 if keys else 0)
        return 4 * _ULP * size


# ---------------------------------------------------------------------------------------------
# shuffle


class ShuffleBackend(ApproxBackend):
    """Amplification by shuffling (FMT 2021): a shuffled (eps0, delta0)-LDP release over n users
    gets `shuffle.shuffled_epsilon` / `shuffle.shuffled_delta` (min of eps0, Thm 3.1 closed form,
    numerical bound; for delta0 > 0 with the Thm 3.8 term added to delta); several shuffled
    releases compose like `approx` (best of basic, DRV, KOV) over their per-release profiles."""

    name = "shuffle"

    def unsupported_reason(self, leaf):
        if isinstance(leaf, ShuffledDpEvent) or _nonprivate(leaf):
            return None
        return "the shuffle accountant only accounts for ShuffledDpEvent releases"

    @staticmethod
    def _check_local_delta(branch, leaves, delta: float) -> None:
        """Raise when delta is below what the releases' local deltas add up to: no composition
        theorem (nor Thm 3.8) gives any guarantee there."""
        total = math.fsum(c * leaves[k].local_delta for k, c in branch.items() if isinstance(leaves[k], ShuffledDpEvent))
        if total > 0.0 and delta < total:
            raise ValueError(
                f"delta={delta!r} must be at least the sum of the shuffled releases' local_delta ({total:.3g}): "
                "(eps0, delta0)-LDP randomizers give no guarantee below it"
            )

    def branch_epsilon(self, branch, leaves, delta):
        self._check_local_delta(branch, leaves, delta)
        if len(branch) == 1:
            (k, c), = branch.items()
            leaf = leaves[k]
            if c == 1 and isinstance(leaf, ShuffledDpEvent):
                return shuffled_epsilon(leaf.local_epsilon, leaf.num_users, delta, leaf.local_delta)
        return super().branch_epsilon(branch, leaves, delta)

    def branch_delta(self, branch, leaves, epsilon):
        if len(branch) == 1:
            (k, c), = branch.items()
            leaf = leaves[k]
            if c == 1 and isinstance(leaf, ShuffledDpEvent):
                return shuffle.shuffled_delta(leaf.local_epsilon, leaf.num_users, epsilon, leaf.local_delta)
        return super().branch_delta(branch, leaves, epsilon)


def shuffled_epsilon(local_epsilon: float, num_users: int, delta: float, local_delta: float = 0.0) -> float:
    """`shuffle.shuffled_epsilon`: min(eps0, FMT Thm 3.1, FMT numerical) at `delta`; FMT Thm 3.8
    for a local delta0 > 0."""
    return shuffle.shuffled_epsilon(local_epsilon, num_users, delta, local_delta)
