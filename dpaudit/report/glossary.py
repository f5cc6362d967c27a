"""What the labels and column headers of a report mean: the glossary both pages print, and the
explanation of every column (a tooltip in report.html, a footnote in report.md).

The meanings are those of the code that makes the labels: claim labels from `audits.build`
(`claims_from_privacy`, `VIEW_ACCOUNTANT`) and the catalog's entries, accountants from
`dpaudit.accounting`, the interval, pin and tight side from `dpaudit.report.model.interval`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["COLUMN_HELP", "TERMS", "column_help", "glossary", "readable_target"]

TERMS: dict[str, str] = {
    # claim labels
    "paper": "the paper's own claim for a faithful implementation, as the paper states it (an RDP or zCDP claim is "
    "turned into ε at δ = 1e-5 by the matching accountant)",
    "paper-proof": "a step of the paper's proof, not its final theorem: the ε the proof gives the statistics it "
    "accounts as released, checked on those statistics",
    "corrected": "dpaudit's guarantee where the paper's accounting does not hold for the implementation (for a "
    "known-buggy variant: the guarantee the variant really has); `dpaudit budget ALGORITHM` gives the "
    "reason",
    "accounted": "ε at the claim's δ that dpaudit's accountants give for the DpEvent the implementation declares it "
    "releases (the smallest over the accountants that support it)",
    "view": "the exact ε of the audited view (what the auditor observes) over every neighbouring input, derived in "
    "the entry's module: no smaller upper bound holds for that view",
    "composed": "the corrected claim's components composed exactly instead of by basic composition",
    "declared": "your claim, as declared with dpaudit.register_audit",
    # who gives a claim's number
    "(stated)": "the number as its source states it, not recomputed",
    "(best)": "the smallest ε over every accountant that supports the event; each accountant's answer is a valid "
    "upper bound, so the smallest is too",
    "(exact-view)": "computed exactly for the audited view, over every neighbouring input",
    "(mixture-bound)": "a bound on the view's privacy profile averaged over the algorithm's random lengths (joint "
    "convexity)",
    "(exact-composition)": "the components' privacy profiles composed exactly",
    # accountants
    "pure": "pure-DP accountant: basic composition of pure ε (Dwork, Roth 2014, Thm 3.16)",
    "approx": "(ε, δ) accountant: basic and advanced composition",
    "rdp": "Rényi-DP accountant (dp-accounting's), converted to (ε, δ)",
    "zcdp": "zero-concentrated DP accountant, converted to (ε, δ)",
    "pld": "privacy loss distribution accountant (dp-accounting's, pessimistic discretisation)",
    "shuffle": "amplification by shuffling (Feldman, McMillan, Talwar 2021)",
    # observables and neighbours
    "white-box": "the audit observes the statistics the algorithm releases (noisy sums, tree nodes, aggregates)",
    "black-box": "the audit observes only the actions (decisions) the algorithm takes",
    "output": "the audit observes what the target returns",
    "one-user": "the two inputs differ in one user's whole record",
    "reward-only": "the two inputs differ in one user's reward only",
    "context-only": "the two inputs differ in one user's context (type) only",
    "both": "as a relation: the two inputs differ in one user's context and reward; as a tight side: the entry is "
    "pinned (pin ≥ 0.9)",
    # verdicts and status
    "consistent": "the audit's lower bound ε_lower does not exceed the claim",
    "violation": "the audit's lower bound ε_lower exceeds the claim: the claim is false for what was audited, at "
    "the stated confidence",
    "expected": "what an audit of a correct implementation finds: consistent, or violation for a claim known to be "
    "too small (a paper's wrong claim, a known-buggy variant, a twin declared to fail)",
    "ok": "the verdict is the expected one",
    "UNEXPECTED": "the verdict is not the expected one: the gate fails",
    "ERROR": "the entry could not run: the gate fails",
    # bounds
    "ε_lower": "the audit's lower bound on the true ε at the claim's δ, holding with the stated confidence "
    "(Clopper-Pearson bounds on the chosen event's rates)",
    "confidence": "the probability that ε_lower is a valid lower bound; each audit runs at the family-wise confidence "
    "split over all audit calls (Bonferroni), so all bounds hold together at the family-wise level",
    "tightness": "ε_lower / claimed ε: above 1 the claim is contradicted; near 1 the audit pins the claim",
    "sound ε_upper": "the smallest upper bound on the view's ε taken as proven: the tightest claim expected to hold "
    "(accounted, corrected, view, or your declared claim; never a claim known to be wrong, nor a "
    "paper's claim where a corrected one exists)",
    "event ε_upper": "an upper confidence bound (Clopper-Pearson) on the ε of the one event the audit chose; "
    "it brackets that event, not the mechanism",
    "μ_lower, μ_upper": "the same bounds on the Gaussian-DP μ (Dong, Roth, Su 2022): the audit's lower bound and the "
    "accountant's μ",
    "pin": "ε_lower / sound ε_upper (μ_lower / μ_upper where marked (μ)): how close the audit comes to the proof; "
    "pinned when ≥ 0.9; shown rounded down, so a shown 0.9 is pinned",
    "(μ)": "the pin is taken on Gaussian-DP μ, where ε at a large δ says little",
    "tight side": "which side of the interval is known to be exact: both (pinned), upper (the accounting is exact, "
    "the audit is the loose side), lower (the audit is exact, the accounting is loose), neither, "
    "unknown (no analysis yet), violated (the audit exceeds a proven claim)",
    "one run": "an audit of a single run with many canaries, read with the ε analysis for a pure claim (Steinke, "
    "Nasr, Jagielski, NeurIPS 2023) or the f-DP analysis for δ > 0 (Mahloujifar, Melis, Chaudhuri, ICML 2025): "
    "its bound is limited by how many guesses it makes",
    "regret": "final cumulative pseudo-regret at horizon T, mean over runs with its 95% interval",
    "gate": "PASS when every claim came out as expected and every entry ran; the exit status follows it",
    "wall time": "from the command's start until the report was assembled (drawing the figures follows)",
}
"""Every label a report prints, with what it means."""

_PREFIXES = (("paper-proof", "paper-proof"), ("paper", "paper"))

COLUMN_HELP: dict[str, str] = {
    "entry": "the audit entry (name of `dpaudit list`)",
    "observable": "what the audit observes: white-box (released statistics), black-box (actions only), output",
    "claim": "the claim's label: paper, paper-proof, corrected, accounted, view, declared (see the glossary)",
    "claimed": "the claimed ε at δ, and who gives the number: (stated) as its source states it, (best) the smallest "
    "valid accountant answer, (exact-view) exact for the audited view",
    "accountants": "ε of the claim's DpEvent at its δ under each accountant that supports it (any is a valid bound)",
    "delta": "the δ at which the claim and the audit's bound are taken",
    "lower": "the audit's lower bound on ε at δ, with the confidence it holds at (per audit call, Bonferroni)",
    "verdict": "violation when ε_lower exceeds the claim, else consistent",
    "floating": "the implementation's floating-point bound and verdict: the audit again with the bit features of "
    "float outputs (Mironov, CCS 2012); it fails the gate only under float_check = gate; – when the "
    "outputs are not floats",
    "expect": "the verdict an audit of a correct implementation gives (violation: a claim known to be wrong)",
    "tightness": "ε_lower / claimed ε: above 1 the claim is contradicted; near 1 the audit pins it",
    "regret": "final cumulative pseudo-regret at horizon T: mean over runs [95% interval]",
    "status": "ok when the verdict is the expected one; UNEXPECTED or ERROR fail the gate",
    "interval": "where the true ε of the audited view lies: from the audit's lower bound to the smallest proven "
    "upper bound",
    "upper": "which proven claim gives the sound ε_upper (label and accountant)",
    "mu": "the same interval on Gaussian-DP μ (≥ μ_lower alone: the entry declares no accountant μ)",
    "pin": "ε_lower / sound ε_upper ((μ): μ_lower / μ_upper); pinned when ≥ 0.9, shown rounded down",
    "tight": "which side is known to be exact: both (pinned), upper (the accounting), lower (the audit), neither, "
    "unknown, violated (see the glossary)",
    "reason": "the entry's own analysis of the gap, or what the numbers alone show",
}
"""What each column of the tables shows, by its key in `model.COLUMNS`, `SUMMARY_COLUMNS`, `INTERVAL_COLUMNS`."""


def column_help(key: str) -> str:
    """What the column `key` shows (`COLUMN_HELP`); "" for a column without help."""
    return COLUMN_HELP.get(key, "")


def _term_of_label(label: str) -> str | None:
    if label in TERMS:
        return label
    for prefix, term in _PREFIXES:
        if label.startswith(prefix + "-"):
            return term
    return None


def glossary(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(term, meaning) for every label the report prints: its claim labels, accountants, observables,
    relations, verdicts, and the terms of its tables; a label no code defines is named as the entry's own."""
    entries = [e for e in report.get("entries", []) if isinstance(e, dict)]
    labels: list[str] = []
    own: list[str] = []

    def add(label: Any) -> None:
        label = str(label)
        term = _term_of_label(label)
        if term is None:
            if label not in own:
                own.append(label)
        elif term not in labels:
            labels.append(term)

    for e in entries:
        add(e.get("observable", ""))
        for p in e.get("pairs") or []:
            if isinstance(p, dict):
                add(p.get("relation", ""))
        for c in e.get("claims") or []:
            if not isinstance(c, dict):
                continue
            add(c.get("label", ""))
            add(f"({c.get('accountant', '')})")
            by = c.get("by_accountant")
            for name, value in by.items() if isinstance(by, dict) else ():
                if str(name) in TERMS and value is not None:
                    add(name)
            add(c.get("verdict", ""))
    terms = [t for t in TERMS if t in labels]
    general = [
        "expected",
        "ok",
        "UNEXPECTED",
        "ERROR",
        "ε_lower",
        "confidence",
        "tightness",
        "sound ε_upper",
        "μ_lower, μ_upper",
        "pin",
        "(μ)",
        "tight side",
        "gate",
        "wall time",
    ]
    if any(e.get("mode") == "one-run" for e in entries):
        general.append("one run")
    if any(e.get("regret") for e in entries):
        general.append("regret")
    if any(isinstance(c, dict) and "event_epsilon_upper" in c for e in entries for c in e.get("claims") or []):
        general.append("event ε_upper")
    out = [(t, TERMS[t]) for t in terms + [g for g in general if g not in terms]]
    out += [
        (label, "a label of the entry's own declaration (for your entries: your register_audit call)")
        for label in own
        if label.strip("()")
    ]
    return out


_LOCALS = re.compile(r"^(?P<outer>[\w.]+?)\.<locals>\.(?P<inner>[\w.<>]+)$")


def readable_target(text: Any) -> str:
    """A target's qualified name for people: `mod.make.<locals>.count` -> `count (made by mod.make)`;
    anything else as it is."""
    text = str(text)
    match = _LOCALS.match(text)
    if match is None:
        return text.replace(".<locals>.", " > ")
    inner = match.group("inner").replace(".<locals>.", " > ")
    return f"{inner} (made by {match.group('outer')})"
