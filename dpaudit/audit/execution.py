"""Split by concern: outputs (`dpaudit.audit.outputs`), chunks (`dpaudit.audit.chunks`), the checkpoint store
(`dpaudit.audit.checkpoints`), pool workers (`dpaudit.audit.workers`) and executor back-ends
(`dpaudit.audit.executors`); these names keep working from here with a DeprecationWarning."""

from dpaudit._moved import forward

_HOMES = {
    "OutputSpec": "outputs",
    "normalise": "outputs",
    "draw": "outputs",
    "Chunk": "chunks",
    "plan_chunks": "chunks",
    "selection_chunk": "chunks",
    "estimation_chunk": "chunks",
    "counts_above": "chunks",
    "run_chunks": "chunks",
    "progress_bar": "chunks",
    "CheckpointStore": "checkpoints",
    "fingerprint_data": "checkpoints",
    "blas_threads": "workers",
    "worker_init": "workers",
    "process_pool": "workers",
    "dask_address": "executors",
    "check_executor": "executors",
    "open_runner": "executors",
    "DASK_SCHEMES": "executors",
}

__all__, __getattr__ = forward(__name__, {name: f"dpaudit.audit.{home}" for name, home in _HOMES.items()})
