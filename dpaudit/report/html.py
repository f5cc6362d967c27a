"""One self-contained HTML page for a verification report: inline CSS, figures as base64 PNG.

Every value of the document is text, never markup: each one goes into the page through `_h` (or
`_inline`, which escapes first), attributes included, whatever its type.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable
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
from dpaudit.report.plots import epsilon_png, interval_png, regret_png, tradeoff_png

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:0.6em 0 1.2em;font-size:0.85em;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
tr.violation td.verdict{color:#b00;font-weight:bold}
tr.consistent td.verdict{color:#070}
td.status-UNEXPECTED,td.status-ERROR{background:#fdd;font-weight:bold}
tr.tight-both td.pin{color:#070}tr.tight-violated td.pin{color:#b00;font-weight:bold}
.pass{color:#070}.fail{color:#b00}
figure{margin:0.5em 0 1.5em}figcaption{font-size:0.85em;color:#555}
img{max-width:100%}
code{background:#f6f6f6;padding:0 2px}
th[title]{text-decoration:underline dotted;cursor:help}
ol.findings>li{margin:0.3em 0}
details>summary{cursor:pointer}details>ul{margin:0.2em 0 0.5em;font-size:0.9em;color:#333}
dl.glossary{display:grid;grid-template-columns:max-content auto;gap:2px 1em;font-size:0.9em}
dl.glossary dt{font-weight:bold}dl.glossary dd{margin:0}
"""


def _h(value: Any) -> str:
    """Any value as HTML text, safe in element content and in quoted attributes alike."""
    return html.escape(str(value), quote=True)


def _alternate(text: str, mark: str, tag: str) -> str:
    """`text` with every other `mark`-delimited part wrapped in `tag` (when the marks pair up)."""
    parts = text.split(mark)
    if len(parts) % 2 == 0:
        return text
    return "".join(f"<{tag}>{p}</{tag}>" if i % 2 else p for i, p in enumerate(parts))


def _inline(text: Any) -> str:
    """A line of the report's own Markdown as HTML: escaped, then `code` spans and **strong** parts."""
    return _alternate(_alternate(_h(text), "`", "code"), "**", "strong")


def _img(png: bytes | None, alt: str, caption: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{_h(alt)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_h(caption)}</figcaption></figure>"
    )


def _count(value: Any) -> Any:
    """How many items a list has (or whatever a crafted document holds instead)."""
    return len(value) if isinstance(value, (list, tuple)) else value


def _names(value: Any) -> str:
    """A list of names (or whatever a crafted document holds instead) as one comma-separated text."""
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _table(
    cls: str,
    columns: tuple[tuple[str, str], ...],
    rows: list[dict[str, Any]],
    row_class: Callable[[dict[str, Any]], str],
) -> str:
    """A table of report rows, each row's class given by `row_class(row)`."""
    heads = "".join(
        f'<th title="{_h(COLUMN_HELP[k])}">{_h(h)}</th>' if k in COLUMN_HELP else f"<th>{_h(h)}</th>"
        for k, h in columns
    )
    head = f'<table class="{_h(cls)}"><thead><tr>{heads}</tr></thead><tbody>'
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="{_h(k)}{" status-" + _h(row[k]) if k == "status" else ""}">{_h(row[k])}</td>'
            for k, _ in columns
        )
        body.append(f'<tr class="{_h(row_class(row))}">{cells}</tr>')
    return "\n".join([head, *body, "</tbody></table>"])


def _verdict(row: dict[str, Any]) -> str:
    return str(row["verdict"])


def _gate(summ: dict[str, Any]) -> list[str]:
    cls = "pass" if summ["ok"] else "fail"
    n = {
        key: _h(_count(summ[key]))
        for key in ("violations_found", "unexpected_violations", "missed_violations", "errors")
    }
    out = [
        f'<p id="gate" class="{cls}"><strong>Gate: {"PASS" if summ["ok"] else "FAIL"}</strong> — '
        f"{_h(summ['entries'])} entries, {_h(summ['claims'])} claims; expected violations found: "
        f"{n['violations_found']}; unexpected violations: {n['unexpected_violations']}; "
        f"expected violations missed: {n['missed_violations']}; errors: {n['errors']}.</p>"
    ]
    for key, title in (
        ("unexpected_violations", "Unexpected violations"),
        ("missed_violations", "Missed violations"),
        ("errors", "Entries that failed to run"),
    ):
        if summ[key]:
            out.append(f'<p class="fail">{_h(title)}: {_h(_names(summ[key]))}</p>')
    return out


def _baseline(comparison: dict[str, Any]) -> list[str]:
    """The changes since the baseline: `dpaudit.baseline.markdown_lines` as HTML, every line escaped."""
    from dpaudit.baseline import markdown_lines

    out: list[str] = []
    in_list = False
    for line in markdown_lines(comparison):
        item = line.startswith("- ")
        if in_list != item:
            out.append("<ul>" if item else "</ul>")
            in_list = item
        if item:
            out.append(f"<li>{_inline(line[2:])}</li>")
        elif line.startswith("### "):
            out.append(f"<h3>{_inline(line[4:])}</h3>")
        elif line.startswith("## "):
            out.append(f'<h2 id="baseline">{_inline(line[3:])}</h2>')
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
    return out + (["</ul>"] if in_list else [])


def _finding(f: dict[str, Any]) -> str:
    """One finding: its line, with its details folded under it."""
    details = [d for d in f.get("details") or [] if isinstance(d, dict)]
    if not details:
        return f"<li>{_h(f['text'])}</li>"
    items = "".join(f"<li><strong>{_h(d.get('label'))}</strong>: {_h(d.get('text'))}</li>" for d in details)
    return f"<li><details><summary>{_h(f['text'])}</summary><ul>{items}</ul></details></li>"


def _findings(found: list[dict[str, Any]]) -> str:
    return '<ol class="findings">' + "".join(map(_finding, found)) + "</ol>" if found else "<p>None in this run.</p>"


def _glossary(report: dict[str, Any]) -> list[str]:
    items = "".join(f"<dt>{_h(term)}</dt><dd>{_h(meaning)}</dd>" for term, meaning in glossary(report))
    return [
        '<h2 id="glossary">Glossary</h2>',
        "<p>Every column header explains itself when pointed at.</p>",
        f'<dl class="glossary">{items}</dl>',
    ]


def _intervals(report: dict[str, Any]) -> list[str]:
    rows = interval_rows(report["entries"])
    if not rows:
        return []
    pinned = sum(1 for r in rows if r["tight"] == "both")
    return [
        '<h2 id="intervals">Intervals: the true ε between the audit and the accountant</h2>',
        f"<p>{pinned} of {len(rows)} entries pinned within {100 * (1 - PIN_TARGET):.0f}% (pin = "
        f"ε_lower/ε_upper ≥ {PIN_TARGET:g}; (μ): Gaussian-DP μ_lower/μ_upper). Sound ε_upper is the tightest "
        "claim expected to hold (accounted, corrected, view or declared; see the glossary), ε_lower the audit's "
        "bound at its δ.</p>",
        _img(
            interval_png(report["entries"]),
            "epsilon intervals",
            "Per entry, the audited ε_lower (dot) to the smallest sound ε_upper; claims marked "
            "(x: expected to hold, +: known to be wrong).",
        ),
        _table("intervals", INTERVAL_COLUMNS, rows, lambda r: f"tight-{r['tight']}"),
    ]


def _one_run(report: dict[str, Any]) -> list[str]:
    """The "One run beside many runs" section (`one_run_section`), or nothing when no algorithm has both modes."""
    rows, notes = one_run_section(report)
    if not rows and not notes:
        return []
    out = [f'<h2 id="one-run">{_h(ONE_RUN_TITLE)}</h2>', f"<p>{_h(ONE_RUN_TEXT)}</p>"]
    if rows:
        out.append(_table("one-run", ONE_RUN_COLUMNS, rows, lambda r: ""))
    if notes:
        out.append("<ul>" + "".join(f"<li>{_h(note)}</li>" for note in notes) + "</ul>")
    return out


def _entry_note(e: dict[str, Any]) -> str:
    parts = [f"{_h(label.capitalize())}: {_h(text)}." if label else _h(text) for label, text in entry_note(e)]
    return f"<li><code>{_h(e['name'])}</code>: " + " ".join(p for p in parts if p) + "</li>"


def _algorithm(alg: str, entries: list[dict[str, Any]]) -> list[str]:
    columns = claim_columns(entries)
    out = [f"<h2>{_h(alg)}</h2>", _table("claims", columns, [r for e in entries for r in claim_rows(e)], _verdict)]
    out += ["<ul>", *(_entry_note(e) for e in entries), "</ul>"]
    out += [
        _img(
            tradeoff_png(e),
            f"trade-off curve {e['name']}",
            f"{e['name']}: empirical trade-off (points) against the claimed (ε, δ) curves.",
        )
        for e in entries
    ]
    return out


def render_html(report: dict[str, Any]) -> str:
    """The report page: summary, findings, a table and notes per algorithm, and the figures."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>dpaudit verification report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>dpaudit verification report</h1>",
        "<ul>",
    ]
    out += [f"<li>{_inline(line[2:])}</li>" for line in settings_lines(report)]
    out.append("</ul>")
    out += _gate(report["summary"])
    if report.get("baseline"):
        out += _baseline(report["baseline"])
    for ident, title, found in finding_sections(report):
        out += [f'<h2 id="{_h(ident)}">{_h(title)}</h2>', _findings(found)]
    out += [
        "<h2>All claims</h2>",
        _table("summary", SUMMARY_COLUMNS, [r for e in report["entries"] for r in claim_rows(e)], _verdict),
    ]
    out += _intervals(report)
    out += _one_run(report)
    out.append("<h2>Figures</h2>")
    out.append(
        _img(
            epsilon_png(report["entries"]),
            "claimed vs audited epsilon",
            "Claimed ε (black tick) against the audited lower bound (bar; red where it exceeds the claim).",
        )
    )
    out.append(
        _img(
            regret_png(report["entries"]), "regret curves", "Mean cumulative pseudo-regret over runs with its 95% band."
        )
    )
    for alg, entries in by_algorithm(report["entries"]).items():
        out += _algorithm(alg, entries)
    out += _glossary(report)
    out.append("</body></html>")
    return "\n".join(part for part in out if part) + "\n"
