"""Plain-text tables for the benchmark scripts (imported from the scripts' own folder)."""

from __future__ import annotations

import sys


def print_table(title: str, header: tuple, rows: list) -> None:
    """A plain-text table on stdout, columns padded to their widest cell (progress goes to stderr)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    sys.stdout.flush()
