"""What each algorithm declares about its privacy: relation, trust model, event, claim, correction.

The algorithm *describes* (STYLE.md "Describe, then compute"): `event` is the dp-accounting
`DpEvent` tree of what the implementation really releases, built from its parameters and
its composition structure (parallel over disjoint users, sequential where a user repeats);
accountants turn it into numbers. `claim` is the paper's own guarantee as stated; `corrected`
is the guarantee the digest's analysis supports where the paper's is wrong (or where a
named buggy variant of the authors' code is selected), so reports can show both.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import dp_accounting

__all__ = ["Guarantee", "Privacy", "RELATIONS", "TRUST_MODELS", "event_to_json"]

NOTIONS = ("pure", "approx", "rdp", "zcdp", "none")
TRUST_MODELS = ("central", "distributed", "local", "none")
RELATIONS = {
    "round-vector": "replace one round's whole reward vector X(t) in [0,1]^K (seed 001 §2.2)",
    "user-reward": "replace one user's reward in [0,1] (seed 004 §2; the user's arm is fixed by the schedule)",
    "none": "no privacy",
}


@dataclasses.dataclass(frozen=True)
class Guarantee:
    """A stated guarantee: pure epsilon, (epsilon, delta), rho-zCDP, or an RDP order/value list.

    epsilon may be math.inf (no privacy, e.g. a variant whose noise cancels).
    """

    notion: str
    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.notion not in NOTIONS:
            raise ValueError(f"notion must be one of {NOTIONS}, got {self.notion!r}")
        if self.notion in ("pure", "approx") and (self.epsilon is None or not self.epsilon > 0):
            raise ValueError(f"epsilon must be positive for a {self.notion} guarantee, got {self.epsilon!r}")
        if self.notion == "zcdp" and (self.rho is None or not self.rho > 0):
            raise ValueError(f"rho must be positive for a zCDP guarantee, got {self.rho!r}")
        if not 0 <= self.delta < 1:
            raise ValueError(f"delta must lie in [0, 1), got {self.delta!r}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "Guarantee", "notion": self.notion}
        if self.epsilon is not None:
            out["epsilon"] = self.epsilon if math.isfinite(self.epsilon) else "inf"
        if self.notion in ("approx",) or self.delta:
            out["delta"] = self.delta
        if self.rho is not None:
            out["rho"] = self.rho
        if self.source:
            out["source"] = self.source
        return out


def event_to_json(event: dp_accounting.DpEvent) -> Any:
    """A DpEvent tree as JSON (type name plus fields), recursing into nested events."""
    if isinstance(event, dp_accounting.DpEvent):
        fields = getattr(event, "__attrs_attrs__", ())
        out: dict[str, Any] = {"type": type(event).__name__}
        for f in fields:
            out[f.name] = event_to_json(getattr(event, f.name))
        return out
    if isinstance(event, (list, tuple)):
        return [event_to_json(e) for e in event]
    if isinstance(event, float) and not math.isfinite(event):
        return str(event)
    return event


@dataclasses.dataclass(frozen=True)
class Privacy:
    """An algorithm's declared privacy.

    relation: key of RELATIONS; trust_model: central | distributed | local | none;
    event: DpEvent of the whole run per user (None for non-private algorithms);
    claim: the paper's guarantee; corrected: the sound guarantee where it differs (else None);
    note: one sentence on where the correction comes from.
    """

    relation: str
    trust_model: str
    event: dp_accounting.DpEvent | None
    claim: Guarantee
    corrected: Guarantee | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {tuple(RELATIONS)}, got {self.relation!r}")
        if self.trust_model not in TRUST_MODELS:
            raise ValueError(f"trust_model must be one of {TRUST_MODELS}, got {self.trust_model!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Privacy",
            "relation": self.relation,
            "relation_text": RELATIONS[self.relation],
            "trust_model": self.trust_model,
            "event": None if self.event is None else event_to_json(self.event),
            "claim": self.claim.to_json(),
            "corrected": None if self.corrected is None else self.corrected.to_json(),
            "note": self.note,
        }


NON_PRIVATE = Privacy("none", "none", None, Guarantee("none", source="non-private baseline"))
