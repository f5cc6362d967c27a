"""Several epsilon events per direction (`events_per_direction`, default 3): the runner-up families'
events are tested beside the lead's, the lead at 3/4 of the direction's level, the others sharing the rest.

Exact properties: which runner-ups `choose_events` keeps, `distinct` dropping repeated events, the
union-bound level of `direction_result`, validation.  Coverage: N seeded audits with every family,
the count of epsilon_lower > true epsilon asserted <= c, the smallest c with
P[Binomial(N, 0.05) > c] <= 0.005 (an auditor exactly at its nominal 5% fails with probability
<= 0.5%); the twin (noise perturbed, a larger true loss) must fail the same check.  1000 audits per
case: benchmarks/power_coverage.py.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_audit_coverage import tolerance

from dpaudit.audit import audit
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.candidates import distinct
from dpaudit.audit.result import AuditResult
from dpaudit.audit.scores import UserScore
from dpaudit.audit.selection import EventPlan, choose_events
from dpaudit.audit.verdict import direction_result

AUDITS = 200


def _plan(threshold, predicted=0.1, name="s"):
    """{x > threshold} for the identity score named `name`, direction d0>d1."""
    return EventPlan(
        "d0>d1", UserScore(lambda x: x, name), 1, threshold, threshold, (threshold,), (0.5,), (0.5,), predicted
    )


# --- exact properties -------------------------------------------------------------------------


def _family(values0, values1, name):
    return UserScore(lambda x: x, name), np.asarray(values0, dtype=float), np.asarray(values1, dtype=float)


def test_choose_events_keeps_the_runner_up_families_best_first():
    rng = np.random.default_rng(0)
    n = 20_000
    strong = _family(rng.laplace(1.0, 1.0, n), rng.laplace(0.0, 1.0, n), "strong")
    middle = _family(rng.laplace(0.8, 1.0, n), rng.laplace(0.0, 1.0, n), "middle")
    weak = _family(rng.laplace(0.1, 1.0, n), rng.laplace(0.0, 1.0, n), "weak")
    plans = choose_events([weak, middle, strong], 180_000, 0.0, 0.0125, 8, alternates=2)
    lead = plans["d0>d1"]
    assert lead.score.name == "strong"
    # "weak" predicts far below half the lead's: not kept
    assert [a.score.name for a in lead.alternates] == ["middle"]
    assert all(a.direction == "d0>d1" for a in lead.alternates)
    assert choose_events([weak, middle, strong], 180_000, 0.0, 0.0125, 8)["d0>d1"].alternates == ()
    assert len(choose_events([weak, middle, strong], 180_000, 0.0, 0.0125, 8, alternates=1)["d0>d1"].alternates) == 1


def test_distinct_drops_events_that_repeat_an_earlier_one():
    x = np.arange(1000, dtype=float)
    lead = _plan(500.0)
    same = _plan(501.0, name="same")  # {x > 501}: Jaccard 498/499 with {x > 500}
    other = _plan(900.0, name="other")  # {x > 900}: 99/499
    plan = dataclasses.replace(lead, alternates=(same, other, _plan(901.0, name="again")))
    kept = distinct(plan, x[:500], x[500:], 2)
    assert [a.threshold for a in kept.alternates] == [900.0]  # 901 repeats 900
    assert distinct(plan, x[:500], x[500:], 0).alternates == ()
    assert distinct(dataclasses.replace(lead, alternates=(other, _plan(100.0))), x[:500], x[500:], 1).alternates == (
        other,
    )


def test_direction_result_tests_every_event_at_the_divided_level():
    n, level = 100_000, 0.0125
    lead, alt = _plan(0.5), _plan(2.0, name="alt")
    first, second = np.array([30_000, 30_000]), np.array([20_000, 20_000])
    one = direction_result(lead, first, second, n, 0.0, level, level)
    assert one.events_tested == 1 and one.level == level
    three = direction_result(lead, first, second, n, 0.0, level, level, ((alt, 3_000, 1_000), (alt, 1, 1)))
    # the lead at 3 level / 4, the two alternates at level / 8 each: level in all (union bound)
    assert three.events_tested == 3 and math.isclose(three.level, level / 8)
    expected = math.log(cp_lower(3_000, n, level / 8) / cp_upper(1_000, n, level / 8))
    assert math.isclose(three.epsilon_lower, expected)
    two = direction_result(lead, first, second, n, 0.0, level, level, ((alt, 3_000, 1_000),))
    assert two.events_tested == 2 and math.isclose(two.level, level / 4)
    assert two.event.endswith("> 2.0") and two.lead_event.endswith("> 0.5")
    assert (two.count_first, two.count_second, two.threshold) == (3_000, 1_000, 2.0)
    # the lead's mu event is kept whichever epsilon event wins
    assert (two.mu_count_first, two.mu_count_second) == (one.mu_count_first, one.mu_count_second)
    # a weaker alternate only costs level: the lead's event is reported, at 3 level / 4
    weak = direction_result(lead, first, second, n, 0.0, level, level, ((alt, 1_000, 1_000),))
    assert weak.event == one.event and weak.epsilon_lower < one.epsilon_lower
    lead_only = math.log(cp_lower(30_000, n, 0.75 * level) / cp_upper(20_000, n, 0.75 * level))
    assert math.isclose(weak.epsilon_lower, lead_only) and math.isclose(weak.level, 0.75 * level)


def test_single_event_per_direction_tests_the_lead_only():
    r = audit(
        lambda d, rng, n: d + rng.laplace(0.0, 1.0, (n, 3)),
        1.0,
        0.0,
        claim_epsilon=3.0,
        samples=4_000,
        events_per_direction=1,
        executor="serial",
    )
    assert all(d.events_tested == 1 and d.event == d.lead_event for d in r.directions)


def test_result_round_trips_the_new_fields():
    r = audit(_flag_value(0.5, 2.0), 1.0, 0.0, claim_epsilon=1.0, samples=4_000, executor="serial")
    back = AuditResult.from_json(r.to_json())
    assert [d.events_tested for d in back.directions] == [d.events_tested for d in r.directions]
    assert [d.lead_event for d in back.directions] == [d.lead_event for d in r.directions]


@given(st.one_of(st.integers(max_value=0), st.floats(max_value=0.0).filter(float.is_integer)))
def test_events_per_direction_below_one_is_a_value_error(value):  # integral floats count, like samples=1e5
    with pytest.raises(ValueError, match="events_per_direction"):
        audit(
            lambda d, rng, n: d + rng.laplace(0.0, 1.0, n),
            1.0,
            0.0,
            claim_epsilon=1.0,
            samples=2_000,
            events_per_direction=value,
        )


@given(
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.floats(allow_nan=True).filter(lambda v: not (math.isfinite(v) and v.is_integer())),
    )
)
def test_events_per_direction_of_another_type_is_a_type_error(value):
    with pytest.raises(TypeError, match="events_per_direction"):
        audit(
            lambda d, rng, n: d + rng.laplace(0.0, 1.0, n),
            1.0,
            0.0,
            claim_epsilon=1.0,
            samples=2_000,
            events_per_direction=value,
        )


# --- coverage (statistical) -------------------------------------------------------------------


def _flag_value(rr_eps, scale):
    """(flag, value): flag = randomized response of the bit x at rr_eps; value = x + Lap(scale) if the
    flag is up, else the sentinel -1000: true epsilon rr_eps + 1 / scale between x = 1 and 0."""

    def target(data, rng, size):
        flag = (rng.random(size) < np.exp(rr_eps) / (1 + np.exp(rr_eps))) == bool(data)
        value = float(data) + rng.laplace(0.0, scale, size)
        return np.stack([flag.astype(float), np.where(flag, value, -1000.0)], axis=1)

    return target


def _audits(target, claim):
    results = [
        audit(target, 1.0, 0.0, claim_epsilon=claim, samples=2_000, seed=s, executor="serial") for s in range(AUDITS)
    ]
    return np.array([r.epsilon_lower for r in results]), [d.events_tested for r in results for d in r.directions]


def test_coverage_with_every_family_and_three_events():
    lows, tested = _audits(_flag_value(0.5, 2.0), 1.0)  # true epsilon 1
    assert np.count_nonzero(lows > 1.0) <= tolerance(AUDITS)
    assert np.mean(tested) > 1.5  # the alternates are in fact tested (1000 audits: see the benchmark)
    assert lows.mean() > 0.3


def test_coverage_twin_fails_when_the_noise_is_perturbed():
    # value noise halved and the flag at eps 1: true epsilon 2, checked against 1
    lows, _ = _audits(_flag_value(1.0, 1.0), 1.0)
    assert np.count_nonzero(lows > 1.0) > tolerance(AUDITS)
