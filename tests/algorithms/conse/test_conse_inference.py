"""Wald intervals for the CATE of ConSE / DP-ConSE: coverage by simulation, with twins that must fail."""

import numpy as np
import pytest

from dpaudit.algorithms.conse.algorithm import ConSEParams, run_conse
from dpaudit.algorithms.conse.inference import cate_inference, coverage
from dpaudit.algorithms.conse.regret import default_experiment

ENV = default_experiment(types=2, gap=0.3, seasonality=0.3)


@pytest.mark.parametrize("epsilon", [None, 1.0])
def test_wald_interval_covers_at_nominal_level(epsilon):
    """800 intervals (400 runs x 2 types, RCT ≈ 1000 units each) at nominal 95%.

    Accept [0.925, 0.975]: with the true coverage at 0.95 the binomial sd is 0.0077, so a false failure
    needs a 3.2-sd deviation (rate < 2e-3); the seed makes the test deterministic.
    """
    cov = coverage(ENV, ConSEParams(alpha=0.0, epsilon=epsilon), 4000, 400, np.random.default_rng(3))
    assert 0.925 <= cov <= 0.975


@pytest.mark.parametrize("epsilon", [None, 1.0])
def test_twin_half_width_interval_undercovers(epsilon):
    """Twin: intervals of half the width cover about 2Φ(0.98)-1 = 0.67 and must be caught."""
    cov = coverage(ENV, ConSEParams(alpha=0.0, epsilon=epsilon), 4000, 400, np.random.default_rng(3), width_factor=0.5)
    assert cov < 0.925


def test_twin_ignoring_the_privacy_noise_undercovers_at_small_epsilon():
    """At ε = 0.02 the Laplace noise on Δ̂ dominates; an interval without its variance under-covers."""
    params = ConSEParams(alpha=0.0, epsilon=0.02)
    data = ENV.sample(np.random.default_rng(5), 4000, 300)
    res = run_conse(ENV, data, params, np.random.default_rng(6))
    honest = cate_inference(res).covers(ENV.cate).mean()
    nonprivate = cate_inference(run_conse(ENV, data, ConSEParams(alpha=0.0), np.random.default_rng(6)))
    naive_se = nonprivate.se
    half = 1.96 * naive_se
    naive = ((res.estimates - half <= ENV.cate) & (ENV.cate <= res.estimates + half)).mean()
    assert honest >= 0.925 and naive < 0.8


def test_tests_reject_real_effects_and_bound_variance_is_wider():
    data = ENV.sample(np.random.default_rng(7), 4000, 50)
    res = run_conse(ENV, data, ConSEParams(alpha=0.0, epsilon=1.0), np.random.default_rng(8))
    plug = cate_inference(res)
    bound = cate_inference(res, variance="bound")
    assert np.all(bound.se >= plug.se - 1e-12)
    assert plug.reject(0.05, "holm").mean() > 0.99  # |Δ| = 0.3 with ~1000 RCT units
    null = default_experiment(types=2, gap=0.0)
    res0 = run_conse(
        null, null.sample(np.random.default_rng(9), 4000, 200), ConSEParams(alpha=0.0), np.random.default_rng(10)
    )
    # family-wise error under H0 at 5% (Holm): 200 runs, accept ≤ 0.11 (false failure < 1e-3)
    assert cate_inference(res0).reject(0.05, "holm").any(axis=1).mean() <= 0.11


def test_inference_validation():
    data = ENV.sample(np.random.default_rng(0), 200, 2)
    res = run_conse(ENV, data, ConSEParams(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="level"):
        cate_inference(res, level=1.0)
    with pytest.raises(ValueError, match="variance"):
        cate_inference(res, variance="exact")
    with pytest.raises(ValueError, match="alpha"):
        cate_inference(res).reject(0.0)


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_vectorised_multiplicity_matches_statsmodels(method):
    from statsmodels.stats.multitest import multipletests

    env = default_experiment(types=4, gap=0.05)
    res = run_conse(
        env, env.sample(np.random.default_rng(2), 1000, 6), ConSEParams(alpha=0.0), np.random.default_rng(3)
    )
    inf = cate_inference(res)
    got = inf.reject(0.2, method)
    for r in range(6):
        np.testing.assert_array_equal(got[r], multipletests(inf.pvalue[r], alpha=0.2, method=method)[0])
