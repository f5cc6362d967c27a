"""Resuming from `checkpoint_dir`: the same audit reuses every stored chunk, anything else never does.

The same audit resumed gives the same result running the probe only (split and cross-fitted; a
cross-fitted audit with another `grid_size` too, since its estimation chunks count no grid; the
floating-point audit of float outputs from its own subfolder).  A folder of an audit of another target,
other inputs or another user score is refused naming what differs; stored estimation chunks that
counted other events than the resumed audit chose (more events per direction, another grid for a
claimed curve, another claim_delta once the manifest is gone) are refused by file name, never counted
for the new events.  All deterministic (fixed seeds): no false failures.
"""

import math
import os

import pytest

from dpaudit.audit import audit

OPTS = dict(claim_epsilon=1.0, samples=6_000, seed=7, chunk_size=1_000, executor="serial", float_check="off")


class Counting:
    """Laplace(1) noise, counting its calls (one call = one side of one chunk, or of the probe)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, data, rng, size):
        self.calls += 1
        return data + rng.laplace(0.0, 1.0, size)


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def wider(data, rng, size):
    return data + rng.laplace(0.0, 2.0, size)


def laplace3(data, rng, size):
    """Three noisy coordinates: several score families apply, so runner-up events exist."""
    return data + rng.laplace(0.0, 1.0, (size, 3))


def identity(x):
    return x


def doubled(x):
    return 2.0 * x


def curve(eps):
    """A claimed curve eps -> delta (its values do not matter here: a tested curve makes the estimation chunks
    count the trade-off grid)."""
    return max(0.0, 1.0 - math.exp(eps - 1.0))


@pytest.mark.parametrize("crossfit", [False, True], ids=["split", "crossfit"])
def test_the_same_audit_resumes_from_its_chunks(tmp_path, crossfit):
    first = audit(Counting(), 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=crossfit, **OPTS)
    assert sorted(os.listdir(tmp_path))[:2] == ["estimation-000001.npz", "estimation-000002.npz"]
    again = Counting()
    assert audit(again, 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=crossfit, **OPTS) == first
    assert again.calls == 2  # the probe only: every chunk came from the folder


def test_the_floating_point_audit_resumes_from_its_own_subfolder(tmp_path):
    kw = {**OPTS, "float_check": "report"}  # scalar float outputs: a second audit, with the bit features
    first = audit(Counting(), 1.0, 0.0, checkpoint_dir=tmp_path, **kw)
    assert first.floating_point is not None
    assert "manifest.json" in os.listdir(tmp_path / "floating-point")
    again = Counting()
    assert audit(again, 1.0, 0.0, checkpoint_dir=tmp_path, **kw) == first
    assert again.calls == 2


def test_crossfit_resumed_with_another_grid_reuses_its_chunks(tmp_path):
    audit(Counting(), 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=True, grid_size=16, **OPTS)
    again = Counting()
    resumed = audit(again, 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=True, grid_size=8, **OPTS)
    assert resumed == audit(Counting(), 1.0, 0.0, crossfit=True, grid_size=8, **OPTS)
    assert again.calls == 2


def test_another_target_is_refused(tmp_path):
    audit(laplace, 1.0, 0.0, checkpoint_dir=tmp_path, **OPTS)
    with pytest.raises(ValueError, match=r"different audit \(differs in: target\)"):
        audit(wider, 1.0, 0.0, checkpoint_dir=tmp_path, **OPTS)


@pytest.mark.parametrize("inputs", [(2.0, 0.0), (1.0, -1.0)], ids=["d0", "d1"])
def test_other_inputs_are_refused(tmp_path, inputs):
    audit(laplace, 1.0, 0.0, checkpoint_dir=tmp_path, **OPTS)
    with pytest.raises(ValueError, match=r"different audit \(differs in: data\)"):
        audit(laplace, *inputs, checkpoint_dir=tmp_path, **OPTS)


def test_another_user_score_is_refused(tmp_path):
    audit(laplace, 1.0, 0.0, score=identity, checkpoint_dir=tmp_path, **OPTS)
    with pytest.raises(ValueError, match=r"different audit \(differs in: score\)"):
        audit(laplace, 1.0, 0.0, score=doubled, checkpoint_dir=tmp_path, **OPTS)


def test_more_events_per_direction_refuse_the_stored_estimation_chunks(tmp_path):
    kw = dict(OPTS, claim_epsilon=3.0, selection_extension=0.0)
    audit(laplace3, 1.0, 0.0, events_per_direction=1, checkpoint_dir=tmp_path, **kw)
    with pytest.raises(ValueError, match=r"estimation-000001\.npz.*different events than this audit chose"):
        audit(laplace3, 1.0, 0.0, events_per_direction=3, checkpoint_dir=tmp_path, **kw)


def test_another_grid_for_a_claimed_curve_refuses_the_stored_estimation_chunks(tmp_path):
    audit(laplace, 1.0, 0.0, claim=curve, grid_size=16, checkpoint_dir=tmp_path, **OPTS)
    with pytest.raises(ValueError, match=r"estimation-000001\.npz.*different events than this audit chose"):
        audit(laplace, 1.0, 0.0, claim=curve, grid_size=8, checkpoint_dir=tmp_path, **OPTS)


def test_crossfit_with_other_events_refuses_the_stored_estimation_chunks(tmp_path):
    # Without the manifest only the chunk records guard the folder: the selection chunks (raw runs) are
    # reused, and another claim_delta chooses other thresholds on them.
    audit(laplace, 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=True, **OPTS)
    os.remove(tmp_path / "manifest.json")
    with pytest.raises(ValueError, match=r"estimation-000001\.npz.*different events than this audit chose"):
        audit(laplace, 1.0, 0.0, checkpoint_dir=tmp_path, crossfit=True, claim_delta=0.1, **OPTS)
