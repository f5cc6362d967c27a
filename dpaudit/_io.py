"""Atomic file writes: a temporary file in the target's folder, fsync, then os.replace.

Readers see either the old file or the whole new one, never a partial write, whatever kills the
writer (POSIX rename(2) is atomic within a file system; os.replace is atomic on Windows too).
`replace_file_set` replaces several files as one set: written and committed in a staging folder
first, so an error while writing changes nothing, and an interrupted move is completed later.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import BinaryIO

__all__ = [
    "STAGING_PREFIX",
    "SWAP_PREFIX",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "finish_file_sets",
    "pending_file",
    "pending_file_sets",
    "replace_file_set",
]


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> pathlib.Path:
    """Call `write(fh)` (its return value unused) on a binary temporary file beside `path`, then move it onto `path` atomically.

    The folder is created if needed; the file gets the usual permissions (0666 less the umask, not
    mkstemp's 0600).  On any error the temporary file is removed and `path` is left as it was.
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> pathlib.Path:
    """Write `data` to `path` atomically (see `atomic_write`)."""
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> pathlib.Path:
    """Write `text` to `path` as UTF-8, atomically (see `atomic_write`)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


STAGING_PREFIX = ".dpaudit-staging-"
"""A file set being written (`replace_file_set`): not yet committed, removed by the next write."""
SWAP_PREFIX = ".dpaudit-swap-"
"""A committed file set being moved into its folder: the next write (or `finish_file_sets`) completes it."""
MANIFEST = ".manifest.json"
"""The set's file names in moving order, and the stale names to remove, inside a staging or swap folder."""


def _write_synced(path: pathlib.Path, data: bytes) -> None:
    """Create `path` (it must not exist) holding `data`, flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # 0666 less the umask
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: pathlib.Path) -> None:
    """Flush a folder's entries (created, renamed, removed files) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stage(folder: pathlib.Path, files: Mapping[str, bytes], remove: list[str]) -> pathlib.Path:
    """Write the set into a fresh staging folder inside `folder` and commit it (one rename); return the
    committed swap folder. On any error before the commit the staging folder is removed."""
    staging = pathlib.Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    try:
        for name, data in files.items():
            _write_synced(staging / name, data)
        _write_synced(staging / MANIFEST, json.dumps({"files": list(files), "remove": remove}).encode())
        _fsync_dir(staging)
        swap = folder / (SWAP_PREFIX + staging.name[len(STAGING_PREFIX) :])
        os.rename(staging, swap)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _fsync_dir(folder)
    return swap


def _apply(swap: pathlib.Path, folder: pathlib.Path) -> None:
    """Move a committed set into `folder` (stale names first, then the files in manifest order), then
    drop the swap folder. Idempotent: a second call finishes what an interrupted one left."""
    try:
        manifest = json.loads((swap / MANIFEST).read_bytes())
    except FileNotFoundError:  # every file was moved already
        shutil.rmtree(swap, ignore_errors=True)
        return
    for name in manifest["remove"]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / name)
    for name in manifest["files"]:
        with contextlib.suppress(FileNotFoundError):  # moved before an interruption
            os.replace(swap / name, folder / name)
    _fsync_dir(folder)
    os.unlink(swap / MANIFEST)
    os.rmdir(swap)


def pending_file_sets(folder: str | os.PathLike[str]) -> list[pathlib.Path]:
    """Committed sets in `folder` whose move was interrupted, oldest first."""
    swaps = [p for p in pathlib.Path(folder).glob(SWAP_PREFIX + "*") if p.is_dir()]
    return sorted(swaps, key=lambda p: (_mtime(p), p.name))


def _mtime(path: pathlib.Path) -> int:
    """`path`'s modification time in ns; 0 once it is gone (a writer finished it meanwhile)."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def pending_file(folder: str | os.PathLike[str], name: str) -> pathlib.Path | None:
    """Where file `name` of `folder` is while a committed set still holds it (the newest such set), else None."""
    for swap in reversed(pending_file_sets(folder)):
        if (swap / name).is_file():
            return swap / name
    return None


def finish_file_sets(folder: str | os.PathLike[str]) -> None:
    """Complete every interrupted move of a committed set and remove uncommitted staging folders.

    Call it holding the folder's lock: a staging folder of a writer running now would be removed.
    """
    folder = pathlib.Path(folder)
    for swap in pending_file_sets(folder):
        _apply(swap, folder)
    for staging in folder.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(staging, ignore_errors=True)


def replace_file_set(
    folder: str | os.PathLike[str], files: Mapping[str, bytes], remove: Iterable[str] = ()
) -> dict[str, pathlib.Path]:
    """Replace a set of files in `folder` by `files` (name -> content) and delete the names in `remove`.

    Two phases: every file is written and fsynced in a staging folder inside `folder`, which is then
    renamed to a swap folder (the commit); then stale names are removed and the files are moved into
    `folder` one `os.replace` each, in the order of `files` (put the file readers trust last). An
    error or a crash before the commit leaves `folder` as it was (plus a staging folder the next call
    removes); after the commit the set counts as written: an interrupted move leaves a swap folder
    (`pending_file_sets`) that the next call, or `finish_file_sets`, completes. Earlier interrupted
    sets are completed first. Call it holding the folder's lock.
    """
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    finish_file_sets(folder)
    stale = [name for name in dict.fromkeys(remove) if name not in files]
    _apply(_stage(folder, files, stale), folder)
    return {name: folder / name for name in files}
