"""assert_dp and its pytest fixture: passes a correct Laplace mechanism, fails (with the numbers) a broken one.

Statistical tests, fixed seeds. False-failure rate of the passing test: at most 1 - confidence = 5%
for a correct mechanism (the auditor's guarantee); with the fixed seed the outcome is deterministic.
"""

import math

import numpy as np
import pytest

from dpaudit.testing import assert_dp as assert_dp_function
from dpaudit.testing.plugin import configured


def laplace_sum(scale):
    def target(data, rng, size):
        return float(np.sum(data)) + rng.laplace(0.0, scale, size)

    return target


D0, D1 = np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0])  # sums differ by the sensitivity 1


def test_fixture_passes_a_correct_mechanism(assert_dp):
    result = assert_dp(laplace_sum(1.0), D0, D1, epsilon=1.0, samples=20_000, seed=1)
    assert 0.5 < result.epsilon_lower <= 1.0


def test_twin_half_the_noise_is_caught():
    # The same mechanism with half the noise its claim needs (true epsilon 2): must fail.
    with pytest.raises(AssertionError) as info:
        assert_dp_function(laplace_sum(0.5), D0, D1, epsilon=1.0, samples=20_000, seed=1)
    msg = str(info.value)
    assert "claimed epsilon=1 at delta=0" in msg and "95% confidence" in msg and "samples=20000" in msg
    lower = float(msg.split("epsilon >= ")[1].split()[0])
    assert 1.0 < lower <= 2.0


def test_bad_claims_are_value_errors():
    with pytest.raises(ValueError, match="epsilon"):
        assert_dp_function(laplace_sum(1.0), D0, D1, epsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        assert_dp_function(laplace_sum(1.0), D0, D1, epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        assert_dp_function(laplace_sum(1.0), D0, D1, epsilon=math.nan)


def test_samples_option_sets_the_default():
    assert configured(None) is assert_dp_function
    fn = configured(5000)
    assert fn.keywords == {"samples": 5000}
    with pytest.raises(pytest.UsageError):
        configured(0)


def test_assert_dp_fails_on_a_gated_floating_point_violation() -> None:
    """numpy's float Laplace keeps epsilon = 1 over the reals (it passes by default) but not in floating point:
    with float_check="gate" the assertion fails and says so."""

    def float_laplace(d, rng, n):
        return d + rng.laplace(0.0, 1.0, n)

    result = assert_dp_function(float_laplace, 0.0, 1.0, 1.0)
    assert result.floating_point is not None and result.floating_point.verdict == "violation"
    with pytest.raises(AssertionError, match="floating-point implementation"):
        assert_dp_function(float_laplace, 0.0, 1.0, 1.0, float_check="gate")
