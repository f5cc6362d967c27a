"""Drawing the runs in chunks: seeds, workers, checkpoints and progress.

Each chunk draws `size` runs on d0 and `size` runs on d1 with its own seed, a child of one
`numpy.random.SeedSequence(seed)` obtained by `spawn`; the d0 and d1 generators are the chunk
seed's two children (independent: sharing randomness between d0 and d1 would hide privacy loss).
Chunk results are combined in chunk order (selection outputs are concatenated, estimation counts
summed as integers), so the outcome is bit-identical whatever runs the chunks: this process, a
local process pool or a Dask cluster.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import hashlib
import json
import os
import pickle
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np
from threadpoolctl import threadpool_limits

from dpaudit._io import atomic_write, atomic_write_text
from dpaudit.audit.describe import describe_target

#: Above this many thresholds a chunk's scores are sorted once; below, each is a single pass.
_SORT_ABOVE = 12
#: Auto mode starts a process pool only when the chunks left are predicted to take longer than this.
_POOL_MIN_SECONDS = 2.0
#: Address schemes of Dask schedulers (distributed's comm backends) accepted in executor strings.
DASK_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")

__all__ = [
    "Chunk",
    "OutputSpec",
    "plan_chunks",
    "normalise",
    "draw",
    "selection_chunk",
    "estimation_chunk",
    "counts_above",
    "CheckpointStore",
    "fingerprint_data",
    "dask_address",
    "check_executor",
    "open_runner",
    "run_chunks",
    "blas_threads",
    "process_pool",
    "worker_init",
    "progress_bar",
]


@dataclass(frozen=True)
class Chunk:
    """One unit of work: `size` runs per side, seeded by child `index` of the root SeedSequence."""

    phase: str  # "selection" or "estimation"
    index: int
    size: int


@dataclass(frozen=True)
class OutputSpec:
    """What every batch of outputs must look like: the row shape and whether it is discrete."""

    row_shape: tuple[int, ...]
    discrete: bool

    @property
    def width(self) -> int:
        return int(np.prod(self.row_shape)) if self.row_shape else 1


def plan_chunks(n_selection: int, n_estimation: int, chunk_size: int) -> list[Chunk]:
    """Selection chunks first, then estimation chunks; sizes depend only on the arguments."""
    chunks: list[Chunk] = []
    for phase, total in (("selection", n_selection), ("estimation", n_estimation)):
        start = 0
        while start < total:
            size = min(chunk_size, total - start)
            chunks.append(Chunk(phase, len(chunks), size))
            start += size
    return chunks


def _side_generator(chunk_seed: np.random.SeedSequence, side: int) -> np.random.Generator:
    # Equivalent to chunk_seed.spawn(2)[side], but independent of the object's spawn counter.
    child = np.random.SeedSequence(chunk_seed.entropy, spawn_key=(*chunk_seed.spawn_key, side))
    return np.random.Generator(np.random.PCG64(child))


def normalise(raw: Any, size: int, which: str) -> tuple[np.ndarray, OutputSpec]:
    """Check one batch of target outputs and bring it to float64/int64, 1-D or 2-D."""
    call = f"target({which}, rng, size={size})"
    try:
        out = np.asarray(raw)
    except ValueError:  # numpy's "inhomogeneous shape": rows of different lengths
        raise ValueError(f"{call} returned rows of different lengths; every run must give an output of the same "
                         "shape") from None
    if out.ndim == 0 or out.shape[0] != size:
        got = "a scalar" if out.ndim == 0 else f"{out.shape[0]} rows"
        raise ValueError(f"{call} returned {got}; expected first axis of length {size}")
    kind = out.dtype.kind
    if kind == "O" and out.ndim == 1 and any(np.ndim(row) > 0 for row in out):
        raise ValueError(f"{call} returned rows of different lengths; every run must give an output of the same shape")
    if out.ndim > 1 and 0 in out.shape[1:]:
        raise ValueError(f"{call} returned rows with no entries (shape {out.shape}); each run must output something")
    if kind == "u" and out.dtype.itemsize == 8 and out.size and int(out.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{call} returned unsigned integers >= 2**63, which the auditor's int64 cannot hold "
                         "exactly; return them as int64 (e.g. subtract 2**63) or as float")
    if kind in "biu":
        out = out.astype(np.int64, copy=False)
        discrete = True
    elif kind == "f":
        out = out.astype(np.float64, copy=False)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{call} returned NaN or infinite values")
        discrete = False
    else:
        raise ValueError(f"{call} must return numbers (bool, int or float), got dtype {out.dtype}")
    spec = OutputSpec(tuple(int(s) for s in out.shape[1:]), discrete)
    out = out.reshape(size) if spec.width == 1 else out.reshape(size, spec.width)
    return out, spec


def draw(target: Callable, data: Any, rng: np.random.Generator, size: int, spec: OutputSpec, which: str) -> np.ndarray:
    """Run the target `size` times on `data`, checked against the outputs of the probe."""
    out, got = normalise(target(data, rng, size), size, which)
    if got != spec:
        raise ValueError(
            f"target({which}, ...) returned rows of shape {got.row_shape} ({'discrete' if got.discrete else 'real'}); "
            f"the probe gave {spec.row_shape} ({'discrete' if spec.discrete else 'real'}): outputs must be consistent"
        )
    return out


def _draw_both(target, d0, d1, chunk_seed, size: int, spec: OutputSpec) -> tuple[np.ndarray, np.ndarray]:
    out0 = draw(target, d0, _side_generator(chunk_seed, 0), size, spec, "d0")
    out1 = draw(target, d1, _side_generator(chunk_seed, 1), size, spec, "d1")
    return out0, out1


def _compact(out: np.ndarray) -> np.ndarray:
    """Integer outputs in the narrowest integer type holding them (actions, decisions: int8)."""
    if out.dtype.kind != "i" or out.size == 0:
        return out
    lo, hi = int(out.min()), int(out.max())
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return out.astype(dtype)
    return out


def selection_chunk(target, d0, d1, chunk_seed, size: int, spec: OutputSpec) -> tuple[np.ndarray, np.ndarray]:
    """Outputs of `size` runs on each side (the selection split keeps its runs; integers compactly)."""
    out0, out1 = _draw_both(target, d0, d1, chunk_seed, size, spec)
    return _compact(out0), _compact(out1)


def counts_above(values: np.ndarray, sign: int, thresholds: np.ndarray) -> np.ndarray:
    """#{sign * v > t} for each threshold t (unsorted values)."""
    if len(thresholds) > _SORT_ABOVE:
        v = np.sort(values)  # a copy: `values` may be a view of the target's own array
        if sign > 0:
            return len(v) - np.searchsorted(v, thresholds, side="right")
        return np.searchsorted(v, -thresholds, side="left")
    if sign > 0:
        return np.array([np.count_nonzero(values > t) for t in thresholds])
    return np.array([np.count_nonzero(values < -t) for t in thresholds])


def estimation_chunk(target, d0, d1, chunk_seed, size: int, spec: OutputSpec, plans) -> list[np.ndarray]:
    """Counts, per plan (score, sign, thresholds), of runs in each event: arrays of shape (2, m)."""
    outs = _draw_both(target, d0, d1, chunk_seed, size, spec)
    scores = {id(score): (score(outs[0]), score(outs[1])) for score, _, _ in plans}
    result = []
    for score, sign, thresholds in plans:
        s0, s1 = scores[id(score)]
        result.append(np.stack([counts_above(s0, sign, thresholds), counts_above(s1, sign, thresholds)]).astype(np.int64))
    return result


def fingerprint_data(obj: Any) -> str:
    """A stable digest of the inputs, for checkpoints (pickle bytes, else their address-free description)."""
    try:
        payload = pickle.dumps(obj, protocol=4)
    except Exception:  # unpicklable inputs: fall back to their text form
        payload = describe_target(obj).encode()
    return hashlib.sha256(payload).hexdigest()


def _checksum(meta: str, arrays: list[np.ndarray]) -> str:
    h = hashlib.sha256(meta.encode())
    for a in arrays:
        h.update(f"|{a.dtype.str}{a.shape}|".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


class CheckpointStore:
    """Finished chunks on disk, one file per chunk, written atomically (`dpaudit._io.atomic_write`).

    Every chunk file carries what its result depends on (`identity`: seed, target, inputs, score,
    output shape; plus the chunk's phase, index, size and, for estimation chunks, the chosen events)
    and a SHA-256 checksum of that record and the arrays, both checked when the chunk is read back:
    a chunk of another audit or a damaged file raises ValueError naming the file.  The manifest
    (`manifest.json`) describes the audit for people and refuses a folder of a different audit early;
    the chunk records do not depend on it being there.
    """

    FORMAT = 2

    def __init__(self, directory: str | os.PathLike, manifest: dict[str, Any], identity: dict[str, Any]):
        self.directory = os.fspath(directory)
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise ValueError(f"checkpoint_dir {self.directory!r} is not a folder")
        os.makedirs(self.directory, exist_ok=True)
        self.identity = {"format": self.FORMAT, **identity}
        path = os.path.join(self.directory, "manifest.json")
        if os.path.exists(path):
            try:
                with open(path) as fh:
                    existing = json.load(fh)
            except (OSError, ValueError) as exc:
                raise ValueError(f"checkpoint manifest {path!r} is unreadable ({exc}); delete it or use an empty folder") from None
            if existing != manifest:
                keys = set(existing) | set(manifest) if isinstance(existing, dict) else set(manifest)
                diff = sorted(k for k in keys if not isinstance(existing, dict) or existing.get(k) != manifest.get(k))
                raise ValueError(
                    f"checkpoint_dir {self.directory!r} holds chunks of a different audit (differs in: {', '.join(diff)}); "
                    "use an empty folder"
                )
        else:
            atomic_write_text(path, json.dumps(manifest, sort_keys=True))

    def _path(self, chunk: Chunk) -> str:
        return os.path.join(self.directory, f"{chunk.phase}-{chunk.index:06d}.npz")

    def _meta(self, chunk: Chunk, events_key: str) -> dict[str, Any]:
        return {**self.identity, "phase": chunk.phase, "index": chunk.index, "size": chunk.size,
                "events": events_key}

    def load(self, chunk: Chunk, events_key: str = "") -> Any:
        """The stored result of `chunk`, or None if it has not finished; ValueError if it is not this audit's."""
        path = self._path(chunk)
        if not os.path.exists(path):
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                meta_text = str(z["meta"])
                checksum = str(z["checksum"])
                arrays = [z[f"a{i}"] for i in range(int(z["count"]))]
            meta = json.loads(meta_text)
        except Exception as exc:  # truncated zip, missing member, bad JSON: all mean a damaged file
            raise ValueError(f"checkpoint file {path!r} is damaged or not a dpaudit chunk ({type(exc).__name__}: {exc}); "
                             "delete it to recompute the chunk") from None
        if checksum != _checksum(meta_text, arrays):
            raise ValueError(f"checkpoint file {path!r} fails its checksum (edited or damaged); delete it to recompute "
                             "the chunk")
        expected = self._meta(chunk, events_key)
        if meta != expected:
            diff = sorted(k for k in set(meta) | set(expected) if meta.get(k) != expected.get(k))
            what = "different events than this audit chose" if diff == ["events"] else f"a different audit (differs in: {', '.join(diff)})"
            raise ValueError(f"checkpoint file {path!r} belongs to {what}; use an empty folder")
        return tuple(arrays) if chunk.phase == "selection" else arrays

    def save(self, chunk: Chunk, result, events_key: str = "") -> None:
        """Store the result of a finished chunk atomically, with its record and checksum."""
        arrays = [np.asarray(a) for a in result]
        meta_text = json.dumps(self._meta(chunk, events_key), sort_keys=True)
        members = {f"a{i}": a for i, a in enumerate(arrays)}
        atomic_write(
            self._path(chunk),
            lambda fh: np.savez(fh, meta=np.array(meta_text), checksum=np.array(_checksum(meta_text, arrays)),
                                count=np.array(len(arrays)), **members),
        )


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
    in each of two; benchmarks/peers.py ran in 287 s with 2 workers and 222 s (the same bounds)
    with one BLAS thread each.  The usual cure for nested parallelism (joblib's loky does the same)."""
    _exit_with_parent(parent)
    threadpool_limits(threads, user_api="blas")


def process_pool(workers: int, mp_context: Any = None) -> cf.ProcessPoolExecutor:
    """A process pool whose workers exit when this process dies and share the cores' BLAS threads
    (see `worker_init`); `mp_context` as in `concurrent.futures.ProcessPoolExecutor`."""
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp_context, initializer=worker_init,
                                  initargs=(os.getpid(), blas_threads(workers)))


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
    rest = spec[len("dask://"):] if dask else spec
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
        raise ValueError(f"executor {spec!r}: unknown Dask address scheme {scheme!r}; use one of {', '.join(DASK_SCHEMES)}")
    if not location:
        raise ValueError(f"executor {spec!r}: the address after {scheme}:// is empty")
    return rest


def _picklable(obj: Any) -> str | None:
    try:
        pickle.dumps(obj)
    except Exception as exc:  # any pickling failure means the work cannot leave this process
        return f"{type(exc).__name__}: {exc}"
    return None


_EXECUTOR_HELP = ("use None, 'serial', 'process', 'dask://host:port', 'tcp://host:port', a distributed.Client or a "
                  "concurrent.futures.Executor")


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
            raise ValueError(f"executor {executor!r} needs the 'distributed' package (the [dask] extra: pip install 'distributed>=2023.1')") from None
        with distributed.Client(dask_address(executor), set_as_default=False) as client:
            yield _Dask(client)
    elif _is_dask_client(executor):
        yield _Dask(executor)
    else:
        yield _Futures(executor)


def progress_bar(enabled: bool | None, total: int):
    """A tqdm bar on stderr: shown when `enabled`, or (None) when stderr is a terminal."""
    from tqdm.auto import tqdm

    show = sys.stderr.isatty() if enabled is None else bool(enabled)
    return tqdm(total=total, disable=not show, file=sys.stderr, desc="audit", unit="run", unit_scale=True)


def run_chunks(
    runner,
    chunks: list[Chunk],
    make_task: Callable[[Chunk], tuple[Callable, tuple]],
    store: CheckpointStore | None,
    events_key: str,
    bar,
) -> dict[int, Any]:
    """Run the chunks not already checkpointed; return every chunk's result by index."""
    results: dict[int, Any] = {}
    todo: dict[int, tuple[Callable, tuple]] = {}
    by_index = {c.index: c for c in chunks}
    for chunk in chunks:
        stored = store.load(chunk, events_key) if store is not None else None
        if stored is not None:
            results[chunk.index] = stored
            bar.update(2 * chunk.size)
        else:
            todo[chunk.index] = make_task(chunk)

    def on_done(index: int, result) -> None:
        if store is not None:
            store.save(by_index[index], result, events_key)
        results[index] = result
        bar.update(2 * by_index[index].size)

    runner.run(todo, on_done)
    return results
_counts_above = counts_above  # the former private name
