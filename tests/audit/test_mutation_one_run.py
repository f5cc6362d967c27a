"""`dpaudit.one_run` with a claimed curve: the verdict, the reported pair and the parameter names.

- Under the f-DP analysis the verdict is "violation" exactly when a pair rejects the claim (a mechanism that
  publishes its canaries' bits, and a Gaussian one well inside a mu = 1 claim).
- The reported pair (k_plus, k_minus, and its correct guesses) is the one whose bound is reported: the largest
  epsilon bound for an (epsilon, delta) claim, the largest mu bound for a GDP claim.  Seed 18 of Gaussian canaries
  (sigma 0.8, m = 1000, six pairs) is a run where the two pairs differ, under both analyses.
- An unknown analysis is refused by its parameter's name.
Deterministic (fixed seeds; the counts, not their statistics, are checked): no false failures.
"""

import numpy as np
import pytest

import dpaudit
from dpaudit.audit.one_run_fdp import fdp_epsilon_lower, fdp_mu_lower, fdp_rejects, gaussian_curve
from dpaudit.audit.one_run_order import order_epsilon_lower, order_mu_lower

GRID = [(k, k) for k in (5, 20, 50, 100, 200, 400)]
M = 1000


def gaussian(sigma: float):
    def mechanism(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return inclusion + rng.normal(0.0, sigma, inclusion.size)

    return mechanism


def published(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return inclusion.astype(float)


@pytest.mark.parametrize(("mechanism", "verdict"), [(published, "violation"), (gaussian(4.0), "consistent")])
def test_fdp_verdict_is_the_test_of_the_claim(mechanism, verdict):
    res = dpaudit.one_run(mechanism, M, score=lambda o: o, analysis="fdp", claim_mu=1.0, guesses=GRID, seed=3)
    k = np.array([res.k_plus + res.k_minus])
    rejects = bool(fdp_rejects(gaussian_curve(1.0), M, k, np.array([res.correct]), res.level).any())
    assert res.verdict == verdict
    assert rejects == (verdict == "violation")  # the reported pair agrees with the verdict here


@pytest.mark.parametrize(
    ("analysis", "epsilon_lower", "mu_lower"),
    [("fdp", fdp_epsilon_lower, fdp_mu_lower), ("order-statistics", order_epsilon_lower, order_mu_lower)],
)
def test_the_reported_pair_is_the_one_whose_bound_is_reported(analysis, epsilon_lower, mu_lower):
    kw = {"score": lambda o: o, "analysis": analysis, "guesses": GRID, "seed": 18}
    by_eps = dpaudit.one_run(gaussian(0.8), M, claim_epsilon=1.0, claim_delta=1e-5, **kw)
    by_mu = dpaudit.one_run(gaussian(0.8), M, claim_mu=1.0, **kw)
    assert (by_eps.k_plus, by_eps.k_minus) != (by_mu.k_plus, by_mu.k_minus)
    _, eps = epsilon_lower(M, [by_eps.guesses], [by_eps.correct], 1e-5, by_eps.level)
    _, mu = mu_lower(M, [by_mu.guesses], [by_mu.correct], by_mu.level)
    assert eps == pytest.approx(by_eps.epsilon_lower, rel=1e-9)  # one pair or six: the same search
    assert mu == pytest.approx(by_mu.mu_lower, rel=1e-9)


def test_an_unknown_analysis_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^unknown analysis 'exact'"):
        dpaudit.one_run(published, M, score=lambda o: o, analysis="exact", claim_epsilon=1.0)
