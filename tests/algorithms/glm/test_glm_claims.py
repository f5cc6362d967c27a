"""The GLM paper's own accounting: Lemma I.4 tree noise, the trees' claimed vs corrected events, P_GD's claim
(Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits", App. I.1 and
App. T, Lemma T.2; exact tests)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.algorithms.glm.claims import glm_tree_events, glm_tree_sigma, pgd_claimed_guarantee
from dpaudit.algorithms.shuffle_claims import pgd_claimed_event, pgd_theorem_event, shuffle_gradient_descent
from dpaudit.mechanisms.shuffle_gd import advanced_composition, pgd_iterations, pgd_round_privacy


def test_glm_tree_claimed_vs_corrected():
    # Sarmasarkar, Lemma I.4: sigma = 6 sqrt(m) log(32/delta) / (kappa* eps), m = ceil(log2 T) + 1
    sigma = glm_tree_sigma(2.0, 0.02, 5000, 4.0)
    assert sigma == pytest.approx(6 * math.sqrt(14) * math.log(1600) / 8.0)
    claimed, corrected = glm_tree_events(sigma, 5000, 3, 4.0, "V")

    def mu(ev):
        return math.sqrt(ev.count) / ev.event.noise_multiplier

    assert mu(claimed) == pytest.approx(math.sqrt(14) * 0.25 / sigma)
    assert mu(corrected) == pytest.approx(math.sqrt(13) * math.sqrt(2) / sigma)
    _, corrected_h = glm_tree_events(sigma, 5000, 3, 4.0, "H")
    assert mu(corrected_h) == pytest.approx(mu(corrected) / 4.0)


def test_glm_tree_events_read_through_the_accounting_engine():
    from dpaudit import accounting

    sigma = glm_tree_sigma(2.0, 0.02, 5000, 4.0)
    claimed, corrected = glm_tree_events(sigma, 5000, 3, 4.0, "V")
    assert accounting.epsilon(claimed, 0.02) < accounting.epsilon(corrected, 0.02)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.05, 4.0), delta=st.floats(1e-8, 0.1), n=st.integers(50, 10**5), d=st.integers(1, 20))
def test_claimed_guarantee_spends_exactly_delta_and_about_epsilon(eps, delta, n, d):
    t = pgd_iterations(eps, delta, n, d)
    e_total, d_total = pgd_claimed_guarantee(eps, delta, t)
    assert d_total == pytest.approx(delta, rel=1e-12)
    # (eps/2) sqrt(log((T+1)/delta)/log(1/delta)) plus the second-order term
    eps_it = pgd_round_privacy(eps, delta, t)[0]
    main = eps / 2 * math.sqrt(math.log((t + 1) / delta) / math.log(1 / delta))
    assert e_total == pytest.approx(main + t * eps_it * math.expm1(eps_it), rel=1e-9)


def test_claimed_guarantee_of_a_pgd_instance():
    pgd = shuffle_gradient_descent(200, 3, 1.0, 1e-3, lipschitz=1.0, radius=1.0, iterations=7)
    assert pgd_claimed_guarantee(pgd.epsilon, pgd.delta, pgd.iterations)[1] == pytest.approx(1e-3, rel=1e-12)


def test_twin_undivided_round_budget_overspends():
    # a per-round budget not divided by 2 sqrt(2 T log(1/delta)) (Lemma T.2's split) must show in the total
    t = 50
    honest = pgd_claimed_guarantee(1.0, 1e-3, t)[0]
    buggy = advanced_composition(1.0, 1e-3 / (t + 1), t, 1e-3 / (t + 1))[0]
    assert honest <= 1.0 < buggy


def test_tree_sigma_rejects_a_bad_delta():
    with pytest.raises(ValueError, match="delta"):
        glm_tree_sigma(1.0, 0.0, 10, 4.0)


def test_pgd_events_read_through_the_accounting_engine():
    from dpaudit import accounting

    pgd = shuffle_gradient_descent(1000, 5, 1.0, 1e-3, lipschitz=1.0, radius=1.0)
    claimed = accounting.epsilon(pgd_claimed_event(pgd), 1e-3)
    theorem = accounting.epsilon(pgd_theorem_event(pgd), 1e-3)
    exact = accounting.epsilon(pgd.event(), 1e-6)  # at 1e-3 it is 0: delta exceeds the total variation
    # the engine's best composition is never worse than the paper's advanced composition; the
    # theorem on the real per-round range (count shift 2g) costs more than the claim; the exact
    # binomial counts (b ~ 10^11 noise bits per message) are far more private than either
    assert claimed <= pgd_claimed_guarantee(pgd.epsilon, pgd.delta, pgd.iterations)[0] + 1e-9
    assert theorem > claimed
    assert 0 < exact < claimed / 10
