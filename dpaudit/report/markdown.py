"""The report as a Markdown page, rendered from the report document alone.

Every value of the document is text, never markup: `md_text` puts it on one line and backslash-escapes
each character that could start Markdown or HTML (so a `|` cannot split a table cell, a newline cannot
end a list item, a `<script>` stays text); `md_code` makes a code span of it, whatever backticks it holds.
"""

from __future__ import annotations

import re
from typing import Any

from dpaudit.report.glossary import COLUMN_HELP, glossary
from dpaudit.report.model import (
    INTERVAL_COLUMNS,
    ONE_RUN_COLUMNS,
    ONE_RUN_TEXT,
    ONE_RUN_TITLE,
    PIN_TARGET,
    SUMMARY_COLUMNS,
    by_algorithm,
    claim_columns,
    claim_rows,
    entry_note,
    finding_sections,
    interval_rows,
    one_run_section,
    settings_lines,
)

__all__ = ["INTERVAL_PLOT", "md_code", "md_text", "render_markdown"]

INTERVAL_PLOT = "intervals.png"
"""The interval plot, written beside report.md by `dpaudit.report.write_report` and linked from it."""

_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~$#])")
_MARKERS = (re.compile(r"^(\s*)([-+])"), re.compile(r"^(\s*\d+)([.)])"))  # would open a list in a list item
_COMMAND = "\0command\0"  # stands for the command in settings_lines, which puts it in a code span


def _one_line(value: Any) -> str:
    return " ".join(str(value).splitlines())


def md_text(value: Any, *, item: bool = False) -> str:
    """`value` as Markdown text: on one line, every character that could start markup escaped (with
    `item`, also a leading list marker, for a text that starts a list item)."""
    text = _SPECIAL.sub(r"\\\1", _one_line(value))
    for marker in _MARKERS if item else ():
        text = marker.sub(r"\1\\\2", text)
    return text


def md_code(value: Any) -> str:
    """`value` as a Markdown code span on one line, fenced by more backticks than it holds in a row."""
    text = _one_line(value)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if not text or text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _span(value: Any) -> str:
    """`value` for a single-backtick code span of a template: one line, backticks replaced by look-alikes."""
    return _one_line(value).replace("`", "ˋ")


def _escaped(value: Any) -> Any:
    """`value` with every string in it (in lists and dict values too) made Markdown text."""
    if isinstance(value, str):
        return md_text(value)
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


def _names(value: Any) -> str:
    """A list of names (or whatever a crafted document holds instead) as one comma-separated text."""
    return ", ".join(map(md_text, value)) if isinstance(value, (list, tuple)) else md_text(value)


def _count(value: Any) -> str:
    """How many items a list has (or the text a crafted document holds instead)."""
    return str(len(value)) if isinstance(value, (list, tuple)) else md_text(value)


def _row(row: dict[str, Any], columns: tuple[tuple[str, str], ...]) -> str:
    return "| " + " | ".join(md_text(row[k]) for k, _ in columns) + " |"


def _header(columns: tuple[tuple[str, str], ...]) -> list[str]:
    """The table's header; each column explained by a footnote (`[^col-KEY]`, defined under "Columns")."""
    heads = [f"{h}[^col-{k}]" if k in COLUMN_HELP else h for k, h in columns]
    return ["| " + " | ".join(heads) + " |", "|" + "---|" * len(columns)]


def _settings(report: dict[str, Any]) -> list[str]:
    """The settings lines, every value in them text."""
    command = report.get("command")
    safe = {
        **report,
        "created": _escaped(report.get("created")),
        "versions": _escaped(report["versions"]),
        "settings": _escaped(report["settings"]),
        "seconds": _escaped(report.get("seconds")),
        "command": [_COMMAND] if command else None,
    }
    if not command:
        return settings_lines(safe)
    cmd = " ".join(map(str, command)) if isinstance(command, (list, tuple)) else str(command)
    return [
        line.replace(f"`{_COMMAND}`", md_code(cmd)).replace(_COMMAND, md_text(cmd)) for line in settings_lines(safe)
    ]


def _baseline(comparison: dict[str, Any]) -> list[str]:
    """The changes since the baseline (`dpaudit.baseline.markdown_lines`), every value in them text."""
    from dpaudit.baseline import markdown_lines

    changes = [c for c in comparison.get("changes") or [] if isinstance(c, dict)]
    safe = {
        **_escaped(comparison),
        "baseline": _span(comparison.get("baseline")),  # these two go in code spans
        "changes": [{**_escaped(c), "kind": c.get("kind"), "entry": _span(c.get("entry"))} for c in changes],
    }
    return markdown_lines(safe)


def interval_lines(report: dict[str, Any], plot: bool = True) -> list[str]:
    """The interval section: per entry [ε_lower, ε_upper], the pin ratio, the tight side, the reason."""
    rows = interval_rows(report["entries"])
    if not rows:
        return []
    pinned = sum(1 for r in rows if r["tight"] == "both")
    lines = [
        "",
        "## Intervals: the true ε between the audit and the accountant",
        "",
        f"{pinned} of {len(rows)} entries pinned within {100 * (1 - PIN_TARGET):.0f}% "
        f"(pin = ε_lower/ε_upper ≥ {PIN_TARGET:g}; (μ): Gaussian-DP μ_lower/μ_upper). "
        "Sound ε_upper is the tightest claim expected to hold (accounted, corrected, view or declared; see the "
        "glossary), ε_lower the audit's bound at its δ.",
        "",
    ]
    if plot:
        lines += [f"![intervals]({INTERVAL_PLOT})", ""]
    lines += _header(INTERVAL_COLUMNS)
    lines += [_row(row, INTERVAL_COLUMNS) for row in rows]
    return lines


def one_run_lines(report: dict[str, Any]) -> list[str]:
    """The "One run beside many runs" section (`one_run_section`), or nothing when no algorithm has both modes."""
    rows, notes = one_run_section(report)
    if not rows and not notes:
        return []
    lines = ["", f"## {ONE_RUN_TITLE}", "", ONE_RUN_TEXT, ""]
    if rows:
        lines += _header(ONE_RUN_COLUMNS) + [_row(row, ONE_RUN_COLUMNS) for row in rows] + [""]
    return lines + [f"- {md_text(note, item=True)}" for note in notes]


def _findings(found: list[dict[str, Any]]) -> list[str]:
    """Each finding on one line, its details in an indented list under it."""
    lines = []
    for i, f in enumerate(found, 1):
        lines.append(f"{i}. {md_text(f['text'], item=True)}")
        for d in f.get("details") or []:
            if isinstance(d, dict):
                lines.append(f"   - {md_text(d.get('label'))}: {md_text(d.get('text'))}")
    return lines or ["None in this run."]


def _glossary(report: dict[str, Any], columns: list[tuple[str, str]]) -> list[str]:
    """The glossary of the report's labels, then the columns' footnotes."""
    lines = ["", "## Glossary", ""]
    lines += [f"- **{md_text(term)}**: {md_text(meaning)}" for term, meaning in glossary(report)]
    lines += ["", "## Columns", ""]
    lines += [
        f"[^col-{key}]: {md_text(head)}: {md_text(COLUMN_HELP[key])}" for key, head in columns if key in COLUMN_HELP
    ]
    return lines


def _gate(summ: dict[str, Any]) -> list[str]:
    lines = [
        f"**Gate: {'PASS' if summ['ok'] else 'FAIL'}** — {md_text(summ['entries'])} entries, "
        f"{md_text(summ['claims'])} claims; expected violations found: {_count(summ['violations_found'])}; "
        f"unexpected violations: {_count(summ['unexpected_violations'])}; expected violations missed: "
        f"{_count(summ['missed_violations'])}; errors: {_count(summ['errors'])}.",
        "",
    ]
    for key, title in (
        ("unexpected_violations", "Unexpected violations"),
        ("missed_violations", "Missed violations"),
        ("errors", "Entries that failed to run"),
    ):
        if summ[key]:
            lines.append(f"- {title}: " + _names(summ[key]))
    return lines


def _algorithm(alg: str, entries: list[dict[str, Any]]) -> list[str]:
    columns = claim_columns(entries)
    lines = ["", f"## {md_text(alg)}", ""] + _header(columns)
    lines += [_row(row, columns) for e in entries for row in claim_rows(e)]
    for e in entries:
        parts = [f"{label.capitalize()}: {md_text(text)}." if label else md_text(text) for label, text in entry_note(e)]
        lines.append(f"- {md_code(e['name'])}: " + " ".join(p for p in parts if p))
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: summary, findings, one table per algorithm."""
    lines = ["# dpaudit verification report", ""]
    lines += _settings(report)
    lines += [""] + _gate(report["summary"])
    if report.get("baseline"):
        lines += _baseline(report["baseline"])
    for _, title, found in finding_sections(report):
        lines += ["", f"## {md_text(title)}", ""] + _findings(found)
    lines += ["", "## All claims", ""] + _header(SUMMARY_COLUMNS)
    lines += [_row(row, SUMMARY_COLUMNS) for e in report["entries"] for row in claim_rows(e)]
    lines += interval_lines(report)
    lines += one_run_lines(report)
    used = dict(SUMMARY_COLUMNS) | (dict(INTERVAL_COLUMNS) if interval_rows(report["entries"]) else {})
    for alg, entries in by_algorithm(report["entries"]).items():
        lines += _algorithm(alg, entries)
        used |= dict(claim_columns(entries))
    lines += _glossary(report, list(used.items()))
    return "\n".join(lines) + "\n"
