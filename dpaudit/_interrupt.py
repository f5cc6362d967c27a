"""A real Ctrl-C, told apart from a `KeyboardInterrupt` (or `SystemExit`) that user code raised.

A suite of audits runs users' code. Whatever that code raises, `sys.exit(0)` included, is an error
of its entry, never the end of the suite; only an interrupt the user really sent (SIGINT) stops it.
`sigint_stops` installs a SIGINT handler that marks the request before raising
`KeyboardInterrupt`, so `is_interrupt(exc)` is true for that one alone.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["EXIT_INTERRUPTED", "is_interrupt", "sigint_stops"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shells' status of a command stopped by Ctrl-C

_requested = threading.Event()


def _on_sigint(signum: int, frame: Any) -> None:
    _requested.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_stops() -> Iterator[None]:
    """Within the block, SIGINT raises a `KeyboardInterrupt` that `is_interrupt` recognises (the
    previous handler is restored after). Only the main thread can install handlers: elsewhere the
    block runs with the handler it has, and every `KeyboardInterrupt` counts as a real interrupt."""
    if threading.current_thread() is not threading.main_thread():
        _requested.set()
        yield
        return
    _requested.clear()
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _requested.clear()


def is_interrupt(exc: BaseException) -> bool:
    """True when `exc` is the user's Ctrl-C (stop the suite), False for anything user code raised."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    handler = signal.getsignal(signal.SIGINT)
    if handler is _on_sigint:
        return _requested.is_set()
    return handler is not signal.SIG_IGN  # ignored: no SIGINT raised it; another handler: assume one did
