"""ShuffleGLM's budget at the paper's horizons (Sarmasarkar, "Shuffle and Joint Differential Privacy for
Generalized Linear Contextual Bandits", Thm 5.1, App. T): P_GD's noise bits n·b pass 2⁶³ from T ≈ 2·10⁴;
the declaration is built from the eq. 127 parameters in Python integers, never through int64 counts."""

import math

import dp_accounting
import numpy as np
import pytest

from dpaudit.accounting.binomial import binomial_delta
from dpaudit.algorithms.glm.privacy import shuffle_glm_privacy
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams
from dpaudit.algorithms.shuffle_claims import (
    accounted_trials,
    bit_sum_protocol,
    cheu_parameters,
    pgd_events,
    pgd_theorem_event,
    shuffle_gradient_descent,
    theorem_event,
)
from dpaudit.budgets import algorithm_budget
from dpaudit.mechanisms.shuffle_gd import pgd_iterations, pgd_round_privacy
from dpaudit.privacy import event_to_json


def test_events_equal_the_simulated_protocols_where_those_exist():
    """Where `BitSumProtocol` can be built, the parameter-built events are its events, term for term."""
    n, d, eps, delta = 800, 3, 2.0, 0.01
    proto = bit_sum_protocol(eps, delta, n, d, num_labels=d * (d + 1) // 2)
    pgd = shuffle_gradient_descent(n, d, eps, delta, 1.0, 1.0, iterations=20)
    exact, theorem = pgd_events(n, d, eps, delta, 20)
    assert event_to_json(exact) == event_to_json(pgd.event())
    assert event_to_json(theorem) == event_to_json(pgd_theorem_event(pgd))
    declared = shuffle_glm_privacy(ShuffleGLMParams(epsilon=2 * eps, delta=2 * delta), [n], d, [20])
    batch = declared.event.events[0]
    assert event_to_json(batch) == event_to_json(dp_accounting.ComposedDpEvent([proto.event(), pgd.event()]))
    assert event_to_json(declared.proof_step.events[0].events[0]) == event_to_json(theorem_event(proto, d, delta))


def test_pgd_noise_bits_beyond_int64_are_python_integers():
    n, d, eps, delta = 20_000, 3, 2.0, 0.01
    t = pgd_iterations(eps, delta, n, d)
    g, b, _ = cheu_parameters(*pgd_round_privacy(eps, delta, t), n, d)
    assert n * (2 * g + b) >= 2**63  # what a simulated protocol's int64 counts refuse
    exact, _ = pgd_events(n, d, eps, delta)
    leaf = exact.event.event
    assert exact.count == t and exact.event.count == d
    assert leaf.trials == accounted_trials(n * b) == 2**52 and leaf.sensitivity == 2 * g


@pytest.mark.parametrize("trials", [10_000, 123_457])
def test_fewer_noise_bits_are_never_more_private(trials):
    """`accounted_trials`: Bin(N, p) = Bin(N', p) + independent noise, so N' <= N bits bound N bits; checked on
    the exact binomial tails (`dpaudit.accounting.binomial`) at every epsilon of a grid."""
    for eps in np.linspace(0.0, 0.5, 11):
        assert binomial_delta(trials // 3, 0.25, 6, float(eps)) >= binomial_delta(trials, 0.25, 6, float(eps))


def test_budget_at_the_papers_horizon_against_the_count_laws():
    """T = 20000 (Table 2's horizons reach it): a budget exists, within the claim (ε = 4, δ = 0.02), and above
    the real counts' central-limit value. Independent references: each label's exact δ(0) at the accounted
    2⁵² bits (binomial tails) equals the total variation s·φ/sd of the normal limit to 10⁻⁴; the real counts
    (n·b ≈ 10¹⁹ bits) compose, in that limit, to μ = s√k/sd ≈ 3·10⁻⁴-GDP, ε(10⁻⁶) ≈ 6·10⁻⁴, which the budget
    must not undercut (it does not: the cap at 2⁵² bits makes it looser, never tighter)."""
    from dpaudit.accounting.curves import gaussian_epsilon

    out = algorithm_budget("shuffle-glm", 20_000, delta=1e-6)
    n, d, eps, delta = 20_000, 3, 2.0, 0.01  # P_GD's half of the budget (Thm 5.1): ε/2, δ/2
    t = pgd_iterations(eps, delta, n, d)
    g, b, p = cheu_parameters(*pgd_round_privacy(eps, delta, t), n, d)
    capped = accounted_trials(n * b)
    sd = math.sqrt(capped * p * (1 - p))
    assert binomial_delta(capped, p, 2 * g, 0.0) == pytest.approx(math.erf(g / sd / math.sqrt(2)), rel=1e-4)
    mu_real = 2 * g * math.sqrt(t * d) / math.sqrt(n * b * p * (1 - p))
    assert out["best"]["epsilon"] >= gaussian_epsilon(mu_real, 1e-6)
    at_claim = algorithm_budget("shuffle-glm", 20_000)
    assert 0.0 <= at_claim["best"]["epsilon"] <= at_claim["claim"]["epsilon"]
