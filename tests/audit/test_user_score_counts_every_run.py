"""A user `score` is what the events are chosen and counted on: it scores the selection and the estimation
runs of both inputs, not only the probe's outputs."""

import numpy as np

import dpaudit


def _laplace(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return data + rng.laplace(0.0, 1.0, size=size)


def test_user_score_sees_every_run() -> None:
    seen = []

    def score(out: np.ndarray) -> np.ndarray:
        seen.append(len(out))
        return np.asarray(out, dtype=float).reshape(len(out))

    samples = 4000
    result = dpaudit.audit(
        _laplace, 0.0, 1.0, claim_epsilon=1.0, samples=samples, seed=3, score=score, executor="serial"
    )
    assert result.epsilon_lower >= 0.0
    assert sum(seen) >= 2 * samples  # selection and estimation runs of d0 and d1, besides the probe
