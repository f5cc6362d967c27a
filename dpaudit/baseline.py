"""Comparing a report with an earlier one (`dpaudit audit --baseline OLD/report.json`).

Claims are matched by (entry name, claim label). A run regresses when a claim newly fails (it is
not as expected now, and was as expected in the baseline or absent from it) or when a claim's
epsilon_lower rose beyond the baseline's confidence interval for it: above the baseline's
`epsilon_upper`, the upper Clopper-Pearson bound on the epsilon of the event the earlier audit chose
(`dpaudit.user_audits.epsilon_upper`). A rise within the interval is sampling noise and is only
listed; so are claims that were already failing, fixed claims, new and vanished claims, and claims
whose claimed epsilon changed. A baseline claim without `epsilon_upper` (records of the built-in
catalog carry none) cannot show a rise beyond its interval: its rises are listed, never gating.
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.report.model import fmt

__all__ = ["compare", "markdown_lines", "GATING"]

GATING = ("newly-failing", "rose")
"""Kinds of change that make `dpaudit audit --baseline` exit 1."""

_TITLES = {
    "newly-failing": "Newly failing claims",
    "rose": "ε_lower rose beyond the baseline's confidence interval",
    "rose-within": "ε_lower rose within the baseline's interval (or the baseline gives none)",
    "still-failing": "Claims failing in the baseline too",
    "fixed": "Claims failing in the baseline, now as expected",
    "claim-changed": "Claimed ε changed",
    "new": "Claims not in the baseline",
    "gone": "Baseline claims not in this run",
}


def _claims(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["name"], c["label"]): c for e in report.get("entries", []) for c in e.get("claims", [])
            if not e.get("error")}


def _number(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def compare(old: dict[str, Any], new: dict[str, Any], source: str = "") -> dict[str, Any]:
    """The changes from report `old` to report `new` (report documents as `dpaudit.report` builds them).

    Returns {"baseline": source, "baseline_created": ..., "changes": [...], "regressions": [...]}: each
    change names its kind, entry, claim label, the old and new numbers and a sentence; `regressions`
    holds the "entry:label" keys of the gating ones (kinds in GATING).
    """
    before, after = _claims(old), _claims(new)
    changes: list[dict[str, Any]] = []

    def add(kind: str, key: tuple[str, str], text: str, prev: dict | None, cur: dict | None) -> None:
        changes.append({"kind": kind, "entry": key[0], "claim": key[1], "text": text,
                        "old_epsilon_lower": prev and prev["epsilon_lower"], "old_epsilon_upper": prev and prev.get("epsilon_upper"),
                        "old_ok": prev and prev["ok"], "epsilon_lower": cur and cur["epsilon_lower"],
                        "ok": cur and cur["ok"]})

    for key, cur in after.items():
        prev = before.get(key)
        lower = _number(cur["epsilon_lower"])
        if prev is None:
            add("new" if cur["ok"] else "newly-failing", key,
                f"not in the baseline; now {cur['verdict']} (expected {cur['expect']}), ε_lower = {fmt(lower)}",
                None, cur)
            continue
        old_lower, old_upper = _number(prev["epsilon_lower"]), _number(prev.get("epsilon_upper"))
        if not cur["ok"]:
            kind = "still-failing" if not prev["ok"] else "newly-failing"
            add(kind, key, f"{prev['verdict']} → {cur['verdict']} (expected {cur['expect']}); ε_lower "
                           f"{fmt(old_lower)} → {fmt(lower)} against the claim ε = {fmt(cur['epsilon'])}", prev, cur)
        elif not prev["ok"]:
            add("fixed", key, f"{prev['verdict']} → {cur['verdict']}, as expected", prev, cur)
        if cur["ok"] and old_upper is not None and lower is not None and lower > old_upper:
            add("rose", key, f"ε_lower {fmt(old_lower)} → {fmt(lower)}, above the baseline's interval "
                             f"[{fmt(old_lower)}, {fmt(old_upper)}]", prev, cur)
        elif cur["ok"] and lower is not None and old_lower is not None and lower > old_lower:
            interval = f"[{fmt(old_lower)}, {fmt(old_upper)}]" if old_upper is not None else "no interval"
            add("rose-within", key, f"ε_lower {fmt(old_lower)} → {fmt(lower)} (baseline {interval})", prev, cur)
        if _number(prev["epsilon"]) != _number(cur["epsilon"]):
            add("claim-changed", key, f"claimed ε {fmt(prev['epsilon'])} → {fmt(cur['epsilon'])}", prev, cur)
    for key, prev in before.items():
        if key not in after:
            add("gone", key, f"in the baseline ({prev['verdict']}, ε_lower = {fmt(prev['epsilon_lower'])}), "
                             "not in this run", prev, None)
    return {
        "baseline": source,
        "baseline_created": old.get("created"),
        "changes": changes,
        "regressions": [f"{c['entry']}:{c['claim']}" for c in changes if c["kind"] in GATING],
    }


def markdown_lines(comparison: dict[str, Any]) -> list[str]:
    """The comparison as a Markdown section listing what changed, gating kinds first."""
    lines = ["", "## Changes since the baseline", "",
             f"Baseline: `{comparison['baseline']}` (created {comparison.get('baseline_created') or 'unknown'}). "
             f"Regressions: {len(comparison['regressions'])}.", ""]
    if not comparison["changes"]:
        return lines + ["No change."]
    for kind, title in _TITLES.items():
        mine = [c for c in comparison["changes"] if c["kind"] == kind]
        if mine:
            lines += [f"### {title}", ""] + [f"- `{c['entry']}` {c['claim']}: {c['text']}" for c in mine] + [""]
    return lines
