"""Audits of the user's own mechanisms: `register_audit` and the entries it puts in `dpaudit.registry.AUDITS`.

    import dpaudit

    @dpaudit.register_audit(name="shop.count", claim_epsilon=1.0, d0=np.array([0, 1]), d1=np.array([1, 1]),
                            samples=20_000)
    def noisy_count(data, rng, size):
        return data.sum() + rng.laplace(0.0, 1.0, size)

A `UserAuditEntry` has the interface `dpaudit audit` and `dpaudit list` use for catalog entries
(`dpaudit.entries.Entry`: name, algorithm, claims, audit_calls(), run(...) -> `dpaudit.records.EntryRecord`)
and its claim is a `dpaudit.entries.Claim`, so user entries and the built-in catalog share one claim
model, one seed derivation, one registry, one report and one gate. Running one is one call of the core
auditor `dpaudit.audit.audit` (Jagielski, Ullman, Oprea, "Auditing Differentially Private Machine
Learning: How Private is Private SGD?", NeurIPS 2020): the claim is violated when the lower bound
on epsilon, valid with the stated confidence, exceeds the claimed epsilon at the claimed delta.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
import zlib
from collections.abc import Callable
from typing import Any, ClassVar

from dpaudit._interrupt import is_interrupt
from dpaudit._moved import forward
from dpaudit.entries import EXPECTS, Claim
from dpaudit.entry_runner import entry_seed as _entry_seed
from dpaudit.limits import MIN_SAMPLES as _MIN_SAMPLES
from dpaudit.records import (
    ClaimRecord,
    EntryRecord,
    EventCounts,
    EventRecord,
    claim_record,
    entry_record,
    finish_record,
    record_error,
    user_audit_record,
)
from dpaudit.validation import check_choice, check_delta, check_epsilon, check_int_at_least, check_open_unit

__all__ = ["UserAuditEntry", "UserClaim", "register_audit"]

# the seed derivation and the auditor's minimum are shared with the built-in catalog
_, __getattr__ = forward(__name__, {"entry_seed": "dpaudit.entry_runner", "MIN_SAMPLES": "dpaudit.limits"})


class RegistrationError(ValueError):
    """A bad `register_audit(...)` call; names the entry (the loader adds the file)."""


class UserClaim(Claim):
    """The claim of a user entry: a `dpaudit.entries.Claim` labelled "declared" by default, built with the
    arguments in this order: `epsilon` as stated, or the epsilon at `delta` that `accountant` (a
    `dpaudit.accounting` accountant name, or "best") gives for the DpEvent `event`."""

    def __init__(
        self,
        delta: float,
        epsilon: float | None = None,
        event: Any = None,
        accountant: str = "stated",
        expect: str = "consistent",
        label: str = "declared",
        source: str = "",
    ) -> None:
        super().__init__(
            label, delta=delta, accountant=accountant, epsilon=epsilon, event=event, expect=expect, source=source
        )


@dataclasses.dataclass(frozen=True)
class UserAuditEntry:
    """One audit of a user's mechanism: `target(data, rng, size)` on the neighbouring inputs d0, d1
    against one claim, with `samples` runs per input. `module` and `file` say where it was declared
    (the module that called `register_audit`; `algorithm` defaults to its name).  It has the interface
    of every entry (`dpaudit.entries.Entry`)."""

    name: str
    target: Callable[..., Any]
    d0: Any
    d1: Any
    claim: Claim
    samples: int
    algorithm: str
    description: str = ""
    observable: str = "output"
    relation: str = "one-user"
    source: str = ""
    module: str = ""
    file: str = ""
    audit_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    variant: str = ""
    quick: bool = True

    origin: ClassVar[str] = "user"

    @property
    def claims(self) -> tuple[Claim, ...]:
        """The entry's one claim, as a tuple."""
        return (self.claim,)

    @property
    def expect(self) -> str:
        """The claim's expected outcome."""
        return self.claim.expect

    @property
    def relations(self) -> tuple[str, ...]:
        """The entry's one neighbouring relation, as a tuple."""
        return (self.relation,)

    @property
    def observable_description(self) -> str:
        """The observable in words: the `observable` itself."""
        return self.observable

    def audit_calls(self) -> int:
        """Number of `dpaudit.audit.audit` calls `run` makes."""
        return 1

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
        """Audit the entry; return its report record (the shape of a catalog entry's record).

        `quick` and `regret` are accepted for the catalog's interface and change nothing (a user entry
        has one sample size and no regret run). An exception inside the audit (the user's target, the
        accountant) is recorded as `error` with ok = False, so one broken entry cannot hide the others.
        `baseline_events` ({entry name: {claim label: a baseline claim's `event` record}}, the same
        dict for every entry of a `dpaudit audit --baseline` run): the baseline's event of this
        entry's claim is counted again on fresh runs (`recount_event`), the claim's
        `baseline_event_counts`, which `dpaudit.baseline.compare` tests for a rise.
        """
        confidence = check_open_unit(confidence, "confidence")
        n = check_int_at_least(self.samples if samples is None else samples, _MIN_SAMPLES, "samples")
        start = time.perf_counter()
        base = _entry_seed(seed, self.name)
        from dpaudit.audit import describe_target

        target = describe_target(self.target)
        record = entry_record(
            self,
            base,
            [{"relation": self.relation, "description": "d0 vs d1 as declared"}],
            description=self.description or target,
            source=self.source or self.file,
            target=target,
            module=self.module,
        )
        try:
            previous = ((baseline_events or {}).get(self.name) or {}).get(self.claim.label)
            record["claims"] = [self._judge(n, confidence, base, executor, record, previous)]
        except BaseException as exc:  # sys.exit() in a target too: recorded (ok = False), the suite goes on
            if is_interrupt(exc):
                raise
            record_error(record, exc)
        return finish_record(record, start)

    def _judge(
        self,
        samples: int,
        confidence: float,
        seed: int,
        executor: Any,
        record: EntryRecord,
        previous: EventRecord | None = None,
    ) -> ClaimRecord:
        from dpaudit.audit import audit

        claimed = self.claim.value()
        options = dict(self.audit_options)
        if executor is not None:
            options["executor"] = executor
        start = time.perf_counter()
        result = audit(
            self.target,
            self.d0,
            self.d1,
            claim_epsilon=claimed,
            claim_delta=self.claim.delta,
            samples=samples,
            confidence=confidence,
            seed=seed,
            **options,
        )
        record["audits"].append(
            user_audit_record(
                result,
                delta=self.claim.delta,
                claim_epsilon=claimed,
                samples=samples,
                confidence=confidence,
                seed=seed,
                event_epsilon_upper=epsilon_upper(result),
                seconds=round(time.perf_counter() - start, 3),
            )
        )
        claim = claim_record(self.claim, record["audits"], claimed)
        claim["event"] = event_record(result)
        if previous is not None:
            claim["baseline_event_counts"] = self._recount(previous, result.estimation_samples, seed)
        return claim

    def _recount(self, previous: EventRecord, n: int, seed: int) -> EventCounts:
        """The baseline's event `previous` counted on n fresh runs per input (`recount_event`); {"error": why}
        when it cannot be rebuilt (a malformed record, or a user score the entry no longer has)."""
        from dpaudit.audit.event_codec import decode_event

        try:
            event = decode_event(previous["state"], user_score=self.audit_options.get("score"))
        except (ValueError, KeyError, TypeError) as exc:
            return {"error": f"the baseline's event cannot be rebuilt: {exc}"}
        try:
            first, second = recount_event(self.target, self.d0, self.d1, event, n, seed)
        except EventMismatch as exc:
            return {"error": str(exc)}
        return {"count_first": first, "count_second": second, "nobs": n, "direction": event.direction}


class EventMismatch(ValueError):
    """The baseline's event cannot score this run's outputs (the target's output changed shape)."""


#: Mixed into the entry seed for the runs that count a baseline's event, so they share no stream
#: with the audit's own runs.
_RECOUNT_TAG = zlib.crc32(b"dpaudit baseline event")
#: Runs per input drawn at once when counting a baseline's event (only the counts are kept).
RECOUNT_CHUNK = 100_000


def event_record(result: Any) -> EventRecord | None:
    """The event the audit chose (its reported direction) and its estimation-split counts, as a report's
    claim keeps them: `state` (the JSON of `dpaudit.audit.event_codec`), `event` (readable), `direction`,
    `count_first`, `count_second`, `nobs`, `delta`.  None when the audit recorded no single event
    (cross-fitted)."""
    chosen = next(d for d in result.directions if d.direction == result.direction)
    if not getattr(chosen, "event_state", ""):
        return None
    return {
        "state": chosen.event_state,
        "event": chosen.event,
        "direction": chosen.direction,
        "count_first": int(chosen.count_first),
        "count_second": int(chosen.count_second),
        "nobs": int(chosen.nobs),
        "delta": float(result.claim_delta),
    }


def recount_event(target: Callable[..., Any], d0: Any, d1: Any, event: Any, n: int, seed: int) -> tuple[int, int]:
    """(count on the event's first input, on its second) of `event` (`dpaudit.audit.event_codec.ChosenEvent`)
    over n fresh runs of `target` per input, seeded from SeedSequence([seed, _RECOUNT_TAG]) and drawn in
    chunks of at most RECOUNT_CHUNK runs (memory bounded by one chunk)."""
    import numpy as np

    from dpaudit.audit.outputs import normalise

    sizes = [min(RECOUNT_CHUNK, n - start) for start in range(0, n, RECOUNT_CHUNK)]
    counts = [0, 0]
    for size, chunk in zip(sizes, np.random.SeedSequence([int(seed), _RECOUNT_TAG]).spawn(len(sizes))):
        for side, (data, child) in enumerate(zip((d0, d1), chunk.spawn(2))):
            out, _ = normalise(target(data, np.random.default_rng(child), size), size, ("d0", "d1")[side])
            try:
                counts[side] += event.count(out)
            except Exception as exc:  # noqa: BLE001  (the target's own exceptions propagate from the line above)
                raise EventMismatch(
                    f"the baseline's event does not apply to these outputs ({type(exc).__name__}: {exc})"
                ) from None
    return (counts[0], counts[1]) if event.direction == "d0>d1" else (counts[1], counts[0])


def epsilon_upper(result: Any) -> float:
    """An upper confidence bound on the epsilon of the event the audit chose (its reported direction):
    log((p0_upper - delta) / p1_lower) with one-sided Clopper-Pearson bounds on the estimation split's
    counts at the level the lower bound used per proportion, (1 - confidence)/4 (two directions x two
    proportions). With `epsilon_lower` it brackets that event's epsilon (reported; `dpaudit.baseline`
    tests the event itself, counted again on fresh runs, not this interval). +inf when p1_lower is 0."""
    from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates

    chosen = next(d for d in result.directions if d.direction == result.direction)
    level = (1.0 - result.confidence) / 4
    p0 = float(cp_upper(chosen.count_first, chosen.nobs, level))
    p1 = float(cp_lower(chosen.count_second, chosen.nobs, level))
    if p1 <= 0.0:
        return math.inf
    return float(epsilon_from_rates(p0, p1, result.claim_delta))


def _target_of(obj: Any, name: str, observable: str | None, target_args: dict[str, Any]) -> Callable[..., Any]:
    """`obj` as `target(data, rng, size)`: a function or callable object as it is; an algorithm object
    (`dpaudit.interface.PrivateAlgorithm`: one with a `target(...)` audit hook) through
    `obj.target(observable=..., **target_args)`; a class is instantiated with no arguments first."""
    if inspect.isclass(obj):
        try:
            obj = obj()
        except TypeError as exc:
            raise RegistrationError(
                f"entry {name!r}: the class {obj.__qualname__} cannot be built without "
                f"arguments ({exc}); register an instance instead"
            ) from None
    hook = getattr(obj, "target", None)
    if callable(hook) and not inspect.isfunction(obj):
        kwargs = dict(target_args, **({"observable": observable} if observable is not None else {}))
        try:
            target = hook(**kwargs)
        except TypeError as exc:
            raise RegistrationError(
                f"entry {name!r}: {type(obj).__name__}.target({', '.join(kwargs)}) failed: {exc}"
            ) from None
        if not callable(target):
            raise RegistrationError(
                f"entry {name!r}: {type(obj).__name__}.target() must return target(data, rng, size), got {target!r}"
            )
        return target
    if not callable(obj):
        raise RegistrationError(
            f"entry {name!r}: target must be callable as target(data, rng, size) or an "
            f"algorithm object with a target() hook, got {obj!r}"
        )
    if observable is not None or target_args:
        raise RegistrationError(f"entry {name!r}: observable and target_args apply to algorithm objects only")
    return obj


# audit options an entry does not take: what sets each instead
_SET_ELSEWHERE = {
    "confidence": "the suite (`dpaudit audit --confidence`, `UserAuditEntry.run(confidence=...)`)",
    "seed": "the suite (`dpaudit audit --seed`; each entry derives its own seed from it)",
    "claim_parts": "register_audit's claim= (it is derived from the claim)",
}


def _audit_option_names() -> list[str]:
    """The keywords `register_audit` passes on to `dpaudit.audit.audit` (its own arguments excluded)."""
    from dpaudit.audit.options import AuditOptions

    own = set(inspect.signature(register_audit).parameters)
    return sorted({f.name for f in dataclasses.fields(AuditOptions)} - own - set(_SET_ELSEWHERE))


def _check_audit_options(options: dict[str, Any], claim_epsilon: float, claim_delta: float, samples: int) -> None:
    """Check every audit option as the audit will (`AuditOptions.create`), before any run: ValueError
    naming the option (an unknown one, one the entry sets itself, or a bad value)."""
    import difflib

    from dpaudit.audit.options import AuditOptions

    for key in sorted(options):
        if key in _SET_ELSEWHERE:
            raise ValueError(f"audit option {key}= is not an entry's: it is set by {_SET_ELSEWHERE[key]}")
    known = _audit_option_names()
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(
            f"unknown audit option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}{hint}; "
            f"register_audit passes on only {', '.join(known)}"
        )
    try:
        AuditOptions.create(claim_epsilon=claim_epsilon, claim_delta=claim_delta, samples=samples, **options)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad audit option: {exc}") from None


def register_audit(
    *,
    name: str,
    d0: Any,
    d1: Any,
    claim_epsilon: float | None = None,
    claim_delta: float = 0.0,
    claim: Any = None,
    claim_accountant: str = "best",
    samples: int = 20_000,
    expect: str = "consistent",
    algorithm: str | None = None,
    description: str = "",
    observable: str | None = None,
    target_args: dict[str, Any] | None = None,
    relation: str = "one-user",
    source: str = "",
    **audit_options: Any,
) -> Callable[[Any], Any]:
    """Decorator registering an audit of the decorated target in `dpaudit.registry.AUDITS`, for `dpaudit audit`.

    Parameters
    ----------
    name : str
        The entry's name: one word, unique across the project's modules and the catalog.
    d0, d1 : any
        The neighbouring inputs the target is run on.
    claim_epsilon : float, optional
        The claimed epsilon (> 0) at `claim_delta`; or give `claim` (exactly one of the two).
    claim_delta : float
        In [0, 1).
    claim : dp_accounting.DpEvent, optional
        The claim as an event: its epsilon at `claim_delta` under `claim_accountant` ("best" by default).
    samples : int
        Runs per input (>= 10).
    expect : {"consistent", "violation"}
        "violation" declares a known-broken twin the audit must catch.
    algorithm, description, source : str
        How the report groups and describes the entry (default group: the declaring module).
    observable, target_args : optional
        For an algorithm object (`dpaudit.interface.PrivateAlgorithm`): its hook
        `target(observable=observable, **target_args)` gives the target (e.g. `target_args={"horizon": 50}`).
    relation : str
        The neighbouring relation d0 and d1 stand for, as the report names it.
    **audit_options
        Passed on to `dpaudit.audit` (e.g. `score`, `float_check`, `families`), checked here as it checks
        them; `confidence` and `seed` are the suite's, not an entry's.  `float_check` defaults to the
        project's `[tool.dpaudit] float_check`, else "report".

    Returns
    -------
    callable
        The decorator; it registers the target (a function or callable object, or an algorithm object) and
        returns it unchanged.

    Raises
    ------
    RegistrationError
        A ValueError naming the entry: a bad argument, an unknown audit option, a name registered twice.

    Examples
    --------
    >>> import dpaudit
    >>> from dpaudit.registry import AUDITS
    >>> @dpaudit.register_audit(name="doc.count", claim_epsilon=1.0, d0=0.0, d1=1.0, samples=20_000,
    ...                         float_check="gate")
    ... def count(x, rng, size):
    ...     return x + rng.laplace(0.0, 1.0, size)
    >>> (claim,) = AUDITS.get("doc.count").run()["claims"]
    >>> claim["verdict"], claim["floating_point"]["verdict"]   # the float leak gates
    ('violation', 'violation')
    >>> AUDITS.remove("doc.count")
    """

    def fail(message: str) -> RegistrationError:
        return RegistrationError(f"entry {name!r}: {message}")

    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise RegistrationError(f"register_audit: name must be a non-empty word, got {name!r}")
    try:
        delta = check_delta(claim_delta, "claim_delta")
        check_choice(expect, EXPECTS, "expect")
        if (claim_epsilon is None) == (claim is None):
            raise ValueError("give exactly one of claim_epsilon (a number) or claim (a DpEvent)")
        if claim is not None:
            import dp_accounting

            from dpaudit.accounting import ACCOUNTANTS

            if not isinstance(claim, dp_accounting.DpEvent):
                raise ValueError(f"claim must be a dp_accounting.DpEvent, got {claim!r}")
            if claim_accountant != "best":
                check_choice(claim_accountant, tuple(ACCOUNTANTS), "claim_accountant")
            user_claim = UserClaim(delta=delta, event=claim, accountant=claim_accountant, expect=expect)
            value = user_claim.value()
            if not 0.0 < value < math.inf:
                raise ValueError(
                    f"claim gives epsilon = {value!r} at claim_delta = {delta!r} under the "
                    f"{claim_accountant!r} accountant; an audit needs a positive, finite claim"
                )
        else:
            user_claim = UserClaim(delta=delta, epsilon=check_epsilon(claim_epsilon, "claim_epsilon"), expect=expect)
        n = check_int_at_least(samples, _MIN_SAMPLES, "samples")
        claimed = user_claim.epsilon if user_claim.epsilon is not None else value
        _check_audit_options(audit_options, claimed, delta, n)
    except RegistrationError:
        raise
    except (TypeError, ValueError) as exc:  # either names the argument; the loader adds the file
        raise fail(str(exc)) from None

    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None  # the declaring module names and groups the entry
    module = caller.f_globals.get("__name__", "") if caller is not None else ""
    file = caller.f_globals.get("__file__", "") if caller is not None else ""

    def decorate(obj: Any) -> Any:
        from dpaudit.registry import AUDITS

        target = _target_of(obj, name, observable, dict(target_args or {}))
        entry = UserAuditEntry(
            name=name,
            target=target,
            d0=d0,
            d1=d1,
            claim=user_claim,
            samples=n,
            algorithm=algorithm or module or "user",
            description=description,
            observable=observable or "output",
            relation=relation,
            source=source,
            module=module,
            variant=(description or "known-broken twin") if expect == "violation" else "",
            file=file or "",
            audit_options=dict(audit_options),
        )
        if name in AUDITS:
            raise fail("is registered twice (entry names must be unique across all audit modules and the catalog)")
        AUDITS.register(name, entry)
        return obj

    return decorate
