"""The "use samples >= N" advice at the practical limit `MAX_SAMPLES` runs per side.

A claim that a perfect distinguisher exceeds only with between MAX_SAMPLES / 2 and MAX_SAMPLES estimation runs
still gets its advice; one that MAX_SAMPLES runs cannot exceed gets a ValueError naming claim_epsilon.  Exact, no
statistics.
"""

import pytest

from dpaudit.audit.bounds import best_case_epsilon
from dpaudit.audit.options import _samples_needed
from dpaudit.limits import MAX_SAMPLES

LEVEL, FRACTION = 0.05 / 4, 0.1


def test_a_claim_needing_nearly_max_samples_gets_its_advice():
    half, full = best_case_epsilon(MAX_SAMPLES // 2, 0.0, LEVEL), best_case_epsilon(MAX_SAMPLES, 0.0, LEVEL)
    claim = (half + full) / 2
    need = _samples_needed(claim, 0.0, LEVEL, FRACTION)
    estimation = need - round(FRACTION * need)
    assert MAX_SAMPLES // 2 < estimation <= MAX_SAMPLES
    assert best_case_epsilon(estimation, 0.0, LEVEL) > claim


def test_a_claim_beyond_max_samples_is_refused():
    claim = best_case_epsilon(MAX_SAMPLES, 0.0, LEVEL) + 0.01
    with pytest.raises(ValueError, match="claim_epsilon"):
        _samples_needed(claim, 0.0, LEVEL, FRACTION)
