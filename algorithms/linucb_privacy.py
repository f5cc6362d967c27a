"""Privacy declarations of the linear contextual bandits (seed 003 and its baselines).

Same shape as `dpaudit.algorithms.privacy.Privacy` (relation, trust model, event, claim,
corrected, note), reusing its `Guarantee` and `event_to_json`, with the relations and trust
models of the contextual papers (the multi-armed `Privacy` only knows the multi-armed ones):

- relations (digest 003 §1.2): "user" = replace one user's context and reward responses, each
  user in one round (event level, Def 2.1); "returning-user" = replace every round of one user,
  who appears at most once per batch (Assumption 4.1, user level);
- trust models (§1.3): central, joint (central server, JDP of the other users' actions via the
  billboard lemma), local, shuffle.

`event` describes what the implementation releases about one user (an upper-bound description:
for shuffle protocols, the user's own local messages, which the shuffled view post-processes).
`lower_event`, where given, is a release that is itself a post-processing of the analyzer's view
(e.g. the batch sum): its exact epsilon is a lower reference for what an auditor can reach.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import dp_accounting

from dpaudit import accounting
from dpaudit.algorithms.privacy import Guarantee, event_to_json

__all__ = ["LinearPrivacy", "LINEAR_RELATIONS", "LINEAR_TRUST_MODELS", "NON_PRIVATE_LINEAR", "accounted"]

LINEAR_RELATIONS = {
    "user": "replace one user's context and reward responses; each user acts in one round (seed 003 Def 2.1)",
    "returning-user": "replace all rounds of one user, present at most once per batch (seed 003 Assumption 4.1)",
    "none": "no privacy",
}
LINEAR_TRUST_MODELS = ("central", "joint", "local", "shuffle", "none")


@dataclasses.dataclass(frozen=True)
class LinearPrivacy:
    """A linear contextual algorithm's declared privacy (see the module docstring)."""

    relation: str
    trust_model: str
    event: dp_accounting.DpEvent | None
    claim: Guarantee
    corrected: Guarantee | None = None
    note: str = ""
    lower_event: dp_accounting.DpEvent | None = None
    implied: tuple[tuple[str, Guarantee], ...] = ()

    def __post_init__(self) -> None:
        if self.relation not in LINEAR_RELATIONS:
            raise ValueError(f"relation must be one of {tuple(LINEAR_RELATIONS)}, got {self.relation!r}")
        if self.trust_model not in LINEAR_TRUST_MODELS:
            raise ValueError(f"trust_model must be one of {LINEAR_TRUST_MODELS}, got {self.trust_model!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "LinearPrivacy",
            "relation": self.relation,
            "relation_text": LINEAR_RELATIONS[self.relation],
            "trust_model": self.trust_model,
            "event": None if self.event is None else event_to_json(self.event),
            "claim": self.claim.to_json(),
            "corrected": None if self.corrected is None else self.corrected.to_json(),
            "note": self.note,
            "lower_event": None if self.lower_event is None else event_to_json(self.lower_event),
            "implied": {k: g.to_json() for k, g in self.implied},
        }


NON_PRIVATE_LINEAR = LinearPrivacy("none", "none", None, Guarantee("none", source="non-private baseline"))


def accounted(event: dp_accounting.DpEvent, delta: float, source: str) -> Guarantee | None:
    """(epsilon, delta) of `event` at the claim's delta by dpaudit's best accountant, as a Guarantee;
    None when no accountant can answer (unsupported event, a profile too wide to compute, or an
    overflow for epsilon beyond ~700): never a made-up number."""
    try:
        eps = accounting.epsilon(event, delta)
    except (accounting.UnsupportedEventError, ValueError, OverflowError):
        return None
    # (0, delta)-DP cannot be written as a Guarantee (epsilon > 0); a tiny epsilon is looser, hence safe.
    return Guarantee("approx", max(float(eps), 1e-12), delta, source=source)
