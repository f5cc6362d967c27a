"""Validity of `one_run` by simulation: coverage of the lower bound on mechanisms with known epsilon.

Each audit is one run with fresh coins (seed s).  The fraction of audits with epsilon_lower > true
epsilon must be at most 1 - confidence = 5%.  With N audits the count is asserted <= c, the
smallest c with P[Binomial(N, 0.05) > c] <= 0.005: were the bound exactly at its nominal 5% the test
would still fail with probability <= 0.5%; all seeds are fixed.  Twins run the same check on
perturbed noise (too little of it for the claim) and must fail it.
"""

import numpy as np
from scipy import stats
from scipy.optimize import brentq

from dpaudit.audit import one_run

CONFIDENCE = 0.95


def tolerance(audits: int, rate: float = 1 - CONFIDENCE, false_failure: float = 0.005) -> int:
    """Smallest c with P[Binomial(audits, rate) > c] <= false_failure."""
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def laplace_canaries(scale):
    def mechanism(inclusion, rng):
        return inclusion + rng.laplace(0.0, scale, inclusion.size)

    return mechanism


def gaussian_canaries(sigma):
    def mechanism(inclusion, rng):
        return inclusion + rng.normal(0.0, sigma, inclusion.size)

    return mechanism


def gaussian_epsilon(mu, delta):
    """eps with delta(eps) = delta for mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    (Balle, Wang, ICML 2018, Thm 8; Dong, Roth, Su, JRSS-B 2022, Cor. 2.13)."""

    def excess(e):
        return stats.norm.cdf(-e / mu + mu / 2) - np.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta

    return brentq(excess, 0.0, 100.0, xtol=1e-12)


def exceedances(mechanism, true_epsilon, audits, canaries, delta=0.0, guesses=None, seed0=0):
    lows = np.array(
        [
            one_run(
                mechanism,
                canaries,
                lambda out: out,
                claim_epsilon=true_epsilon,
                claim_delta=delta,
                confidence=CONFIDENCE,
                seed=seed0 + s,
                guesses=guesses,
            ).epsilon_lower
            for s in range(audits)
        ]
    )
    return int(np.sum(lows > true_epsilon)), lows


def test_coverage_laplace_fixed_guesses():
    # Fixed (150, 150) of 1000 canaries: the tightest use of the bound (no correction), so the
    # bound comes close to the truth and sometimes above it.
    audits = 300
    c = tolerance(audits)
    assert c == 25
    count, lows = exceedances(laplace_canaries(1.0), 1.0, audits, 1000, guesses=(150, 150))
    assert count <= c, count
    assert lows.mean() > 0.7  # and the bound is not vacuous


def test_coverage_laplace_default_grid():
    audits = 200
    count, lows = exceedances(laplace_canaries(1.0), 1.0, audits, 1000, seed0=10_000)
    assert count <= tolerance(audits), count
    assert lows.mean() > 0.6


def test_coverage_twin_fails_when_the_laplace_noise_is_halved():
    # scale 1/2 is 2-DP; checked against "true" epsilon 1 the same coverage test fails.
    audits = 40
    count, _ = exceedances(laplace_canaries(0.5), 1.0, audits, 1000, guesses=(150, 150), seed0=20_000)
    assert count > tolerance(audits)


def test_coverage_gaussian_at_its_exact_epsilon_delta():
    # sigma = 1, sensitivity 1: 1-GDP, (4.887, 1e-6)-DP exactly.
    delta = 1e-6
    true_epsilon = gaussian_epsilon(1.0, delta)
    assert abs(true_epsilon - 4.8866) < 1e-3
    audits = 100
    count, lows = exceedances(
        gaussian_canaries(1.0), true_epsilon, audits, 1000, delta=delta, guesses=(50, 50), seed0=30_000
    )
    assert count <= tolerance(audits), count
    assert lows.mean() > 1.0


def test_coverage_twin_fails_when_the_gaussian_noise_is_divided_by_8():
    # sigma = 1/8 is far from (4.887, 1e-6)-DP: with 2000 canaries the bound exceeds it every time.
    delta = 1e-6
    audits = 10
    count, _ = exceedances(
        gaussian_canaries(0.125),
        gaussian_epsilon(1.0, delta),
        audits,
        2000,
        delta=delta,
        guesses=(500, 500),
        seed0=40_000,
    )
    assert count > tolerance(audits)
