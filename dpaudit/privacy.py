"""What each algorithm declares about its privacy: relation, trust model, events, claim, correction.

The algorithm *describes* (STYLE.md "Describe, then compute"): `event` is the dp-accounting
`DpEvent` tree of what the implementation really releases about one user, built from its
parameters and its composition structure (parallel over disjoint users, sequential where a
user repeats); accountants turn it into numbers. `claim` is the paper's own guarantee as
stated; `corrected` is the guarantee dpaudit's analysis supports where the paper's is wrong
(or where a named buggy variant of the authors' code is selected), so reports can show both.
Where the paper's accounting is in doubt, its own composition (`paper_event`) and the proof step
redone on the real ranges (`proof_step`) are kept next to the implementation's event.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from typing import Any

import dp_accounting

from dpaudit import accounting

__all__ = [
    "NON_PRIVATE",
    "RELATIONS",
    "TRUST_MODELS",
    "Guarantee",
    "Privacy",
    "accounted",
    "event_to_json",
]

NOTIONS = ("pure", "approx", "rdp", "zcdp", "none")
TRUST_MODELS = {
    "central": "a trusted curator sees the raw data",
    "joint": "a trusted curator; joint DP of the other users' actions (billboard lemma; Chowdhury & Zhou 2022, Def. D.3)",
    "distributed": "secure aggregation: the server sees only the noisy sum (Chowdhury & Zhou (ICLR 2023), Alg. 1, Sec. 2)",
    "shuffle": "users' local messages pass an anonymous shuffler before the analyzer (Sarmasarkar, Def. B.3; Chowdhury & Zhou 2022, Def. 2.3)",
    "local": "each user randomizes its own data before sending it",
    "none": "no privacy",
}
RELATIONS = {
    "round-vector": "replace one round's whole reward vector X(t) in [0,1]^K (Hu, Huang, Mehta, §2.2)",
    "user-reward": "replace one user's reward in [0,1] (Chowdhury & Zhou 2023, §2; the user's arm is fixed by the schedule)",
    "user": "replace one user's context (set) and reward responses; each user acts in one round "
    "(Chowdhury & Zhou 2022, Def. 2.1; Sarmasarkar, Defs. B.1/B.4)",
    "returning-user": "replace all rounds of one user, present at most once per batch (Chowdhury & Zhou (ICML 2022) Assumption 4.1)",
    "unit": "one unit (patient) differs: its type, its potential outcomes, or both (Li, Shi, Simchi-Levi, §1.2)",
    "none": "no privacy",
}
_EVENTS = ("event", "paper_event", "proof_step", "lower_event")


@dataclasses.dataclass(frozen=True)
class Guarantee:
    """A stated guarantee: pure epsilon, (epsilon, delta), rho-zCDP, or an RDP order/value list.

    epsilon may be math.inf (no privacy, e.g. a variant whose noise cancels). The notions: (epsilon,
    delta)-DP (Dwork, Roth, "The Algorithmic Foundations of Differential Privacy", FnT TCS 2014, Def.
    2.4; pure when delta = 0), rho-zCDP (Bun, Steinke, "Concentrated Differential Privacy", TCC 2016,
    Def. 1.1) and RDP (Mironov, "Renyi Differential Privacy", CSF 2017, Def. 4).

    Parameters
    ----------
    notion : str
        "pure", "approx", "rdp", "zcdp" or "none".
    epsilon : float, optional
        > 0 (math.inf allowed); required for "pure" and "approx".
    delta : float, default 0.0
        In [0, 1).
    rho : float, optional
        > 0; required for "zcdp".
    source : str, default ""
        Where the guarantee is stated or proved (paper, theorem), shown in reports.

    Raises
    ------
    ValueError
        An unknown notion, or a missing or out-of-range epsilon, delta or rho.

    Examples
    --------
    >>> from dpaudit import Guarantee
    >>> Guarantee("approx", epsilon=1.0, delta=1e-6, source="Theorem 2").to_json()
    {'type': 'Guarantee', 'notion': 'approx', 'epsilon': 1.0, 'delta': 1e-06, 'source': 'Theorem 2'}
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

    @property
    def dp_epsilon(self) -> float:
        """epsilon of a pure or approx guarantee (always set for them); ValueError for zCDP and RDP ones."""
        if self.epsilon is None:
            raise ValueError(f"a {self.notion} guarantee has no epsilon")
        return self.epsilon

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: type, notion, epsilon ("inf" when infinite), delta (for approx, or when positive),
        rho and source when set.
        """
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
    """An algorithm's declared privacy: what it releases about one user, and what its paper claims.

    The accountants turn `event` into numbers (`dpaudit.accounting.epsilon`, `dpaudit.privacy_budget`);
    the events compose by the accountants' theorems (sequentially, Dwork, Roth, "The Algorithmic
    Foundations of Differential Privacy", FnT TCS 2014, Thm. 3.16; in parallel over disjoint users,
    McSherry, "Privacy Integrated Queries", SIGMOD 2009, Thm. 4).

    Parameters
    ----------
    relation : str
        The neighbouring relation, a key of `RELATIONS`.
    trust_model : str
        Who sees what, a key of `TRUST_MODELS`.
    event : dp_accounting.DpEvent or None
        What the implementation releases about one user over the whole run (None for non-private
        algorithms); for shuffle protocols it may be the user's own local messages, which the shuffled
        view post-processes (an upper-bound description).
    claim : Guarantee
        The paper's guarantee, as stated.
    corrected : Guarantee, optional
        The sound guarantee where it differs from the claim (else None).
    note : str, default ""
        One sentence on where the correction comes from.
    paper_event : dp_accounting.DpEvent, optional
        The paper's own composition (its split, parallel where it claims disjointness).
    proof_step : dp_accounting.DpEvent, optional
        The paper's proof step redone on the real ranges (where that step fails).
    lower_event : dp_accounting.DpEvent, optional
        A release that is a post-processing of the real view (e.g. a batch sum): its exact epsilon is a
        lower reference for what an auditor can reach.
    implied : mapping of str to Guarantee, optional
        Further named guarantees (e.g. the theorem a shuffle protocol cites, or the corrected guarantee
        per kind of neighbour).

    Raises
    ------
    ValueError
        An unknown `relation` or `trust_model`.
    TypeError
        `claim` or `corrected` not a `Guarantee`, an event not a `DpEvent`, or `implied` not a mapping
        of names to `Guarantee`s.

    Examples
    --------
    Five Laplace releases of scale 10 (in units of the sensitivity) about each user, claimed 0.5-DP:

    >>> import dp_accounting
    >>> from dpaudit import Guarantee, Privacy
    >>> releases = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(10.0), 5)
    >>> privacy = Privacy("user", "central", releases, claim=Guarantee("pure", 0.5, source="Theorem 1"))
    >>> privacy.accounted_epsilon()  # at the claim's delta, 0
    0.5
    """

    relation: str
    trust_model: str
    event: dp_accounting.DpEvent | None
    claim: Guarantee
    corrected: Guarantee | None = None
    note: str = ""
    paper_event: dp_accounting.DpEvent | None = None
    proof_step: dp_accounting.DpEvent | None = None
    lower_event: dp_accounting.DpEvent | None = None
    implied: Mapping[str, Guarantee] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {tuple(RELATIONS)}, got {self.relation!r}")
        if self.trust_model not in TRUST_MODELS:
            raise ValueError(f"trust_model must be one of {tuple(TRUST_MODELS)}, got {self.trust_model!r}")
        if not isinstance(self.claim, Guarantee):
            raise TypeError(f"claim must be a Guarantee, got {self.claim!r}")
        if self.corrected is not None and not isinstance(self.corrected, Guarantee):
            raise TypeError(f"corrected must be a Guarantee or None, got {self.corrected!r}")
        for name in _EVENTS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, dp_accounting.DpEvent):
                raise TypeError(f"{name} must be a DpEvent or None, got {value!r}")
        implied = dict(self.implied)
        for key, g in implied.items():
            if not isinstance(key, str) or not isinstance(g, Guarantee):
                raise TypeError(f"implied must map names to Guarantees, got {key!r}: {g!r}")
        object.__setattr__(self, "implied", types.MappingProxyType(implied))

    def accounted_epsilon(
        self, part: str = "event", delta: float | None = None, accountant: str = "best"
    ) -> float | None:
        """epsilon of one declared event ("event", "paper_event", "proof_step", "lower_event") at `delta`
        (default the claim's) by dpaudit.accounting; None if that event is not declared, inf if its own
        delta exceeds `delta`."""
        if part not in _EVENTS:
            raise ValueError(f"part must be one of {_EVENTS}, got {part!r}")
        if accountant != "best" and accountant not in accounting.ACCOUNTANTS:
            raise ValueError(f"accountant must be 'best' or one of {accounting.ACCOUNTANTS}, got {accountant!r}")
        event = getattr(self, part)
        if event is None:
            return None
        try:
            return float(accounting.epsilon(event, self.claim.delta if delta is None else delta, accountant=accountant))
        except ValueError:
            return math.inf

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of every field: events by `event_to_json`, guarantees by `Guarantee.to_json`,
        relation and trust model with their text (`to_dict` is the same method).
        """

        def ev(e: dp_accounting.DpEvent | None) -> Any:
            return None if e is None else event_to_json(e)

        return {
            "type": "Privacy",
            "relation": self.relation,
            "relation_text": RELATIONS[self.relation],
            "trust_model": self.trust_model,
            "trust_model_text": TRUST_MODELS[self.trust_model],
            "event": ev(self.event),
            "claim": self.claim.to_json(),
            "corrected": None if self.corrected is None else self.corrected.to_json(),
            "note": self.note,
            "paper_event": ev(self.paper_event),
            "proof_step": ev(self.proof_step),
            "lower_event": ev(self.lower_event),
            "implied": {k: g.to_json() for k, g in self.implied.items()},
        }

    to_dict = to_json


NON_PRIVATE = Privacy("none", "none", None, Guarantee("none", source="non-private baseline"))


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
