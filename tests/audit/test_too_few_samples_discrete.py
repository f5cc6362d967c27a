"""Too few samples for outputs the floating-point split does not apply to: `run_audit` defers the error
until the probe has seen the outputs, then must raise the planner's TooFewSamplesError (not another error)."""

import numpy as np
import pytest

import dpaudit
from dpaudit.audit.options import TooFewSamplesError


def _bits(data: int, rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.integers(0, 2, size=size) ^ data


def _pair(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.normal(data, 1.0, size=(size, 2))


@pytest.mark.parametrize("target", [_bits, _pair], ids=["discrete", "two-column"])
def test_too_few_samples_raises_the_planners_error(target) -> None:
    with pytest.raises(TooFewSamplesError, match="samples"):
        dpaudit.audit(target, 0, 1, claim_epsilon=3.0, samples=20)
