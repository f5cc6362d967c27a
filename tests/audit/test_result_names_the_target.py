"""The audit result names the audited target (`describe_target`), not a placeholder."""

import numpy as np

from dpaudit.audit import audit


def laplace_mechanism(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return data + rng.laplace(0.0, 1.0, (size, 2))


def test_result_names_the_target() -> None:
    r = audit(laplace_mechanism, 1.0, 0.0, claim_epsilon=3.0, samples=4_000, executor="serial")
    assert "laplace_mechanism" in str(r.target)
