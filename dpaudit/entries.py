"""The entry model of both catalogs: an audit entry, its neighbouring inputs and its claims.

An `AuditEntry` (the built-in catalog, `dpaudit.audits`) pairs one observable of one algorithm (a
`target(data, rng, size)` in the sense of `dpaudit.audit.audit`) with the worst-case neighbouring inputs
dpaudit's analysis of the paper proposes and the privacy claims made for it: the paper's, and the corrected
accounting where dpaudit's analysis shows the paper's is wrong, each naming the accountant that gives it.
A `OneRunEntry` is audited in one run with canaries.  A user's entry (`dpaudit.user_audits.UserAuditEntry`,
made by `dpaudit.register_audit`) holds one target, one pair and one `Claim`.  Every entry has the
interface `Entry` that `dpaudit audit` and `dpaudit list` use, derives its seed with
`dpaudit.entry_runner.entry_seed`, and returns a `dpaudit.records.EntryRecord` from `run`.

Every claim states what the audit should find (`expect`): a sound claim must come out "consistent"; a
claim dpaudit's analysis shows to be wrong (or a known-buggy variant run against the paper's claim) must
come out "violation".  Entries are registered in `dpaudit.registry.AUDITS`; `dpaudit.entry_runner` runs
the built-in ones (this module imports it; it imports this one for annotations only).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from dpaudit.entry_runner import run_entry
from dpaudit.validation import check_choice, check_delta, check_epsilon, check_positive_int

if TYPE_CHECKING:
    import dp_accounting

    from dpaudit.records import EntryRecord

__all__ = [
    "DEEP_RUN_FIELDS",
    "EXPECTS",
    "OBSERVABLES",
    "PIN_SIDES",
    "RELATIONS",
    "AuditEntry",
    "Claim",
    "Entry",
    "LazyClaims",
    "NeighbourPair",
    "OneRunEntry",
    "PinNote",
    "RegretRun",
    "expect_of",
]


RELATIONS = ("reward-only", "context-only", "both", "one-user")
"""Which part of one user's data differs between the two inputs ("one-user": a whole record of a
setting without contexts, e.g. one user's reward in Chowdhury & Zhou (ICLR 2023, Sec. 2) or one round's reward vector in
Hu, Huang, Mehta (arXiv:2102.07929, §2.2))."""

OBSERVABLES = ("white-box", "black-box")
"""white-box: the statistics the algorithm releases (noisy sums, tree nodes, aggregates);
black-box: only the actions (decisions) it takes."""

EXPECTS = ("consistent", "violation")


@dataclasses.dataclass(frozen=True)
class NeighbourPair:
    """Two inputs that differ in one user, in the way `relation` says."""

    relation: str
    d0: Any
    d1: Any
    description: str

    def __post_init__(self) -> None:
        check_choice(self.relation, RELATIONS, "relation")
        if not self.description:
            raise ValueError("description must say how the two inputs differ")


@dataclasses.dataclass(frozen=True)
class Claim:
    """A privacy claim (epsilon at `delta`) and where it comes from, of a built-in or a user's entry.

    Either `epsilon` is the number as stated (by the paper: `accountant="stated"`), or `event` is the
    `DpEvent` whose epsilon at `delta` under `accountant` (a name of `dpaudit.accounting.ACCOUNTANTS`,
    or "best") is the claim; the catalog gives a zero-argument callable returning the event instead,
    so that registering an entry builds no event (`dp_event`).
    `label` is "paper" for the paper's own claim, "corrected" (or another short word) otherwise, and
    "declared" for a user's claim.  `expect` is what an audit of a correct implementation finds:
    "consistent", or "violation" where the claim is known to be too small for the implementation
    under audit.
    """

    label: str
    delta: float = 0.0
    accountant: str = "stated"
    epsilon: float | None = None
    event: dp_accounting.DpEvent | Callable[[], dp_accounting.DpEvent] | None = None
    expect: str = "consistent"
    source: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            raise ValueError("label must be a non-empty string")
        check_delta(self.delta, "delta")
        check_choice(self.expect, EXPECTS, "expect")
        if (self.epsilon is None) == (self.event is None):
            raise ValueError("a claim needs exactly one of epsilon (a stated number) or event (accounted)")
        if self.epsilon is not None:
            check_epsilon(self.epsilon, "epsilon")
            if self.accountant == "":
                raise ValueError("accountant must name who gives the stated number (e.g. 'stated')")

    def dp_event(self) -> dp_accounting.DpEvent | None:
        """The claim's DpEvent (built now when `event` is a callable), or None for a stated number."""
        return self.event() if callable(self.event) else self.event

    def value(self) -> float:
        """The claimed epsilon at `delta`: as stated, or accounted from the event."""
        if self.epsilon is not None:
            return float(self.epsilon)
        from dpaudit.accounting import epsilon as account

        return float(account(self.dp_event(), self.delta, accountant=self.accountant))

    def by_accountant(self) -> dict[str, float | None]:
        """Epsilon at `delta` under every accountant that supports the event (None where one cannot)."""
        event = self.dp_event()
        if event is None:
            return {}
        from dpaudit.accounting import ACCOUNTANTS
        from dpaudit.accounting import epsilon as account

        out: dict[str, float | None] = {}
        for name in ACCOUNTANTS:
            try:
                value = float(account(event, self.delta, accountant=name))
            except (ValueError, NotImplementedError, TypeError, ArithmeticError):
                value = None  # this accountant cannot account for the event (or at this delta)
            out[name] = value if value is None or math.isfinite(value) else None
        return out


def expect_of(claims: Sequence[Claim]) -> str:
    """ "violation" if some claim expects one, else "consistent": the outcome an entry declares."""
    return "violation" if any(c.expect == "violation" for c in claims) else "consistent"


def _check_claims(claims: Sequence[Claim]) -> tuple[Claim, ...]:
    claims = tuple(claims)
    if not claims or not all(isinstance(c, Claim) for c in claims):
        raise ValueError(f"claims must hold at least one Claim, got {claims!r}")
    return claims


@dataclasses.dataclass(frozen=True, eq=False)
class LazyClaims(Sequence[Claim]):
    """An entry's claims, built on first use and then kept.

    Building a claim can mean accounting (seconds for an exact binomial privacy profile), so the
    catalog registers `LazyClaims(build, expect)` and pays only when an entry is audited or its
    claims are listed. `expect` is the outcome the claims will declare ("violation" if any claim
    expects one); building checks it, so a listing read before building cannot disagree with it.
    """

    build: Callable[[], Sequence[Claim]]
    expect: str

    def __post_init__(self) -> None:
        if not callable(self.build):
            raise TypeError(f"build must be a zero-argument callable returning claims, got {self.build!r}")
        check_choice(self.expect, EXPECTS, "expect")

    @functools.cached_property
    def claims(self) -> tuple[Claim, ...]:
        claims = _check_claims(self.build())
        if expect_of(claims) != self.expect:
            raise ValueError(f"expect={self.expect!r} was declared but the built claims expect {expect_of(claims)!r}")
        return claims

    @property
    def built(self) -> bool:
        """Whether the claims have been built (read without building them)."""
        return "claims" in self.__dict__

    def __getitem__(self, index):
        return self.claims[index]

    def __len__(self) -> int:
        return len(self.claims)

    def __iter__(self) -> Iterator[Claim]:
        return iter(self.claims)


@dataclasses.dataclass(frozen=True)
class RegretRun:
    """A `dpaudit regret` run: ALGORITHMS[algorithm].simulate(horizon=, runs=, seed=, **params)."""

    algorithm: str
    horizon: int
    runs: int
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        check_positive_int(self.horizon, "horizon")
        check_positive_int(self.runs, "runs")
        if not self.algorithm:
            raise ValueError("algorithm must be a `dpaudit regret` name")


PIN_SIDES = ("audit", "accounting", "both")
"""Which side of an entry's interval [ε_lower, ε_upper] is known to be loose: the audit (the upper
bound is exact for the view, the auditor cannot reach it at a feasible size), the accounting (the
audit is near the view's true loss, the proven bound is not), or both."""


@dataclasses.dataclass(frozen=True)
class PinNote:
    """Why an entry's interval cannot be pinned within 10% at a feasible size, and which side is loose.

    `reason` is the sentence the report prints where the pin ratio ε_lower/ε_upper is below 0.9
    (e.g. "the released view's exact loss needs the full horizon; the audit at T = 48 sees 2 of 6
    releases"); `loose` is one of `PIN_SIDES`.
    """

    loose: str
    reason: str

    def __post_init__(self) -> None:
        check_choice(self.loose, PIN_SIDES, "loose")
        if not self.reason:
            raise ValueError("reason must say why the interval stays wide")


@dataclasses.dataclass(frozen=True)
class AuditEntry:
    """One catalog entry: run `target` on each neighbouring pair, compare with every claim.

    `target` is a zero-argument builder returning `target(data, rng, size)` (a `OneRunEntry`'s returns a
    `OneRunTarget`), and `claims` may be
    `LazyClaims`, so registering an entry costs nothing until it is audited. `samples` is the number of runs per input for a full
    audit; `quick_samples` the number used in the default suite (`quick=True` entries only);
    `deep_samples`, of a run-limited entry, the number its `pin_note` says the interval needs
    (`dpaudit audit --all --deep` runs the entry there).
    `audit_options` are passed to `dpaudit.audit.audit` (for example a score function).
    `mu_upper` is a zero-argument callable giving a Gaussian-DP μ the accountant proves for the
    audited view (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022): when given, the
    report pins the auditor's `mu_lower` against it, the useful interval for claims at a large δ.
    `pin_note` states why the interval stays wider than 10% (see `PinNote`).
    """

    name: str
    algorithm: str
    description: str
    target: Callable[[], Any]
    pairs: tuple[NeighbourPair, ...]
    observable: str
    observable_description: str
    claims: tuple[Claim, ...] | LazyClaims
    samples: int = 100_000
    quick: bool = False
    quick_samples: int | None = None
    deep_samples: int | None = None
    regret: RegretRun | None = None
    audit_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    source: str = ""
    variant: str = ""
    mu_upper: Callable[[], float] | None = None
    pin_note: PinNote | None = None

    def __post_init__(self) -> None:
        if not self.name or any(c.isspace() for c in self.name):
            raise ValueError(f"name must be a non-empty word, got {self.name!r}")
        if not self.algorithm:
            raise ValueError("algorithm must name the algorithm (its `dpaudit regret` name)")
        if not callable(self.target):
            raise TypeError("target must be a zero-argument builder returning target(data, rng, size)")
        object.__setattr__(self, "pairs", tuple(self.pairs))
        if not isinstance(self.claims, LazyClaims):
            object.__setattr__(self, "claims", _check_claims(self.claims))
        if not self.pairs or not all(isinstance(p, NeighbourPair) for p in self.pairs):
            raise ValueError("pairs must hold at least one NeighbourPair")
        check_choice(self.observable, OBSERVABLES, "observable")
        check_positive_int(self.samples, "samples")
        if self.quick_samples is not None:
            check_positive_int(self.quick_samples, "quick_samples")
        if self.deep_samples is not None and check_positive_int(self.deep_samples, "deep_samples") <= self.samples:
            raise ValueError(f"deep_samples must exceed samples = {self.samples}, got {self.deep_samples}")
        if self.mu_upper is not None and not callable(self.mu_upper):
            raise ValueError(f"mu_upper must be a zero-argument callable returning mu, got {self.mu_upper!r}")
        if self.pin_note is not None and not isinstance(self.pin_note, PinNote):
            raise ValueError(f"pin_note must be a PinNote or None, got {self.pin_note!r}")

    @property
    def expect(self) -> str:
        """ "violation" if some claim is expected to be violated, else "consistent" (declared by
        `LazyClaims`, so reading it does not build them)."""
        if isinstance(self.claims, LazyClaims):
            return self.claims.expect
        return expect_of(self.claims)

    @property
    def relations(self) -> tuple[str, ...]:
        """The neighbouring relations of the entry's pairs, each once, in order."""
        return tuple(dict.fromkeys(p.relation for p in self.pairs))

    def audit_calls(self) -> int:
        """Number of `dpaudit.audit.audit` calls `run` makes (pairs x distinct claimed deltas)."""
        return len(self.pairs) * len({c.delta for c in self.claims})

    def run(
        self,
        *,
        samples: int | None = None,
        quick: bool = False,
        confidence: float = 0.95,
        seed: int = 0,
        executor: Any = None,
        regret: bool = True,
        baseline_events: dict[str, Any] | None = None,
    ) -> EntryRecord:
        """Audit this entry; see `dpaudit.entry_runner.run_entry` for the options and the record returned."""
        return run_entry(
            self,
            samples=samples,
            quick=quick,
            confidence=confidence,
            seed=seed,
            executor=executor,
            regret=regret,
            baseline_events=baseline_events,
        )

    def summary(self) -> dict[str, Any]:
        """JSON-ready description (what `dpaudit list --json` prints)."""
        return {
            "name": self.name,
            "algorithm": self.algorithm,
            "expect": self.expect,
            "variant": self.variant,
            "observable": self.observable,
            "relations": list(self.relations),
            "quick": self.quick,
            "samples": self.samples,
            "deep_samples": self.deep_samples,
            "claims": [
                {
                    "label": c.label,
                    "delta": c.delta,
                    "accountant": c.accountant,
                    "expect": c.expect,
                    "epsilon": c.epsilon,
                }
                for c in self.claims
            ],
            "description": self.description,
            "source": self.source,
        }


DEEP_RUN_FIELDS = ("target", "num_canaries", "horizon", "guesses", "pairs", "description")
"""The fields a `OneRunEntry`'s `deep` run may set: those of the run's size (target and num_canaries always)."""


@dataclasses.dataclass(frozen=True)
class OneRunEntry(AuditEntry):
    """An `AuditEntry` audited in one run with canaries (Steinke, Nasr, Jagielski, "Privacy Auditing with
    One (1) Training Run", NeurIPS 2023, Alg. 1, Thm 3.1): `target()` returns a `OneRunTarget(mechanism,
    num_canaries, score)` (e.g. `dpaudit.algorithms.mab.canaries.one_run_target`) built with `horizon`
    and `num_canaries`, and the algorithm runs once at its deployment horizon.  `guesses`: the
    (k_plus, k_minus) pairs searched, fixed in advance (Bonferroni over their number), or None for
    `dpaudit.audit.one_run.default_guess_grid` (224 pairs at m = 10^4).  A short grid keeps power when the
    suite's family-wise split leaves each call a small level.  `dpaudit.entry_runner.run_entry` audits it
    with `dpaudit.audit.one_run` (`mode == "one-run"`), the analysis fixed by each claimed delta before the
    run (`dpaudit.entry_runner.one_run_analysis`): Thm 3.1's epsilon analysis for delta = 0, the f-DP test
    of the (eps, delta) curve (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run",
    ICML 2025, Alg. 3) for delta > 0, which has no 2 m delta term.

    `deep`, of an entry whose one-run bound is limited by its canaries, is its deep size: the fields of a
    larger run (`DEEP_RUN_FIELDS`: `target` and more `num_canaries`, and the `horizon`, `guesses`, `pairs`
    and `description` that go with them) that `dpaudit audit --deep` audits instead (`at_deep_size`), the
    one-run counterpart of `deep_samples` (which a one-run entry, run once, does not take).  The bound's
    deficit shrinks like 1/sqrt(guesses) (Thm 3.1: each guess right with probability at most
    e^ε/(1 + e^ε)), so more canaries, each with a release of its own, pin it closer."""

    horizon: int = 1_000_000
    num_canaries: int = 1_000
    guesses: tuple[tuple[int, int], ...] | None = None
    deep: Mapping[str, Any] | None = None

    mode: ClassVar[str] = "one-run"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.horizon, "horizon")
        check_positive_int(self.num_canaries, "num_canaries")
        if self.deep_samples is not None:
            raise ValueError(
                f"deep_samples must be None for a one-run entry (it runs once), got {self.deep_samples}; "
                "give its deep size as deep (the fields of a run with more canaries)"
            )
        if self.deep is not None:
            self._check_deep()

    def _check_deep(self) -> None:
        """`deep` names only run fields, target and num_canaries among them, and builds a valid entry with more
        canaries (TypeError or ValueError naming deep)."""
        if not isinstance(self.deep, Mapping):
            raise TypeError(f"deep must be a mapping of the deep run's fields or None, got {type(self.deep).__name__}")
        unknown = sorted(str(k) for k in self.deep if k not in DEEP_RUN_FIELDS)
        if unknown:
            raise ValueError(f"deep may set only {', '.join(DEEP_RUN_FIELDS)}; got {', '.join(unknown)}")
        missing = [k for k in ("target", "num_canaries") if k not in self.deep]
        if missing:
            raise ValueError(f"deep must set target and num_canaries (the deep run's), missing {', '.join(missing)}")
        object.__setattr__(self, "deep", dict(self.deep))
        try:
            deep = self.at_deep_size()
        except TypeError as exc:
            raise TypeError(f"deep: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"deep: {exc}") from None
        if deep.num_canaries <= self.num_canaries:
            raise ValueError(
                f"deep must host more canaries than num_canaries = {self.num_canaries}, got {deep.num_canaries}"
            )

    def at_deep_size(self) -> OneRunEntry:
        """This entry with its `deep` run's fields (what `dpaudit audit --deep` audits), or itself without one."""
        return self if self.deep is None else dataclasses.replace(self, **self.deep, deep=None)

    @property
    def deep_size(self) -> dict[str, int] | None:
        """{"horizon", "num_canaries"} of the deep run (None without one): what `dpaudit list --json` shows."""
        if self.deep is None:
            return None
        deep = self.at_deep_size()
        return {"horizon": int(deep.horizon), "num_canaries": int(deep.num_canaries)}

    def summary(self) -> dict[str, Any]:
        """`AuditEntry.summary` plus the one-run fields."""
        return {
            **super().summary(),
            "mode": self.mode,
            "horizon": self.horizon,
            "num_canaries": self.num_canaries,
            "deep_size": self.deep_size,
        }


class Entry(Protocol):
    """What `dpaudit audit` and `dpaudit list` use of an entry: a built-in `AuditEntry` or a user's
    `dpaudit.user_audits.UserAuditEntry`, which share one registry, one report and one gate."""

    @property
    def name(self) -> str:
        """The entry's name (one word): its key in the registry."""

    @property
    def algorithm(self) -> str:
        """The audited algorithm (its `dpaudit regret` name), or a user's label for it."""

    @property
    def description(self) -> str:
        """One line on what the entry audits."""

    @property
    def variant(self) -> str:
        """Which variant of the algorithm is audited ("" for the algorithm as published)."""

    @property
    def observable(self) -> str:
        """What the auditor sees (`OBSERVABLES`, or "output" for a mechanism's output)."""

    @property
    def observable_description(self) -> str:
        """The observable in words."""

    @property
    def source(self) -> str:
        """Where the claims come from (paper, theorem)."""

    @property
    def samples(self) -> int:
        """Runs per input of a full audit."""

    @property
    def quick(self) -> bool:
        """Whether the entry is in the default (quick) suite."""

    @property
    def claims(self) -> Sequence[Claim]:
        """The privacy claims the audit is compared with."""

    @property
    def expect(self) -> str:
        """ "violation" if some claim is expected to be violated, else "consistent"."""

    @property
    def relations(self) -> tuple[str, ...]:
        """The neighbouring relations the audit's inputs differ by (`RELATIONS`)."""

    def audit_calls(self) -> int:
        """Number of `dpaudit.audit.audit` calls `run` makes (the CLI's Bonferroni split counts them)."""
        ...

    def run(
        self,
        *,
        samples: int | None = None,
        quick: bool = False,
        confidence: float = 0.95,
        seed: int = 0,
        executor: Any = None,
        regret: bool = True,
        baseline_events: dict[str, Any] | None = None,
    ) -> EntryRecord:
        """Audit the entry; its report record (failures inside the entry recorded, not raised)."""
        ...
