"""Exact rules of a direction's bound and of the sample-size advice.

`dpaudit.audit.verdict.direction_result`: the lead epsilon event is tested at level_eps * LEAD_SHARE and
each of k alternates at level_eps * (1 - LEAD_SHARE) / k (Bonferroni: level_eps in all), on the counts of
that event in the first and the second input (Clopper-Pearson, one-sided).  `_samples_needed` never
advises fewer than MIN_SAMPLES runs.  Deterministic: no false failures.
"""

import numpy as np
import pytest

from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates, mu_from_rates, probit_cp_lower, probit_cp_upper
from dpaudit.audit.options import MIN_SAMPLES, _samples_needed
from dpaudit.audit.scores import UserScore
from dpaudit.audit.selection import EventPlan
from dpaudit.audit.verdict import LEAD_SHARE, direction_result, event_name

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
