"""DP-ConSE privacy declaration: the paper's claim next to the corrected, component-level accounting."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms.conse.algorithm import ConSEParams, lap_plus
from dpaudit.algorithms.conse.privacy import (
    conse_privacy,
    count_shortfall_probability,
    lap_plus_pmf,
    lap_plus_shift_loss,
)


@pytest.mark.parametrize("eps, c", [(1.0, 1), (1.0, 3), (1.0, 10), (0.3, 0), (2.0, 5)])
def test_shift_loss_matches_brute_force_and_checked_values(eps, c):
    v = np.arange(0, c + 400)
    brute = np.max(np.abs(np.log(lap_plus_pmf(eps, c, v) / lap_plus_pmf(eps, c + 1, v))))
    assert lap_plus_shift_loss(eps, c) == pytest.approx(brute, rel=1e-9)
    assert abs(lap_plus_pmf(eps, c, v).sum() - 1) < 1e-12


def test_shift_loss_checked_values():
    for c, want in [(1, 0.6105), (3, 0.5356), (10, 0.5010), (50, 0.5000)]:
        assert lap_plus_shift_loss(1.0, c) == pytest.approx(want, abs=1e-4)


def test_lap_plus_sampler_goodness_of_fit():
    """Chi-square of 40000 draws against the exact pmf. False-failure rate 1e-3 (seeded, so deterministic)."""

    def gof(sample, eps, centre):
        k = np.arange(0, 40)
        obs = np.array([(sample == v).sum() for v in k] + [(sample >= 40).sum()])
        p = lap_plus_pmf(eps, centre, k)
        exp = np.append(p, 1 - p.sum()) * sample.size
        keep = exp > 5
        return stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue

    x = lap_plus(np.random.default_rng(0), 0.8, 2.5, (40000,))
    assert gof(x, 0.8, 2.5) > 1e-3
    # twin: the scale-1/ε bug (Lap+ with scale 1/ε instead of 2/ε) is detected
    assert gof(lap_plus(np.random.default_rng(0), 1.6, 2.5, (40000,)), 0.8, 2.5) < 1e-3


def test_shortfall_probability_against_simulation():
    p = count_shortfall_probability(1.0, 20, 0.4, 10)  # P(Bin(L, 1/2) < 4), L ~ Lap+(20)
    rng = np.random.default_rng(1)
    draws = rng.binomial(lap_plus(rng, 1.0, 20, (200000,)), 0.5) < 4
    assert abs(draws.mean() - p) < 5 * math.sqrt(p * (1 - p) / 200000) + 1e-5


def test_claim_is_the_papers():
    p = conse_privacy(ConSEParams(epsilon=1.0), 20000, 3)
    assert (p.claim.epsilon, p.claim.delta) == (1.0, 1 / 20000)
    assert sum(e.epsilon for e in p.paper_event.events) == pytest.approx(1.0)
    assert p.trust_model == "central"


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_corrected_never_below_claim_and_grows_with_types(eps):
    params = ConSEParams(epsilon=eps)
    by_m = [conse_privacy(params, 20000, m, rct_length_floor=1000.0) for m in (1, 2, 3, 5)]
    for p in by_m:
        assert p.corrected.epsilon >= p.claim.epsilon
        assert p.corrected.delta <= 1 / 20000
    lam = lap_plus_shift_loss(eps, 1000)
    ctx = [p.implied["context_phase1"].epsilon for p in by_m]
    # all M RCT lengths share the centre ⌈T_min⌉: one more type adds λ(c) ≈ ε/2 (Alg. 2 lines 26-29)
    np.testing.assert_allclose(np.diff(ctx), np.array([1, 1, 2]) * lam, rtol=1e-9)
    assert ctx[2] - ctx[0] > eps / 2 * 1.99  # M = 3 already exceeds the paper's ε/2 for the lengths


def test_short_rct_floor_is_reported_not_hidden():
    """With T_min at its floor log n the estimates are weakly private: the accountant says so."""
    p = conse_privacy(ConSEParams(epsilon=1.0), 20000, 2)
    assert p.implied["context_phase2"].epsilon > 10 * p.claim.epsilon


def test_privacy_validation():
    with pytest.raises(ValueError, match="epsilon"):
        conse_privacy(ConSEParams(), 1000, 2)
    with pytest.raises(ValueError, match="num_types"):
        conse_privacy(ConSEParams(epsilon=1.0), 1000, 0)
    with pytest.raises(ValueError, match="delta_target"):
        conse_privacy(ConSEParams(epsilon=1.0), 1000, 2, delta_target=1.5)
    with pytest.raises(ValueError, match="centre"):
        lap_plus_shift_loss(1.0, -1)
