"""Private-GLM's DP-SGD option (Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear
Contextual Bandits", Remark A.1; the authors' `solve_glm_mle_dp_sgd_epsilon`): accounting against
dp-accounting directly, validation, and a seeded statistical test of the optimiser's noise with its twin."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import stats

from dpaudit import accounting
from dpaudit.algorithms.glm.algorithms import PrivateGLM
from dpaudit.algorithms.glm.environment import get_link, paper_glm_environment
from dpaudit.algorithms.glm.privacy import optimiser_call_events, private_glm_privacy
from dpaudit.algorithms.glm.private_glm import (
    PrivateGLMParams,
    _fit_sgd,
    authors_sgd_epochs,
    dp_sgd_noise_multiplier,
    private_glm_constants,
    run_private_glm,
    sgd_call_event,
    sgd_steps,
)

Rel = dp_accounting.NeighboringRelation
KS = 2.5066  # κ* of the probit instances of Table 2


def _rdp(event, delta, relation=Rel.ADD_OR_REMOVE_ONE):
    return rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation).compose(event).get_epsilon(delta)


def _pld(event, delta, relation=Rel.ADD_OR_REMOVE_ONE):
    acct = pld_privacy_accountant.PLDAccountant(neighboring_relation=relation, value_discretization_interval=1e-4)
    return acct.compose(event).get_epsilon(delta)


# --- accounting --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("q,steps", [(1.0, 50), (0.5, 100), (0.2, 25)])
def test_calibrated_multiplier_meets_the_target_under_dp_accounting_and_is_tight(q, steps):
    eps, delta = 0.44, 0.0022
    z = dp_sgd_noise_multiplier(eps, delta, q, steps)
    assert _rdp(sgd_call_event(z, q, steps), delta) <= eps
    assert _rdp(sgd_call_event(z * 0.999, q, steps), delta) > eps * 0.999  # tight: 0.1% less noise is ~ at target


@pytest.mark.parametrize("q", [1.0, 0.5])
def test_private_glm_sgd_accounting_equals_dp_accountings_rdp_and_pld(q):
    """The declared event (PoissonSampledDpEvent per step, composed over the steps and the call caps) has
    the ε dp-accounting's own RdpAccountant and PLDAccountant give it (add-or-remove-one)."""
    params = PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd", sgd_sampling_rate=q)
    c = private_glm_constants(params, 5000, 3, 18.39, KS, 2.0)
    call_o, call_tau = optimiser_call_events(params, c)
    assert isinstance(call_o.event, dp_accounting.PoissonSampledDpEvent)
    assert call_o.event.sampling_probability == q and call_o.count == c.sgd_steps_o
    seq = dp_accounting.ComposedDpEvent(
        [
            dp_accounting.SelfComposedDpEvent(call_o, c.count1_cutoff),
            dp_accounting.SelfComposedDpEvent(call_tau, c.count2_cutoff),
        ]
    )
    delta = 0.01
    ours_rdp = accounting.epsilon(seq, delta, accountant="rdp")
    ours_pld = accounting.epsilon(seq, delta, accountant="pld")
    assert ours_rdp == pytest.approx(_rdp(seq, delta), rel=1e-6) and ours_rdp >= _rdp(seq, delta) * (1 - 1e-9)
    assert ours_pld == pytest.approx(_pld(seq, delta), rel=2e-3)
    # the whole declaration exposes both accountants through PrivateGLM.privacy
    env = paper_glm_environment(np.random.default_rng(109832), 3, 20, 5000, 2.0, "probit")
    priv = PrivateGLM(params).privacy(5000, env=env)
    assert priv.accounted_epsilon(accountant="pld") <= priv.accounted_epsilon(accountant="rdp")
    assert 0 < priv.corrected.epsilon <= priv.claim.epsilon
    assert "DP-SGD" in priv.note


@pytest.mark.parametrize("q", [1.0, 0.5, 0.1])
@pytest.mark.parametrize("steps", [1, 40])
def test_add_remove_at_2c_is_above_dp_accountings_replace_one(q, steps):
    """A user replacing one example moves a clipped gradient from g to g′ (‖g‖, ‖g′‖ ≤ C). dpaudit declares
    the step as add-or-remove of a change 2C (multiplier z = std/2C); dp-accounting's substitution PLD
    (REPLACE_ONE, multiplier std/C) must never exceed it (exact at q = 1)."""
    z = 1.3
    ours = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps
    )
    theirs = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(2 * z)), steps
    )
    for delta in (1e-2, 1e-5):
        replace = _pld(theirs, delta, Rel.REPLACE_ONE)
        assert _pld(ours, delta) >= replace - 2e-3
        assert accounting.epsilon(ours, delta, accountant="rdp") >= replace - 2e-3


def test_authors_noise_is_half_and_accounts_for_more():
    base = PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd")
    code = PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd", sgd_noise="code")
    cb, cc = (private_glm_constants(p, 5000, 3, 18.39, KS, 2.0) for p in (base, code))
    assert (
        cc.sigma_opt_tau == pytest.approx(cb.sigma_opt_tau / 2) and cb.noise_multiplier_tau == cc.noise_multiplier_tau
    )
    pb, pc = (private_glm_privacy(p, 5000, 3, 18.39, KS, 2.0) for p in (base, code))
    assert pc.corrected.epsilon > pb.corrected.epsilon


def test_epochs_follow_the_authors_table():
    assert [authors_sgd_epochs(e) for e in (0.05, 0.2, 0.5, 1.5, 3.0)] == [15, 25, 50, 75, 100]
    assert sgd_steps(50, 1.0) == 50 and sgd_steps(50, 0.5) == 100 and sgd_steps(10, 0.3) == 30
    c = private_glm_constants(PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd"), 5000, 3, 18.39, KS, 2.0)
    assert c.sgd_epochs_o == authors_sgd_epochs(c.call_budget_o[0])
    assert c.sgd_epochs_tau == authors_sgd_epochs(c.call_budget_tau[0])


# --- validation --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"optimizer": "sgd"}, "optimizer"),
        ({"sgd_noise": "half"}, "sgd_noise"),
        ({"sgd_clip": 0.0}, "sgd_clip"),
        ({"sgd_clip": math.inf}, "sgd_clip"),
        ({"sgd_lr": -1.0}, "sgd_lr"),
        ({"sgd_ridge": -1e-5}, "sgd_ridge"),
        ({"sgd_sampling_rate": 0.0}, "sgd_sampling_rate"),
        ({"sgd_sampling_rate": 1.5}, "sgd_sampling_rate"),
        ({"sgd_epochs": 0}, "sgd_epochs"),
        ({"sgd_burn_in": -1}, "sgd_burn_in"),
    ],
)
def test_bad_sgd_options_name_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        PrivateGLMParams(epsilon=4.0, **kw)


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"sgd_sampling_rate": True}, "sgd_sampling_rate"),
        ({"sgd_epochs": 2.5}, "sgd_epochs"),
        ({"sgd_lr": "0.1"}, "sgd_lr"),
    ],
)
def test_sgd_options_of_the_wrong_type_name_the_parameter(kw, name):
    with pytest.raises(TypeError, match=name):
        PrivateGLMParams(epsilon=4.0, **kw)


def test_calibration_bad_input():
    with pytest.raises(ValueError, match="sampling_rate"):
        dp_sgd_noise_multiplier(1.0, 1e-3, 0.0, 10)
    with pytest.raises(ValueError, match="steps"):
        dp_sgd_noise_multiplier(1.0, 1e-3, 0.5, 0)


# --- the optimiser's noise: seeded statistical test and its twin ----------------------------------------------------


def _one_step_noise(sigma_added: float, runs: int, seed: int, q: float = 1.0) -> tuple[np.ndarray, float]:
    """Run one DP-SGD step (1 epoch, no burn-in) on real data and on the same data without noise; return
    the released noise (θ_private − θ_noiseless)·q n/lr per run and coordinate, and q n/lr."""
    rng = np.random.default_rng(seed)
    n, d = 40, 3
    X = rng.normal(size=(runs, n, d))
    X /= np.maximum(np.linalg.norm(X, axis=2, keepdims=True), 1.0)
    y = (rng.random((runs, n)) < 0.5).astype(float)
    mask = np.ones((runs, n))
    theta0 = rng.normal(size=(runs, d)) * 0.3
    link = get_link("probit")
    p = PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd", sgd_burn_in=0, sgd_sampling_rate=q)
    free = PrivateGLMParams(epsilon=None, optimizer="dp-sgd", sgd_burn_in=0, sgd_sampling_rate=q)
    noisy = _fit_sgd(np.random.default_rng(seed + 1), link, theta0, X, y, mask, sigma_added, 1, 1, p)
    clean = _fit_sgd(np.random.default_rng(seed + 1), link, theta0, X, y, mask, 0.0, 1, 1, free)
    scale = q * n / p.sgd_lr
    return (clean - noisy) * scale, scale


def _variance_test_p(noise: np.ndarray, sigma: float) -> float:
    """Two-sided p-value of Σ noise²/σ² ~ χ²(size) (zero mean, variance σ² per coordinate)."""
    stat = float(np.sum((noise / sigma) ** 2))
    k = noise.size
    return 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))


def test_sgd_step_noise_has_the_declared_std():
    """Seed fixed; under the declared law (N(0, (2C z)² I) on the clipped sum) this test fails with
    probability 1e-4 (two-sided χ² on 6000 coordinates, plus a |mean| test at 1e-4)."""
    c = private_glm_constants(PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd"), 5000, 3, 18.39, KS, 2.0)
    sigma = c.sigma_opt_tau
    assert sigma == pytest.approx(2 * 0.2 * c.noise_multiplier_tau)
    noise, _ = _one_step_noise(sigma, 2000, seed=11)
    assert _variance_test_p(noise, sigma) > 1e-4
    z = noise.mean(axis=0) / (sigma / math.sqrt(noise.shape[0]))
    assert np.all(np.abs(z) < stats.norm.isf(1e-4 / 6))


def test_sgd_step_noise_twin_fails_when_the_noise_is_perturbed():
    """The same test must reject the authors' noise C·z (half the std) and a 10% perturbation."""
    c = private_glm_constants(PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd"), 5000, 3, 18.39, KS, 2.0)
    sigma = c.sigma_opt_tau
    for added in (sigma / 2, sigma * 0.9, sigma * 1.1):
        noise, _ = _one_step_noise(added, 2000, seed=11)
        assert _variance_test_p(noise, sigma) < 1e-4


def test_poisson_sampling_is_unbiased_and_random():
    """At q = 0.5 each example enters a step with probability 0.5 and the step divides by q n: over 4000
    runs the mean sampled step equals the full-batch step (z-test per coordinate, false-failure rate
    1e-4 in all), and the steps do vary."""
    rng = np.random.default_rng(5)
    runs, n, d = 4000, 40, 3
    X = rng.normal(size=(1, n, d)).repeat(runs, axis=0)
    X /= np.maximum(np.linalg.norm(X, axis=2, keepdims=True), 1.0)
    y = (rng.random((1, n)) < 0.5).astype(float).repeat(runs, axis=0)
    theta0 = np.zeros((runs, d))
    link = get_link("probit")
    half = PrivateGLMParams(epsilon=None, optimizer="dp-sgd", sgd_burn_in=0, sgd_sampling_rate=0.5)
    full = PrivateGLMParams(epsilon=None, optimizer="dp-sgd", sgd_burn_in=0, sgd_sampling_rate=1.0)
    sampled = _fit_sgd(np.random.default_rng(6), link, theta0, X, y, np.ones((runs, n)), 0.0, 1, 1, half)
    exact = _fit_sgd(np.random.default_rng(6), link, theta0[:1], X[:1], y[:1], np.ones((1, n)), 0.0, 1, 1, full)
    se = sampled.std(axis=0, ddof=1) / math.sqrt(runs)
    assert np.all(np.abs(sampled.mean(axis=0) - exact[0]) < stats.norm.isf(1e-4 / 6) * se)
    assert np.all(sampled.std(axis=0) > 0.01)


def test_dp_sgd_runs_end_to_end_and_is_reproducible():
    env = paper_glm_environment(np.random.default_rng(109832), 3, 20, 2000, 2.0, "probit")
    data = env.sample(np.random.default_rng(1), 2)
    p = PrivateGLMParams(epsilon=4.0, optimizer="dp-sgd", sgd_sampling_rate=0.5)
    a = run_private_glm(env, data, p, np.random.default_rng(2))
    b = run_private_glm(env, data, p, np.random.default_rng(2))
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.theta_tau, b.theta_tau)
    assert np.all(a.calls_tau >= 1) and np.all(np.isfinite(a.theta_tau))


def test_registered_private_glm_takes_the_optimizer():
    """`dpaudit regret/budget private-glm --optimizer dp-sgd` reach the DP-SGD accounting."""
    from dpaudit.algorithms.glm.registration import _privacy_private_glm

    sgd = _privacy_private_glm(5000, optimizer="dp-sgd")
    gd = _privacy_private_glm(5000)
    assert "DP-SGD" in sgd.note and "DP-SGD" not in gd.note
    assert 0 < sgd.corrected.epsilon <= sgd.claim.epsilon and 0 < gd.corrected.epsilon <= gd.claim.epsilon
    with pytest.raises(ValueError, match="optimizer"):
        _privacy_private_glm(5000, optimizer="adam")


def test_authors_first_commit_tree_has_no_accounting():
    with pytest.raises(ValueError, match="tree_query"):
        private_glm_privacy(PrivateGLMParams(epsilon=4.0, tree_query="ab8fd16"), 5000, 3, 18.39, KS, 2.0)
    with pytest.raises(ValueError, match="tree_query"):
        PrivateGLMParams(epsilon=4.0, tree_query="buggy")
    with pytest.raises(ValueError, match="count2_factor"):
        PrivateGLMParams(epsilon=4.0, count2_factor=0.0)


def _authors_query(values, height):
    """The authors' ab8fd16 `BinaryTreeMechanism.update`/`query` without noise, transcribed line by line."""
    tree = [0.0] * (2**height)
    out = []
    for count, v in enumerate(values, start=1):
        index = count + 2 ** (height - 1) - 1
        while index > 0:
            tree[index] += v
            index //= 2
        leaf = count + 2 ** (height - 1) - 1
        result, current = 0.0, leaf
        while current > 0:
            if current % 2 == 0:  # their test for a right child (even heap indices are left children)
                result += tree[current - 1]
            current //= 2
        out.append(result + tree[leaf])
    return out


@pytest.mark.parametrize("horizon", [16, 100, 5000])
def test_authors_first_commit_tree_matches_their_query(horizon):
    """AuthorsFirstCommitTree without noise equals the authors' first-commit query and is not the prefix
    sum: with unit leaves it over-counts about 2x at t = 1100 (2049) when T = 5000."""
    from dpaudit.algorithms.glm.private_glm import AuthorsFirstCommitTree

    tree = AuthorsFirstCommitTree(horizon, 0.0, 1, np.random.default_rng(0), 1)
    leaves = np.random.default_rng(horizon).random(horizon)
    got = [float(tree.insert(np.full((1, 1, 1), v))[0, 0, 0]) for v in leaves]
    want = _authors_query(leaves.tolist(), math.ceil(math.log2(horizon)) + 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert not np.allclose(got, np.cumsum(leaves))
    if horizon == 5000:
        ones = AuthorsFirstCommitTree(horizon, 0.0, 1, np.random.default_rng(0), 1)
        unit = [float(ones.insert(np.ones((1, 1, 1)))[0, 0, 0]) for _ in range(1100)]
        assert unit[-1] == 2049.0
