"""Comparing a report with an earlier one (`dpaudit audit --baseline OLD/report.json`).

Claims are matched by (entry name, claim label). Two kinds of change gate (exit 1):

- "newly-failing": a claim not as expected now that was as expected in the baseline, or absent;
- "rose": the epsilon of the baseline's own event rose significantly.  A user entry's claim records
  the event its audit chose (`event`: the fitted score, sign and threshold, and the estimation
  split's counts k1, k2 of n runs per input); a later run counts that same event again on fresh
  runs of its own (`baseline_event_counts`: c1, c2 of n'). With the Clopper-Pearson bounds L, U of
  Clopper, Pearson (Biometrika 1934), each one-sided at level alpha/4, and
  eps(E) = log((p_first - delta) / p_second) (`dpaudit.audit.bounds.epsilon_from_rates`),

      lower_new = eps(L(c1, n'), U(c2, n')),   upper_old = eps(U(k1, n), L(k2, n)),

  and the claim rose when lower_new > upper_old, with alpha = (1 - confidence) / m, m the number
  of claims tested this way (Bonferroni).  The event was fixed before either count was drawn, so
  with unchanged code both estimate the same two rates: each bound misses eps(E) with probability
  <= alpha/2, and a false flag has probability <= alpha, all claims together <= 1 - confidence,
  whatever the sample sizes and seeds of the two runs.

The run's own epsilon_lower is the bound of a possibly different event (a larger run finds a
stronger one), so a rise of epsilon_lower alone is listed, never gating; so is a significant rise
of a claim expected to violate (a known-broken twin grows with the samples), and so are claims
already failing in the baseline, fixed claims, new and vanished claims, claims whose claimed
epsilon changed, and every rise of catalog entries (their records carry no event).
`check_baseline` rejects, before any audit runs, a baseline that is not a report document or shares
no entry with the run, and lists the settings (samples, confidence, catalog, seed) that differ.
"""

from __future__ import annotations

import math
from typing import Any, cast

from dpaudit.records import ClaimRecord, EventCounts, EventRecord
from dpaudit.report.model import fmt

__all__ = [
    "GATING",
    "check_baseline",
    "check_report",
    "compare",
    "markdown_lines",
    "same_event_test",
    "settings_warnings",
]

GATING = ("newly-failing", "rose")
"""Kinds of change that make `dpaudit audit --baseline` exit 1."""

_TITLES = {
    "newly-failing": "Newly failing claims",
    "rose": "The baseline's event: ε rose significantly on fresh runs",
    "rose-violation": "Expected violations whose event's ε rose (listed, never gating)",
    "rose-lower": "ε_lower rose, the baseline's event did not significantly (listed, not gating)",
    "rose-within": "ε_lower rose within the baseline's interval (or the baseline gives none)",  # older reports
    "still-failing": "Claims failing in the baseline too",
    "fixed": "Claims failing in the baseline, now as expected",
    "claim-changed": "Claimed ε changed",
    "new": "Claims not in the baseline",
    "gone": "Baseline claims not in this run",
}

_CLAIM_KEYS = ("label", "ok", "epsilon_lower", "epsilon", "verdict")
_EVENT_KEYS = ("state", "direction", "count_first", "count_second", "nobs", "delta")
_SETTINGS = ("samples", "confidence", "catalog", "seed")


def check_report(report: Any, source: str) -> None:
    """Raise ValueError naming `source` and the first missing or malformed key unless `report` has what
    `compare` reads: entries (each with name and claims; each claim label, ok, epsilon_lower, epsilon,
    verdict, and a well-formed `event` when it has one)."""

    def fail(where: str, what: str) -> ValueError:
        return ValueError(f"baseline {source!r}: {where}{what}")

    if not isinstance(report, dict) or not isinstance(report.get("entries"), list):
        raise fail("", "missing key 'entries' (a list of entry records)")
    for i, e in enumerate(report["entries"]):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise fail(f"entries[{i}]: ", "missing key 'name'")
        if not isinstance(e.get("claims"), list):
            raise fail(f"entry {e['name']!r}: ", "missing key 'claims' (a list)")
        for j, c in enumerate(e["claims"]):
            where = f"entry {e['name']!r}, claims[{j}]: "
            missing = [k for k in _CLAIM_KEYS if not isinstance(c, dict) or k not in c]
            if missing:
                raise fail(where, f"missing key {missing[0]!r}")
            if not isinstance(c["ok"], bool) or not (c["epsilon_lower"] is None or _is_number(c["epsilon_lower"])):
                raise fail(where, "'ok' must be true/false and 'epsilon_lower' a number")
            event = c.get("event")
            if event is not None and (not isinstance(event, dict) or any(k not in event for k in _EVENT_KEYS)):
                have = set(event) if isinstance(event, dict) else set()
                raise fail(where, f"missing key 'event.{next(k for k in _EVENT_KEYS if k not in have)}'")


def check_baseline(old: dict[str, Any], names: list[str], settings: dict[str, Any]) -> list[str]:
    """Before any audit runs: ValueError when the baseline shares no entry with `names` (this run's
    entries); else the warnings about `settings` (this run's) that differ from the baseline's."""
    theirs = [e["name"] for e in old.get("entries", [])]
    if not set(theirs) & set(names):
        raise ValueError(
            f"the baseline shares no entry with this run: baseline has {', '.join(theirs) or 'none'}; "
            f"this run {', '.join(names) or 'none'}"
        )
    return settings_warnings(old.get("settings"), settings)


def settings_warnings(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """One sentence per setting of `_SETTINGS` that differs between the baseline's and this run's."""
    if not isinstance(old, dict):
        return ["the baseline records no settings (samples, confidence, catalog, seed)"]
    new = new or {}
    return [
        f"{key} differs: baseline {_shown(key, old.get(key))}, this run {_shown(key, new.get(key))}"
        for key in _SETTINGS
        if old.get(key) != new.get(key)
    ]


def _shown(key: str, value: Any) -> str:
    return "each entry's" if key == "samples" and value is None else repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _claims(report: dict[str, Any]) -> dict[tuple[str, str], ClaimRecord]:
    return {
        (e["name"], c["label"]): c for e in report.get("entries", []) for c in e.get("claims", []) if not e.get("error")
    }


def _testable(prev: ClaimRecord, cur: ClaimRecord) -> tuple[EventRecord, EventCounts] | None:
    """The baseline claim's event and this run's new counts of it, when the baseline claim has an event
    and this run counted it again, in its direction (both well-formed); else None."""
    event: Any = prev.get("event")  # read from a baseline file: checked here, key by key
    counts: Any = cur.get("baseline_event_counts")
    if not isinstance(event, dict) or not isinstance(counts, dict) or "error" in counts:
        return None
    keys = ("count_first", "count_second", "nobs")
    if not all(isinstance(d.get(k), int) and not isinstance(d.get(k), bool) for d in (event, counts) for k in keys):
        return None
    if (
        counts.get("direction") == event.get("direction")
        and _is_number(event.get("delta"))
        and all(0 <= d[a] <= d["nobs"] and d["nobs"] >= 1 for d in (event, counts) for a in keys[:2])
    ):
        return cast(EventRecord, event), cast(EventCounts, counts)
    return None


def same_event_test(event: EventRecord, counts: EventCounts, alpha: float) -> tuple[float, float]:
    """(lower_new, upper_old) of the module docstring: the event's epsilon bounded below on this run's
    fresh counts and above on the baseline's counts, each at level alpha/2 (two Clopper-Pearson bounds
    at alpha/4), at the baseline's delta. upper_old is +inf when the baseline's second count is 0."""
    from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates

    level, delta = alpha / 4, float(event["delta"])
    n_new, n_old = counts["nobs"], event["nobs"]
    lower = epsilon_from_rates(
        cp_lower(counts["count_first"], n_new, level), cp_upper(counts["count_second"], n_new, level), delta
    )
    upper = epsilon_from_rates(
        cp_upper(event["count_first"], n_old, level), cp_lower(event["count_second"], n_old, level), delta
    )
    return float(lower), float(upper)


def compare(old: dict[str, Any], new: dict[str, Any], source: str = "") -> dict[str, Any]:
    """The changes from report `old` to report `new` (report documents as `dpaudit.report` builds them).

    Returns {"baseline": source, "baseline_created", "changes": [...], "regressions": [...],
    "warnings": [...], "tested": m, "alpha": per-claim level}: each change names its kind, entry,
    claim label, the old and new numbers and a sentence; `regressions` holds the "entry:label" keys
    of the gating ones (kinds in GATING); `warnings` the settings that differ.
    """
    before, after = _claims(old), _claims(new)
    confidence = float((new.get("settings") or {}).get("confidence", 0.95))
    tested = sum(1 for key, cur in after.items() if key in before and _testable(before[key], cur))
    alpha = (1.0 - confidence) / max(tested, 1)
    changes: list[dict[str, Any]] = []

    def add(
        kind: str, key: tuple[str, str], text: str, prev: ClaimRecord | None, cur: ClaimRecord | None, **extra: Any
    ) -> None:
        changes.append(
            {
                "kind": kind,
                "entry": key[0],
                "claim": key[1],
                "text": text,
                "old_epsilon_lower": prev and prev["epsilon_lower"],
                "old_epsilon_upper": prev and prev.get("event_epsilon_upper"),
                "old_ok": prev and prev["ok"],
                "epsilon_lower": cur and cur["epsilon_lower"],
                "ok": cur and cur["ok"],
                **extra,
            }
        )

    for key, cur in after.items():
        prev = before.get(key)
        lower = _number(cur["epsilon_lower"])
        if prev is None:
            add(
                "new" if cur["ok"] else "newly-failing",
                key,
                f"not in the baseline; now {cur['verdict']} (expected {cur['expect']}), ε_lower = {fmt(lower)}",
                None,
                cur,
            )
            continue
        old_lower = _number(prev["epsilon_lower"])
        if not cur["ok"]:
            kind = "still-failing" if not prev["ok"] else "newly-failing"
            add(
                kind,
                key,
                f"{prev['verdict']} → {cur['verdict']} (expected {cur['expect']}); ε_lower "
                f"{fmt(old_lower)} → {fmt(lower)} against the claim ε = {fmt(cur['epsilon'])}",
                prev,
                cur,
            )
        elif not prev["ok"]:
            add("fixed", key, f"{prev['verdict']} → {cur['verdict']}, as expected", prev, cur)
        if cur["ok"]:
            _rise(add, key, prev, cur, alpha, lower, old_lower)
        if _number(prev["epsilon"]) != _number(cur["epsilon"]):
            add("claim-changed", key, f"claimed ε {fmt(prev['epsilon'])} → {fmt(cur['epsilon'])}", prev, cur)
    for key, prev in before.items():
        if key not in after:
            add(
                "gone",
                key,
                f"in the baseline ({prev['verdict']}, ε_lower = {fmt(prev['epsilon_lower'])}), not in this run",
                prev,
                None,
            )
    return {
        "baseline": source,
        "baseline_created": old.get("created"),
        "changes": changes,
        "regressions": [f"{c['entry']}:{c['claim']}" for c in changes if c["kind"] in GATING],
        "warnings": settings_warnings(old.get("settings"), new.get("settings")),
        "tested": tested,
        "alpha": alpha,
    }


def _rise(
    add: Any,
    key: tuple[str, str],
    prev: ClaimRecord,
    cur: ClaimRecord,
    alpha: float,
    lower: float | None,
    old_lower: float | None,
) -> None:
    """The rise of a claim that is as expected now: "rose" (gating) when the baseline's event rose
    significantly, "rose-violation" for such a rise of a claim expected to violate, "rose-lower" when
    only epsilon_lower rose."""
    rose = lower is not None and old_lower is not None and lower > old_lower
    tested = _testable(prev, cur)
    if tested is not None:
        event, counts = tested
        low_new, upp_old = same_event_test(event, counts, alpha)
        if low_new > upp_old:
            kind = "rose-violation" if cur.get("expect") == "violation" else "rose"
            add(
                kind,
                key,
                f"the baseline's event {event.get('event', '')}: ε ≥ {fmt(low_new)} on "
                f"{counts['nobs']} fresh runs per input, above ε ≤ {fmt(upp_old)} on the baseline's "
                f"{event['nobs']} (each bound at level {alpha / 2:.3g}); ε_lower {fmt(old_lower)} → "
                f"{fmt(lower)}",
                prev,
                cur,
                event_lower=low_new,
                event_upper_old=upp_old,
                alpha=alpha,
            )
            return
        if rose:
            add(
                "rose-lower",
                key,
                f"ε_lower {fmt(old_lower)} → {fmt(lower)}; the baseline's event: ε ≥ "
                f"{fmt(low_new)} now, ≤ {fmt(upp_old)} then (no significant rise)",
                prev,
                cur,
                event_lower=low_new,
                event_upper_old=upp_old,
                alpha=alpha,
            )
    elif rose:
        add(
            "rose-lower",
            key,
            f"ε_lower {fmt(old_lower)} → {fmt(lower)} (no event of the baseline counted again: not a test of change)",
            prev,
            cur,
        )


def markdown_lines(comparison: dict[str, Any]) -> list[str]:
    """The comparison as a Markdown section listing what changed, gating kinds first."""
    lines = [
        "",
        "## Changes since the baseline",
        "",
        (
            f"Baseline: `{comparison['baseline']}` (created {comparison.get('baseline_created') or 'unknown'}). "
            f"Regressions: {len(comparison['regressions'])}."
        ),
        "",
    ]
    if comparison.get("tested"):
        lines += [
            (
                f"The baseline's events were counted again for {comparison['tested']} claim(s); each is tested "
                f"at level {comparison['alpha']:.3g} (Bonferroni)."
            ),
            "",
        ]
    if comparison.get("warnings"):
        lines += ["Settings differ from the baseline's:", ""] + [f"- {w}" for w in comparison["warnings"]] + [""]
    if not comparison["changes"]:
        return lines + ["No change."]
    for kind, title in _TITLES.items():
        mine = [c for c in comparison["changes"] if c["kind"] == kind]
        if mine:
            lines += [f"### {title}", ""] + [f"- `{c['entry']}` {c['claim']}: {c['text']}" for c in mine] + [""]
    return lines
