"""Exact rules of a direction's bound and of the sample-size advice.

`dpaudit.audit.verdict.direction_result`: the lead epsilon event is tested at level_eps * LEAD_SHARE and
each of k alternates at level_eps * (1 - LEAD_SHARE) / k (Bonferroni: level_eps in all), on the counts of
that event in the first and the second input (Clopper-Pearson, one-sided).  `_samples_needed` never
advises fewer than MIN_SAMPLES runs.  Deterministic: no false failures.
"""

import dataclasses

import numpy as np
import pytest

import dpaudit
from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates, mu_from_rates, probit_cp_lower, probit_cp_upper
from dpaudit.audit.options import MIN_SAMPLES, AuditOptions, Plan, _samples_needed, plan_audit
from dpaudit.audit.outputs import OutputSpec
from dpaudit.audit.scores import UserScore
from dpaudit.audit.selection import EventPlan, direction_levels
from dpaudit.audit.verdict import LEAD_SHARE, Counts, assemble, direction_result, event_name

N, LEVEL = 1_000, 0.01


def _plan(threshold: float) -> EventPlan:
    return EventPlan("d0>d1", UserScore(lambda x: x), 1, threshold, 0.0, (0.0,), (0.5,), (0.5,), 1.0)


def _bound(c1: int, c2: int, level: float) -> float:
    return float(epsilon_from_rates(float(cp_lower(c1, N, level)), float(cp_upper(c2, N, level)), 0.0))


@pytest.mark.parametrize("winner", [0, 1, None], ids=["lead", "alternate", "tie"])
def test_each_event_is_tested_at_its_share_of_the_level_on_its_own_counts(winner):
    # the epsilon event's counts (first entries) differ from the mu event's (second entries); the last
    # alternate has the most runs of the first input but a weak ratio; on a tie (every bound 0) the lead wins
    lead = {0: (600, 200), 1: (400, 300), None: (300, 300)}[winner]
    alt = ((500, 250), (700, 650)) if winner is not None else ((300, 300), (300, 300))
    plans = [_plan(0.0), _plan(1.0), _plan(2.0)]
    first, second = np.array([lead[0], 600]), np.array([lead[1], 400])
    alternates = ((plans[1], *alt[0]), (plans[2], *alt[1]))
    r = direction_result(plans[0], first, second, N, 0.0, LEVEL, LEVEL, alternates)
    levels = [LEVEL * LEAD_SHARE] + [LEVEL * (1 - LEAD_SHARE) / 2] * 2
    counts = [lead, *alt]
    bounds = [_bound(*c, lv) for c, lv in zip(counts, levels)]
    best = int(np.argmax(bounds))
    assert best == (winner or 0)
    assert r.level == pytest.approx(levels[best])
    assert r.epsilon_lower == pytest.approx(bounds[best], rel=1e-12)
    assert (r.count_first, r.count_second) == counts[best]
    assert r.event == event_name(plans[best]) and r.lead_event == event_name(plans[0])
    assert r.epsilon_point == pytest.approx(float(epsilon_from_rates(counts[best][0] / N, counts[best][1] / N, 0.0)))
    assert (r.mu_count_first, r.mu_count_second) == (600, 400)
    assert r.mu_point == pytest.approx(float(mu_from_rates(0.6, 0.4)))
    mu_low = float(probit_cp_lower(600, N, LEVEL) - probit_cp_upper(400, N, LEVEL))
    assert 0 < mu_low < 1 and r.mu_lower == pytest.approx(mu_low)
    assert r.events_tested == 3 and r.tradeoff_split == "selection"


def test_grid_counts_on_the_estimation_split_give_its_trade_off_points():
    first, second = np.array([600, 600, 700]), np.array([200, 400, 300])  # one grid point counted
    r = direction_result(_plan(0.0), first, second, N, 0.0, LEVEL, LEVEL)
    assert r.tradeoff_split == "estimation"
    assert r.tradeoff_alpha == (0.3,) and r.tradeoff_beta == pytest.approx((0.3,))


@pytest.mark.parametrize("level", [0.125, 0.25, 0.4])
def test_the_advice_is_never_below_the_minimum_sample_size(level):
    # a claim this small is beaten by a perfect distinguisher on a few runs: the advice is the minimum
    assert _samples_needed(0.01, 0.0, level, 0.1) == MIN_SAMPLES


def _with(threshold: float, direction: str, predicted: float, alternates=()) -> EventPlan:
    return EventPlan(
        direction, UserScore(lambda x: x), 1, threshold, 0.0, (0.0,), (0.5,), (0.5,), predicted, alternates
    )


def _assemble(plans, counts, partner=None):
    options = AuditOptions.create(claim_epsilon=0.5, samples=N + 100)
    plan = Plan(0.05, 0.05, 0.05 / 4, 0.05 / 4, 100, N, None, "")
    return assemble(
        lambda d, rng, size: np.zeros(size), options, plan, OutputSpec((), False), Counts(plans, counts, partner, N)
    )


def test_each_direction_reads_its_own_counts_and_its_alternates_in_its_input_order():
    # counts[i] holds (input 0, input 1) rows; alternates follow the directions, d0>d1's first.  For d1>d0 the
    # first input of every event is input 1, for its alternates too: reading them in d0>d1's order would swap
    # a strong event (many runs of input 1, few of input 0) into a weak one.
    alt_a = _with(5.0, "d0>d1", 0.0)
    alt_b1, alt_b2 = _with(6.0, "d1>d0", 0.0), _with(7.0, "d1>d0", 0.0)
    plans = {"d0>d1": _with(1.0, "d0>d1", 0.1, (alt_a,)), "d1>d0": _with(2.0, "d1>d0", 2.0, (alt_b1, alt_b2))}
    counts = [
        np.array([[400, 600], [300, 300]]),  # d0>d1's lead: (epsilon event, mu event) of input 0, of input 1
        np.array([[350, 450], [500, 650]]),  # d1>d0's lead
        np.array([[450], [200]]),  # d0>d1's alternate
        np.array([[100], [300]]),  # d1>d0's first alternate
        np.array([[60], [700]]),  # d1>d0's second alternate: the strongest event of all
    ]
    r = _assemble(plans, counts)
    levels = direction_levels(plans, 0.05, 0.9)
    assert levels["d1>d0"] == pytest.approx(0.9 * 0.05 / 2)
    want = {
        "d0>d1": direction_result(
            plans["d0>d1"],
            np.array([400, 600]),
            np.array([300, 300]),
            N,
            0.0,
            levels["d0>d1"],
            0.05 / 4,
            ((alt_a, 450, 200),),
        ),
        "d1>d0": direction_result(
            plans["d1>d0"],
            np.array([500, 650]),
            np.array([350, 450]),
            N,
            0.0,
            levels["d1>d0"],
            0.05 / 4,
            ((alt_b1, 300, 100), (alt_b2, 700, 60)),
        ),
    }
    got = {d.direction: d for d in r.directions}
    assert got == want
    assert (got["d1>d0"].event, got["d1>d0"].count_first, got["d1>d0"].count_second) == (event_name(alt_b2), 700, 60)
    assert (got["d0>d1"].event, got["d0>d1"].count_first, got["d0>d1"].count_second) == (event_name(alt_a), 450, 200)
    assert r.direction == "d1>d0" and r.epsilon_lower == want["d1>d0"].epsilon_lower > 0
    assert r.mu_lower == max(w.mu_lower for w in want.values())


@pytest.mark.parametrize("low, high", [(1, N - 1), (2, N - 2), (0, N)])
def test_cross_fitted_counts_of_one_and_of_all_but_one_are_taken_as_the_extremes(low, high):
    # A cross-fitted count is a sum of two binomials: Hoeffding's comparison covers it except at 1 (a lower
    # bound) and nobs - 1 (an upper bound), which are taken as 0 and nobs; every other count is kept.
    plans = {"d0>d1": _with(1.0, "d0>d1", 1.0), "d1>d0": _with(2.0, "d1>d0", 1.0)}
    counts = [np.array([[low, low], [high, high]]), np.array([[high, high], [low, low]])]
    r = _assemble(plans, counts, partner=plans)
    first, second = (0, N) if (low, high) == (1, N - 1) else (low, high)
    for d in r.directions:
        assert (d.count_first, d.count_second, d.mu_count_first, d.mu_count_second) == (first, second, first, second)
        assert d.level == pytest.approx(0.05 / 4)
        assert d.epsilon_lower == _bound(first, second, 0.05 / 4)


def test_the_result_records_the_options_and_names_both_folds():
    # the record a report and a baseline read: the options as given, the version, the target's name, and for a
    # cross-fitted audit each direction's two events (fold B's sign included) with no single lead event
    options = AuditOptions.create(
        claim_epsilon=0.5, samples=N + 100, seed=7, chunk_size=300, selection_fraction=0.2, target_name="mine"
    )
    plan = Plan(0.05, 0.05, 0.05 / 4, 0.05 / 4, 100, N, None, "")
    plans = {"d0>d1": _with(1.0, "d0>d1", 1.0), "d1>d0": _with(2.0, "d1>d0", 1.0)}
    partner = {
        "d0>d1": dataclasses.replace(plans["d0>d1"], sign=-1, threshold=3.0),
        "d1>d0": dataclasses.replace(plans["d1>d0"], threshold=4.0),
    }
    counts = [np.array([[500, 500], [400, 400]]), np.array([[400, 400], [500, 500]])]
    r = assemble(
        lambda d, rng, size: np.zeros(size), options, plan, OutputSpec((), False), Counts(plans, counts, partner, N)
    )
    assert (r.samples, r.seed, r.chunk_size, r.selection_fraction) == (N + 100, 7, 300, 0.2)
    assert r.version == dpaudit.__version__ and r.target == "mine" and r.verdict == "consistent"
    events = {d.direction: d for d in r.directions}
    assert events["d0>d1"].event == "cross-fitted: user > 1.0 (fold A) + -user > 3.0 (fold B)"
    assert events["d1>d0"].event == "cross-fitted: user > 2.0 (fold A) + user > 4.0 (fold B)"
    assert all(d.lead_event == "" and d.event_state == "" for d in r.directions)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_plan_splits_the_error_as_documented(confidence):
    # alpha = 1 - confidence: without a claimed curve all of it goes to the bounds, alpha / 4 per epsilon
    # proportion (two directions x two proportions) and alpha / 4 per mu proportion; with a curve, half of alpha
    import dp_accounting

    def target(data, rng, size):
        return data + rng.laplace(0.0, 1.0, size)

    alpha = 1 - confidence
    plain = plan_audit(target, AuditOptions.create(claim_epsilon=1.0, samples=100_000, confidence=confidence))
    assert (plain.alpha, plain.alpha_point, plain.level_eps, plain.level_mu) == pytest.approx(
        (alpha, alpha, alpha / 4, alpha / 4), rel=1e-12
    )
    assert (plain.n_sel, plain.n_est, plain.delta_of, plain.claim_name) == (10_000, 90_000, None, "")
    curve = plan_audit(
        target,
        AuditOptions.create(
            claim_epsilon=1.0, samples=100_000, confidence=confidence, claim=dp_accounting.LaplaceDpEvent(1.0)
        ),
    )
    assert (curve.alpha_point, curve.level_eps, curve.level_mu) == pytest.approx((alpha / 2, alpha / 8, alpha / 4))
    assert curve.delta_of is not None and "LaplaceDpEvent" in curve.claim_name


def test_the_claimed_curve_is_tested_under_its_own_name():
    plan = Plan(0.05, 0.025, 0.025 / 4, 0.05 / 4, 100, N, lambda eps: 1.0, "the claimed curve")
    plans = {"d0>d1": _with(1.0, "d0>d1", 1.0), "d1>d0": _with(2.0, "d1>d0", 1.0)}
    counts = [np.array([[500, 500, 450], [400, 400, 350]]), np.array([[400, 400, 350], [500, 500, 450]])]
    r = assemble(
        lambda d, rng, size: np.zeros(size),
        AuditOptions.create(claim_epsilon=0.5, samples=N + 100),
        plan,
        OutputSpec((), False),
        Counts(plans, counts, None, N),
    )
    assert r.curve is not None and r.curve.claim == "the claimed curve" and not r.curve.violation
    assert r.curve.alpha == pytest.approx(0.025) and r.curve.events_tested == 2
