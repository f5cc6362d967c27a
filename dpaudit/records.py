"""The report's entry record: one typed record, built here and read through these types.

`dpaudit audit` runs each entry (`dpaudit.entries.Entry.run`) and gets an `EntryRecord`: what was
audited, every audit call (`AuditRecord`), every claim's verdict (`ClaimRecord`), the regret run and
the error, if any.  `dpaudit.report` puts the records into report.json as they are (and adds
`interval`, `epsilon_upper` and `pin`); `dpaudit.baseline`, `dpaudit.junit` and the CLI read them.
Records are plain JSON-ready dicts (a report read back from disk is the same type), so the types are
TypedDicts; every builder keeps its keys in the order report.json has always written them.

Three kinds of entry make three shapes, told apart by optional keys: a built-in many-run entry
(`pin_note`, `mu_upper`, `target`, `audit_options`; audits with the auditor's optional fields), a
one-run entry (also `mode` and `one_run`; audits and claims with `num_canaries`, `guesses`, `correct`
and `analysis`, audits of the f-DP analysis with `mu_lower`), and a user's entry (`origin` "user",
`module`; audits and claims with `event_epsilon_upper`, claims with the chosen `event` and, against a
baseline, `baseline_event_counts`).
"""

from __future__ import annotations

import math
import time
import traceback
from typing import TYPE_CHECKING, Any, Required, TypedDict, cast

if TYPE_CHECKING:
    from dpaudit.entries import Claim, Entry

__all__ = [
    "AuditRecord",
    "ClaimRecord",
    "EntryRecord",
    "EventCounts",
    "EventRecord",
    "FloatingPointRecord",
    "PairRecord",
    "PinNoteRecord",
    "RegretRecord",
    "TimeBoxRecord",
    "audit_record",
    "claim_record",
    "entry_record",
    "finish_record",
    "floating_point_record",
    "json_float",
    "lost_record",
    "one_run_audit_record",
    "record_error",
    "user_audit_record",
]


class PairRecord(TypedDict):
    """A neighbouring pair as the report shows it."""

    relation: str
    description: str


class AuditRecord(TypedDict, total=False):
    """One audit call: its settings and the bound it gave (`pair`: the index of its neighbouring pair)."""

    delta: Required[float]
    claim_epsilon: Required[float]
    samples: Required[int | str]  # "one run" for a one-run audit
    confidence: Required[float]
    seed: Required[int]
    epsilon_lower: Required[float]
    verdict: Required[str]
    seconds: Required[float]
    pair: Required[int]
    # user entries: the Clopper-Pearson upper bound on the chosen event's epsilon
    event_epsilon_upper: float
    # many-run audits: the auditor's result fields
    direction: str
    bound: str  # how the reported direction's epsilon was bounded: "clopper-pearson" or "ratio" (dpaudit.audit.ratio)
    mu_lower: float | None
    mu_point: float | None
    selection_samples: int
    estimation_samples: int
    chunk_size: int
    curve_violation: bool
    tradeoff: dict[str, list[float]]
    check: str  # a library entry's audits: which bound, "stated" (algorithmic) or "floating-point"
    floating_point: FloatingPointRecord  # scalar float outputs under float_check "report" or "gate"
    time_box: TimeBoxRecord  # audits with a time budget: the stages and the runs reached
    # one-run audits
    mode: str
    horizon: int
    num_canaries: int
    guesses: int
    correct: int
    k_plus: int
    k_minus: int
    selection: str
    analysis: str  # "epsilon" or "fdp" (`dpaudit.entry_runner.one_run_analysis`)


class EventRecord(TypedDict):
    """The event a user entry's audit chose and its estimation-split counts (`dpaudit.baseline` recounts it)."""

    state: str
    event: str
    direction: str
    count_first: int
    count_second: int
    nobs: int
    delta: float


class EventCounts(TypedDict, total=False):
    """A baseline's event counted again on fresh runs, or {"error": why} when it could not be."""

    count_first: int
    count_second: int
    nobs: int
    direction: str
    error: str


class FloatingPointRecord(TypedDict):
    """The implementation verdict of float outputs (`dpaudit.audit.AuditResult.floating_point`): its bound,
    its verdict against the same claim, and whether it gates (`float_check="gate"`)."""

    epsilon_lower: float
    verdict: str
    confidence: float
    gate: bool


class TimeBoxRecord(TypedDict):
    """How a time-boxed audit spent its budget (`dpaudit.audit.AuditResult.time_box`): the runs per side of
    each stage, the stage reported, the runs drawn in all, the seconds, and why it stopped."""

    budget: float
    seconds: float
    stopped: str
    stage_samples: list[int]
    best_stage: int
    samples_drawn: int


class ClaimRecord(TypedDict, total=False):
    """One claim's verdict: the claimed epsilon against the best audit bound at the claim's delta."""

    label: Required[str]
    epsilon: Required[float]
    delta: Required[float]
    accountant: Required[str]
    by_accountant: Required[dict[str, float | None]]
    source: Required[str]
    expect: Required[str]
    epsilon_lower: Required[float]
    confidence: Required[float]
    pair: Required[int]
    verdict: Required[str]
    tightness: Required[float | None]
    ok: Required[bool]
    event_epsilon_upper: float  # user entries: the chosen event's Clopper-Pearson upper bound
    event: EventRecord | None  # user entries
    baseline_event_counts: EventCounts  # user entries, against a baseline
    floating_point: FloatingPointRecord  # the best floating-point bound at the claim's delta, when audited
    mode: str  # one-run entries
    num_canaries: int
    guesses: int
    correct: int
    analysis: str


class RegretRecord(TypedDict):
    """A `dpaudit regret` run: the mean regret curve at up to 60 checkpoints and its 95% band."""

    algorithm: str
    horizon: int
    runs: int
    seed: int
    params: dict[str, Any]
    final_mean: float
    final_ci: list[float]
    checkpoints: list[int]
    mean: list[float]
    lower: list[float]
    upper: list[float]
    seconds: float


class PinNoteRecord(TypedDict):
    """Why an entry's interval stays wide (`dpaudit.entries.PinNote`)."""

    loose: str
    reason: str


class EntryRecord(TypedDict, total=False):
    """One entry's record (module docstring).  `ok` and `seconds` are set by `finish_record` (every
    record the runners return has them); `traceback` accompanies an `error` raised inside the entry;
    `interval`, `epsilon_upper` and `pin` are added by `dpaudit.report.build_report`."""

    origin: str
    module: str
    name: Required[str]
    algorithm: Required[str]
    variant: Required[str]
    description: Required[str]
    target: Any
    observable: Required[str]
    observable_description: Required[str]
    expect: Required[str]
    source: Required[str]
    seed: Required[int | None]
    pairs: Required[list[PairRecord]]
    audits: Required[list[AuditRecord]]
    claims: Required[list[ClaimRecord]]
    regret: Required[RegretRecord | None]
    error: Required[str | None]
    traceback: str
    pin_note: PinNoteRecord | None
    mu_upper: float | None
    mode: str
    one_run: dict[str, int]
    audit_options: dict[str, Any]
    library: str  # a library entry's (dpaudit.audits.libraries): the library and its installed version
    version: str
    reproducible: bool
    ok: bool
    seconds: float
    interval: dict[str, Any] | None
    epsilon_upper: float | None
    pin: float | None


def json_float(value: Any) -> float | None:
    """`value` as a finite float, else None (JSON has no inf or NaN)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def entry_record(
    entry: Entry,
    seed: int,
    pairs: list[PairRecord],
    *,
    description: str | None = None,
    source: str | None = None,
    target: Any = None,
    module: str | None = None,
) -> EntryRecord:
    """The head of `entry`'s record, before any audit: no audits, claims, regret or error yet.

    `description` and `source` replace the entry's own; a user's entry gives its `target` (described)
    and its `module`, and is marked `origin` "user"."""
    record: dict[str, Any] = {
        "name": entry.name,
        "algorithm": entry.algorithm,
        "variant": entry.variant,
        "description": entry.description if description is None else description,
    }
    if target is not None:
        record["target"] = target
    record.update(
        observable=entry.observable,
        observable_description=entry.observable_description,
        expect=entry.expect,
        source=entry.source if source is None else source,
        seed=seed,
    )
    if module is not None:
        record.update(origin="user", module=module)
    record.update(pairs=pairs, audits=[], claims=[], regret=None, error=None)
    return cast(EntryRecord, record)


def _tradeoff_of(result: Any) -> dict[str, list[float]] | None:
    """The auditor's empirical trade-off points (type I error alpha, type II error beta), both directions."""
    import numpy as np

    alpha = [a for d in getattr(result, "directions", ()) for a in d.tradeoff_alpha]
    beta = [b for d in getattr(result, "directions", ()) for b in d.tradeoff_beta]
    pts = np.array([(a, b) for a, b in zip(alpha, beta) if math.isfinite(a) and math.isfinite(b)])
    if pts.size == 0:
        return None
    pts = pts[np.argsort(pts[:, 0])]
    return {"alpha": pts[:, 0].round(6).tolist(), "beta": pts[:, 1].round(6).tolist()}


_OPTIONAL_RESULT_FIELDS = ("mu_lower", "mu_point", "direction", "selection_samples", "estimation_samples", "chunk_size")


def _bound_of(result: Any) -> str | None:
    """How the reported direction's epsilon was bounded (`DirectionResult.bound`); None without directions."""
    return next((d.bound for d in getattr(result, "directions", ()) if d.direction == result.direction), None)


def floating_point_record(result: Any) -> FloatingPointRecord | None:
    """The result's floating-point verdict as a record; None when it has none."""
    fp = getattr(result, "floating_point", None)
    if fp is None:
        return None
    return {
        "epsilon_lower": float(fp.epsilon_lower),
        "verdict": str(fp.verdict),
        "confidence": float(fp.confidence),
        "gate": result.float_check == "gate",
    }


def audit_record(
    result: Any,
    *,
    delta: float,
    claim_epsilon: float,
    samples: int,
    confidence: float,
    seed: int,
    seconds: float,
    pair: int,
) -> AuditRecord:
    """A built-in entry's audit call from its `dpaudit.audit.AuditResult`."""
    record: dict[str, Any] = {
        "delta": delta,
        "claim_epsilon": claim_epsilon,
        "samples": samples,
        "confidence": confidence,
        "seed": seed,
        "epsilon_lower": float(result.epsilon_lower),
        "verdict": str(result.verdict),
        "seconds": seconds,
    }
    for name in _OPTIONAL_RESULT_FIELDS:
        if hasattr(result, name):
            value = getattr(result, name)
            record[name] = value if isinstance(value, (str, int)) else json_float(value)
    bound = _bound_of(result)
    if bound is not None:
        record["bound"] = bound
    if getattr(result, "curve", None) is not None:
        record["curve_violation"] = bool(result.curve.violation)
    curve = _tradeoff_of(result)
    if curve is not None:
        record["tradeoff"] = curve
    fp = floating_point_record(result)
    if fp is not None:
        record["floating_point"] = fp
    record["pair"] = pair
    return cast(AuditRecord, record)


def one_run_audit_record(
    result: Any, *, delta: float, claim_epsilon: float, confidence: float, seed: int, seconds: float, horizon: int
) -> AuditRecord:
    """A one-run entry's audit call from its `dpaudit.audit.OneRunResult` (one per claimed delta): its
    `analysis` ("epsilon" or "fdp") and, for "fdp", `mu_lower` (the largest Gaussian-DP mu the run refutes)."""
    record: AuditRecord = {
        "delta": delta,
        "claim_epsilon": claim_epsilon,
        "samples": "one run",
        "confidence": confidence,
        "seed": seed,
        "epsilon_lower": float(result.epsilon_lower),
        "verdict": result.verdict,
        "seconds": seconds,
        "pair": 0,
        "mode": "one-run",
        "horizon": horizon,
        "num_canaries": result.num_canaries,
        "guesses": result.guesses,
        "correct": result.correct,
        "k_plus": result.k_plus,
        "k_minus": result.k_minus,
        "selection": result.selection,
        "analysis": result.analysis,
    }
    if result.mu_lower is not None:
        record["mu_lower"] = float(result.mu_lower)
    return record


def user_audit_record(
    result: Any,
    *,
    delta: float,
    claim_epsilon: float,
    samples: int,
    confidence: float,
    seed: int,
    event_epsilon_upper: float,
    seconds: float,
) -> AuditRecord:
    """A user entry's audit call (its one pair) from its `dpaudit.audit.AuditResult`."""
    record: AuditRecord = {
        "delta": delta,
        "claim_epsilon": claim_epsilon,
        "samples": samples,
        "confidence": confidence,
        "seed": seed,
        "epsilon_lower": float(result.epsilon_lower),
        "event_epsilon_upper": event_epsilon_upper,
        "verdict": str(result.verdict),
        "direction": result.direction,
        "mu_lower": float(result.mu_lower),
        "mu_point": float(result.mu_point),
        "pair": 0,
        "seconds": seconds,
    }
    bound = _bound_of(result)
    if bound is not None:
        record["bound"] = bound
    fp = floating_point_record(result)
    if fp is not None:
        record["floating_point"] = fp
    box = getattr(result, "time_box", None)
    if box is not None:
        record["samples"] = int(result.samples)
        record["time_box"] = {
            "budget": box.budget,
            "seconds": round(box.seconds, 3),
            "stopped": box.stopped,
            "stage_samples": list(box.stage_samples),
            "best_stage": box.best_stage,
            "samples_drawn": box.samples_drawn,
        }
    return record


def claim_record(claim: Claim, audits: list[AuditRecord], value: float | None = None) -> ClaimRecord:
    """`claim` judged by the audit with the largest bound at its delta (`value`: its epsilon, when known).

    Violated when that bound exceeds the claimed epsilon; `ok` when the verdict is the one expected.
    The audit's `event_epsilon_upper` is carried over where it has one (user entries)."""
    value = claim.value() if value is None else value
    best = max((a for a in audits if a["delta"] == claim.delta), key=lambda a: a["epsilon_lower"])
    verdict = "violation" if best["epsilon_lower"] > value else "consistent"
    record: dict[str, Any] = {
        "label": claim.label,
        "epsilon": value,
        "delta": claim.delta,
        "accountant": claim.accountant,
        "by_accountant": claim.by_accountant(),
        "source": claim.source,
        "expect": claim.expect,
        "epsilon_lower": best["epsilon_lower"],
    }
    if "event_epsilon_upper" in best:
        record["event_epsilon_upper"] = best["event_epsilon_upper"]
    float_audits = [a["floating_point"] for a in audits if a["delta"] == claim.delta and "floating_point" in a]
    if float_audits:
        fp = max(float_audits, key=lambda f: f["epsilon_lower"])
        record["floating_point"] = fp
        if fp["gate"] and fp["verdict"] == "violation":
            verdict = "violation"
    record.update(
        confidence=best["confidence"],
        pair=best["pair"],
        verdict=verdict,
        tightness=best["epsilon_lower"] / value if 0 < value < math.inf else None,
        ok=verdict == claim.expect,
    )
    return cast(ClaimRecord, record)


def record_error(record: EntryRecord, exc: BaseException) -> None:
    """Record an exception raised inside the entry (ok becomes False at `finish_record`)."""
    record["error"] = f"{type(exc).__name__}: {exc}"
    record["traceback"] = traceback.format_exc(limit=6)


def finish_record(record: EntryRecord, start: float) -> EntryRecord:
    """`ok` (no error, every claim as expected) and the entry's `seconds` since `start` (perf_counter)."""
    record["ok"] = record["error"] is None and all(c["ok"] for c in record["claims"])
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def lost_record(entry: Any, error: str) -> EntryRecord:
    """The record of an entry that returned none (its worker died, or dpaudit failed around it): every
    field the report reads, whatever kind of entry (built-in or user's) it is."""
    origin = {"origin": "user", "module": entry.module} if getattr(entry, "origin", "") == "user" else {}
    record = {
        **origin,
        "name": entry.name,
        "algorithm": getattr(entry, "algorithm", ""),
        "variant": getattr(entry, "variant", ""),
        "description": getattr(entry, "description", ""),
        "observable": getattr(entry, "observable", ""),
        "observable_description": getattr(entry, "observable_description", getattr(entry, "observable", "")),
        "expect": getattr(entry, "expect", "consistent"),
        "source": getattr(entry, "source", ""),
        "seed": None,
        "pairs": [],
        "audits": [],
        "claims": [],
        "regret": None,
        "pin_note": None,
        "mu_upper": None,
        "error": error,
        "ok": False,
        "seconds": 0.0,
    }
    return cast(EntryRecord, record)
