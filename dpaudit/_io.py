"""Atomic file writes: a temporary file in the target's folder, fsync, then os.replace.

Readers see either the old file or the whole new one, never a partial write, whatever kills the
writer (POSIX rename(2) is atomic within a file system; os.replace is atomic on Windows too).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile
from typing import BinaryIO, Callable

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text"]


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> pathlib.Path:
    """Call `write(fh)` on a binary temporary file beside `path`, then move it onto `path` atomically.

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
