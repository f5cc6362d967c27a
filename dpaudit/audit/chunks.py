"""Drawing the runs in chunks: seeds, the two kinds of chunk task, and running the chunks.

Each chunk draws `size` runs on d0 and `size` runs on d1 with its own seed, a child of one
`numpy.random.SeedSequence(seed)` obtained by `spawn`; the d0 and d1 generators are the chunk
seed's two children (independent: sharing randomness between d0 and d1 would hide privacy loss).
Chunk results are combined in chunk order (selection outputs are concatenated, estimation counts
summed as integers), so the outcome is bit-identical whatever runs the chunks (`dpaudit.audit.executors`):
this process, a local process pool or a Dask cluster.  Finished chunks can be stored and resumed
(`dpaudit.audit.checkpoints`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpaudit.audit.blas import one_blas_thread
from dpaudit.audit.outputs import OutputSpec, draw
from dpaudit.audit.scores import score_values

#: Above this many thresholds a chunk's scores are sorted once; below, each is a single pass.
_SORT_ABOVE = 12

__all__ = [
    "Chunk",
    "ChunkStore",
    "counts_above",
    "estimation_chunk",
    "plan_chunks",
    "progress_bar",
    "run_chunks",
    "selection_chunk",
]


@dataclass(frozen=True)
class Chunk:
    """One unit of work: `size` runs per side, seeded by child `index` of the root SeedSequence."""

    phase: str  # "selection" or "estimation"
    index: int
    size: int


class ChunkStore(Protocol):
    """Where finished chunks are kept (`dpaudit.audit.checkpoints.CheckpointStore`): `load` gives a stored
    result or None, `save` stores one; `events_key` names the events an estimation chunk counted."""

    def load(self, chunk: Chunk, events_key: str = "") -> Any:
        """The stored result of `chunk` (for the events named `events_key`), or None if none is stored."""

    def save(self, chunk: Chunk, result: Any, events_key: str = "") -> None:
        """Store `result` of `chunk` (for the events named `events_key`)."""


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
    """Counts, per plan (score, sign, thresholds), of runs in each event: arrays of shape (2, m).

    The scores run with one BLAS thread: their products are tall and thin (runs x width), memory-bound,
    and a threaded BLAS on a busy machine waits for its threads (a vector audit of 10^6 runs per side took
    10.3 s with two threads beside two other processes, 5.1 s with one)."""
    outs = _draw_both(target, d0, d1, chunk_seed, size, spec)
    with one_blas_thread():
        # each side's scores together: shared coordinates and features computed once (`score_values`)
        values = [score_values([score for score, _, _ in plans], out) for out in outs]
    result = []
    for (_, sign, thresholds), s0, s1 in zip(plans, *values):
        result.append(
            np.stack([counts_above(s0, sign, thresholds), counts_above(s1, sign, thresholds)]).astype(np.int64)
        )
    return result


def progress_bar(enabled: bool | None, total: int):
    """A tqdm bar on stderr: shown when `enabled`, or (None) when stderr is a terminal."""
    from tqdm.auto import tqdm

    show = sys.stderr.isatty() if enabled is None else bool(enabled)
    return tqdm(total=total, disable=not show, file=sys.stderr, desc="audit", unit="run", unit_scale=True)


def run_chunks(
    runner,
    chunks: list[Chunk],
    make_task: Callable[[Chunk], tuple[Callable, tuple]],
    store: ChunkStore | None,
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
