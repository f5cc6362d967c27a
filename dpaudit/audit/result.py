"""Audit results: frozen value objects that carry everything needed to reproduce them, with JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["AuditResult", "CurveCheck", "DirectionResult", "TimeBox"]

#: 2: `target` added (schema-1 results read back with target "").
#: 3: `float_check` and `floating_point` added (older results read back with "off" and None).
#: 4: `time_box` added (older results read back with None).
RESULT_SCHEMA = 4


@dataclass(frozen=True)
class DirectionResult:
    """One direction of the audit: events more likely under `first` than under `second` input.

    `event` reads {sign*score > threshold}; `score` is the JSON description of the score function
    (its name and fitted parameters).  Counts are on the estimation split (`nobs` runs per side).  `p_first_lower` and
    `p_second_upper` are the Clopper-Pearson bounds behind `epsilon_lower`; the mu fields are the
    same for the event chosen for the Gaussian-DP bound (a threshold of the lead event's score).  The trade-off points are point estimates
    of (type I, type II) errors of the tests {score > t} that reject `second`:
    alpha = P_second(E), beta = 1 - P_first(E) (Dong, Roth, Su 2022), measured on the
    estimation split when a claimed curve was tested, else on the selection split (`tradeoff_split`).
    """

    direction: str
    event: str
    score: str
    threshold: float
    nobs: int
    count_first: int
    count_second: int
    p_first_lower: float
    p_second_upper: float
    epsilon_lower: float
    epsilon_point: float
    mu_threshold: float
    mu_count_first: int
    mu_count_second: int
    mu_lower: float
    mu_point: float
    tradeoff_split: str
    tradeoff_thresholds: tuple[float, ...]
    tradeoff_alpha: tuple[float, ...]
    tradeoff_beta: tuple[float, ...]
    #: One-sided level of each of the two Clopper-Pearson bounds behind `epsilon_lower`
    #: (`dpaudit.audit.selection.direction_levels`; nan in results written before it was recorded).
    level: float = math.nan
    #: How many epsilon events this direction tested (the lead and its alternates,
    #: `AuditOptions.events_per_direction`); `event` is the one with the best bound.
    events_tested: int = 1
    #: The direction's lead event (the best predicted on the selection split), whose mu and trade-off
    #: fields these are; "" in results written before it was recorded, and when cross-fitted.
    lead_event: str = ""
    #: The chosen epsilon event itself (fitted score, sign, threshold) as JSON text
    #: (`dpaudit.audit.event_codec.decode_event` rebuilds it, so it can be counted on new runs);
    #: "" in results written before it was recorded, and when cross-fitted (two events).
    event_state: str = ""
    #: How `epsilon_lower` was bounded: "clopper-pearson" (from `p_first_lower` and `p_second_upper`) or
    #: "ratio", the thinned ratio test at 2 `level` (`dpaudit.audit.ratio`; the Clopper-Pearson fields are then
    #: for reference only).
    bound: str = "clopper-pearson"
    #: The ratio test's thinned runs and counts: (runs kept of the first input, its events, of the second,
    #: its events); () for "clopper-pearson", and when a thinning draw exceeded the runs (no bound).
    thinned: tuple[int, ...] = ()


@dataclass(frozen=True)
class CurveCheck:
    """The claimed delta(epsilon) curve tested at every scanned event (Bonferroni over all of them).

    delta_lower[i] = max over events of (p_first_lower - e^eps p_second_upper), a lower bound on the
    true delta(epsilons[i]) valid simultaneously for all i with probability >= 1 - `alpha`.
    `violation` when delta_lower exceeds claimed_delta somewhere.
    """

    claim: str
    alpha: float
    events_tested: int
    epsilons: tuple[float, ...]
    claimed_delta: tuple[float, ...]
    delta_lower: tuple[float, ...]
    violation: bool
    worst_epsilon: float
    worst_excess: float


def _encode(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "inf", "-inf", "nan": strict JSON has no non-finite numbers
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode_float(value: Any) -> float:
    return float(value)


@dataclass(frozen=True)
class TimeBox:
    """How a time-boxed audit (`time_budget=`) spent its budget (`dpaudit.audit.anytime`).

    Stage k audited `stage_samples[k]` fresh runs per input at error level `stage_levels[k]` =
    (1 - confidence) / ((k + 1)(k + 2)) and bounded epsilon by `stage_epsilon_lower[k]`; the result is
    stage `best_stage`.  `samples_drawn` counts the runs per input of every stage, `seconds` the wall time
    of all of them, and `stopped` says why no further stage ran: "violation" (settled) or "budget".
    """

    budget: float
    seconds: float
    stopped: str
    best_stage: int
    stage_samples: tuple[int, ...]
    stage_levels: tuple[float, ...]
    stage_epsilon_lower: tuple[float, ...]
    samples_drawn: int


@dataclass(frozen=True)
class AuditResult:
    """Outcome of `dpaudit.audit.audit`.

    `epsilon_lower` is a lower bound on the epsilon of the target at `claim_delta`, valid with
    probability >= `confidence` (both directions together); `verdict` is "violation" when it exceeds
    `claim_epsilon` (or when a claimed curve is contradicted), else "consistent".  `mu_lower` is a
    lower bound on the Gaussian-DP mu, a separate statement valid with probability >= `confidence`.
    `target` names the audited target without memory addresses (`dpaudit.audit.describe_target`),
    so two results of the same audit are equal and their JSON is byte-identical.

    `floating_point` is the implementation verdict of scalar float outputs (`float_check` "report" or
    "gate"): an audit of the same target with the IEEE 754 bit features added (Mironov, "On Significance
    of the Least Significant Bits for Differential Privacy", CCS 2012), on runs independent of this one's.
    1 - `confidence` is then split evenly between the two, so both hold together with probability >=
    `confidence`.  `verdict` stays the algorithmic one; `gate_verdict` is what a CI gate fails on.

    `time_box` is set by a time-boxed audit (`time_budget=`): the stages it ran and the runs it reached;
    `samples` is then the runs per input of the stage reported.
    """

    epsilon_lower: float
    verdict: str
    claim_epsilon: float
    claim_delta: float
    confidence: float
    samples: int
    seed: int
    chunk_size: int
    selection_fraction: float
    selection_samples: int
    estimation_samples: int
    output_shape: tuple[int, ...]
    discrete: bool
    direction: str
    directions: tuple[DirectionResult, ...]
    mu_lower: float
    mu_point: float
    curve: CurveCheck | None
    version: str
    target: str = ""
    float_check: str = "off"
    floating_point: AuditResult | None = None
    time_box: TimeBox | None = None
    schema: int = RESULT_SCHEMA

    @property
    def gate_verdict(self) -> str:
        """ "violation" when the algorithmic verdict is one, or the floating-point verdict is one under
        `float_check="gate"`; else "consistent"."""
        fp = self.floating_point
        if self.float_check == "gate" and fp is not None and fp.verdict == "violation":
            return "violation"
        return self.verdict

    @property
    def tightness(self) -> float:
        """epsilon_lower / claim_epsilon: how much of the claim the audit could demonstrate."""
        return self.epsilon_lower / self.claim_epsilon

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (non-finite floats as the strings "inf", "-inf", "nan")."""
        out = _encode(dataclasses.asdict(self))
        out["type"] = "AuditResult"
        return out

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON text; `AuditResult.from_json` reads it back."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditResult:
        """Inverse of `to_dict`."""
        data = dict(data)
        if data.pop("type", "AuditResult") != "AuditResult":
            raise ValueError("not an AuditResult")
        data["directions"] = tuple(_direction(d) for d in data["directions"])
        data["curve"] = None if data["curve"] is None else _curve(data["curve"])
        data["output_shape"] = tuple(data["output_shape"])
        if data.get("floating_point") is not None:
            data["floating_point"] = cls.from_dict(data["floating_point"])
        if data.get("time_box") is not None:
            data["time_box"] = _time_box(data["time_box"])
        for key in ("epsilon_lower", "mu_lower", "mu_point", "claim_epsilon", "claim_delta"):
            data[key] = _decode_float(data[key])
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> AuditResult:
        """Read a result written by `to_json`."""
        return cls.from_dict(json.loads(text))


def _direction(d: dict[str, Any]) -> DirectionResult:
    d = dict(d)
    for key in ("tradeoff_thresholds", "tradeoff_alpha", "tradeoff_beta"):
        d[key] = tuple(_decode_float(v) for v in d[key])
    if "thinned" in d:
        d["thinned"] = tuple(int(v) for v in d["thinned"])
    for key in (
        "threshold",
        "p_first_lower",
        "p_second_upper",
        "epsilon_lower",
        "epsilon_point",
        "mu_threshold",
        "mu_lower",
        "mu_point",
        "level",
    ):
        if key in d:
            d[key] = _decode_float(d[key])
    return DirectionResult(**d)


def _time_box(d: dict[str, Any]) -> TimeBox:
    d = dict(d)
    for key in ("stage_samples", "stage_levels"):
        d[key] = tuple(d[key])
    d["stage_epsilon_lower"] = tuple(_decode_float(v) for v in d["stage_epsilon_lower"])
    return TimeBox(**d)


def _curve(d: dict[str, Any]) -> CurveCheck:
    d = dict(d)
    for key in ("epsilons", "claimed_delta", "delta_lower"):
        d[key] = tuple(_decode_float(v) for v in d[key])
    for key in ("worst_epsilon", "worst_excess", "alpha"):
        d[key] = _decode_float(d[key])
    return CurveCheck(**d)
