"""One self-contained HTML page for a verification report: inline CSS, figures as base64 PNG."""

from __future__ import annotations

import base64
import html
from typing import Any

from dpaudit.report.model import (COLUMNS, INTERVAL_COLUMNS, PIN_TARGET, SUMMARY_COLUMNS, by_algorithm, claim_rows,
                                  interval_rows, settings_lines)
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
"""


def _img(png: bytes | None, alt: str, caption: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _md_code(text: str) -> str:
    """Escape text, rendering `code` spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _runs(e: dict[str, Any]) -> str:
    """How the entry was run: samples per side, or one run at T with m canaries."""
    if e.get("mode") == "one-run":
        return f"one run at T = {e['one_run']['horizon']} with {e['one_run']['num_canaries']} canaries"
    return f"{e['audits'][0]['samples'] if e.get('audits') else '–'} samples per side"


def render_html(report: dict[str, Any]) -> str:
    """The report page: summary, findings, a table and notes per algorithm, and the figures."""
    esc = html.escape
    summ = report["summary"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>dpaudit verification report</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>dpaudit verification report</h1>", "<ul>"]
    out += [f"<li>{_md_code(line[2:])}</li>" for line in settings_lines(report)]
    out.append("</ul>")
    cls = "pass" if summ["ok"] else "fail"
    out.append(f'<p id="gate" class="{cls}"><strong>Gate: {"PASS" if summ["ok"] else "FAIL"}</strong> — '
               f"{summ['entries']} entries, {summ['claims']} claims; expected violations found: "
               f"{len(summ['violations_found'])}; unexpected violations: {len(summ['unexpected_violations'])}; "
               f"expected violations missed: {len(summ['missed_violations'])}; errors: {len(summ['errors'])}.</p>")
    for key, title in (("unexpected_violations", "Unexpected violations"), ("missed_violations", "Missed violations"),
                       ("errors", "Entries that failed to run")):
        if summ[key]:
            out.append(f"<p class=\"fail\">{esc(title)}: {esc(', '.join(summ[key]))}</p>")
    out.append('<h2 id="findings">Findings: paper claims the audits contradict</h2>')
    paper = [f for f in report["findings"] if f["kind"] == "paper"]
    out.append("<ol>" + "".join(f"<li>{esc(f['text'])}</li>" for f in paper) + "</ol>" if paper
               else "<p>None in this run.</p>")
    out.append("<h2>Known-buggy variants caught</h2>")
    var = [f for f in report["findings"] if f["kind"] == "variant"]
    out.append("<ol>" + "".join(f"<li>{esc(f['text'])}</li>" for f in var) + "</ol>" if var
               else "<p>None in this run.</p>")
    out.append('<h2>All claims</h2><table class="summary"><thead><tr>'
               + "".join(f"<th>{esc(h)}</th>" for _, h in SUMMARY_COLUMNS) + "</tr></thead><tbody>")
    for e in report["entries"]:
        for row in claim_rows(e):
            out.append(f'<tr class="{esc(row["verdict"])}">' + "".join(
                f'<td class="{k} status-{esc(row[k])}">{esc(row[k])}</td>' if k == "status" else f'<td class="{k}">{esc(row[k])}</td>'
                for k, _ in SUMMARY_COLUMNS) + "</tr>")
    out.append("</tbody></table>")
    rows = interval_rows(report["entries"])
    if rows:
        pinned = sum(1 for r in rows if r["tight"] == "both")
        out.append('<h2 id="intervals">Intervals: the true ε between the audit and the accountant</h2>')
        out.append(f"<p>{pinned} of {len(rows)} entries pinned within {100 * (1 - PIN_TARGET):.0f}% (pin = "
                   f"ε_lower/ε_upper ≥ {PIN_TARGET:g}; (μ): Gaussian-DP μ_lower/μ_upper). ε_upper is the smallest "
                   "sound claim (accountant or corrected), ε_lower the audit's bound at its δ.</p>")
        out.append(_img(interval_png(report["entries"]), "epsilon intervals",
                        "Per entry, the audited ε_lower (dot) to the smallest sound ε_upper; claims marked "
                        "(x: expected to hold, +: known to be wrong)."))
        out.append('<table class="intervals"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for _, h in INTERVAL_COLUMNS)
                   + "</tr></thead><tbody>")
        for row in rows:
            out.append(f'<tr class="tight-{esc(row["tight"])}">'
                       + "".join(f'<td class="{k}">{esc(row[k])}</td>' for k, _ in INTERVAL_COLUMNS) + "</tr>")
        out.append("</tbody></table>")
    out.append("<h2>Figures</h2>")
    out.append(_img(epsilon_png(report["entries"]), "claimed vs audited epsilon",
                    "Claimed ε (black tick) against the audited lower bound (bar; red where it exceeds the claim)."))
    out.append(_img(regret_png(report["entries"]), "regret curves",
                    "Mean cumulative pseudo-regret over runs with its 95% band."))
    for alg, entries in by_algorithm(report["entries"]).items():
        out.append(f"<h2>{esc(alg)}</h2>")
        out.append('<table class="claims"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for _, h in COLUMNS)
                   + "</tr></thead><tbody>")
        for e in entries:
            for row in claim_rows(e):
                tds = "".join(
                    f'<td class="{k} status-{esc(row[k])}">{esc(row[k])}</td>' if k == "status"
                    else f'<td class="{k}">{esc(row[k])}</td>' for k, _ in COLUMNS)
                out.append(f'<tr class="{esc(row["verdict"])}">{tds}</tr>')
        out.append("</tbody></table><ul>")
        for e in entries:
            pairs = "; ".join(f"{p['relation']}: {p['description']}" for p in e["pairs"])
            out.append(f"<li><code>{esc(e['name'])}</code>: {esc(e['description'])} Observable ({esc(e['observable'])}): "
                       f"{esc(e['observable_description'])}. Neighbours: {esc(pairs)}. Source: {esc(e['source'] or '–')}. "
                       f"Seed {e.get('seed')}, {esc(_runs(e))}, {e.get('seconds')} s.</li>")
        out.append("</ul>")
        for e in entries:
            out.append(_img(tradeoff_png(e), f"trade-off curve {e['name']}",
                            f"{e['name']}: empirical trade-off (points) against the claimed (ε, δ) curves."))
    out.append("</body></html>")
    return "\n".join(part for part in out if part) + "\n"
