"""The report as a Markdown page, rendered from the report document alone."""

from __future__ import annotations

from typing import Any

from dpaudit.report.model import (COLUMNS, INTERVAL_COLUMNS, PIN_TARGET, SUMMARY_COLUMNS, by_algorithm, claim_rows,
                                  interval_rows, settings_lines)

__all__ = ["render_markdown", "INTERVAL_PLOT"]

INTERVAL_PLOT = "intervals.png"
"""The interval plot, written beside report.md by `dpaudit.report.write_report` and linked from it."""


def interval_lines(report: dict[str, Any], plot: bool = True) -> list[str]:
    """The interval section: per entry [ε_lower, ε_upper], the pin ratio, the tight side, the reason."""
    rows = interval_rows(report["entries"])
    if not rows:
        return []
    pinned = sum(1 for r in rows if r["tight"] == "both")
    lines = ["", "## Intervals: the true ε between the audit and the accountant", "",
             f"{pinned} of {len(rows)} entries pinned within {100 * (1 - PIN_TARGET):.0f}% "
             f"(pin = ε_lower/ε_upper ≥ {PIN_TARGET:g}; (μ): Gaussian-DP μ_lower/μ_upper). "
             "ε_upper is the smallest sound claim (accountant or corrected), ε_lower the audit's bound at its δ.", ""]
    if plot:
        lines += [f"![intervals]({INTERVAL_PLOT})", ""]
    lines.append("| " + " | ".join(h for _, h in INTERVAL_COLUMNS) + " |")
    lines.append("|" + "---|" * len(INTERVAL_COLUMNS))
    for row in rows:
        lines.append("| " + " | ".join(row[k].replace("|", "\\|") for k, _ in INTERVAL_COLUMNS) + " |")
    return lines


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
    if report.get("baseline"):
        from dpaudit.baseline import markdown_lines

        lines += markdown_lines(report["baseline"])
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
    lines += interval_lines(report)
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
