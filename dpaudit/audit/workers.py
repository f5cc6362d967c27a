"""Process-pool workers that share the machine and end with the audit process.

A worker started for an audit must not outlive it (a killed audit would leave its pool running) and
must not start a BLAS thread per core when several workers share the cores.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any

from threadpoolctl import threadpool_limits

__all__ = ["blas_threads", "process_pool", "worker_init"]

#: Seconds between a pool worker's checks that the audit process is still alive.
_WATCH_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1  # prctl(2) option: a signal delivered to this process when its parent dies


def _parent_gone(parent: int, ppid: int) -> bool:
    if os.getppid() != ppid:  # reparented: the process that started this worker has died
        return True
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return False
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the pid exists (owned by another user after reuse): keep running
        return False
    return False


def _exit_with_parent(parent: int) -> None:
    """Process-pool initializer: end this worker when the audit process `parent` dies, even by SIGKILL.

    On Linux prctl(PR_SET_PDEATHSIG, SIGKILL) asks the kernel to kill the worker with its parent;
    everywhere, a daemon thread checks every `_WATCH_SECONDS` that the parent is still there (and
    covers a parent that died before the prctl call, or a pool started by a fork server).
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    ppid = os.getppid()

    def watch() -> None:
        while not _parent_gone(parent, ppid):
            time.sleep(_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="dpaudit-parent-watch", daemon=True).start()


def blas_threads(workers: int) -> int:
    """BLAS threads per worker process when `workers` share this machine: its cores // workers, >= 1."""
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def worker_init(parent: int, threads: int) -> None:
    """Process-pool initializer: `_exit_with_parent`, and at most `threads` BLAS threads in this worker.

    Workers that each start a BLAS thread per core oversubscribe the machine, and OpenBLAS threads
    spin while they wait: on 2 cores, a 6e5 x 108 Gram matrix took 0.3 s in one process and 2-15 s
    in each of two; benchmarks/peers/ ran in 287 s with 2 workers and 222 s (the same bounds)
    with one BLAS thread each.  The usual cure for nested parallelism (joblib's loky does the same)."""
    _exit_with_parent(parent)
    threadpool_limits(threads, user_api="blas")


def process_pool(workers: int, mp_context: Any = None) -> cf.ProcessPoolExecutor:
    """A process pool whose workers exit when this process dies and share the cores' BLAS threads
    (see `worker_init`); `mp_context` as in `concurrent.futures.ProcessPoolExecutor`."""
    return cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp_context,
        initializer=worker_init,
        initargs=(os.getpid(), blas_threads(workers)),
    )
