"""Coverage of `one_run(..., analysis="fdp")`: seeded repeats at the canaries' true privacy, and twins whose noise
is cut, which must be caught.

A valid test at 95% rejects a true claim in each run with probability <= 0.05, so the number of false
rejections in 200 independent runs is stochastically below Binomial(200, 0.05): P[>= 20] <= 0.0027, the
false-failure rate of each coverage test (the runs are fixed by their seeds, so the test is deterministic; the
rate is that of a fresh choice of seeds).  The twins' power was measured at >= 0.99 per run on 100 other seeds;
requiring >= 15 of 20 fails with probability P[Binomial(20, 0.95) <= 14] = 3e-4 at power 0.95.
"""

import math

import dp_accounting
import numpy as np

from dpaudit.audit import one_run


def identity(output):
    return output


def laplace_canaries(scale):
    """Canary i adds 1 to coordinate i, Laplace(scale) noise: (1/scale)-DP per canary."""
    return lambda inclusion, rng: inclusion + rng.laplace(0.0, scale, inclusion.size)


def gaussian_canaries(sigma):
    """Canary i adds 1 to coordinate i, N(0, sigma^2) noise: (1/sigma)-GDP per canary."""
    return lambda inclusion, rng: inclusion + rng.normal(0.0, sigma, inclusion.size)


def rr_canaries(flip):
    """Canary i's bit is released, flipped with probability `flip`: log((1 - flip)/flip)-DP per canary."""
    return lambda inclusion, rng: inclusion ^ (rng.random(inclusion.size) < flip)


FLIP_2 = 1.0 / (1.0 + math.exp(2.0))  # randomized response at epsilon = 2


def violations(mechanism, m, seeds, **claim):
    return sum(one_run(mechanism, m, identity, analysis="fdp", seed=s, **claim).verdict == "violation" for s in seeds)


def test_laplace_canaries_at_their_event():
    """200 audits of 2-DP Laplace canaries against their own LaplaceDpEvent (the pld envelope): <= 19 rejections."""
    assert violations(laplace_canaries(0.5), 200, range(200), claim_event=dp_accounting.LaplaceDpEvent(0.5)) <= 19


def test_gaussian_canaries_at_their_mu():
    """200 audits of 1-GDP Gaussian canaries against claim_mu = 1: <= 19 rejections."""
    assert violations(gaussian_canaries(1.0), 300, range(200), claim_mu=1.0) <= 19


def test_randomized_response_at_its_epsilon():
    """200 audits of 2-DP randomized-response canaries against (2, 0)-DP, whose curve is exactly theirs (the
    tightest case): <= 19 rejections."""
    assert violations(rr_canaries(FLIP_2), 200, range(200), claim_epsilon=2.0) <= 19


def test_twins_with_less_noise_are_caught():
    """Laplace and randomized response with the noise scale (flip probability) halved, Gaussian with it quartered,
    against the claims above: each caught in >= 15 of 20 runs.  (Halving the Gaussian's sigma, mu 1 -> 2 against
    a claim of 1, is caught in only about 4% of runs at m = 1000: mu_lower is about half the true mu, see
    docs/how-to/one-run.md.)"""
    seeds = range(1000, 1020)
    assert violations(laplace_canaries(0.25), 500, seeds, claim_event=dp_accounting.LaplaceDpEvent(0.5)) >= 15
    assert violations(gaussian_canaries(0.25), 500, seeds, claim_mu=1.0) >= 15
    assert violations(rr_canaries(FLIP_2 / 2), 1000, seeds, claim_epsilon=2.0) >= 15


def test_both_analyses_hold_their_level_on_the_same_runs():
    """The same 100 Gaussian runs read by both analyses at the true (eps(1e-5), 1e-5): neither rejects more than
    12 times (P[Binomial(100, 0.05) >= 13] = 0.0038)."""
    from dpaudit.accounting.curves import gaussian_epsilon

    eps = gaussian_epsilon(2.0, 1e-5)
    mech = gaussian_canaries(0.5)
    both = [
        (
            one_run(mech, 300, identity, eps, 1e-5, seed=s).verdict,
            one_run(mech, 300, identity, eps, 1e-5, seed=s, analysis="fdp").verdict,
        )
        for s in range(2000, 2100)
    ]
    counts = np.sum(np.array(both) == "violation", axis=0)
    assert counts.max() <= 12
