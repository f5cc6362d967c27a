"""Executor back-ends that run the chunk tasks: this process, a process pool, a Dask cluster or any
`concurrent.futures.Executor`, chosen by `open_runner` from the audit's `executor` option.

A runner has one method, `run(tasks, on_done)`: `tasks` maps a key to (function, arguments), and
`on_done(key, result)` is called as each finishes, in whatever order; the caller combines results by key.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import pickle
import time
import warnings
from collections.abc import Iterator
from typing import Any

from dpaudit.audit.workers import process_pool

#: Auto mode starts a process pool only when the chunks left are predicted to take longer than this.
_POOL_MIN_SECONDS = 2.0
#: Address schemes of Dask schedulers (distributed's comm backends) accepted in executor strings.
DASK_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")

__all__ = ["DASK_SCHEMES", "check_executor", "dask_address", "open_runner"]


class _Serial:
    def run(self, tasks, on_done):
        for key, (fn, args) in tasks.items():
            on_done(key, fn(*args))


class _Futures:
    def __init__(self, executor: cf.Executor):
        self.executor = executor

    def run(self, tasks, on_done):
        futures = {self.executor.submit(fn, *args): key for key, (fn, args) in tasks.items()}
        try:
            for fut in cf.as_completed(futures):
                on_done(futures[fut], fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


class _Dask:
    def __init__(self, client):
        self.client = client

    def run(self, tasks, on_done):
        import distributed

        futures = {self.client.submit(fn, *args, pure=False): key for key, (fn, args) in tasks.items()}
        try:
            # The client's own event loop: as_completed would otherwise look for a default client,
            # and neither a client opened here nor a user's client need be the default one.
            for fut in distributed.as_completed(list(futures), loop=self.client.loop):
                on_done(futures[fut], fut.result())
        except BaseException:
            self.client.cancel(list(futures))
            raise


class _Auto:
    """This process while the work is short, a local process pool once it is not.

    Chunks run here one by one; as soon as the chunks left are predicted (from the mean time of
    those already run) to take more than `_POOL_MIN_SECONDS`, the rest go to a process pool. The
    result does not depend on where chunks ran.  If the work cannot be pickled it stays here, with a
    warning saying why.
    """

    def __init__(self, workers: int | None, n_chunks: int, payload: Any):
        self.workers = workers or os.cpu_count() or 1
        self.n_chunks = n_chunks
        self.payload = payload
        self.pool: cf.ProcessPoolExecutor | None = None
        self.pool_ok: bool | None = None if self.workers > 1 else False
        self.spent = 0.0  # seconds spent on chunks run here, over both phases
        self.done = 0

    def _want_pool(self) -> bool:
        if self.pool_ok is None:
            problem = _picklable(self.payload)
            self.pool_ok = problem is None
            if problem is not None:
                warnings.warn(
                    f"target, inputs or score cannot be pickled ({problem}); running the audit in this process. "
                    "Define the target at module level (not a lambda or local function) to use a process pool.",
                    stacklevel=6,
                )
        return self.pool_ok

    def run(self, tasks, on_done):
        keys = list(tasks)
        while keys:
            left = len(keys)
            if self.done and left > 1 and self.spent / self.done * left > _POOL_MIN_SECONDS and self._want_pool():
                if self.pool is None:
                    self.pool = process_pool(min(self.workers, self.n_chunks))
                _Futures(self.pool).run({k: tasks[k] for k in keys}, on_done)
                return
            key = keys.pop(0)
            fn, args = tasks[key]
            start = time.perf_counter()
            result = fn(*args)
            self.spent += time.perf_counter() - start
            self.done += 1
            on_done(key, result)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "submit")


def dask_address(spec: str) -> str | None:
    """The scheduler address named by an executor string, or None if it names no Dask scheduler.

    Accepted: "dask://HOST:PORT" (TCP, distributed's default protocol, passed on as "HOST:PORT"),
    "dask://SCHEME://ADDRESS" and "SCHEME://ADDRESS" for SCHEME in `DASK_SCHEMES` (for example
    "tcp://127.0.0.1:8786", or "inproc://..." for an in-process `LocalCluster(processes=False)`),
    passed on as "SCHEME://ADDRESS".
    """
    dask = spec.startswith("dask://")
    rest = spec[len("dask://") :] if dask else spec
    scheme, sep, location = rest.partition("://")
    if not sep:
        if not dask:
            return None
        if not rest or "/" in rest:
            raise ValueError(f"executor {spec!r}: expected 'dask://host:port' or 'dask://scheme://address'")
        return rest
    if scheme not in DASK_SCHEMES:
        if not dask:
            return None
        raise ValueError(
            f"executor {spec!r}: unknown Dask address scheme {scheme!r}; use one of {', '.join(DASK_SCHEMES)}"
        )
    if not location:
        raise ValueError(f"executor {spec!r}: the address after {scheme}:// is empty")
    return rest


def _picklable(obj: Any) -> str | None:
    try:
        pickle.dumps(obj)
    except Exception as exc:  # noqa: BLE001  (any pickling failure: the work cannot leave this process)
        return f"{type(exc).__name__}: {exc}"
    return None


_EXECUTOR_HELP = (
    "use None, 'serial', 'process', 'dask://host:port', 'tcp://host:port', a distributed.Client or a "
    "concurrent.futures.Executor"
)


def check_executor(executor: Any) -> None:
    """Raise ValueError naming `executor` unless `open_runner` accepts it (nothing is opened here)."""
    if executor is None or isinstance(executor, cf.Executor) or _is_dask_client(executor):
        return
    if isinstance(executor, str) and (executor in ("auto", "serial", "process") or dask_address(executor) is not None):
        return
    raise ValueError(f"unknown executor {executor!r}; {_EXECUTOR_HELP}")


@contextlib.contextmanager
def open_runner(executor: Any, workers: int | None, n_chunks: int, payload: Any) -> Iterator[Any]:
    """Yield a runner for `executor`.

    None ("auto"): see `_Auto` (this process for short work, else a local pool of `workers`).
    "serial"; "process" (a pool of `workers`); a Dask scheduler address (see `dask_address`), for
    which a `distributed.Client` of its own is opened (never made the default client) and closed at
    the end; a `distributed.Client`; or any `concurrent.futures.Executor`.  Pools started here
    end with this process (`process_pool`).
    """
    check_executor(executor)
    if executor is None or executor == "auto":
        auto = _Auto(workers, n_chunks, payload)
        try:
            yield auto
        finally:
            auto.close()
    elif executor == "serial":
        yield _Serial()
    elif executor == "process":
        problem = _picklable(payload)
        if problem is not None:
            raise ValueError(f"executor='process' needs a picklable target, inputs and score: {problem}")
        n = workers or os.cpu_count() or 1
        with process_pool(max(1, min(n, n_chunks))) as pool:
            yield _Futures(pool)
    elif isinstance(executor, str):
        try:
            import distributed
        except ImportError:
            raise ValueError(
                f"executor {executor!r} needs the 'distributed' package (the [dask] extra: pip install 'distributed>=2023.1')"
            ) from None
        with distributed.Client(dask_address(executor), set_as_default=False) as client:
            yield _Dask(client)
    elif _is_dask_client(executor):
        yield _Dask(executor)
    else:
        yield _Futures(executor)
