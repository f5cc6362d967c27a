"""Checkpoint chunks carry what they depend on and a checksum; anything else is refused by file name."""

import os
import zipfile

import numpy as np
import pytest

from dpaudit.audit import audit

OPTS = dict(claim_epsilon=1.0, samples=12_000, chunk_size=2_000, executor="serial")


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def other(data, rng, size):
    return data + rng.laplace(0.0, 2.0, size)


def _rewrite(path, change):
    """Rewrite one member of an .npz chunk file (as an editor would), keeping the others."""
    with np.load(path) as z:
        members = {k: z[k] for k in z.files}
    change(members)
    with open(path, "wb") as fh:
        np.savez(fh, **members)


def test_manifest_deleted_chunks_of_another_seed_are_refused(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    os.remove(tmp_path / "manifest.json")
    # the old code reused the seed-7 chunks and reported seed 8
    with pytest.raises(ValueError, match=r"selection-000000\.npz.*different audit.*seed"):
        audit(laplace, 1.0, 0.0, seed=8, checkpoint_dir=tmp_path, **OPTS)


def test_manifest_deleted_chunks_of_another_target_are_refused(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    os.remove(tmp_path / "manifest.json")
    with pytest.raises(ValueError, match=r"selection-000000\.npz.*different audit.*target"):
        audit(other, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)


def test_manifest_deleted_same_audit_resumes_identically(tmp_path):
    first = audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    os.remove(tmp_path / "manifest.json")
    assert audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS) == first


def test_edited_counts_fail_the_checksum(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    path = tmp_path / "estimation-000002.npz"

    def inflate(members):
        members["a0"] = members["a0"] * 2  # the old code summed edited counts as they were

    _rewrite(path, inflate)
    with pytest.raises(ValueError, match=r"estimation-000002\.npz.*checksum"):
        audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)


def test_chunk_moved_to_another_index_is_refused(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    os.replace(tmp_path / "estimation-000001.npz", tmp_path / "estimation-000002.npz")
    with pytest.raises(ValueError, match=r"estimation-000002\.npz.*different audit.*index"):
        audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "missing-member"])
def test_damaged_chunk_files_are_named(tmp_path, damage):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    path = tmp_path / "selection-000000.npz"
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a zip file")
    else:
        _rewrite(path, lambda members: members.pop("checksum"))
    with pytest.raises(ValueError, match=r"selection-000000\.npz.*(damaged|checksum)"):
        audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)


def test_unreadable_manifest_is_named(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"manifest\.json.*unreadable"):
        audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)


def test_checkpoint_dir_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(ValueError, match="checkpoint_dir"):
        audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=path, **OPTS)


def test_chunk_files_are_written_atomically_without_leftovers(tmp_path):
    audit(laplace, 1.0, 0.0, seed=7, checkpoint_dir=tmp_path, **OPTS)
    names = sorted(os.listdir(tmp_path))
    assert not [n for n in names if n.startswith(".")]  # no temporary files left behind
    for name in names:
        if name.endswith(".npz"):
            assert zipfile.is_zipfile(tmp_path / name)
