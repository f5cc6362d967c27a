"""The auditor at the edges of floating point: confidence next to 1, tiny levels."""

import numpy as np

from dpaudit.audit import audit
from dpaudit.audit.bounds import best_case_epsilon


def _shift(data, rng, size):
    return data + 0.01 * rng.standard_normal(size)


def test_confidence_next_to_one_still_finds_a_perfect_distinguisher():
    # 1 - confidence = 1.1e-16: the per-proportion level ~1.4e-17 made ndtri(1 - level) infinite and
    # every candidate event NaN, so the old code reported epsilon_lower = 0 (exact, deterministic).
    confidence = float(np.nextafter(1.0, 0.0))
    result = audit(
        _shift, 0.0, 1.0, claim_epsilon=1.0, samples=20_000, confidence=confidence, seed=1, executor="serial"
    )
    best = best_case_epsilon(result.estimation_samples, 0.0, (1 - confidence) / 4)
    assert 0.9 * best < result.epsilon_lower <= best
    assert result.mu_lower > 4.0
