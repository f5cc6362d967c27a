"""Argument types and up-front checks shared by the subcommands.

Each type raises `argparse.ArgumentTypeError`, so argparse exits with status 2 and a message
naming the flag (`argument --seed: ...`) before any work starts. Counts accept scientific
notation that denotes an integer exactly (`--count 1e12`), read with `decimal.Decimal` so no
float rounding creeps in.
"""

from __future__ import annotations

import argparse
import decimal
import math
import os
import pathlib
import socket
from typing import Callable

__all__ = [
    "integer", "int_at_least", "real", "real_in", "seed", "writable_folder", "file_in_existing_folder",
    "check_reachable", "FlagError", "help_text",
]


class FlagError(ValueError):
    """A bad value of one command-line flag, found after parsing (exit 2, naming `flag`)."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag


def help_text(text: str) -> str:
    """`text` for argparse's help=: argparse %-formats it, so a literal percent sign is doubled."""
    return text.replace("%", "%%")


def integer(text: str) -> int:
    """An integer written plainly, with underscores, or in scientific notation (`1e12`)."""
    try:
        value = decimal.Decimal(text.replace("_", ""))
    except decimal.InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def int_at_least(minimum: int, why: str = "") -> Callable[[str], int]:
    """An `integer` >= `minimum`; `why` explains the minimum in the message."""

    def parse(text: str) -> int:
        value = integer(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}{why}, got {text!r}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def seed(text: str) -> int:
    """A seed of `numpy.random.SeedSequence`: an integer >= 0."""
    value = integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer (a numpy SeedSequence seed), got {text!r}")
    return value


def real(text: str) -> float:
    """A finite real number (`1e-5`, `-2`, `0.5`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def real_in(low: float, high: float, *, low_open: bool, high_open: bool) -> Callable[[str], float]:
    """A finite real in the interval from `low` to `high` (each end open or closed)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"

    def parse(text: str) -> float:
        value = real(text)
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if below or above:
            raise argparse.ArgumentTypeError(f"must lie in {left}{low:g}, {high:g}{right}, got {text!r}")
        return value

    parse.__name__ = f"number in {left}{low:g}, {high:g}{right}"
    return parse


def writable_folder(path: str, flag: str) -> pathlib.Path:
    """Create `path` as a folder (with its parents) and check that files can be created in it."""
    p = pathlib.Path(path)
    if p.exists() and not p.is_dir():
        raise FlagError(flag, f"{path!r} is a file, not a folder")
    for parent in p.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise FlagError(flag, f"{path!r} lies under {str(parent)!r}, which is a file")
            break
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FlagError(flag, f"cannot create the folder {path!r}: {exc.strerror or exc}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise FlagError(flag, f"the folder {path!r} is not writable")
    return p


def file_in_existing_folder(path: str, flag: str) -> pathlib.Path:
    """A file path whose folder exists and is writable (the file itself is written later)."""
    p = pathlib.Path(path)
    folder = p.absolute().parent
    if p.is_dir():
        raise FlagError(flag, f"{path!r} is a folder; give a file name such as {str(p / 'regret.png')!r}")
    if not folder.is_dir():
        raise FlagError(flag, f"the folder {str(folder)!r} does not exist" if not folder.exists()
                        else f"{str(folder)!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FlagError(flag, f"the folder {str(folder)!r} is not writable")
    return p


def plot_file(path: str, flag: str = "--plot") -> pathlib.Path:
    """`file_in_existing_folder`, with a file type matplotlib can write (checked before any simulation)."""
    p = file_in_existing_folder(path, flag)
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if p.suffix and p.suffix[1:].lower() not in formats:
        raise FlagError(flag, f"matplotlib cannot write {p.suffix!r} files; use one of "
                              + ", ".join("." + f for f in sorted(formats)))
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
        raise FlagError(flag, f"cannot reach the Dask scheduler at {host}:{port} within {timeout:g} s "
                              f"({exc.strerror or exc}); is it running?") from None
