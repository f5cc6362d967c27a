"""One BLAS thread for the auditor's tall, thin products, with the process's BLAS libraries looked up once.

The products of a chunk's rows (runs x width) are memory-bound, and a threaded BLAS on a busy machine waits
for its threads (`dpaudit.audit.chunks.estimation_chunk`), so they run with one thread.
`threadpoolctl.threadpool_limits` walks the process's shared libraries on every call (about 3 ms); limited
once per chunk and per batch of scores, a vector audit of 10^7 runs per side spent 0.3-0.4 s in that walk.
Here the libraries are looked up once per process, on first use.  The products limited run on numpy's BLAS,
loaded with numpy, so it is among them (scipy's too once `dpaudit.audit` is imported); a library loaded later,
e.g. by a target, is not limited, and is not the one these products run on.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["one_blas_thread"]


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context manager inside which the BLAS libraries use one thread (as `threadpool_limits(1, "blas")`)."""
    return _controller().limit(limits=1, user_api="blas")
