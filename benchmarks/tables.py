"""Plain-text tables and figure files for the benchmarks."""

from __future__ import annotations

import os
import sys

from dpaudit._io import atomic_write_text


def format_table(title: str, header: tuple, rows: list) -> str:
    """A plain-text table, columns padded to their widest cell, the title on its own line first."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    lines = [f"\n{title}", "  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


def print_table(title: str, header: tuple, rows: list) -> str:
    """Print `format_table(...)` on stdout (progress goes to stderr) and return it."""
    text = format_table(title, header, rows)
    sys.stdout.write(text)
    sys.stdout.flush()
    return text


def write_lines(path: str | os.PathLike[str], lines: list[str]) -> None:
    """Write a figure file, one line per entry, atomically (its folder made if missing)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write_text(path, "\n".join(lines) + "\n")
