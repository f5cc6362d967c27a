"""`dpaudit list`: audit entries (name, algorithm, expected outcome, observable).

Which entries: as for `dpaudit audit`, the user's own (declared in a `[tool.dpaudit]` table of
./pyproject.toml or `--config FILE`) when there is a config, else the built-in catalog;
`--catalog builtin|user|all|libraries` chooses. The listing reads each entry's metadata only; the claimed
epsilons (which may need an accountant to compute) are added with `--claims`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dpaudit.cli._catalog import EXTRA_CATALOGS, add_catalog_arguments, catalog_skips, load_entries

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "list"
HELP = "list audit entries: yours ([tool.dpaudit] in pyproject.toml) or the built-in catalog's"

FIELDS = (
    "name",
    "algorithm",
    "expect",
    "variant",
    "observable",
    "relations",
    "quick",
    "samples",
    "deep_samples",
    "deep_size",
    "description",
    "source",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit list` on its subparser."""
    parser.add_argument("--quick", action="store_true", help="only the entries of the default (quick) suite")
    add_catalog_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")
    parser.add_argument(
        "--claims",
        action="store_true",
        help="with --json, add each entry's claims (label, epsilon, delta, accountant, expect)",
    )


def _row(entry: Any, claims: bool, origin: str) -> dict[str, Any]:
    # deep_samples: the runs a run-limited catalog entry needs; deep_size: the horizon and canaries of a one-run
    # entry's deep run (None for the others, yours included)
    row: dict[str, Any] = {f: getattr(entry, f, None) if f.startswith("deep_") else getattr(entry, f) for f in FIELDS}
    row["relations"] = list(row["relations"])
    row["origin"] = origin
    if claims:
        row["claims"] = [
            {"label": c.label, "epsilon": c.epsilon, "delta": c.delta, "accountant": c.accountant, "expect": c.expect}
            for c in entry.claims
        ]
    return row


def run(args: argparse.Namespace) -> int:
    """Print the catalog's entries as a table (or JSON with `--json`); returns the exit code."""
    from dpaudit.registry import AUDITS

    if args.claims and not args.json:
        raise ValueError("--claims applies to --json output only")
    catalog, _, builtin, user = load_entries(args)
    skipped = [f"skipped {note}" for note in catalog_skips(catalog)]  # the libraries catalog: not installed
    origin = catalog if catalog in EXTRA_CATALOGS else "builtin"
    entries = [(AUDITS.get(name), origin) for name in builtin] + [(AUDITS.get(name), "user") for name in user]
    rows = [_row(e, args.claims, origin) for e, origin in entries if e.quick or not args.quick]
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        for note in skipped:
            print(note, file=sys.stderr)
        return 0
    header = ("name", "algorithm", "expect", "observable", "relations", "quick", "origin")
    table = [
        (
            r["name"],
            r["algorithm"],
            r["expect"],
            r["observable"],
            ",".join(r["relations"]),
            "yes" if r["quick"] else "",
            r["origin"],
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    for note in skipped:
        print(note)
    return 0
