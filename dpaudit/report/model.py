"""The report document: its schema, its assembly from entry records, and the rows both pages show.

A report is a JSON document (`SCHEMA`, `SCHEMA_VERSION`) holding everything needed to reproduce it:
package versions, the command, the suite seed and each entry's derived seed, samples per side,
confidence (family-wise and per audit call), algorithm parameters, and every audit's result.
"""

from __future__ import annotations

import datetime as _dt
import math
import platform
import sys
from importlib import metadata
from typing import Any, Iterable

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "versions",
    "build_report",
    "summarize",
    "findings",
    "settings_lines",
    "by_algorithm",
    "claim_rows",
    "COLUMNS",
    "SUMMARY_COLUMNS",
    "fmt",
    "one_run_note",
]

SCHEMA = "dpaudit.report"
SCHEMA_VERSION = 1


def versions() -> dict[str, str]:
    """Versions of Python, the platform and every package a result depends on."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("dpaudit", "numpy", "scipy", "dp-accounting", "statsmodels", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table: `digits` significant digits, "∞" for inf, "–" for None."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if math.isnan(value):
        return "nan"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def summarize(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts for the gate: ok iff every claim came out as expected and no entry failed to run."""
    entries = list(entries)
    claims = [(e, c) for e in entries for c in e.get("claims", [])]
    return {
        "entries": len(entries),
        "claims": len(claims),
        "ok": all(e.get("ok") for e in entries),
        "errors": [e["name"] for e in entries if e.get("error")],
        "violations_found": [f"{e['name']}:{c['label']}" for e, c in claims
                             if c["verdict"] == "violation" and c["expect"] == "violation"],
        "unexpected_violations": [f"{e['name']}:{c['label']}" for e, c in claims
                                  if c["verdict"] == "violation" and c["expect"] == "consistent"],
        "missed_violations": [f"{e['name']}:{c['label']}" for e, c in claims
                              if c["verdict"] == "consistent" and c["expect"] == "violation"],
    }


def _claim_phrase(c: dict[str, Any]) -> str:
    by = "as stated" if c["accountant"] == "stated" else f"{c['accountant']} accountant"
    return f"ε = {fmt(c['epsilon'])} at δ = {fmt(c['delta'])} ({by})"


def findings(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every claim the audits contradict, stated with its numbers.

    kind "paper": a paper's own claim about a faithful implementation; kind "variant": a known-buggy
    variant (e.g. of the authors' public code) caught against the claim it was shipped with.
    """
    out = []
    for e in entries:
        for c in e.get("claims", []):
            if c["verdict"] != "violation":
                continue
            pair = e["pairs"][c["pair"]]["description"] if e.get("pairs") else ""
            conf = fmt(100 * c["confidence"], 4)
            subject = f"{e['algorithm']} ({e['variant']})" if e.get("variant") else e["algorithm"]
            text = (f"{subject}: the {c['label']} claim {_claim_phrase(c)}"
                    f"{' [' + c['source'] + ']' if c.get('source') else ''} is contradicted: the audit "
                    f"'{e['name']}' ({e['observable']}: {e['observable_description']}; neighbours: {pair}) "
                    f"gives ε ≥ {fmt(c['epsilon_lower'])} with {conf}% confidence"
                    + (f", {fmt(c['epsilon_lower'] / c['epsilon'])}× the claim." if c["epsilon"] > 0 else "."))
            others = [o for o in e["claims"] if o is not c and o["verdict"] == "consistent"]
            if others:
                text += " Consistent with: " + "; ".join(f"{o['label']} {_claim_phrase(o)}" for o in others) + "."
            out.append({
                "kind": "variant" if e.get("variant") else "paper",
                "entry": e["name"],
                "algorithm": e["algorithm"],
                "claim": c["label"],
                "epsilon": c["epsilon"],
                "delta": c["delta"],
                "epsilon_lower": c["epsilon_lower"],
                "confidence": c["confidence"],
                "expected": c["expect"] == "violation",
                "text": text,
            })
    return out


def build_report(entries: list[dict[str, Any]], *, settings: dict[str, Any], command: list[str] | None = None,
                 seconds: float | None = None) -> dict[str, Any]:
    """Assemble the report document from entry records (see `dpaudit.audits.run.run_entry`)."""
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "command": list(command) if command is not None else None,
        "settings": dict(settings),
        "seconds": seconds,
        "entries": entries,
        "summary": summarize(entries),
        "findings": findings(entries),
    }


def by_algorithm(entries: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Entries grouped by algorithm, in the order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault(e["algorithm"], []).append(e)
    return groups


def claim_rows(entry: dict[str, Any]) -> list[dict[str, str]]:
    """One table row per claim of an entry, formatted for Markdown and HTML alike."""
    rows = []
    reg = entry.get("regret")
    regret = "–"
    if reg:
        ci = reg.get("final_ci")
        interval = (f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci is not None and all(map(math.isfinite, ci))
                    else "[no interval: needs ≥ 2 runs]")
        regret = f"{fmt(reg['final_mean'])} {interval} at T={reg['horizon']}"
    if entry.get("error"):
        return [{"entry": entry["name"], "observable": entry["observable"], "claim": "–", "claimed": "–",
                 "accountants": "–", "delta": "–", "lower": "–", "verdict": "ERROR", "expect": entry["expect"],
                 "tightness": "–", "regret": regret, "status": entry["error"]}]
    for c in entry["claims"]:
        accs = ", ".join(f"{k} {fmt(v)}" for k, v in c.get("by_accountant", {}).items() if v is not None)
        rows.append({
            "entry": entry["name"],
            "observable": entry["observable"],
            "claim": c["label"],
            "claimed": f"{fmt(c['epsilon'])} ({c['accountant']})",
            "accountants": accs or "–",
            "delta": fmt(c["delta"]),
            "lower": f"{fmt(c['epsilon_lower'])} @{fmt(100 * c['confidence'], 4)}%" + one_run_note(c),
            "verdict": c["verdict"],
            "expect": c["expect"],
            "tightness": fmt(c["tightness"], 2),
            "regret": regret,
            "status": "ok" if c["ok"] else "UNEXPECTED",
        })
    return rows


def one_run_note(claim: dict[str, Any]) -> str:
    """" (one run: m canaries, r guesses, w correct)" for a claim judged by a one-run audit, else ""."""
    if claim.get("mode") != "one-run":
        return ""
    return f" (one run: {claim['num_canaries']} canaries, {claim['guesses']} guesses, {claim['correct']} correct)"


COLUMNS = (
    ("entry", "entry"),
    ("observable", "observable"),
    ("claim", "claim"),
    ("claimed", "claimed ε (accountant)"),
    ("accountants", "ε under each accountant"),
    ("delta", "δ"),
    ("lower", "ε_lower (confidence)"),
    ("verdict", "verdict"),
    ("expect", "expected"),
    ("tightness", "tightness ε_lower/ε"),
    ("regret", "regret at T [95% CI]"),
    ("status", "status"),
)


def settings_lines(report: dict[str, Any]) -> list[str]:
    s = report["settings"]
    v = report["versions"]
    lines = [
        f"- created {report['created']}, dpaudit {v.get('dpaudit')}, Python {v.get('python')}, numpy {v.get('numpy')}, "
        f"dp-accounting {v.get('dp-accounting')}",
        f"- seed {s.get('seed')}, samples per side {s.get('samples') or 'entry default'}, "
        f"family-wise confidence {fmt(s.get('confidence'), 4)} over {s.get('audit_calls')} audit calls "
        f"(each at {fmt(s.get('per_audit_confidence'), 6)}, Bonferroni), executor {s.get('executor')}",
    ]
    if report.get("command"):
        lines.append(f"- command: `{' '.join(report['command'])}`")
    if report.get("seconds") is not None:
        lines.append(f"- wall time {fmt(report['seconds'])} s")
    return lines


SUMMARY_COLUMNS = (("entry", "entry"), ("claim", "claim"), ("claimed", "claimed ε (accountant)"), ("delta", "δ"),
                   ("lower", "ε_lower (confidence)"), ("verdict", "verdict"), ("expect", "expected"), ("status", "status"))
