"""Time-boxed audits (`time_budget=`): the stages' error levels, their seed streams, and the coverage of the
reported bound whenever the audit stops.

The coverage tests drive `timeboxed_audit` with stopping rules of their own (every stage up to K, or a
seeded random stop), since the union bound over stages must hold for any rule, the budget's included.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpaudit
from dpaudit.audit import anytime
from dpaudit.audit import options as _options
from dpaudit.audit.auditor import run_audit
from dpaudit.audit.result import AuditResult

EPS = 1.0


def laplace(x, rng, n):
    return x + rng.laplace(0.0, 1.0, n)


def randomized_response(x, rng, n):
    """Binary randomized response at EPS: the auditor's event {output = x} is nearly exact here."""
    flip = rng.random(n) < 1.0 / (1.0 + math.exp(EPS))
    return (np.int64(x) ^ flip).astype(np.int64)


@given(st.floats(1e-6, 0.5), st.integers(1, 200))
def test_stage_levels_sum_to_alpha_in_the_limit_and_never_past_it(alpha, k):
    levels = [anytime.stage_level(alpha, j) for j in range(k)]
    assert math.isclose(sum(levels), alpha * k / (k + 1), rel_tol=1e-12)  # telescoping: 1/(j+1) - 1/(j+2)
    assert all(a > b > 0 for a, b in itertools.pairwise(levels))


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1.0, ValueError), (math.nan, ValueError), ("60", TypeError)])
def test_a_bad_time_budget_is_named(bad, error):
    with pytest.raises(error, match="time_budget"):
        dpaudit.audit(laplace, 0.0, 1.0, claim_epsilon=1.0, samples=1000, time_budget=bad)


def _stages(k_max: int, **options) -> AuditResult:
    o = _options.AuditOptions.create(EPS, **{"samples": 2_000, "float_check": "off", "time_budget": 1.0, **options})
    return anytime.timeboxed_audit(
        lambda stage, key: run_audit(laplace, 0.0, 1.0, stage, key), o, keep_going=lambda s, _: len(s) < k_max
    )


def test_stages_double_their_runs_and_report_the_best_with_the_total():
    r = _stages(4, seed=5)
    box = r.time_box
    assert box.stage_samples == (2_000, 4_000, 8_000, 16_000)
    assert box.stage_levels == tuple(anytime.stage_level(1 - 0.95, k) for k in range(4))
    assert box.best_stage == int(np.argmax(box.stage_epsilon_lower))
    assert r.epsilon_lower == max(box.stage_epsilon_lower) and r.samples == box.stage_samples[box.best_stage]
    assert box.samples_drawn == 30_000 and box.stopped == "budget" and r.confidence == 0.95
    again = _stages(4, seed=5)
    assert dataclasses.replace(again.time_box, seconds=0.0) == dataclasses.replace(box, seconds=0.0)
    assert AuditResult.from_json(r.to_json()) == r


def test_each_stage_draws_from_its_own_stream():
    """Stage k at samples n is not the ordinary audit at n (spawn keys (2**31 + 2, k, i), not (i,))."""
    r = _stages(2, seed=9)
    plain = [
        dpaudit.audit(laplace, 0.0, 1.0, claim_epsilon=EPS, samples=n, seed=9, float_check="off", confidence=1 - a)
        for n, a in zip(r.time_box.stage_samples, r.time_box.stage_levels)
    ]
    assert all(p.epsilon_lower != e for p, e in zip(plain, r.time_box.stage_epsilon_lower))
    assert len(set(r.time_box.stage_epsilon_lower)) == 2


def test_a_settled_violation_stops_at_once():
    def broken(x, rng, n):
        return x + rng.laplace(0.0, 0.5, n)

    r = dpaudit.audit(broken, 0.0, 1.0, claim_epsilon=EPS, samples=20_000, time_budget=600.0, float_check="off")
    assert r.verdict == "violation" and r.time_box.stopped == "violation" and r.time_box.stage_samples == (20_000,)


def test_the_budget_stops_it_and_the_floating_point_verdict_comes_along():
    r = dpaudit.audit(laplace, 0.0, 1.0, claim_epsilon=EPS, samples=2_000, time_budget=0.5, seed=1)
    assert r.time_box.stopped == "budget" and len(r.time_box.stage_samples) >= 1
    assert r.floating_point is not None and r.floating_point.confidence == r.confidence == 0.95


def test_too_few_runs_for_the_first_stage_say_so():
    with pytest.raises(_options.TooFewSamplesError, match="first stage"):
        dpaudit.audit(laplace, 0.0, 1.0, claim_epsilon=0.01, samples=10, time_budget=1.0, float_check="off")


class _Calibrated:
    """A stage whose bound exceeds the truth (EPS) with probability exactly its error level a_k, independently
    across stages: the union bound over stages is then nearly tight, so the test can tell a spending that
    sums to alpha from one that does not."""

    def __init__(self, seed: int, template: AuditResult):
        self.rng = np.random.default_rng(seed)
        self.template = template

    def __call__(self, stage: _options.AuditOptions, key: tuple[int, ...]) -> AuditResult:
        wrong = self.rng.random() < 1.0 - stage.confidence
        eps = 1.5 * EPS if wrong else 0.5 * EPS
        return dataclasses.replace(
            self.template, epsilon_lower=eps, samples=stage.samples, confidence=stage.confidence, verdict="consistent"
        )


def _coverage_failures(repeats: int, alpha: float, rule: str, level=anytime.stage_level) -> int:
    template = dpaudit.audit(laplace, 0.0, 1.0, claim_epsilon=EPS, samples=1_000, float_check="off")
    failures = 0
    stops = np.random.default_rng(2024)
    original = anytime.stage_level
    anytime.stage_level = level
    try:
        for r in range(repeats):
            o = _options.AuditOptions.create(
                2 * EPS, samples=1_000, confidence=1 - alpha, float_check="off", time_budget=1.0
            )
            k_stop = 12 if rule == "all" else int(stops.integers(1, 13))
            result = anytime.timeboxed_audit(_Calibrated(r, template), o, keep_going=lambda s, _, k=k_stop: len(s) < k)
            failures += result.epsilon_lower > EPS
    finally:
        anytime.stage_level = original
    return failures


# alpha = 0.2, 2000 repeats: a valid spending fails at most alpha of the time (about 0.18 here, for 12
# stages); the check allows 490 failures, which Binomial(2000, 0.2) exceeds with probability < 1e-6.
REPEATS, ALPHA, ALLOWED = 2_000, 0.2, 490


@pytest.mark.parametrize("rule", ["all", "random"])
def test_the_bound_covers_whenever_the_audit_stops(rule):
    assert stats.binom.sf(ALLOWED, REPEATS, ALPHA) < 1e-6
    assert _coverage_failures(REPEATS, ALPHA, rule) <= ALLOWED


def test_twin_without_spending_every_stage_at_alpha_is_caught():
    """Each stage at the full alpha: over 12 stages about 1 - 0.8**12 = 93% of repeats fail."""
    assert _coverage_failures(REPEATS, ALPHA, "all", level=lambda alpha, k: alpha) > ALLOWED


def test_end_to_end_coverage_on_randomized_response():
    """The real auditor, 12 stages each (the worst stopping rule: every stage counted), binary randomized
    response at its true epsilon, alpha = 0.2: valid spending allows 0.2 of 150 repeats; the check allows
    52, which Binomial(150, 0.2) exceeds with probability < 1e-5 (observed: none)."""
    assert stats.binom.sf(52, 150, 0.2) < 1e-5
    failures = 0
    for s in range(150):
        o = _options.AuditOptions.create(EPS, samples=1_000, confidence=0.8, seed=s, float_check="off", time_budget=1.0)
        r = anytime.timeboxed_audit(
            lambda stage, key: run_audit(randomized_response, 0, 1, stage, key), o, keep_going=lambda st, _: len(st) < 6
        )
        failures += r.epsilon_lower > EPS
    assert failures <= 52


def test_a_curve_refuted_below_the_largest_bound_is_the_verdict():
    # a claimed curve can be refuted at a stage whose epsilon_lower is below an earlier stage's: the result is
    # the refuting stage (its verdict valid at its level), not the stage with the largest bound
    o = _options.AuditOptions.create(EPS, samples=2_000, float_check="off", time_budget=60.0)
    real = run_audit(laplace, 0.0, 1.0, dataclasses.replace(o, time_budget=None), (anytime.STAGE_STREAM, 0))
    made = [
        dataclasses.replace(real, epsilon_lower=0.9, verdict="consistent", samples=2_000),
        dataclasses.replace(real, epsilon_lower=0.5, verdict="violation", samples=4_000),
    ]
    r = anytime.timeboxed_audit(lambda stage, key: made[key[1]], o, keep_going=lambda s, _: True)
    assert r.verdict == "violation" and r.time_box.stopped == "violation"
    assert r.time_box.best_stage == 1 and r.epsilon_lower == 0.5 and r.time_box.stage_epsilon_lower == (0.9, 0.5)
