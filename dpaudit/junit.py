"""A report as JUnit XML (`dpaudit audit --junit-xml FILE`), so CI systems show audits like tests.

One <testcase> per claim (classname: the entry's algorithm or module, name: "entry[claim]"): a
<failure> with the numbers when the claim is not as expected, an <error> with the exception for an
entry that could not run (one testcase for the entry). With a baseline comparison in the report,
a claim that failed in the baseline too is <skipped> (known), a significant rise of the baseline's
own event (`dpaudit.baseline`, kind "rose") is a <failure> and a rise that does not gate is nothing,
so the XML agrees with the exit status. The layout follows the JUnit XML schema most CI systems read
(the Ant JUnit task's; GitHub, GitLab, Jenkins, Azure).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from typing import Any

from dpaudit.records import ClaimRecord, EntryRecord
from dpaudit.report.model import fmt, samples_text

__all__ = ["junit_xml", "write_junit"]

# characters XML 1.0 cannot hold even escaped (control characters, e.g. a terminal colour code in an error)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """`text` with characters XML cannot hold shown as \\xNN escapes."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def _claim_text(entry: EntryRecord, c: ClaimRecord) -> str:
    return (
        f"claim ε = {fmt(c['epsilon'])} at δ = {fmt(c['delta'])} ({c['accountant']}); the audit gives "
        f"ε_lower = {fmt(c['epsilon_lower'])} with {fmt(100 * c['confidence'], 6)}% confidence"
        + (
            f" (the chosen event's ε is at most {fmt(c['event_epsilon_upper'])}, Clopper-Pearson)"
            if c.get("event_epsilon_upper") is not None
            else ""
        )
        + f": verdict {c['verdict']}, expected {c['expect']}; "
        f"entry seed {entry.get('seed')}"
    )


def junit_xml(report: dict[str, Any]) -> str:
    """The report document as a JUnit XML string."""
    changes = (report.get("baseline") or {}).get("changes", [])
    kinds = {(c["entry"], c["claim"]): c for c in changes if c["kind"] in ("still-failing", "rose")}
    suite = ET.Element(
        "testsuite",
        name="dpaudit",
        timestamp=str(report.get("created") or ""),
        time=f"{float(report.get('seconds') or 0.0):.3f}",
    )
    props = ET.SubElement(suite, "properties")
    settings = report.get("settings", {})
    for key in ("seed", "confidence", "per_audit_confidence", "samples", "executor", "catalog"):
        if key in settings:
            value = samples_text(report) if key == "samples" and settings[key] is None else settings[key]
            ET.SubElement(props, "property", name=key, value=_xml(value))
    if report.get("command"):
        ET.SubElement(props, "property", name="command", value=_xml(" ".join(report["command"])))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for e in report["entries"]:
        classname = _xml(e["algorithm"])
        claims = e.get("claims", [])
        seconds = float(e.get("seconds") or 0.0) / max(1, len(claims))
        if e.get("error"):
            case = ET.SubElement(suite, "testcase", classname=classname, name=_xml(e["name"]), time=f"{seconds:.3f}")
            err = ET.SubElement(case, "error", message=_xml(e["error"]), type=_xml(e["error"].split(":", 1)[0]))
            err.text = _xml(e.get("traceback") or e["error"])
            counts["tests"] += 1
            counts["errors"] += 1
            continue
        for c in claims:
            case = ET.SubElement(
                suite, "testcase", classname=classname, name=_xml(f"{e['name']}[{c['label']}]"), time=f"{seconds:.3f}"
            )
            counts["tests"] += 1
            change = kinds.get((e["name"], c["label"]))
            text = _xml(_claim_text(e, c))
            if change is not None and change["kind"] == "still-failing":
                ET.SubElement(case, "skipped", message=f"known failure (in the baseline too): {text}")
                counts["skipped"] += 1
            elif not c["ok"]:
                kind = "unexpected violation" if c["verdict"] == "violation" else "missed violation"
                fail = ET.SubElement(case, "failure", message=f"{kind}: {text}", type=kind.replace(" ", "-"))
                fail.text = text
                counts["failures"] += 1
            elif change is not None:  # "rose": as expected, but the baseline's event leaks significantly more
                fail = ET.SubElement(
                    case,
                    "failure",
                    message=_xml(f"regression against the baseline: {change['text']}"),
                    type="baseline-regression",
                )
                fail.text = _xml(f"{change['text']}; {text}")
                counts["failures"] += 1
    for key, value in counts.items():
        suite.set(key, str(value))
    suites = ET.Element("testsuites", {"name": "dpaudit", **{k: str(v) for k, v in counts.items() if k != "skipped"}})
    suites.append(suite)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(report: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write `junit_xml(report)` to `path` atomically."""
    from dpaudit.report import atomic_write_text

    atomic_write_text(path, junit_xml(report))
