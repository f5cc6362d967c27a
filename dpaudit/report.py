"""Verification reports: claimed epsilon, audited epsilon and regret side by side (JSON, Markdown, HTML).

A report is a JSON document (`SCHEMA`, `SCHEMA_VERSION`) holding everything needed to reproduce it:
package versions, the command, the suite seed and each entry's derived seed, samples per side,
confidence (family-wise and per audit call), algorithm parameters, and every audit's result. The
Markdown and HTML pages are rendered from that document alone, so `dpaudit report DIR` can redraw
them later. Files are written atomically (temporary file in the same folder, then os.replace).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import pathlib
import platform
import sys
import tempfile
from importlib import metadata
from typing import Any, Iterable

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "FILES",
    "versions",
    "build_report",
    "summarize",
    "findings",
    "atomic_write_text",
    "write_report",
    "load_report",
    "render_markdown",
    "settings_lines",
    "by_algorithm",
    "claim_rows",
    "COLUMNS",
    "SUMMARY_COLUMNS",
    "fmt",
]

SCHEMA = "dpaudit.report"
SCHEMA_VERSION = 1
FILES = ("report.json", "report.md", "report.html")


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


def atomic_write_text(path: str | os.PathLike[str], text: str) -> pathlib.Path:
    """Write `text` to `path` atomically: a temporary file in the same folder, fsync, os.replace."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a report is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _sanitize(value: Any) -> Any:
    """Replace non-finite floats (JSON has none) by strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitize(v) for v in value]
    return value


def _restore(value: Any) -> Any:
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def write_report(report: dict[str, Any], out_dir: str | os.PathLike[str], *, json_file: bool = True) -> dict[str, pathlib.Path]:
    """Write report.json (unless `json_file` is False), report.md and report.html into `out_dir`."""
    from dpaudit.report_html import render_html

    out = pathlib.Path(out_dir)
    paths = {}
    if json_file:
        text = json.dumps(_sanitize(report), indent=1, default=_json_default, allow_nan=False)
        paths["json"] = atomic_write_text(out / "report.json", text + "\n")
    paths["md"] = atomic_write_text(out / "report.md", render_markdown(report))
    paths["html"] = atomic_write_text(out / "report.html", render_html(report))
    return paths


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report.json (or the folder holding it); check its schema and version."""
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "report.json"
    if not path.is_file():
        raise ValueError(f"report file {str(path)!r} does not exist")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"report file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise ValueError(f"report file {str(path)!r} is not a {SCHEMA} document")
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"report schema_version {report.get('schema_version')!r} is not supported "
                         f"(this dpaudit reads version {SCHEMA_VERSION})")
    return _restore(report)


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
    regret = (f"{fmt(reg['final_mean'])} [{fmt(reg['final_ci'][0])}, {fmt(reg['final_ci'][1])}] at T={reg['horizon']}"
              if reg else "–")
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
            "lower": f"{fmt(c['epsilon_lower'])} @{fmt(100 * c['confidence'], 4)}%",
            "verdict": c["verdict"],
            "expect": c["expect"],
            "tightness": fmt(c["tightness"], 2),
            "regret": regret,
            "status": "ok" if c["ok"] else "UNEXPECTED",
        })
    return rows


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


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: summary, findings, one table per algorithm."""
    summ = report["summary"]
    lines = ["# dpaudit verification report", ""]
    lines += settings_lines(report)
    lines += ["", f"**Gate: {'PASS' if summ['ok'] else 'FAIL'}** — {summ['entries']} entries, {summ['claims']} claims; "
              f"expected violations found: {len(summ['violations_found'])}; unexpected violations: "
              f"{len(summ['unexpected_violations'])}; expected violations missed: {len(summ['missed_violations'])}; "
              f"errors: {len(summ['errors'])}.", ""]
    for key, title in (("unexpected_violations", "Unexpected violations"), ("missed_violations", "Missed violations"),
                       ("errors", "Entries that failed to run")):
        if summ[key]:
            lines.append(f"- {title}: " + ", ".join(summ[key]))
    lines += ["", "## Findings: paper claims the audits contradict", ""]
    paper = [f for f in report["findings"] if f["kind"] == "paper"]
    lines += [f"{i}. {f['text']}" for i, f in enumerate(paper, 1)] or ["None in this run."]
    lines += ["", "## Known-buggy variants caught", ""]
    var = [f for f in report["findings"] if f["kind"] == "variant"]
    lines += [f"{i}. {f['text']}" for i, f in enumerate(var, 1)] or ["None in this run."]
    lines += ["", "## All claims", ""]
    lines.append("| " + " | ".join(h for _, h in SUMMARY_COLUMNS) + " |")
    lines.append("|" + "---|" * len(SUMMARY_COLUMNS))
    for e in report["entries"]:
        for row in claim_rows(e):
            lines.append("| " + " | ".join(row[k].replace("|", "\\|") for k, _ in SUMMARY_COLUMNS) + " |")
    for alg, entries in by_algorithm(report["entries"]).items():
        lines += ["", f"## {alg}", ""]
        lines.append("| " + " | ".join(h for _, h in COLUMNS) + " |")
        lines.append("|" + "---|" * len(COLUMNS))
        for e in entries:
            for row in claim_rows(e):
                lines.append("| " + " | ".join(row[k].replace("|", "\\|") for k, _ in COLUMNS) + " |")
        for e in entries:
            pairs = "; ".join(f"{p['relation']}: {p['description']}" for p in e["pairs"])
            lines.append(f"- `{e['name']}`: {e['description']} Observable ({e['observable']}): "
                         f"{e['observable_description']}. Neighbours: {pairs}. Source: {e['source'] or '–'}.")
    return "\n".join(lines) + "\n"
