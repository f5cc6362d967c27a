"""Sequential audits (dpaudit.audit.sequential): alpha spending, stopping, coverage.

Coverage: N sequential audits (fixed seeds) of Laplace(1) (true epsilon 1) against claim 1; the count
with epsilon_lower > 1 is asserted <= c, the smallest c with P[Binomial(N, 0.05) > c] <= 0.005 (false
failure <= 0.5% for an auditor exactly at its nominal 5%).  The twin (noise scale 1/2, true epsilon
2) must fail the same check.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.sequential import audit_sequential, spending


def laplace(scale):
    def target(data, rng, size):
        return float(data) + rng.laplace(0.0, scale, size)

    return target


def tolerance(audits, rate=0.05, false_failure=0.005):
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def test_spending_sums_to_alpha_and_grows():
    levels = spending(0.05, 4)
    assert math.isclose(sum(levels), 0.05) and all(a < b for a, b in itertools.pairwise(levels))


def test_stops_at_the_first_certain_violation():
    seq = audit_sequential(
        laplace(0.25), 1.0, 0.0, claim_epsilon=1.0, stages=(2_000, 20_000, 200_000), seed=0, executor="serial"
    )
    assert seq.verdict == "violation" and seq.stopped_at == 0 and seq.samples_used == 2_000


def test_stops_when_the_claim_is_far_from_reach():
    seq = audit_sequential(
        laplace(1.0), 1.0, 0.0, claim_epsilon=5.0, stages=(2_000, 20_000, 200_000), seed=0, executor="serial"
    )
    assert seq.verdict == "consistent" and seq.samples_used < 222_000


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="stages"):
        audit_sequential(laplace(1.0), 1.0, 0.0, claim_epsilon=1.0, stages=())
    with pytest.raises(ValueError, match="close"):
        audit_sequential(laplace(1.0), 1.0, 0.0, claim_epsilon=1.0, close=2.0)


def _exceedances(scale, audits, seed0):
    return sum(
        audit_sequential(
            laplace(scale),
            1.0,
            0.0,
            claim_epsilon=1.0,
            stages=(1_000, 4_000),
            close=0.0,
            seed=seed0 + 17 * s,
            executor="serial",
        ).epsilon_lower
        > 1.0
        for s in range(audits)
    )


def test_sequential_coverage():
    audits = 60
    assert _exceedances(1.0, audits, 0) <= tolerance(audits)


def test_sequential_coverage_twin_fails_when_the_noise_is_halved():
    audits = 20
    assert _exceedances(0.5, audits, 10_000) > tolerance(audits)


def test_a_refuted_claimed_curve_stops_and_decides():
    # N(0, 1) shifted by 1 is 1-GDP (epsilon 1.8 at delta 0.01); the claim 0.5-GDP (GaussianDpEvent(2)) with a
    # claimed epsilon of 5 at delta 0.01 is refuted by its curve test alone: the stage's verdict decides
    import dp_accounting

    def gaussian(data, rng, size):
        return float(data) + rng.normal(0.0, 1.0, size)

    seq = audit_sequential(
        gaussian,
        1.0,
        0.0,
        claim_epsilon=5.0,
        claim=dp_accounting.GaussianDpEvent(2.0),
        claim_delta=0.01,
        stages=(20_000, 200_000),
        seed=0,
        executor="serial",
        float_check="off",
    )
    stage = seq.stages[seq.stopped_at]
    assert stage.verdict == "violation" and stage.curve.violation and stage.epsilon_lower <= stage.claim_epsilon
    assert seq.verdict == "violation" and seq.stopped_at == 0
