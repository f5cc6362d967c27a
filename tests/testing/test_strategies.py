"""Hypothesis strategies: the two datasets differ in exactly one user, in exactly the part the relation names."""

import numpy as np
import pytest
from hypothesis import given, settings

from dpaudit.testing.strategies import contextual_datasets, reward_tables, typed_patients


def _changed_rows(a, b):
    return np.flatnonzero(np.any((a != b).reshape(a.shape[0], -1), axis=1))


@settings(max_examples=40, deadline=None)
@given(pair=reward_tables(relation="vector"))
def test_reward_tables_vector(pair):
    assert pair.d0.shape == pair.d1.shape and pair.d0.ndim == 2
    assert _changed_rows(pair.d0, pair.d1).tolist() == [pair.user]
    assert pair.d0.min() >= 0 and pair.d1.max() <= 1


@settings(max_examples=40, deadline=None)
@given(pair=reward_tables(relation="entry"))
def test_reward_tables_entry_changes_one_reward(pair):
    assert np.count_nonzero(pair.d0 != pair.d1) == 1
    assert _changed_rows(pair.d0, pair.d1).tolist() == [pair.user]


@pytest.mark.parametrize("relation", ["reward-only", "context-only", "both"])
def test_contextual_relations(relation):
    @settings(max_examples=30, deadline=None)
    @given(pair=contextual_datasets(relation=relation))
    def check(pair):
        f0, f1 = pair.d0["features"], pair.d1["features"]
        r0, r1 = pair.d0["rewards"], pair.d1["rewards"]
        assert f0.shape == f1.shape and r0.shape == r1.shape == f0.shape[:2]
        assert np.all(np.linalg.norm(f0, axis=-1) <= 1 + 1e-12) and np.all(np.linalg.norm(f1, axis=-1) <= 1 + 1e-12)
        fc, rc = _changed_rows(f0, f1).tolist(), _changed_rows(r0, r1).tolist()
        assert fc == ([pair.user] if relation != "reward-only" else [])
        assert rc == ([pair.user] if relation != "context-only" else [])
        assert pair.relation == relation

    check()


@pytest.mark.parametrize("relation", ["reward-only", "context-only", "both"])
def test_typed_patients_relations(relation):
    @settings(max_examples=30, deadline=None)
    @given(pair=typed_patients(relation=relation))
    def check(pair):
        t0, t1 = pair.d0["types"], pair.d1["types"]
        assert t0.dtype.kind == "i" and t0.min() >= 0
        y_changed = np.flatnonzero((pair.d0["y0"] != pair.d1["y0"]) | (pair.d0["y1"] != pair.d1["y1"])).tolist()
        assert np.flatnonzero(t0 != t1).tolist() == ([pair.user] if relation != "reward-only" else [])
        assert y_changed == ([pair.user] if relation != "context-only" else [])
        for key in ("y0", "y1"):
            assert pair.d1[key].min() >= 0 and pair.d1[key].max() <= 1

    check()


def test_unknown_relation_is_named():
    with pytest.raises(ValueError, match="unknown relation 'rows'"):
        reward_tables(relation="rows")
    with pytest.raises(ValueError, match="unknown relation 'x'"):
        contextual_datasets(relation="x")
    with pytest.raises(ValueError, match="unknown relation 'x'"):
        typed_patients(relation="x")
