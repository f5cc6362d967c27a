"""Argument types and up-front checks shared by the subcommands.

Each type raises `argparse.ArgumentTypeError`, so argparse exits with status 2 and a message
naming the flag (`argument --seed: ...`) before any work starts. Counts accept scientific
notation that denotes an integer exactly (`--count 1e12`), read with `decimal.Decimal` so no
float rounding creeps in; an integer flag takes at most MAX_INTEGER (numpy's int64), a seed at most
MAX_SEED, checked before the text becomes an int (so `1e999999999` is refused at once). A path that
the system cannot even look up (a name longer than it allows) is a FlagError naming the flag.
"""

from __future__ import annotations

import argparse
import decimal
import math
import os
import pathlib
import socket
from collections.abc import Callable

from dpaudit.validation import shorten

__all__ = [
    "MAX_INTEGER",
    "MAX_SEED",
    "FlagError",
    "check_path",
    "check_reachable",
    "file_in_existing_folder",
    "help_text",
    "int_at_least",
    "integer",
    "real",
    "real_in",
    "seed",
    "writable_folder",
]

MAX_INTEGER = 2**63 - 1
"""The largest value of an integer flag (counts, horizons, users, sizes): numpy's largest integer."""

MAX_SEED = 2**128 - 1
"""The largest seed (numpy's SeedSequence takes any non-negative integer; 128 bits are plenty)."""


class FlagError(ValueError):
    """A bad value of one command-line flag, found after parsing (exit 2, naming `flag`)."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag


def help_text(text: str) -> str:
    """`text` for argparse's help=: argparse %-formats it, so a literal percent sign is doubled."""
    return text.replace("%", "%%")


def _bound_text(bound: int) -> str:
    """`bound` for a message: the named limits by their power of two as well."""
    named = {MAX_INTEGER: "2**63 - 1", MAX_SEED: "2**128 - 1"}
    if abs(bound) in named:
        return f"{'-(' if bound < 0 else ''}{named[abs(bound)]}{')' if bound < 0 else ''} = {bound}"
    return str(bound)


def _integral(text: str) -> decimal.Decimal:
    """`text` as an integral Decimal (plain, with underscores, or `1e12`); no int is built yet."""
    try:
        value = decimal.Decimal(text.replace("_", ""))
    except decimal.InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected an integer, got {shorten(text)}") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected an integer, got {shorten(text)}")
    return value


def bounded_integer(text: str, minimum: int, maximum: int, why: str = "") -> int:
    """An integer in [`minimum`, `maximum`], compared as a Decimal first (so `1e999999999` is refused
    at once); `why` explains the minimum in the message."""
    value = _integral(text)
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be an integer >= {_bound_text(minimum)}{why}, got {shorten(text)}")
    if value > maximum:
        raise argparse.ArgumentTypeError(f"must be at most {_bound_text(maximum)}, got {shorten(text)}")
    return int(value)


def integer(text: str) -> int:
    """An integer in [-MAX_INTEGER, MAX_INTEGER] written plainly, with underscores, or as `1e12`."""
    return bounded_integer(text, -MAX_INTEGER, MAX_INTEGER)


def int_at_least(minimum: int, why: str = "", maximum: int = MAX_INTEGER) -> Callable[[str], int]:
    """An `integer` in [`minimum`, `maximum`]; `why` explains the minimum in the message."""

    def parse(text: str) -> int:
        return bounded_integer(text, minimum, maximum, why)

    parse.__name__ = f"integer >= {minimum}"
    return parse


def seed(text: str) -> int:
    """A seed of `numpy.random.SeedSequence`: an integer in [0, MAX_SEED]."""
    return bounded_integer(text, 0, MAX_SEED, " (a numpy SeedSequence seed)")


def real(text: str) -> float:
    """A finite real number (`1e-5`, `-2`, `0.5`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {shorten(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {shorten(text)}")
    return value


def real_in(low: float, high: float, *, low_open: bool, high_open: bool) -> Callable[[str], float]:
    """A finite real in the interval from `low` to `high` (each end open or closed)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"

    def parse(text: str) -> float:
        value = real(text)
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if below or above:
            raise argparse.ArgumentTypeError(f"must lie in {left}{low:g}, {high:g}{right}, got {shorten(text)}")
        return value

    parse.__name__ = f"number in {left}{low:g}, {high:g}{right}"
    return parse


def check_path(path: str | os.PathLike, flag: str) -> pathlib.Path:
    """`path` as a Path, once the system can look it up (it need not exist): FlagError naming `flag`
    for a name longer than the system allows, a NUL byte, a loop of links or a folder it may not search."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise FlagError(flag, f"cannot use the path {shorten(os.fspath(path))}: {reason}") from None
    return pathlib.Path(path)


def writable_folder(path: str, flag: str) -> pathlib.Path:
    """Create `path` as a folder (with its parents) and check that files can be created in it."""
    p = check_path(path, flag)
    shown = shorten(path)
    if p.exists() and not p.is_dir():
        raise FlagError(flag, f"{shown} is a file, not a folder")
    for parent in p.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise FlagError(flag, f"{shown} lies under {shorten(str(parent))}, which is a file")
            break
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FlagError(flag, f"cannot create the folder {shown}: {exc.strerror or exc}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise FlagError(flag, f"the folder {shown} is not writable")
    return p


def file_in_existing_folder(path: str, flag: str) -> pathlib.Path:
    """A file path whose folder exists and is writable (the file itself is written later)."""
    p = check_path(path, flag)
    folder = p.absolute().parent
    if p.is_dir():
        raise FlagError(flag, f"{shorten(path)} is a folder; give a file name such as {shorten(str(p / 'regret.png'))}")
    if not folder.is_dir():
        raise FlagError(
            flag,
            f"the folder {shorten(str(folder))} does not exist"
            if not folder.exists()
            else f"{shorten(str(folder))} is not a folder",
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FlagError(flag, f"the folder {shorten(str(folder))} is not writable")
    return p


def plot_file(path: str, flag: str = "--plot") -> pathlib.Path:
    """`file_in_existing_folder`, with a file type matplotlib can write (checked before any simulation)."""
    p = file_in_existing_folder(path, flag)
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if p.suffix and p.suffix[1:].lower() not in formats:
        raise FlagError(
            flag,
            f"matplotlib cannot write {p.suffix!r} files; use one of " + ", ".join("." + f for f in sorted(formats)),
        )
    return p


def check_reachable(address: str, flag: str, timeout: float = 3.0) -> None:
    """Open and close a TCP connection to a `host:port` or `tcp://host:port` address within `timeout`
    seconds; other schemes (inproc://, ucx://, ...) are left to the client to check."""
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme not in ("tcp", "tls"):
        return
    host, colon, port = location.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit():
        raise FlagError(flag, f"expected host:port in the scheduler address, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise FlagError(
            flag,
            f"cannot reach the Dask scheduler at {host}:{port} within {timeout:g} s "
            f"({exc.strerror or exc}); is it running?",
        ) from None
