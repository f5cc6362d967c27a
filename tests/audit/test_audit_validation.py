"""Bad input is refused with a ValueError naming what is wrong, before any long run starts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import audit


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def wrong_rows(data, rng, size):
    return rng.laplace(0.0, 1.0, size + 1)


def with_nan(data, rng, size):
    out = rng.laplace(0.0, 1.0, size)
    out[0] = np.nan
    return out


def shape_by_input(data, rng, size):
    return rng.normal(size=(size, 2 if data else 3))


def kind_by_input(data, rng, size):
    return rng.integers(0, 2, size) if data else rng.normal(size=size)


def strings(data, rng, size):
    return np.array(["a"] * size)


class CountingTarget:
    def __init__(self):
        self.rows = 0

    def __call__(self, data, rng, size):
        self.rows += size
        return np.full(size, np.nan) if self.rows > 10 else rng.normal(size=size)


@pytest.mark.parametrize(
    "target, message",
    [
        (wrong_rows, "expected first axis of length"),
        (with_nan, "NaN"),
        (shape_by_input, "consistent"),
        (kind_by_input, "consistent"),
        (strings, "dtype"),
    ],
)
def test_bad_targets_are_caught_by_the_probe(target, message):
    with pytest.raises(ValueError, match=message):
        audit(target, 1, 0, claim_epsilon=1.0, samples=1000, executor="serial")


def test_bad_chunk_after_a_good_probe_is_caught():
    with pytest.raises(ValueError, match="NaN"):
        audit(CountingTarget(), 1, 0, claim_epsilon=1.0, samples=1000, executor="serial")


@given(st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(float("nan"))))
@settings(max_examples=30, deadline=None)
def test_confidence_outside_open_unit_interval(confidence):
    with pytest.raises(ValueError, match="confidence"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, confidence=confidence)


@given(st.one_of(st.floats(max_value=0.0), st.just(float("inf")), st.just(float("nan"))))
@settings(max_examples=30, deadline=None)
def test_claim_epsilon_must_be_positive(eps):
    with pytest.raises(ValueError, match="claim_epsilon"):
        audit(laplace, 1.0, 0.0, claim_epsilon=eps)


@given(st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1.0), st.just(float("nan"))))
@settings(max_examples=30, deadline=None)
def test_claim_delta_in_unit_interval(delta):
    with pytest.raises(ValueError, match="claim_delta"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, claim_delta=delta)


def test_other_parameters_named():
    with pytest.raises(TypeError, match="target"):
        audit("not callable", 1.0, 0.0, claim_epsilon=1.0)
    with pytest.raises(ValueError, match="claim_epsilon is required"):
        audit(laplace, 1.0, 0.0)
    with pytest.raises(ValueError, match="samples"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=3)
    with pytest.raises(ValueError, match="seed"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, seed=-1)
    with pytest.raises(ValueError, match="selection_fraction"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, selection_fraction=1.0)
    with pytest.raises(ValueError, match="executor"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=1000, executor="threads!")
    with pytest.raises(ValueError, match="score"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=1000, score=lambda x: x[:1], executor="serial")
    with pytest.raises(ValueError, match="claim must be"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, claim=3.0)


def test_too_few_samples_for_any_bound_says_how_many_are_needed():
    with pytest.raises(ValueError, match=r"samples=50 is too few.*samples >= (\d+)") as info:
        audit(laplace, 1.0, 0.0, claim_epsilon=4.0, samples=50)
    need = int(info.value.args[0].rsplit(">= ", 1)[1])
    with pytest.raises(ValueError, match="practical size"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1000.0, samples=50)
    # The suggested size is enough to pass the check (the target itself is then run).
    audit(laplace, 1.0, 0.0, claim_epsilon=4.0, samples=need, executor="serial")
    # float outputs get a second, floating-point audit by default: the advice then counts both
    assert "float_check='off'" in info.value.args[0]
