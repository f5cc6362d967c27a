"""Report files: report.json, report.md, report.html and intervals.png in one folder, written as one
set, and the folder lock that keeps two runs from mixing their files.

`write_report` renders every file in memory first (a rendering error writes nothing), then hands
the set to `dpaudit._io.replace_file_set`: all files are written and fsynced in a staging folder
inside the report folder, committed by one rename, then moved over the old ones (stale names, such
as an intervals.png the new report has no data for, are removed), report.json last. What a crash
or an error can leave:

- before the commit: the whole old set (and a `.dpaudit-staging-*` folder the next write removes);
- after it: a `.dpaudit-swap-*` folder holding the files not yet moved. Until the next write (or
  `dpaudit report DIR`) completes the move, the folder may hold old and new files side by side;
  `check_report_set` says so, and `load_report` reads the committed report.json from the swap folder.

Every file names the report it belongs to: the set id, a hash of its report.json (an HTML comment at
the end of report.md, a `<meta name="dpaudit-report-set">` in report.html, a PNG text chunk in
intervals.png). `check_report_set` compares them, so a mixed set (an interrupted write, files copied
from two runs, report.json edited by hand) is never taken for a whole one.

`lock_folder` holds an exclusive `fcntl.flock` on `.dpaudit.lock` in the folder for a whole run: a
second dpaudit writing the same folder stops at once with `FolderBusyError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import pathlib
import re
import struct
import zlib
from collections.abc import Iterator
from typing import Any

from dpaudit._io import (
    STAGING_PREFIX,
    SWAP_PREFIX,
    atomic_write_text,
    finish_file_sets,
    pending_file,
    pending_file_sets,
    replace_file_set,
)
from dpaudit.report.html import render_html
from dpaudit.report.markdown import INTERVAL_PLOT, render_markdown
from dpaudit.report.model import SCHEMA, SCHEMA_VERSION
from dpaudit.report.plots import interval_png

__all__ = [
    "FILES",
    "LOCK_FILE",
    "FolderBusyError",
    "atomic_write_text",
    "check_report_set",
    "load_report",
    "lock_folder",
    "report_set_id",
    "report_set_member",
    "write_report",
]

FILES = ("report.json", "report.md", "report.html", INTERVAL_PLOT)
LOCK_FILE = ".dpaudit.lock"
SET_KEY = "dpaudit-report-set"
"""The name under which report.md, report.html and intervals.png carry their set id."""

_MD_STAMP = re.compile(rb"<!-- dpaudit-report-set: ([0-9a-f]+) -->\s*\Z")
_HTML_STAMP = re.compile(rb'<meta name="dpaudit-report-set" content="([0-9a-f]+)">')
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_KEYS = {"report.json": "json", "report.md": "md", "report.html": "html", INTERVAL_PLOT: "intervals"}


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


def _json_bytes(report: dict[str, Any]) -> bytes:
    """report.json's content: strict JSON (non-finite floats as strings), UTF-8."""
    return (json.dumps(_sanitize(report), indent=1, default=_json_default, allow_nan=False) + "\n").encode("utf-8")


def _canonical(doc: Any) -> str:
    """One text per document, whatever its formatting or its non-finite floats' spelling."""
    return json.dumps(_sanitize(doc), sort_keys=True, default=_json_default, allow_nan=False)


def report_set_id(json_bytes: bytes) -> str:
    """The id of the report set whose report.json holds `json_bytes` (a hash of them)."""
    return hashlib.sha256(json_bytes).hexdigest()[:32]


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png_chunks(png: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(type, data) of each chunk of a PNG file; nothing for a file that is not one."""
    if not png.startswith(_PNG_SIGNATURE):
        return
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(png):
        size, kind = struct.unpack(">I4s", png[at : at + 8])
        yield kind, png[at + 8 : at + 8 + size]
        at += 12 + size


def _stamp_png(png: bytes, set_id: str) -> bytes:
    """`png` with a tEXt chunk naming its set, right after the header chunk."""
    head = len(_PNG_SIGNATURE) + 12 + struct.unpack(">I", png[8:12])[0]
    return png[:head] + _png_chunk(b"tEXt", f"{SET_KEY}\0{set_id}".encode("latin-1")) + png[head:]


def _stamp_html(page: str, set_id: str) -> str:
    """`page` with a meta element naming its set, first in the head."""
    if "<head>" not in page:
        raise ValueError("report.html has no <head> to carry its set id")
    return page.replace("<head>", f'<head><meta name="{SET_KEY}" content="{set_id}">', 1)


def stamp_of(name: str, data: bytes) -> str | None:
    """The set id a file of the report set carries (None: none, e.g. written by an older dpaudit)."""
    if name == INTERVAL_PLOT:
        texts = [d for kind, d in _png_chunks(data) if kind == b"tEXt" and d.startswith(SET_KEY.encode() + b"\0")]
        return texts[0].split(b"\0", 1)[1].decode("latin-1") if texts else None
    match = (_MD_STAMP if name == "report.md" else _HTML_STAMP).search(data)
    return match.group(1).decode("ascii") if match else None


def _render(report: dict[str, Any], set_id: str) -> dict[str, bytes]:
    """intervals.png (when some entry has an interval), report.md and report.html, in memory, stamped."""
    files = {}
    png = interval_png(report["entries"])
    if png is not None:
        files[INTERVAL_PLOT] = _stamp_png(png, set_id)
    files["report.md"] = (render_markdown(report) + f"<!-- {SET_KEY}: {set_id} -->\n").encode("utf-8")
    files["report.html"] = _stamp_html(render_html(report), set_id).encode("utf-8")
    return files


def _json_on_disk(out: pathlib.Path, report: dict[str, Any]) -> bytes:
    """out/report.json's bytes, checked to hold `report` (pages rendered from it name its set)."""
    path = out / "report.json"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{str(path)!r} does not exist: write the report with its report.json") from None
    if _canonical(json.loads(data)) != _canonical(report):
        raise ValueError(f"{str(path)!r} does not hold this report: write the report with its report.json")
    return data


def write_report(
    report: dict[str, Any], out_dir: str | os.PathLike[str], *, json_file: bool = True
) -> dict[str, pathlib.Path]:
    """Write report.json (unless `json_file` is False: then out_dir's report.json must hold `report`),
    report.md, report.html and the interval plot (intervals.png, linked from report.md; when some entry
    has an interval, else an old one is removed) into `out_dir` as one set (see the module docstring).

    Call it holding `lock_folder(out_dir)`; a write interrupted earlier is completed first.
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    finish_file_sets(out)
    json_bytes = _json_bytes(report) if json_file else _json_on_disk(out, report)
    files = _render(report, report_set_id(json_bytes))
    if json_file:
        files["report.json"] = json_bytes  # moved last: a new report.json means the whole set is new
    written = replace_file_set(out, files, remove=[n for n in FILES if n != "report.json"])
    return {_KEYS[name]: written[name] for name in FILES if name in written}


def check_report_set(out_dir: str | os.PathLike[str]) -> list[str]:
    """What keeps the report files in `out_dir` from being one whole set (empty: they are one)."""
    out = pathlib.Path(out_dir)
    problems = [
        f"an interrupted write left {p.name!r}: run `dpaudit report {out}` to complete it"
        for p in pending_file_sets(out)
    ]
    try:
        set_id = report_set_id((out / "report.json").read_bytes())
    except FileNotFoundError:
        return problems + ["report.json is missing"]
    for name in FILES[1:]:
        try:
            data = (out / name).read_bytes()
        except FileNotFoundError:
            if name != INTERVAL_PLOT or f"]({INTERVAL_PLOT})" in _read_text(out / "report.md"):
                problems.append(f"{name} is missing")
            continue
        stamp = stamp_of(name, data)
        if stamp != set_id:
            problems.append(
                f"{name} does not belong to report.json's report (set {stamp or 'unnamed'}, report.json's {set_id})"
            )
    return problems


def _read_text(path: pathlib.Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def report_set_member(path: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> bool:
    """Whether `path` (symlinks, `..` and relative parts resolved) is a file `write_report` or the lock
    manage in `out_dir`: a name of the set, the lock file, or anything in a staging or swap folder."""
    target, out = pathlib.Path(path).resolve(), pathlib.Path(out_dir).resolve()
    if target == out:
        return True
    prefixes = (STAGING_PREFIX, SWAP_PREFIX)
    if target.parent == out:
        return target.name in FILES or target.name == LOCK_FILE or target.name.startswith(prefixes)
    return any(p.parent == out and p.name.startswith(prefixes) for p in target.parents)


def _read_json(file: pathlib.Path) -> str:
    """report.json's text: a committed but not yet moved one first (see the module docstring)."""
    pending = pending_file(file.parent, file.name) if file.name == "report.json" else None
    for candidate in (pending, file):
        if candidate is not None:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return candidate.read_text(encoding="utf-8")  # gone: a writer moved it meanwhile
    raise ValueError(f"report file {str(file)!r} does not exist")


def load_report(path: str | os.PathLike[str], *, whole_set: bool = False) -> dict[str, Any]:
    """Read a report.json (or the folder holding it); check its schema and version.

    A write that committed but was interrupted counts as written: its report.json is read. With
    `whole_set`, also check that the folder's files are one set (`check_report_set`), else ValueError.
    """
    path = pathlib.Path(path)
    file = path / "report.json" if path.is_dir() else path
    report = _parse(_read_json(file), file)
    if whole_set:
        problems = check_report_set(file.parent)
        if problems:
            raise ValueError(f"the report files in {str(file.parent)!r} are not one set: " + "; ".join(problems))
    return _restore(report)


def _upgrade_from_1(report: dict[str, Any]) -> None:
    """A version-1 report read as version 2: a user claim's or audit's `epsilon_upper` (the chosen event's
    Clopper-Pearson bound) is `event_epsilon_upper`; the entry-level `epsilon_upper` keeps its name."""
    for entry in report.get("entries") or []:
        for record in (entry.get("claims") or []) + (entry.get("audits") or []) if isinstance(entry, dict) else []:
            if isinstance(record, dict) and "epsilon_upper" in record:
                record["event_epsilon_upper"] = record.pop("epsilon_upper")
    report["schema_version"] = 2


def _parse(text: str, path: pathlib.Path) -> dict[str, Any]:
    """A report document from report.json's text, its schema and version checked."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"report file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise ValueError(f"report file {str(path)!r} is not a {SCHEMA} document")
    if report.get("schema_version") == 1:
        _upgrade_from_1(report)
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(
            f"report schema_version {report.get('schema_version')!r} is not supported "
            f"(this dpaudit reads version {SCHEMA_VERSION})"
        )
    return report
