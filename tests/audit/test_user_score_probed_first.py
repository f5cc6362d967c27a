"""A user `score` that fails on the target's outputs fails at the probe, before any selection or estimation
run is drawn."""

import numpy as np
import pytest

import dpaudit


def test_bad_score_fails_before_the_runs() -> None:
    drawn = []

    def target(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
        drawn.append(size)
        return data + rng.laplace(0.0, 1.0, size=size)

    def score(out: np.ndarray) -> np.ndarray:
        raise ValueError("this score cannot read the outputs")

    with pytest.raises(ValueError, match="cannot read"):
        dpaudit.audit(target, 0.0, 1.0, claim_epsilon=1.0, samples=4000, seed=3, score=score, executor="serial")
    assert len(drawn) == 2 and sum(drawn) < 4000  # the probe's two small draws only
