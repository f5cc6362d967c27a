"""Verification reports: claimed epsilon, audited epsilon and regret side by side (JSON, Markdown, HTML).

The package is layered in one direction: `glossary` (what every label and column means) <-
`model` (the document, its schema, findings and table rows) <-
`plots` (figures as PNG bytes) <- `markdown`, `html` (the two pages) <- `files` (writing and
reading the three files, the folder lock). Every public name is re-exported here, so
`from dpaudit.report import build_report, write_report` works as before.
"""

from dpaudit.report.files import (
    FILES,
    LOCK_FILE,
    FolderBusyError,
    atomic_write_text,
    check_report_set,
    load_report,
    lock_folder,
    write_report,
)
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.report.model import (
    COLUMNS,
    INTERVAL_COLUMNS,
    PIN_TARGET,
    SCHEMA,
    SCHEMA_VERSION,
    SUMMARY_COLUMNS,
    build_report,
    by_algorithm,
    claim_rows,
    findings,
    fmt,
    interval,
    interval_rows,
    settings_lines,
    summarize,
    versions,
)
from dpaudit.report.plots import epsilon_png, interval_png, regret_png, tradeoff_png

__all__ = [
    "COLUMNS",
    "FILES",
    "INTERVAL_COLUMNS",
    "LOCK_FILE",
    "PIN_TARGET",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SUMMARY_COLUMNS",
    "FolderBusyError",
    "atomic_write_text",
    "build_report",
    "by_algorithm",
    "check_report_set",
    "claim_rows",
    "epsilon_png",
    "findings",
    "fmt",
    "interval",
    "interval_png",
    "interval_rows",
    "load_report",
    "lock_folder",
    "regret_png",
    "render_html",
    "render_markdown",
    "settings_lines",
    "summarize",
    "tradeoff_png",
    "versions",
    "write_report",
]
