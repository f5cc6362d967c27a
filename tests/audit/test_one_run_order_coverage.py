"""Coverage of the order-statistics analysis (Xiang et al., "Tight Privacy Audit in One Run", arXiv 2509.08704, 2025):
seeded repeats of one_run's guess rule on Laplace, Gaussian and randomized-response canaries at their true privacy,
and twins with less noise, which must be caught.

Counts: 1000 runs of m = 500 canaries, guesses (125, 125) fixed in advance, drawn in one array per mechanism with
one_run's rule (k_+ highest scores "in", k_- lowest "out", ties by index) and tested at level 0.05.  A valid test
rejects a true claim in each run with probability <= 0.05, so false rejections are stochastically below
Binomial(1000, 0.05): P[>= 74] = 6.5e-4, the false-failure rate of each coverage test (the runs are fixed by their
seeds, so the test is deterministic; the rate is that of a fresh seed).  The twins were caught in >= 95% of runs
(randomized response, flip probability halved) and 100% (Laplace and Gaussian, noise halved) on these seeds;
requiring >= 900 of 1000 fails with probability P[Binomial(1000, 0.93) <= 899] = 1.7e-4 at power 0.93.

Through `one_run` (default guess grid, Bonferroni), a check of the wiring: 12 audits of 1-GDP canaries against
claim_mu = 1 reject at most 3 times (P[Binomial(12, 0.05) >= 4] = 2.2e-3), and 6 audits of 4-GDP canaries against
the same claim at least 5 times (P[Binomial(6, 0.99) <= 4] = 1.5e-3 at power 0.99, measured 1.0 on 20 other seeds).
"""

import math

import dp_accounting
import numpy as np

from dpaudit.audit import one_run
from dpaudit.audit.one_run_order import AccuracyLaw, _tails, approx_dp_law, event_law, gaussian_law

M, K_PLUS, K_MINUS, RUNS, LEVEL = 500, 125, 125, 1000, 0.05
FLIP_2 = 1.0 / (1.0 + math.exp(2.0))  # randomized response at epsilon = 2


def laplace_canaries(scale):
    """Canary i adds 1 to coordinate i, Laplace(scale) noise: (1/scale)-DP per canary, no interference."""
    return lambda inclusion, rng: inclusion + rng.laplace(0.0, scale, inclusion.shape)


def gaussian_canaries(sigma):
    """Canary i adds 1 to coordinate i, N(0, sigma^2) noise: (1/sigma)-GDP per canary."""
    return lambda inclusion, rng: inclusion + rng.normal(0.0, sigma, inclusion.shape)


def rr_canaries(flip):
    """Canary i's bit is released, flipped with probability `flip`: log((1 - flip)/flip)-DP per canary."""
    return lambda inclusion, rng: (inclusion ^ (rng.random(inclusion.shape) < flip)).astype(float)


def rejections(mechanism, law: AccuracyLaw, seed: int) -> int:
    """Runs (of RUNS) whose count under one_run's rule rejects `law` at LEVEL."""
    rng = np.random.default_rng(seed)
    inclusion = rng.random((RUNS, M)) < 0.5
    order = np.argsort(-mechanism(inclusion, rng), axis=1, kind="stable")
    correct = np.take_along_axis(inclusion, order[:, :K_PLUS], 1).sum(1)
    correct += (~np.take_along_axis(inclusion, order[:, M - K_MINUS :], 1)).sum(1)
    values, index = np.unique(correct, return_inverse=True)
    rejected = _tails(law, M, K_PLUS + K_MINUS, values.astype(float)) <= LEVEL
    return int(rejected[index].sum())


def test_laplace_canaries_at_their_event_and_epsilon():
    """2-DP Laplace canaries against their LaplaceDpEvent (the pld envelope) and against pure (2, 0)-DP: <= 73."""
    assert rejections(laplace_canaries(0.5), event_law(dp_accounting.LaplaceDpEvent(0.5)), 0) <= 73
    assert rejections(laplace_canaries(0.5), approx_dp_law(2.0, 0.0), 1) <= 73


def test_gaussian_canaries_at_their_mu():
    assert rejections(gaussian_canaries(1.0), gaussian_law(1.0), 2) <= 73


def test_randomized_response_at_its_epsilon():
    """Randomized response is the canonical channel of (2, 0)-DP: the tightest case."""
    assert rejections(rr_canaries(FLIP_2), approx_dp_law(2.0, 0.0), 3) <= 73


def test_twins_with_less_noise_are_caught():
    assert rejections(laplace_canaries(0.25), event_law(dp_accounting.LaplaceDpEvent(0.5)), 4) >= 900
    assert rejections(gaussian_canaries(0.5), gaussian_law(1.0), 5) >= 900
    assert rejections(rr_canaries(FLIP_2 / 2), approx_dp_law(2.0, 0.0), 6) >= 900


def test_one_run_holds_its_level_and_catches_the_twin():
    def audits(sigma, seeds):
        return sum(
            one_run(
                gaussian_canaries(sigma), 300, lambda out: out, analysis="order-statistics", claim_mu=1.0, seed=s
            ).verdict
            == "violation"
            for s in seeds
        )

    assert audits(1.0, range(12)) <= 3
    assert audits(0.25, range(100, 106)) >= 5
