"""Exact tests of the selection-side budget rules: the direction split of the error probability
(`dpaudit.audit.selection.direction_levels`, `direction_share`), the selection extension
(`selection_extension`) and the choice when no event predicts a positive bound: their arithmetic,
their bookkeeping of runs, their validation."""

import math

import numpy as np
import pytest

from dpaudit.audit import AuditResult, audit
from dpaudit.audit.options import AuditOptions
from dpaudit.audit.scores import UserScore
from dpaudit.audit.selection import DIRECTIONS, EventPlan, _predicted, choose_events, direction_levels


def _plan(direction: str, predicted: float) -> EventPlan:
    return EventPlan(direction, UserScore(lambda x: x), 1, 0.0, 0.0, (0.0,), (0.5,), (0.5,), predicted)


@pytest.mark.parametrize("first, second, lead", [(0.5, 0.1, "d0>d1"), (0.0, 2.0, "d1>d0"), (0.3, -np.inf, "d0>d1")])
def test_clearly_stronger_direction_gets_the_share(first, second, lead):
    plans = {"d0>d1": _plan("d0>d1", first), "d1>d0": _plan("d1>d0", second)}
    levels = direction_levels(plans, 0.05, 0.9)
    assert levels[lead] == pytest.approx(0.9 * 0.05 / 2)
    assert sum(levels.values()) == pytest.approx(0.05 / 2)  # two proportions per direction: alpha in all


@pytest.mark.parametrize("first, second", [(0.5, 0.3), (0.5, 0.5), (0.0, 0.0), (-1.0, -2.0), (-np.inf, -np.inf)])
def test_directions_of_similar_strength_split_evenly(first, second):
    plans = {"d0>d1": _plan("d0>d1", first), "d1>d0": _plan("d1>d0", second)}
    assert direction_levels(plans, 0.05, 0.9) == {d: pytest.approx(0.05 / 4) for d in DIRECTIONS}


def test_share_one_half_is_the_plain_bonferroni_split():
    plans = {"d0>d1": _plan("d0>d1", 1.0), "d1>d0": _plan("d1>d0", 0.0)}
    assert direction_levels(plans, 0.05, 0.5) == {d: pytest.approx(0.05 / 4) for d in DIRECTIONS}


def one_bit(data, rng, size):
    """P[1] = 0.2 on 1 and 0.1 on 0: the direction 'd0>d1' (event {1}, log 2) is clearly the stronger."""
    return (rng.random(size) < (0.2 if data else 0.1)).astype(np.int64)


def test_levels_are_recorded_and_used():
    res = audit(one_bit, 1, 0, claim_epsilon=1.0, samples=20_000, seed=0, executor="serial")
    levels = {r.direction: r.level for r in res.directions}
    assert levels == {"d0>d1": pytest.approx(0.0225), "d1>d0": pytest.approx(0.0025)}
    even = audit(one_bit, 1, 0, claim_epsilon=1.0, samples=20_000, seed=0, executor="serial", direction_share=0.5)
    assert {r.direction: r.level for r in even.directions} == {d: pytest.approx(0.0125) for d in DIRECTIONS}
    # same runs and events, a better level for the lead direction: a larger bound
    assert res.directions[0].count_first == even.directions[0].count_first
    assert res.epsilon_lower > even.epsilon_lower
    back = AuditResult.from_json(res.to_json())
    assert back == res


def test_results_without_a_recorded_level_read_back_as_nan():
    res = audit(one_bit, 1, 0, claim_epsilon=1.0, samples=2_000, seed=0, executor="serial")
    data = res.to_dict()
    for d in data["directions"]:
        del d["level"]
    assert all(math.isnan(r.level) for r in AuditResult.from_dict(data).directions)


def weak(data, rng, size):
    """Laplace(1 / 0.02): a loss too small to resolve on a pilot of a few hundred runs."""
    return 0.02 * data + rng.laplace(0.0, 1.0, size)


def strong(data, rng, size):
    return 5.0 * data + rng.laplace(0.0, 1.0, size)


def test_extension_moves_runs_only_when_the_pilot_is_unresolved():
    kw = dict(claim_epsilon=1.0, samples=10_000, seed=3, executor="serial", selection_extension=0.2)
    w = audit(weak, 1, 0, **kw)
    assert (w.selection_samples, w.estimation_samples) == (3_000, 7_000)
    assert all(r.nobs == 7_000 for r in w.directions)
    s = audit(strong, 1, 0, **kw)
    assert (s.selection_samples, s.estimation_samples) == (1_000, 9_000)
    plain = audit(strong, 1, 0, claim_epsilon=1.0, samples=10_000, seed=3, executor="serial")
    assert s.epsilon_lower == plain.epsilon_lower  # resolved: the same audit as without the option


@pytest.mark.parametrize("chunk_size", [10_000, 1_500, 700])
def test_extension_counts_every_run_once_whatever_the_chunks(chunk_size):
    res = audit(
        weak,
        1,
        0,
        claim_epsilon=1.0,
        samples=10_000,
        seed=1,
        executor="serial",
        selection_extension=0.25,
        chunk_size=chunk_size,
        score=lambda x: x,
    )
    assert res.selection_samples + res.estimation_samples == 10_000
    assert res.selection_samples == 3_500
    assert all(r.nobs == 6_500 and 0 <= r.count_first <= 6_500 for r in res.directions)
    same = audit(
        weak,
        1,
        0,
        claim_epsilon=1.0,
        samples=10_000,
        seed=1,
        executor="serial",
        selection_extension=0.25,
        chunk_size=10_000,
        score=lambda x: x,
    )
    if chunk_size == 10_000:
        assert res == same


def test_extension_is_reproducible_and_resumes_from_checkpoints(tmp_path):
    kw = dict(claim_epsilon=1.0, samples=10_000, seed=5, executor="serial", selection_extension=0.2, chunk_size=1_500)
    a = audit(weak, 1, 0, **kw)
    b = audit(weak, 1, 0, checkpoint_dir=str(tmp_path), **kw)
    c = audit(weak, 1, 0, checkpoint_dir=str(tmp_path), **kw)
    assert a == b == c
    assert any(p.name.startswith("selection-") and p.name != "selection-000000.npz" for p in tmp_path.iterdir())


@pytest.mark.parametrize("value", [0.49, 1.0, 1.5, -0.1, True, "0.9", float("nan")])
def test_direction_share_is_checked(value):
    with pytest.raises(ValueError, match="direction_share"):
        audit(weak, 1, 0, claim_epsilon=1.0, samples=1_000, direction_share=value)


@pytest.mark.parametrize("value", [-0.1, 0.9, 0.95, True, "0.2", float("nan")])
def test_selection_extension_is_checked(value):
    with pytest.raises(ValueError, match="selection_extension"):
        audit(weak, 1, 0, claim_epsilon=1.0, samples=1_000, selection_extension=value)


@pytest.mark.parametrize(
    "options, share",
    [
        ({}, 0.2),
        ({"crossfit": True}, 0.0),  # the folds are fixed before any run is drawn
        ({"score": lambda x: x}, 0.0),  # nothing is fitted: more selection runs buy little
        ({"selection_fraction": 0.85}, 0.0),  # no room for 0.2 more
        ({"selection_extension": 0}, 0.0),  # off
        ({"selection_extension": 0.3}, 0.3),
    ],
)
def test_selection_extension_default_is_automatic(options, share):
    assert AuditOptions.create(1.0, samples=1_000, **options).selection_extension == share


def test_default_extension_is_the_explicit_one():
    kw = dict(claim_epsilon=1.0, samples=10_000, seed=3, executor="serial")
    assert audit(weak, 1, 0, **kw) == audit(weak, 1, 0, selection_extension=0.2, **kw)
    assert audit(weak, 1, 0, selection_extension=0, **kw).selection_samples == 1_000


def test_selection_extension_refuses_crossfit():
    with pytest.raises(ValueError, match="selection_extension"):
        audit(weak, 1, 0, claim_epsilon=1.0, samples=1_000, selection_extension=0.2, crossfit=True)


def _plans_with_counts(first: int, second: int, predicted: float, n: int = 100_000):
    """Plans whose lead 'd0>d1' event {x > 0.5} holds `first` d0 rows and `second` d1 rows of n (identity score)."""
    sel0 = np.zeros(n)
    sel0[:first] = 1.0
    sel1 = np.zeros(n)
    sel1[:second] = 1.0
    plans = {"d0>d1": _plan("d0>d1", predicted), "d1>d0": _plan("d1>d0", -np.inf)}
    plans["d0>d1"] = EventPlan("d0>d1", UserScore(lambda x: x), 1, 0.5, 0.5, (0.5,), (0.5,), (0.5,), predicted)
    return plans, sel0, sel1


@pytest.mark.parametrize(
    "first, second, predicted, resolved",
    [
        (2_400, 2_190, 0.03, False),  # SVT1-like: log ratio 0.09 with s.e. 0.03 on the pilot
        (6_155, 5_686, 0.075, True),  # predicted at 4.2 s.e., above the 4 needed
        (6_155, 5_686, 0.065, False),  # ... at 3.6 s.e.
        (22_196, 21_127, 0.031, False),  # SVT1-like, led by a coarse event: 3.6 s.e.
        (30_000, 10_000, 0.9, True),  # strong and well populated
        (27, 8, 0.9, True),  # near-perfect and rare (ReportNoisyMax4): the delta method does not apply
        (5, 30, 0.0, True),
    ],
)
def test_resolved_rule(first, second, predicted, resolved):
    from dpaudit.audit.candidates import resolved as is_resolved

    plans, sel0, sel1 = _plans_with_counts(first, second, predicted)
    assert is_resolved(plans, sel0, sel1) is resolved


def test_without_a_positive_prediction_the_less_charged_one_chooses():
    """A pilot of 2000 runs per side; the score's flagged values (10 + ...) hold 13% of d0's runs and
    10% of d1's, its other values (0 + ...) the rest.  With two standard errors of the selection taken
    off (many distinct values) the flagged event predicts a negative bound, below the event of all runs
    (about -0.0), which would give no bound at all; with one standard error off it predicts 0.045
    and is chosen, and its own charged prediction is what the plan keeps."""
    n, z = 2000, 2.2414027276049473  # z of the level 0.0125
    s0 = np.concatenate([10 + np.linspace(0, 1, 260), np.linspace(0, 1, n - 260)])
    s1 = np.concatenate([10 + np.linspace(0, 1, 200), np.linspace(0, 1, n - 200)])
    flagged, charged = (
        _predicted(np.array([0.13]), np.array([0.10]), n, 18_000, z, 0.0, zs)[0][0] for zs in (1.0, 2.0)
    )
    assert charged < 0 < flagged
    plan = choose_events([(UserScore(lambda x: x), s0, s1)], 18_000, 0.0, 0.0125, 8)["d0>d1"]
    assert plan.sign == 1 and np.sum(s0 > plan.threshold) >= 250 and np.sum(s1 > plan.threshold) <= 200  # flagged
    assert plan.predicted < 0 and plan.predicted == pytest.approx(charged, abs=0.005)
    assert plan.alternates == ()


def _gaussian_signs(shift: float, seeds: range) -> list[tuple[int, int]]:
    """(sign of d0>d1, sign of d1>d0) chosen on 10^5 selection runs per side of N(shift, 1) vs N(0, 1) at
    delta = 0.1, where no event can predict a positive epsilon (total variation ≈ 0.4 * shift << 0.1)."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s0, s1 = rng.normal(shift, 1.0, 100_000), rng.normal(0.0, 1.0, 100_000)
        plans = choose_events([(UserScore(lambda x: x), s0, s1)], 900_000, 0.1, 0.0125, 8)
        assert all(p.predicted <= 0 for p in plans.values())  # the epsilon objective is flat
        out.append((plans["d0>d1"].sign, plans["d1>d0"].sign))
    return out


def test_without_any_epsilon_the_sign_is_chosen_for_mu():
    """Seeded, 20 selections of a Gaussian shift of 0.05 (μ = 0.05; the selection's μ estimate has s.e.
    ≈ 0.0045, so a wrong sign is an 11-s.e. event: false-failure rate < 1e-20): the μ event points the right
    way in both directions (d0 = the shifted side: sign +1 for d0>d1, -1 for d1>d0), where the epsilon
    objective would toss a coin.  Twin: with no shift, all 20 pairs right has probability 2^-40."""
    assert _gaussian_signs(0.05, range(20)) == [(1, -1)] * 20
    assert _gaussian_signs(0.0, range(20)) != [(1, -1)] * 20


def test_a_loss_below_delta_is_certified_in_mu():
    """Seeded (seed 3), one audit of N(0.05, 1) vs N(0, 1) at claim (1, 0.1) with 10^6 runs per side: μ_lower
    is within 0.012 of μ = 0.05 at 95% (its standard error is ≈ 0.0025, so a bound below 0.038 would be a
    4.5-s.e. event: false-failure rate < 1e-5) and below μ; ε_lower is 0 (nothing is above δ)."""

    def target(x, rng, size):
        return x + rng.normal(0.0, 1.0, size)

    r = audit(target, 0.05, 0.0, claim_epsilon=1.0, claim_delta=0.1, samples=1_000_000, seed=3)
    assert r.epsilon_lower == 0.0 and 0.038 < r.mu_lower < 0.05
