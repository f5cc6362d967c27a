"""Report files: report.json, report.md and report.html in one folder, written atomically, and the
folder lock that keeps two runs from mixing their files.

Each file is written to a temporary file in the same folder and renamed over the old one
(`os.replace`), so a reader never sees a half-written file. `lock_folder` holds an exclusive
`fcntl.flock` on `.dpaudit.lock` in the folder for a whole run: a second dpaudit writing the same
folder stops at once with `FolderBusyError` instead of leaving report.json from one run and
report.html from the other.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import pathlib
from typing import Any, Iterator

from dpaudit._io import atomic_write_bytes, atomic_write_text
from dpaudit.report.html import render_html
from dpaudit.report.markdown import INTERVAL_PLOT, render_markdown
from dpaudit.report.model import SCHEMA, SCHEMA_VERSION
from dpaudit.report.plots import interval_png

__all__ = ["FILES", "LOCK_FILE", "FolderBusyError", "atomic_write_text", "lock_folder", "write_report", "load_report"]

FILES = ("report.json", "report.md", "report.html", INTERVAL_PLOT)
LOCK_FILE = ".dpaudit.lock"


class FolderBusyError(ValueError):
    """Another process holds the folder's lock (it is writing a report there)."""


@contextlib.contextmanager
def lock_folder(out_dir: str | os.PathLike[str]) -> Iterator[pathlib.Path]:
    """Hold an exclusive lock on `out_dir` (created if missing) for the duration of the block.

    Raises FolderBusyError at once, without waiting, when another process holds it. The lock is
    released by the kernel if the process dies, so a crash leaves no stale lock.
    """
    import fcntl

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusyError(f"folder busy: another dpaudit is writing {str(out)!r}") from None
        yield out
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _sanitize(value: Any) -> Any:
    """Replace non-finite floats (JSON has none) by strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitize(v) for v in value]
    return value


def _restore(value: Any) -> Any:
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def write_report(report: dict[str, Any], out_dir: str | os.PathLike[str], *, json_file: bool = True) -> dict[str, pathlib.Path]:
    """Write report.json (unless `json_file` is False), report.md, report.html and the interval plot
    (intervals.png, linked from report.md; when some entry has an interval) into `out_dir`, each atomically."""
    out = pathlib.Path(out_dir)
    paths = {}
    if json_file:
        text = json.dumps(_sanitize(report), indent=1, default=_json_default, allow_nan=False)
        paths["json"] = atomic_write_text(out / "report.json", text + "\n")
    png = interval_png(report["entries"])
    if png is not None:
        paths["intervals"] = atomic_write_bytes(out / INTERVAL_PLOT, png)
    paths["md"] = atomic_write_text(out / "report.md", render_markdown(report))
    paths["html"] = atomic_write_text(out / "report.html", render_html(report))
    return paths


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report.json (or the folder holding it); check its schema and version."""
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "report.json"
    if not path.is_file():
        raise ValueError(f"report file {str(path)!r} does not exist")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"report file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise ValueError(f"report file {str(path)!r} is not a {SCHEMA} document")
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"report schema_version {report.get('schema_version')!r} is not supported "
                         f"(this dpaudit reads version {SCHEMA_VERSION})")
    return _restore(report)


