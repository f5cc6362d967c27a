"""Finished chunks on disk: the checkpoint store that lets an audit resume.

Each chunk's file carries what its result depends on and a checksum of that record and the arrays,
so a chunk of another audit or a damaged file is refused by name, never silently reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from typing import Any

import numpy as np

from dpaudit._io import atomic_write, atomic_write_text
from dpaudit.audit.chunks import Chunk
from dpaudit.audit.describe import describe_target

__all__ = ["CheckpointStore", "fingerprint_data"]


def fingerprint_data(obj: Any) -> str:
    """A stable digest of the inputs, for checkpoints (pickle bytes, else their address-free description)."""
    try:
        payload = pickle.dumps(obj, protocol=4)
    except Exception:  # noqa: BLE001  (unpicklable inputs: fall back to their text form)
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
                raise ValueError(
                    f"checkpoint manifest {path!r} is unreadable ({exc}); delete it or use an empty folder"
                ) from None
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
        return {**self.identity, "phase": chunk.phase, "index": chunk.index, "size": chunk.size, "events": events_key}

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
        except Exception as exc:  # noqa: BLE001  (truncated zip, missing member, bad JSON: a damaged file)
            raise ValueError(
                f"checkpoint file {path!r} is damaged or not a dpaudit chunk ({type(exc).__name__}: {exc}); "
                "delete it to recompute the chunk"
            ) from None
        if checksum != _checksum(meta_text, arrays):
            raise ValueError(
                f"checkpoint file {path!r} fails its checksum (edited or damaged); delete it to recompute the chunk"
            )
        expected = self._meta(chunk, events_key)
        if meta != expected:
            diff = sorted(k for k in set(meta) | set(expected) if meta.get(k) != expected.get(k))
            what = (
                "different events than this audit chose"
                if diff == ["events"]
                else f"a different audit (differs in: {', '.join(diff)})"
            )
            raise ValueError(f"checkpoint file {path!r} belongs to {what}; use an empty folder")
        return tuple(arrays) if chunk.phase == "selection" else arrays

    def save(self, chunk: Chunk, result: Any, events_key: str = "") -> None:
        """Store the result of a finished chunk atomically, with its record and checksum."""
        arrays = [np.asarray(a) for a in result]
        meta_text = json.dumps(self._meta(chunk, events_key), sort_keys=True)
        members = {f"a{i}": a for i, a in enumerate(arrays)}
        atomic_write(
            self._path(chunk),
            lambda fh: np.savez(
                fh,
                meta=np.array(meta_text),
                checksum=np.array(_checksum(meta_text, arrays)),
                count=np.array(len(arrays)),
                **members,  # type: ignore[arg-type]  # numpy's stub: **kwds
            ),
        )
