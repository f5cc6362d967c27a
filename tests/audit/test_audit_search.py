"""Neighbour search over input pairs (dpaudit.audit.search): exact properties and a seeded power check."""

import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.search import audit_pairs, statdp_patterns


def test_statdp_patterns_are_neighbours_and_swapped():
    pats = statdp_patterns(10)
    assert len(pats) == 16
    for a, b in pats:
        assert a.shape == b.shape == (10,)
        assert np.max(np.abs(a - b)) <= 1.0  # component-wise sensitivity-1 neighbours
    assert all(np.array_equal(pats[2 * i][0], pats[2 * i + 1][1]) for i in range(8))
    assert len(statdp_patterns(5, componentwise=False)) == 4
    with pytest.raises(ValueError, match="dimensions"):
        statdp_patterns(0)


def max_value(data, rng, size):
    """Noisy max value of 5 queries + Lap(20): 0.25 for 'all above' (1 -> 2), 0.05 for 'one above'."""
    return (np.asarray(data, dtype=float) + rng.laplace(0.0, 20.0, (size, len(data)))).max(axis=1)


def test_the_final_audit_is_the_plain_audit_of_the_chosen_pair():
    pairs = statdp_patterns(5)[:4]
    found = audit_pairs(max_value, pairs, claim_epsilon=0.1, samples=20_000, seed=3, executor="serial")
    d0, d1 = pairs[found.pair_index]
    assert found.result == audit(max_value, d0, d1, claim_epsilon=0.1, samples=20_000, seed=3, executor="serial")
    assert len(found.pilot_lower) == 4 and found.pilot_samples == 2_000


def test_search_finds_the_revealing_pattern():
    # Seeded, deterministic.  'All above' (index 10/11) is the only pattern with loss 0.25 > 0.1.
    found = audit_pairs(max_value, statdp_patterns(5), claim_epsilon=0.1, samples=200_000, seed=0, executor="serial")
    assert found.pair_index in (10, 11, 12, 13)  # all above / all below: the max moves by 1
    assert found.result.verdict == "violation"


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="pairs"):
        audit_pairs(max_value, [], claim_epsilon=0.1)
    with pytest.raises(ValueError, match="pilot_samples"):
        audit_pairs(max_value, statdp_patterns(5), claim_epsilon=0.1, pilot_samples=3)
