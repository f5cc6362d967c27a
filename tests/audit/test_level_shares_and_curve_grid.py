"""How the epsilon bound's error level is shared between the directions, and the grid the claimed curve is tested on.

`direction_levels` (Bonferroni over two directions x two proportions): the direction with the larger predicted
bound gets `share` * alpha / 2 per proportion only when its prediction is positive and the other's is strictly
below `_LEAD_RATIO` (1/2) times it; otherwise alpha / 4 each; the levels always add up to alpha / 2 per proportion.
`curve_check` scans eps on (0, max(largest event reach, claimed eps)], reach = log(L(first) / U(second)) of an
event with L(first) > 0 (0 otherwise), each bound at alpha / (2 * events), and reports the grid point of the
largest excess of the lower-bounded delta over the claimed one.  Exact, no statistics.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.selection import direction_levels
from dpaudit.audit.verdict import curve_check

ALPHA, SHARE = 0.05, 0.9


def plans(first: float, second: float) -> dict:
    return {"d0>d1": SimpleNamespace(predicted=first), "d1>d0": SimpleNamespace(predicted=second)}


@pytest.mark.parametrize(
    "first, second, lead",
    [
        (2.0, 0.99, "d0>d1"),
        (0.5, 3.0, "d1>d0"),
        (1.0, -np.inf, "d0>d1"),
    ],
)
def test_the_clearly_stronger_direction_gets_the_larger_share(first, second, lead):
    levels = direction_levels(plans(first, second), ALPHA, SHARE)
    other = "d1>d0" if lead == "d0>d1" else "d0>d1"
    assert levels[lead] == pytest.approx(SHARE * ALPHA / 2, rel=1e-15)
    assert levels[other] == pytest.approx((1 - SHARE) * ALPHA / 2, rel=1e-15)


@pytest.mark.parametrize(
    "first, second",
    [
        (2.0, 1.0),  # the other at exactly half the lead's prediction: not clearly weaker
        (0.0, -np.inf),  # the lead's prediction is not positive
        (0.0, 0.0),
        (-np.inf, -np.inf),
        (1.5, 1.5),
    ],
)
def test_otherwise_each_direction_gets_a_quarter_of_alpha(first, second):
    levels = direction_levels(plans(first, second), ALPHA, SHARE)
    assert levels == {"d0>d1": pytest.approx(ALPHA / 4, rel=1e-15), "d1>d0": pytest.approx(ALPHA / 4, rel=1e-15)}


def reach(first, second, n, level):
    low, upp = cp_lower(np.asarray(first), n, level), cp_upper(np.asarray(second), n, level)
    return np.where(low > 0, np.log(np.where(low > 0, low, 1.0)) - np.log(upp), 0.0)


def test_curve_grid_reaches_the_strongest_event():
    n, points, claim = 1000, 20, 0.5
    rates = [(np.array([900, 500]), np.array([50, 500])), (np.array([300]), np.array([250]))]
    res = curve_check(lambda e: 0.0, "pure", rates, n, ALPHA, points, claim)
    top = float(max(reach(a, b, n, ALPHA / 6).max() for a, b in rates))
    assert top > claim and res.claim == "pure" and res.events_tested == 3 and res.alpha == ALPHA
    np.testing.assert_allclose(res.epsilons, np.linspace(0.0, top, points + 1)[1:], rtol=1e-14)


def test_curve_grid_stops_at_the_claim_when_no_event_reaches_it():
    # an event with no first-input hits has L = 0: it reaches nowhere (not log of 0, not 1)
    n, points, claim = 1000, 10, 0.2
    rates = [(np.array([0, 300]), np.array([10, 200]))]
    assert float(reach([300], [200], n, ALPHA / 4)[0]) < claim
    res = curve_check(lambda e: 0.0, "pure", rates, n, ALPHA, points, claim)
    np.testing.assert_allclose(res.epsilons, np.linspace(0.0, claim, points + 1)[1:], rtol=1e-14)


def test_curve_check_reports_the_point_of_largest_excess():
    # the claimed delta drops from 1 to 0 at eps = 0.5: the excess is negative before, largest just after
    n, points = 1000, 40
    rates = [(np.array([900]), np.array([50]))]
    res = curve_check(lambda e: 1.0 if e < 0.5 else 0.0, "step", rates, n, ALPHA, points, 0.5)
    excess = np.array(res.delta_lower) - np.array(res.claimed_delta)
    i = int(np.argmax(excess))
    assert i > 0 and res.epsilons[i - 1] < 0.5 <= res.epsilons[i]
    assert (res.worst_epsilon, res.worst_excess) == (res.epsilons[i], excess[i]) and res.violation


def asymmetric(data, rng, size):
    """P[1 | d0 = 1] = 0.9, P[1 | d1 = 0] = 0.5: {1} has ratio 1.8 for d0>d1, {0} ratio 5 for d1>d0."""
    return (rng.random(size) < (0.9 if data == 1 else 0.5)).astype(np.int64)


def test_a_cross_fitted_audit_keeps_a_quarter_of_alpha_when_one_direction_is_stronger():
    # the plain split would give the clearly stronger d1>d0 0.45 alpha; cross-fitting keeps alpha / 4 for both
    # (its folds may lead in different directions) and describes both folds' events
    plain = audit(
        asymmetric, 1, 0, claim_epsilon=3.0, samples=4_000, confidence=0.9, seed=1, executor="serial", progress=False
    )
    assert {d.direction: d.level for d in plain.directions}["d1>d0"] == pytest.approx(0.9 * 0.1 / 2)
    crossed = audit(
        asymmetric,
        1,
        0,
        claim_epsilon=3.0,
        samples=4_000,
        confidence=0.9,
        seed=1,
        crossfit=True,
        executor="serial",
        progress=False,
    )
    assert all(d.level == pytest.approx(0.1 / 4, rel=1e-15) for d in crossed.directions)
    assert all(d.event.startswith("cross-fitted: ") for d in crossed.directions)
