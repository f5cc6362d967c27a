"""`dpaudit report DIR`: re-render DIR/report.md and DIR/report.html from DIR/report.json."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "report"
HELP = "re-render report.md and report.html from a report.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit report` on its subparser."""
    parser.add_argument("directory", metavar="DIR", help="folder holding report.json (written by `dpaudit audit`)")
    parser.add_argument("--json", action="store_true", help="print the paths written and the gate as JSON")


def run(args: argparse.Namespace) -> int:
    """Re-render the report set of DIR from its report.json and print the paths written; returns 0."""
    from dpaudit.cli._types import check_path
    from dpaudit.report import check_report_set, load_report, lock_folder, write_report

    check_path(args.directory, "DIR")  # a name too long for the system: a usage error
    report = load_report(args.directory)
    with lock_folder(args.directory):
        for problem in check_report_set(args.directory):  # what this re-rendering repairs
            print(f"dpaudit report: {problem}; rewriting the set from report.json", file=sys.stderr)
        paths = write_report(report, args.directory, json_file=False)
    if args.json:
        print(json.dumps({"ok": report["summary"]["ok"], "files": {k: str(v) for k, v in paths.items()}}))
    else:
        for path in paths.values():
            print(path)
    return 0
