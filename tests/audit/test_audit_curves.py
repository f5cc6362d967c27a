"""Whole-curve claims, the Gaussian-DP mu bound and the empirical trade-off curve.

Statistical tests with fixed seeds.  False-failure rates for fresh seeds: a correct mechanism is
flagged with probability <= 1 - confidence = 5% (measured 0/60 below); the detection tests
(curve wrong below epsilon = 1, halved noise) miss with negligible probability at these sizes (the
excess is many standard errors); the trade-off tolerance 0.05 is > 4 standard errors.
"""

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.audit import audit


def gaussian(data, rng, size):
    return data + rng.normal(0.0, 1.0, size)


def gaussian_delta(epsilon, mu=1.0):
    """Exact delta(epsilon) of mu-GDP (Balle, Wang 2018; Dong, Roth, Su 2022)."""
    return float(stats.norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


def right_at_one_only(epsilon):
    """A claimed curve that is exact at epsilon >= 1 but too optimistic below 1 (flat at delta(1))."""
    return gaussian_delta(max(epsilon, 1.0))


POINT = dict(
    claim_epsilon=1.0, claim_delta=gaussian_delta(1.0), samples=20_000, executor="serial", float_check="off"
)  # the levels of one audit (float outputs would also get a floating-point audit)


def test_exact_curve_is_consistent_and_reported():
    r = audit(gaussian, 1.0, 0.0, claim=gaussian_delta, seed=1, **POINT)
    assert r.verdict == "consistent"
    c = r.curve
    assert not c.violation and c.worst_excess <= 0
    assert c.events_tested == sum(len(d.tradeoff_thresholds) for d in r.directions)
    assert len(c.epsilons) == len(c.claimed_delta) == len(c.delta_lower)
    assert np.all(np.diff(c.delta_lower) <= 1e-15)  # a max of decreasing functions of epsilon
    assert c.alpha == pytest.approx(0.025)  # half of 1 - confidence goes to the curve


def test_curve_wrong_away_from_the_claimed_point_is_caught():
    point_only = audit(gaussian, 1.0, 0.0, seed=2, **POINT)
    assert point_only.verdict == "consistent"
    curve = audit(gaussian, 1.0, 0.0, claim=right_at_one_only, seed=2, **POINT)
    assert curve.verdict == "violation" and curve.curve.violation
    assert curve.curve.worst_epsilon < 1.0
    assert curve.epsilon_lower <= 1.0  # the point bound alone does not see it


def test_curve_false_alarms_stay_below_one_minus_confidence():
    # 60 audits of a correct Gaussian against its exact curve; if the per-audit false-alarm
    # probability were 5%, P[more than 8 of 60] <= 0.5% (binomial); measured: 0 of 60.
    alarms = sum(
        audit(gaussian, 1.0, 0.0, claim=gaussian_delta, seed=100 + s, **{**POINT, "samples": 5_000}).verdict
        == "violation"
        for s in range(60)
    )
    assert alarms <= 8


def test_dp_event_claim_through_the_accountant():
    from dpaudit import accounting

    event = dp_accounting.GaussianDpEvent(noise_multiplier=1.0)
    opts = dict(claim=event, claim_accountant="pld", claim_delta=1e-3, samples=20_000, seed=3, executor="serial")
    r = audit(gaussian, 1.0, 0.0, **opts)
    assert r.claim_epsilon == pytest.approx(accounting.epsilon(event, 1e-3, accountant="pld"))
    assert r.verdict == "consistent"
    half_noise = audit(lambda d, rng, n: d + rng.normal(0, 0.5, n), 1.0, 0.0, **opts)
    assert half_noise.verdict == "violation" and half_noise.curve.violation


def test_claimed_curve_is_evaluated_once_per_grid_point_not_per_event(monkeypatch):
    # An accountant query can be slow (a composed PLD, ~0.1-1 s each): the cost of a curve claim
    # must not grow with the events scanned. One DpEvent is prepared once for all its queries.
    from dpaudit import accounting

    calls = []

    def counted(epsilon):
        calls.append(epsilon)
        return gaussian_delta(epsilon)

    r = audit(gaussian, 1.0, 0.0, claim=counted, seed=1, curve_points=16, **POINT)
    # one check at claim_epsilon before any run (a broken curve fails early), then one call per grid point
    assert calls[0] == r.claim_epsilon
    assert r.curve.events_tested > 16 and len(calls[1:]) == 16 == len(set(calls[1:]))

    composed = []
    real_compose = accounting.Accountant.compose
    monkeypatch.setattr(
        accounting.Accountant,
        "compose",
        lambda self, event, count=1: composed.append(event) or real_compose(self, event, count),
    )
    event = dp_accounting.GaussianDpEvent(noise_multiplier=1.0)
    audit(
        gaussian,
        1.0,
        0.0,
        claim=event,
        claim_accountant="pld",
        claim_delta=1e-3,
        samples=20_000,
        seed=3,
        executor="serial",
    )
    assert composed == [event]


def test_accountant_results_as_claims():
    from dpaudit import accounting

    acct = accounting.Accountant("pld").compose(dp_accounting.GaussianDpEvent(noise_multiplier=1.0))
    r = audit(gaussian, 1.0, 0.0, claim=acct, claim_delta=1e-3, samples=20_000, seed=5, executor="serial")
    assert r.claim_epsilon == pytest.approx(acct.epsilon(1e-3))
    assert r.verdict == "consistent" and r.curve is not None
    laplace = lambda d, rng, n: d + rng.laplace(0.0, 0.5, n)  # noqa: E731  (epsilon 2)
    bad = audit(laplace, 1.0, 0.0, claim=accounting.PureDp(1.0), samples=20_000, seed=5, executor="serial")
    assert bad.claim_epsilon == 1.0 and bad.verdict == "violation"


def test_mu_lower_bound_covers_and_is_tight():
    mus = np.array([audit(gaussian, 1.0, 0.0, seed=s, **POINT).mu_lower for s in range(40)])
    assert np.sum(mus > 1.0) <= 6  # P[Bin(40, 0.05) > 6] < 0.5%
    assert np.median(mus) > 0.9


def test_mu_lower_bound_twin_detects_halved_noise():
    half = lambda d, rng, n: d + rng.normal(0.0, 0.5, n)  # noqa: E731  (mu = 2)
    mus = np.array([audit(half, 1.0, 0.0, seed=s, **POINT).mu_lower for s in range(10)])
    assert np.all(mus > 1.0)


def test_tradeoff_points_are_monotone_and_consistent_with_counts():
    r = audit(gaussian, 1.0, 0.0, seed=4, **POINT)
    for d in r.directions:
        a, b = np.array(d.tradeoff_alpha), np.array(d.tradeoff_beta)
        assert np.all(np.diff(a) <= 0) and np.all(np.diff(b) >= 0)
        assert np.all((a >= 0) & (a <= 1) & (b >= 0) & (b <= 1))
        # Points of a 1-GDP mechanism lie near G_1(alpha) = Phi(Phi^-1(1 - alpha) - 1).
        inner = (a > 0.05) & (a < 0.95)
        g = stats.norm.cdf(stats.norm.ppf(1 - a[inner]) - 1.0)
        assert np.max(np.abs(b[inner] - g)) < 0.05
