"""The level of a user entry's `epsilon_upper`: an upper confidence bound on the epsilon of the event the audit chose.

`dpaudit.user_audits.epsilon_upper` bounds log((p_first - delta) / p_second) of the chosen event above with
one-sided Clopper-Pearson bounds (Clopper, Pearson, Biometrika 1934) at (1 - confidence) / 4 each, the level the
lower bound used per proportion: U(first) and L(second).  Pinned exactly (recomputed from the reported counts at
that level) and by coverage: many seeded audits of randomized response, whose two events {1} and {0} have exactly
the ratio e^eps between the inputs, counting how often the bound falls below eps.  The twin recomputes the same
audits' bounds at (1 - confidence) / 2 and must fail the same check.

False-failure rate: stated at the coverage test (binomial tail, computed in the test); the seeds are fixed, so
the outcome is deterministic: the rate says how often a fresh choice of seeds would fail.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit import audit
from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates
from dpaudit.user_audits import epsilon_upper

FALSE_FAILURE = 1e-3
EPSILON, SAMPLES, CONFIDENCE, AUDITS = 0.5, 400, 0.5, 300
ALPHA = 1 - CONFIDENCE
#: selection 120 runs per input (a reversed event is chosen about never at eps = 0.5), estimation 280
OPTIONS = {
    "selection_fraction": 0.3,
    "selection_extension": 0.0,
    "direction_share": 0.5,
    "events_per_direction": 1,
    "families": ("identity",),
    "executor": "serial",
    "progress": False,
}


def randomized_response(epsilon):
    """Keeps the bit with probability e^eps / (1 + e^eps): exactly eps-DP, {1} and {0} tight."""
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))

    def target(data, rng, size):
        return np.where(rng.random(size) < keep, data, 1 - data)

    return target


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def recomputed_upper(res, level: float) -> float:
    """log((U(first) - delta) / L(second)) of the chosen direction at `level`; +inf when L(second) = 0."""
    d = next(d for d in res.directions if d.direction == res.direction)
    low = float(cp_lower(d.count_second, d.nobs, level))
    if low <= 0.0:
        return math.inf
    return float(epsilon_from_rates(float(cp_upper(d.count_first, d.nobs, level)), low, res.claim_delta))


def miss_probability(level: float) -> float:
    """Exact P[epsilon_upper < EPSILON] for the audits below: the estimation split's n runs per input give
    K1 ones of d0 ~ Bin(n, p) and K2 ones of d1 ~ Bin(n, 1 - p), independent (p = e^eps / (1 + e^eps));
    d0>d1 counts {1} (first K1, second K2), d1>d0 counts {0} (first n - K2, second n - K1), each lower
    bound at ALPHA / 4 (direction_share 0.5); the larger lower bound is chosen (d0>d1 on a tie) and its
    upper bound is taken at `level`.  Premises checked on the audits' counts."""
    n = SAMPLES - round(OPTIONS["selection_fraction"] * SAMPLES)
    p = np.exp(EPSILON) / (1 + np.exp(EPSILON))
    k = np.arange(n + 1)
    low, upp = cp_lower(k, n, ALPHA / 4), cp_upper(k, n, ALPHA / 4)
    forward = epsilon_from_rates(low[:, None], upp[None, :], 0.0)  # [K1, K2]
    backward = epsilon_from_rates(low[::-1][None, :], upp[::-1][:, None], 0.0)  # L(n - K2) / U(n - K1)
    up_hi, up_lo = cp_upper(k, n, level), cp_lower(k, n, level)
    with np.errstate(divide="ignore"):
        log_lo = np.where(up_lo > 0, np.log(np.where(up_lo > 0, up_lo, 1.0)), -np.inf)
    upper_forward = np.log(up_hi)[:, None] - log_lo[None, :]
    upper_backward = np.log(up_hi[::-1])[None, :] - log_lo[::-1][:, None]
    upper = np.maximum(np.where(forward >= backward, upper_forward, upper_backward), 0.0)
    joint = stats.binom.pmf(k, n, p)[:, None] * stats.binom.pmf(k, n, 1 - p)[None, :]
    return float(joint[upper < EPSILON].sum())


def tolerance(rate: float) -> int:
    """Smallest c with P[Binomial(AUDITS, rate) > c] <= FALSE_FAILURE."""
    return int(np.argmax(stats.binom.sf(np.arange(AUDITS + 1), AUDITS, rate) <= FALSE_FAILURE))


@pytest.fixture(scope="module")
def audits():
    return [
        audit(
            randomized_response(EPSILON),
            1,
            0,
            claim_epsilon=EPSILON,
            samples=SAMPLES,
            confidence=CONFIDENCE,
            seed=seed,
            **OPTIONS,
        )
        for seed in range(AUDITS)
    ]


@pytest.mark.parametrize(
    "target, d0, d1, delta, confidence",
    [
        (randomized_response(1.0), 1, 0, 0.0, 0.95),
        (laplace, 1.0, 0.0, 0.0, 0.8),
        (laplace, 0.0, 1.0, 1e-3, 0.95),
    ],
)
def test_epsilon_upper_is_the_clopper_pearson_bound_at_a_quarter_of_alpha(target, d0, d1, delta, confidence):
    # Exact, no statistics: whatever the target and its chosen event and direction.
    for seed in range(3):
        res = audit(
            target,
            d0,
            d1,
            claim_epsilon=1.0,
            claim_delta=delta,
            samples=4_000,
            confidence=confidence,
            seed=seed,
            executor="serial",
            progress=False,
        )
        level = (1 - confidence) / 4
        got = epsilon_upper(res)
        assert got == recomputed_upper(res, level)
        assert math.isfinite(got) and got >= res.epsilon_lower
        assert got != recomputed_upper(res, 2 * level)  # the pin has teeth: another level moves it


def test_epsilon_upper_is_infinite_when_the_second_input_never_shows_the_event():
    res = audit(
        lambda data, rng, size: np.full(size, data) + 0 * rng.random(size),
        1,
        0,
        claim_epsilon=1.0,
        samples=400,
        executor="serial",
        progress=False,
    )
    chosen = next(d for d in res.directions if d.direction == res.direction)
    assert chosen.count_second == 0 and epsilon_upper(res) == math.inf


def test_coverage_audits_follow_the_exact_model(audits):
    for res in audits:
        assert epsilon_upper(res) == recomputed_upper(res, ALPHA / 4)
        forward, backward = res.directions
        assert all(d.events_tested == 1 and d.level == ALPHA / 4 for d in res.directions)
        # d0>d1 counts {1}, d1>d0 counts {0}: together each run of each input once
        assert forward.count_first + backward.count_second == forward.nobs
        assert forward.count_second + backward.count_first == forward.nobs


def test_epsilon_upper_covers_the_chosen_events_epsilon(audits):
    # The exact miss probability at alpha / 4 is 0.0292 (at alpha / 2 it would be 0.111).  c = 19: if the
    # bound were exactly at its level, P[more than 19 of 300 miss] = 6.3e-4 is the false-failure rate (measured:
    # 5 of 300); at alpha / 2 the check fails with probability 0.997 (twin below; measured: 28 of 300).
    rate = miss_probability(ALPHA / 4)
    assert rate == pytest.approx(0.0292, abs=5e-4)
    assert miss_probability(ALPHA / 2) == pytest.approx(0.111, abs=1e-3)
    c = tolerance(rate)
    assert c == 19 and stats.binom.sf(c, AUDITS, rate) <= FALSE_FAILURE
    missed = sum(epsilon_upper(res) < EPSILON for res in audits)
    assert missed <= c, missed
    assert missed >= 1  # near-tight: the check is not vacuous


def test_coverage_twin_fails_at_half_alpha(audits):
    # The same audits' counts, upper bounds recomputed at alpha / 2 per proportion: the check must fail.
    c = tolerance(miss_probability(ALPHA / 4))
    missed = sum(recomputed_upper(res, ALPHA / 2) < EPSILON for res in audits)
    assert missed > c, missed
