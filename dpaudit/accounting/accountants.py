"""Public entry points: `epsilon`, `delta`, `supporting_accountants` and the stateful `Accountant`.

One description of what is released (a `DpEvent` tree) is flattened once into merged branches
(`dpaudit.accounting.tree`); the named accountant checks every leaf before computing anything
and raises `UnsupportedEventError` (a ValueError) naming the leaf and the accountants that can
account for the tree. "best" is the smallest answer over the accountants that support the tree
(each answer is a valid bound, so their minimum is too).
"""

from __future__ import annotations

from collections.abc import Hashable

import dp_accounting
import numpy as np

from dpaudit.accounting import backends
from dpaudit.accounting.errors import UnsupportedEventError
from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.accounting.guarantees import PureDp, RdpCurve, Zcdp
from dpaudit.accounting.leaves import validate_leaf
from dpaudit.accounting.tree import Flattened, flatten, leaf_key
from dpaudit.validation import check_choice, check_delta, check_epsilon

__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "delta",
    "epsilon",
    "pure_guarantee",
    "rdp_guarantee",
    "supporting_accountants",
    "zcdp_guarantee",
]

ACCOUNTANTS: tuple[str, ...] = ("pure", "approx", "rdp", "zcdp", "pld", "shuffle")

_CLASSES = {
    "pure": backends.PureBackend,
    "approx": backends.ApproxBackend,
    "rdp": backends.RdpBackend,
    "zcdp": backends.ZcdpBackend,
    "pld": backends.PldBackend,
    "shuffle": backends.ShuffleBackend,
}

# Shared instances for the functional entry points (their per-leaf caches are pure functions
# of the leaf, so sharing them is safe).
_SHARED: dict[str, backends.Backend] = {}


def _backend(name: str) -> backends.Backend:
    if name not in _SHARED:
        _SHARED[name] = _CLASSES[name]()
    return _SHARED[name]


def _rdp_backend() -> backends.RdpBackend:
    """The shared rdp backend, as its own type (its curves and orders)."""
    b = _backend("rdp")
    assert isinstance(b, backends.RdpBackend)
    return b


def _validate(flat: Flattened) -> None:
    """Validate every leaf (a few comparisons each: no cache, so no cache can be fooled by
    GaussianDpEvent(True) == GaussianDpEvent(1.0))."""
    for leaf in flat.leaves.values():
        validate_leaf(leaf)


_OPTIONS = {"pld": ("value_discretization_interval",), "rdp": ("orders",)}


def _make_backend(name: str, options: dict) -> backends.Backend:
    """A private backend with `options` (each validated by the backend, naming the option)."""
    allowed = _OPTIONS.get(name, ())
    for option in options:
        if option not in allowed:
            takes = ", ".join(allowed) if allowed else "no options"
            raise ValueError(f"accountant {name!r} has no option {option!r}; it takes {takes}")
    return _CLASSES[name](**options)


def _check_name(accountant: str) -> str:
    return check_choice(accountant, ("best",) + ACCOUNTANTS, "accountant")


def _supporting(flat: Flattened, pool: dict[str, backends.Backend]) -> list[str]:
    return [n for n in ACCOUNTANTS if pool[n].first_unsupported(flat) is None]


def _pool(overrides: dict[str, backends.Backend] | None = None) -> dict[str, backends.Backend]:
    pool = {n: _backend(n) for n in ACCOUNTANTS}
    if overrides:
        pool.update(overrides)
    return pool


def _select(flat: Flattened, accountant: str, pool: dict[str, backends.Backend]) -> list[backends.Backend]:
    """The backends to evaluate; raises UnsupportedEventError before any computation."""
    if accountant == "best":
        names = _supporting(flat, pool)
        if not names:
            # name a leaf no accountant supports, else (a mix no single accountant covers) the first refusal
            for key, leaf in flat.leaves.items():
                reasons = [pool[n].reason(key, leaf) for n in ACCOUNTANTS]
                if all(r is not None for r in reasons):
                    raise UnsupportedEventError("best", leaf, "no accountant supports it", ())
            refusal = pool[ACCOUNTANTS[0]].first_unsupported(flat)
            assert refusal is not None  # no accountant supports the tree, so the first refuses some part of it
            leaf, reason = refusal
            raise UnsupportedEventError("best", leaf, f"{reason} (and no single accountant covers the whole tree)", ())
        return [pool[n] for n in names]
    bad = pool[accountant].first_unsupported(flat)
    if bad is not None:
        raise UnsupportedEventError(accountant, bad[0], bad[1], _supporting(flat, pool))
    return [pool[accountant]]


def _prepare(event: dp_accounting.DpEvent) -> Flattened:
    flat = flatten(event)
    _validate(flat)
    return flat


def supporting_accountants(event: dp_accounting.DpEvent) -> list[str]:
    """Names of the accountants that can account for every leaf of `event`."""
    return _supporting(_prepare(event), _pool())


def epsilon(event: dp_accounting.DpEvent, delta: float, accountant: str = "best") -> float:
    """The epsilon of `event` at `delta`: an epsilon for which `event` is (epsilon, delta)-DP.

    (epsilon, delta)-DP: P[M(d) in S] <= e^epsilon P[M(d') in S] + delta for neighbouring d, d' and every
    set S (Dwork, Roth, "The Algorithmic Foundations of Differential Privacy", FnT TCS 2014, Def. 2.4).
    Every accountant's answer is a valid (never optimistic) bound; "best" is the smallest answer over the
    accountants that support the whole tree, so it is valid too. Each accountant's composition theorem
    and conversion, with its source, is on the page "Accountants, and what best means".

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What is released about one user: a tree of dp-accounting's events and those of
        `dpaudit.accounting.events` (noise is stated relative to the sensitivity).
    delta : float
        The delta at which epsilon is computed, in [0, 1).
    accountant : str, default "best"
        One of `ACCOUNTANTS` ("pure", "approx", "rdp", "zcdp", "pld", "shuffle"), or "best".

    Returns
    -------
    float
        epsilon >= 0; inf only when it is the true answer (a `NonPrivateDpEvent`, or delta = 0 for an
        event that is not pure DP under that accountant).

    Raises
    ------
    TypeError
        `event` is not a `DpEvent`, `delta` is not a real number or `accountant` not a string.
    ValueError
        `delta` outside [0, 1), an unknown `accountant`, or a release with a bad parameter.
    UnsupportedEventError
        The accountant (for "best": every accountant) cannot account for a release of `event`, named
        in the message with the accountants that can; raised before anything is computed.

    Examples
    --------
    Ten Laplace releases of scale 1 (in units of the sensitivity), then a hundred Gaussian ones:

    >>> import dp_accounting, dpaudit
    >>> laplace = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 10)
    >>> dpaudit.epsilon(laplace, delta=0.0)
    10.0
    >>> gaussian = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(10.0), 100)
    >>> rdp, best = dpaudit.epsilon(gaussian, 1e-5, accountant="rdp"), dpaudit.epsilon(gaussian, 1e-5)
    >>> print(f"rdp {rdp:.2f}, best {best:.2f}")
    rdp 4.73, best 4.38
    """
    delta = check_delta(delta)
    accountant = _check_name(accountant)
    flat = _prepare(event)
    return min(b.epsilon(flat, delta) for b in _select(flat, accountant, _pool()))


def delta(event: dp_accounting.DpEvent, epsilon: float, accountant: str = "best") -> float:
    """The delta of `event` at `epsilon`: a delta for which `event` is (epsilon, delta)-DP.

    The definition and the accountants are those of `epsilon` (Dwork, Roth, "The Algorithmic Foundations
    of Differential Privacy", FnT TCS 2014, Def. 2.4); "best" is the smallest answer over the accountants
    that support the whole tree, each a valid (never optimistic) bound.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        What is released about one user, as for `epsilon`.
    epsilon : float
        The epsilon at which delta is computed, in (0, inf).
    accountant : str, default "best"
        One of `ACCOUNTANTS` ("pure", "approx", "rdp", "zcdp", "pld", "shuffle"), or "best".

    Returns
    -------
    float
        delta in [0, 1].

    Raises
    ------
    TypeError
        `event` is not a `DpEvent`, `epsilon` is not a real number or `accountant` not a string.
    ValueError
        `epsilon` not in (0, inf), an unknown `accountant`, or a release with a bad parameter.
    UnsupportedEventError
        The accountant (for "best": every accountant) cannot account for a release of `event`.

    Examples
    --------
    One Gaussian release with noise 1 (in units of the l2 sensitivity): its exact delta at epsilon = 1 is
    Phi(-1/2) - e Phi(-3/2) = 0.1269 (Balle, Wang, "Improving the Gaussian Mechanism for Differential
    Privacy", ICML 2018, Thm. 8):

    >>> import dp_accounting, dpaudit
    >>> round(dpaudit.delta(dp_accounting.GaussianDpEvent(1.0), epsilon=1.0), 4)
    0.1269
    """
    epsilon = check_epsilon(epsilon)
    accountant = _check_name(accountant)
    flat = _prepare(event)
    return min(b.delta(flat, epsilon) for b in _select(flat, accountant, _pool()))


def pure_guarantee(event: dp_accounting.DpEvent) -> PureDp:
    """The pure-DP guarantee of `event` by basic composition (worst parallel branch)."""
    flat = _prepare(event)
    b = _select(flat, "pure", _pool())[0]
    return PureDp(b.epsilon(flat, 0.0))


def rdp_guarantee(event: dp_accounting.DpEvent) -> RdpCurve:
    """The RDP curve of `event` on the rdp accountant's orders (pointwise max over parallel branches,
    a valid curve for every branch)."""
    flat = _prepare(event)
    b = _select(flat, "rdp", _pool())[0]
    assert isinstance(b, backends.RdpBackend)
    curves = np.array([b.branch_curve(br, flat.leaves) for br in flat.branches])
    return RdpCurve(tuple(b.orders.tolist()), tuple(np.max(curves, axis=0).tolist()))


def zcdp_guarantee(event: dp_accounting.DpEvent) -> Zcdp:
    """The (xi, rho)-zCDP guarantee of `event` (max rho and max xi over parallel branches)."""
    flat = _prepare(event)
    b = _select(flat, "zcdp", _pool())[0]
    assert isinstance(b, backends.ZcdpBackend)
    pairs = [b.branch_zcdp(br, flat.leaves) for br in flat.branches]
    return Zcdp(rho=max(p[0] for p in pairs), xi=max(p[1] for p in pairs))


def _public(key: Hashable, leaf: dp_accounting.DpEvent) -> Hashable:
    try:
        hash(leaf)
        return leaf
    except TypeError:
        return key


_COMPOSITE = (
    dp_accounting.ComposedDpEvent,
    dp_accounting.SelfComposedDpEvent,
    ParallelComposedDpEvent,
    dp_accounting.NoOpDpEvent,
)


class Accountant:
    """A stateful accountant for round-by-round composition.

    `compose(event, count=1)` merges identical releases into counts (nothing is computed until
    `epsilon`/`delta` is asked for), checks the whole event before changing state, and returns
    self. Composing an event k times one call at a time, once with count=k, or as
    `SelfComposedDpEvent(event, k)` gives the same state and the same answers.

    `Accountant("pld", value_discretization_interval=1e-5)` and `Accountant("rdp", orders=[...])`
    pass options to that accountant.
    """

    def __init__(self, name: str = "best", **options) -> None:
        self.name = _check_name(name)
        if options and self.name == "best":
            raise ValueError("options need a named accountant, not 'best'")
        self._overrides = {self.name: _make_backend(self.name, options)} if options else {}
        self._state = Flattened()
        self._cache: dict[tuple, float] = {}

    def _pool(self) -> dict[str, backends.Backend]:
        return _pool(self._overrides)

    def compose(self, event: dp_accounting.DpEvent, count: int = 1) -> Accountant:
        """Account for `count` more applications of `event`; returns self."""
        # fast path for the streaming case: a leaf already accounted for (validated, supported)
        if (
            len(self._state.branches) == 1
            and not isinstance(event, _COMPOSITE)
            and isinstance(count, int)
            and not isinstance(count, bool)
            and count >= 0
        ):
            if count == 0:
                return self
            key = leaf_key(event)
            if key in self._state.leaves:
                branch = self._state.branches[0]
                branch[key] = branch.get(key, 0) + count
                self._cache.clear()
                return self
        self._state.compose_inplace(self.check(event), count)
        self._cache.clear()
        return self

    def check(self, event: dp_accounting.DpEvent) -> Flattened:
        """Validate `event` and check that this accountant can account for it on top of what was
        composed so far, changing nothing: raises ValueError on bad parameters and
        `UnsupportedEventError` on a refusal; returns the flattened event."""
        flat = _prepare(event)
        pool = self._pool()
        if self.name != "best":
            _select(flat, self.name, pool)
        else:
            merged = Flattened(self._state.branches, {**self._state.leaves, **flat.leaves})
            if not _supporting(merged, pool):
                _select(merged, "best", pool)
        return flat

    @property
    def branches(self) -> list[dict[Hashable, int]]:
        """The merged state: parallel alternatives, each a {leaf: count} mapping (an unhashable
        leaf appears as its key, `tree.leaf_key`)."""
        leaves = self._state.leaves
        return [{_public(k, leaves[k]): c for k, c in b.items()} for b in self._state.branches]

    def supporting(self) -> list[str]:
        """The accountants that can account for everything composed so far."""
        return _supporting(self._state, self._pool())

    def epsilon(self, delta: float) -> float:
        """epsilon at `delta` of everything composed so far."""
        delta = check_delta(delta)
        key = ("eps", delta)
        if key not in self._cache:
            self._cache[key] = min(b.epsilon(self._state, delta) for b in _select(self._state, self.name, self._pool()))
        return self._cache[key]

    def delta(self, epsilon: float) -> float:
        """delta at `epsilon` (> 0) of everything composed so far."""
        epsilon = check_epsilon(epsilon)
        key = ("delta", epsilon)
        if key not in self._cache:
            self._cache[key] = min(b.delta(self._state, epsilon) for b in _select(self._state, self.name, self._pool()))
        return self._cache[key]

    def __repr__(self) -> str:
        n = sum(sum(b.values()) for b in self._state.branches)
        return f"Accountant({self.name!r}, releases={n}, branches={len(self._state.branches)})"
