"""dpaudit's accountants as `dp_accounting.PrivacyAccountant`s, for code written against
dp-accounting's interface (`dp_accounting.calibrate_dp_mechanism` among it):

    import dp_accounting
    from dpaudit.accounting import PrivacyAccountant
    sigma = dp_accounting.calibrate_dp_mechanism(
        lambda: PrivacyAccountant("pld"),
        lambda s: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(s), 100),
        target_epsilon=1.0, target_delta=1e-5,
        bracket_interval=dp_accounting.ExplicitBracketInterval(0.1, 100.0))

The neighbouring relation is honest: dpaudit accounts for each kind of release under the relation
its analysis is stated for, and an accountant built for another relation does not `support` it
(`compose` raises `UnsupportedEventError`) rather than answer for the wrong relation.
"""

from __future__ import annotations

import dp_accounting
from dp_accounting import NeighboringRelation, dp_event

from dpaudit.accounting.accountants import Accountant, _prepare, _rdp_backend
from dpaudit.accounting.errors import UnsupportedEventError
from dpaudit.accounting.events import (
    BinomialDpEvent,
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    KaryRandomizedResponseDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)

__all__ = ["PrivacyAccountant", "common_relation", "leaf_relations"]

_ANY = frozenset(NeighboringRelation)
_ORDER = (NeighboringRelation.REPLACE_ONE, NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_SPECIAL)
_REPLACE = frozenset({NeighboringRelation.REPLACE_ONE, NeighboringRelation.REPLACE_SPECIAL})

# Releases whose parameters already fix the guarantee: the noise is stated relative to the
# sensitivity (or the guarantee is given outright), which the user computed for their relation.
_RELATION_FREE = (
    dp_accounting.NoOpDpEvent,
    dp_accounting.NonPrivateDpEvent,
    dp_accounting.GaussianDpEvent,
    dp_accounting.LaplaceDpEvent,
    dp_accounting.ZCDpEvent,
    dp_event.DiscreteLaplaceDpEvent,
    DiscreteGaussianDpEvent,
    SkellamDpEvent,
    BinomialDpEvent,
    EpsilonDeltaDpEvent,
)


def leaf_relations(leaf: dp_accounting.DpEvent) -> frozenset[NeighboringRelation]:
    """The neighbouring relations under which dpaudit's accounting of one release is valid.

    Noise relative to a sensitivity, or a stated guarantee: every relation. Randomized response
    (`leaves.rr_epsilon`) and shuffling (the amplification bounds of Feldman, McMillan, Talwar,
    "Hiding among the clones", FOCS 2021, Thm 3.1, for datasets differing in one user's data):
    replace-one, hence replace-special (a replace-special pair is a replace-one pair). Poisson
    subsampling: add-or-remove-one, the relation of dp-accounting's sampled RDP and PLD that
    dpaudit reads. Any other dp-accounting event: the one relation under which dpaudit's rdp
    accountant reads dp-accounting's curve for it (none if it has none).
    """
    if isinstance(leaf, _RELATION_FREE):
        return _ANY
    if isinstance(leaf, (dp_accounting.RandomizedResponseDpEvent, KaryRandomizedResponseDpEvent, ShuffledDpEvent)):
        return _REPLACE
    if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
        return frozenset({NeighboringRelation.ADD_OR_REMOVE_ONE})
    relation = _rdp_backend().relation(leaf)
    return frozenset() if relation is None else frozenset({relation})


def common_relation(event: dp_accounting.DpEvent) -> NeighboringRelation:
    """The first of replace-one, add-or-remove-one, replace-special under which every release in
    `event` is accounted for; ValueError when the releases hold under no common relation."""
    held = [leaf_relations(leaf) for leaf in _prepare(event).leaves.values()]
    for relation in _ORDER:
        if all(relation in h for h in held):
            return relation
    raise ValueError(f"event {event!r} mixes releases that hold under no common neighbouring relation")


class PrivacyAccountant(dp_accounting.PrivacyAccountant):
    """A stateful dpaudit accountant behind dp-accounting's interface: `supports`, `compose` (raising
    `UnsupportedEventError`, which is dp-accounting's error of that name too), `get_epsilon(target_delta)`,
    `get_delta(target_epsilon)` and the `ledger` of what was composed.

    Composing releases one call at a time answers as `dpaudit.epsilon` does for their `ComposedDpEvent`;
    each accountant composes by its own theorem (e.g. rdp: RDP orders add up, Mironov, "Renyi Differential
    Privacy", CSF 2017, Prop. 1; pld: privacy loss distributions convolve, Koskela, Jalko, Honkela,
    AISTATS 2020). A release whose analysis holds under another neighbouring relation is refused, never
    accounted for under the wrong one.

    Parameters
    ----------
    name : str, default "best"
        One of `ACCOUNTANTS` ("pure", "approx", "rdp", "zcdp", "pld", "shuffle"), or "best".
    neighboring_relation : dp_accounting.NeighboringRelation, default ADD_OR_REMOVE_ONE
        The relation the guarantee is stated for (dp-accounting's default).
    **options
        `value_discretization_interval` (pld) or `orders` (rdp), for a named accountant only.

    Raises
    ------
    TypeError
        `name` is not a string, or `neighboring_relation` not a `NeighboringRelation`.
    ValueError
        An unknown `name`, options for "best", or an option the named accountant does not take.

    Examples
    --------
    >>> import dp_accounting
    >>> from dpaudit.accounting import PrivacyAccountant
    >>> acct = PrivacyAccountant("rdp").compose(dp_accounting.GaussianDpEvent(10.0), 100)
    >>> acct
    PrivacyAccountant('rdp', neighboring_relation=ADD_OR_REMOVE_ONE)
    >>> round(acct.get_epsilon(1e-5), 2)
    4.73
    """

    def __init__(
        self,
        name: str = "best",
        neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
        **options,
    ) -> None:
        if not isinstance(neighboring_relation, NeighboringRelation):
            raise TypeError(
                f"neighboring_relation must be a dp_accounting.NeighboringRelation, got {neighboring_relation!r}"
            )
        super().__init__(neighboring_relation)
        self._accountant = Accountant(name, **options)

    @property
    def name(self) -> str:
        """Name of the accountant answering (e.g. "best", "pld", "rdp")."""
        return self._accountant.name

    def _check(self, event: dp_accounting.DpEvent) -> None:
        """Raise (before any change) unless `event` can be accounted for on top of the state."""
        flat = self._accountant.check(event)
        for leaf in flat.leaves.values():
            if self.neighboring_relation not in leaf_relations(leaf):
                held = ", ".join(sorted(r.name for r in leaf_relations(leaf))) or "no relation"
                raise UnsupportedEventError(
                    self.name,
                    leaf,
                    f"dpaudit accounts for it under {held}, not under {self.neighboring_relation.name}",
                )

    def _maybe_compose(
        self, event: dp_accounting.DpEvent, count: int, do_compose: bool
    ) -> dp_accounting.PrivacyAccountant.CompositionErrorDetails | None:
        try:
            self._check(event)
        except UnsupportedEventError as err:
            return self.CompositionErrorDetails(invalid_event=err.event, error_message=err.reason)
        if do_compose:
            self._accountant.compose(event, count)
        return None

    def compose(self, event: dp_accounting.DpEvent, count: int = 1) -> PrivacyAccountant:
        """Account for `count` more applications of `event`; raises `UnsupportedEventError`
        (naming the refused release) or ValueError before changing any state; returns self."""
        if not isinstance(event, dp_accounting.DpEvent):
            raise TypeError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")
        self._check(event)
        self._accountant.compose(event, count)  # validates count before the ledger sees it
        if count > 0:
            self._ledger.compose(event, count)
        return self

    def get_epsilon(self, target_delta: float) -> float:
        """epsilon at `target_delta` of everything composed so far (`Accountant.epsilon`)."""
        return self._accountant.epsilon(target_delta)

    def get_delta(self, target_epsilon: float) -> float:
        """delta at `target_epsilon` (> 0) of everything composed so far (`Accountant.delta`)."""
        return self._accountant.delta(target_epsilon)

    def __repr__(self) -> str:
        return f"PrivacyAccountant({self.name!r}, neighboring_relation={self.neighboring_relation.name})"
