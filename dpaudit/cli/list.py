"""`dpaudit list`: the audit catalog's entries (name, algorithm, expected outcome, observable)."""

from __future__ import annotations

import argparse
import json

NAME = "list"
HELP = "list the audit catalog's entries"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="only the entries of the default (quick) suite")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")


def run(args: argparse.Namespace) -> int:
    from dpaudit.registry import AUDITS, load_plugins

    load_plugins()
    entries = [AUDITS.get(name) for name in AUDITS.names()]
    if args.quick:
        entries = [e for e in entries if e.quick]
    rows = [e.summary() for e in entries]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    header = ("name", "algorithm", "expect", "observable", "relations", "quick")
    table = [(r["name"], r["algorithm"], r["expect"], r["observable"], ",".join(r["relations"]),
              "yes" if r["quick"] else "") for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    return 0
