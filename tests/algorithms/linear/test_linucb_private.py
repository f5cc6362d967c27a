"""Private linear bandits: LinUCB-JDP, LinUCB-LDP, LinUCB-SDP-Amp/Vec (constants, privacy, regret, releases)."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms.linear.environment import ContextTable, paper_vectors
from dpaudit.algorithms.linear.linucb import LinUCB, run_batched_linucb, simulate_linear
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP, jdp_sigma
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP, ldp_sigma
from dpaudit.algorithms.linear.shuffle_linucb import (
    AmpSums,
    LinUCBSDPAmp,
    LinUCBSDPVec,
    VecSums,
    amp_sigma,
    returning_budget,
    vec_parameters,
)
from dpaudit.registry import ALGORITHMS

PRIVATE = (LinUCBJDP, LinUCBLDP, LinUCBSDPAmp, LinUCBSDPVec)


# -- constants: test vectors (Chowdhury & Zhou (ICML 2022), Thms B.1/E.3 and the authors' code, §5 fn. 7) ----------


def test_amp_sigma_matches_the_test_vectors():
    assert amp_sigma(0.12045, 1e-6, 1000, 10**5) == pytest.approx(26.31, abs=0.01)
    assert amp_sigma(0.2, 0.1, 20, 20000) == pytest.approx(27.29, abs=0.01)
    assert amp_sigma(0.2, 0.1, 20, 20000, noise="code") == pytest.approx(2.787, abs=0.001)
    ratio = amp_sigma(1, 1e-5, 400, 20000, "returning", "derived") / amp_sigma(
        1, 1e-5, 400, 20000, "returning", "paper"
    )
    assert 1.15 < ratio < 1.2  # the paper's log(2/delta_m) ~ log(2/delta) simplification under-noises by ~17%


def test_returning_budget_composes_back_to_the_target():
    eps_m, delta_m = returning_budget(1.0, 0.1, 50)
    assert eps_m == pytest.approx(1.0 / (2 * math.sqrt(2 * 50 * math.log(20))))
    assert delta_m == pytest.approx(0.1 / 100)


def test_vec_parameters_code_and_paper():
    assert vec_parameters(0.2, 0.1, 20, 5, 20000, noise="code") == (9, 1530, 0.25)
    g, b, p = vec_parameters(0.2, 0.1, 20, 5, 20000)
    assert (g, p) == (9, 0.25) and b > 10**9  # the theory constant: pure noise at B = 20
    with pytest.raises(ValueError, match="b = 0"):
        vec_parameters(40.0, 0.1, 20, 5, 20000, noise="code")  # the code's b truncates to 0


def test_ldp_and_jdp_sigma():
    assert ldp_sigma(1.0, 0.1) == pytest.approx(4 * math.sqrt(2 * math.log(25)))
    assert ldp_sigma(1.0, 0.1, "code") == pytest.approx(math.sqrt(math.log(25)))
    # Shariff & Sheffet: 4 sqrt(m) L~^2 ln(4/delta)/eps with m = ceil(log2 n) + 1 = 5 for n = 16
    assert jdp_sigma(1.0, 0.1, 16) == pytest.approx(4 * math.sqrt(5) * 2 * math.log(40))


# -- validation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=float("nan")), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(batch=0), "batch"),
        (dict(noise="fast"), "noise"),
    ],
)
def test_private_algorithms_reject_nonsense(cls, kwargs, name):
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)


def test_shuffle_specific_validation():
    with pytest.raises(ValueError, match="users"):
        LinUCBSDPAmp(users="everyone")
    with pytest.raises(ValueError, match="vec_range"):
        LinUCBSDPVec(vec_range="wide")
    with pytest.raises(ValueError, match="noise"):
        LinUCBSDPVec(users="returning", noise="derived")
    with pytest.raises(ValueError, match="dim"):
        simulate_linear(LinUCBSDPAmp(noise="code"), 100, 2, 0, dim=0)
    with pytest.raises(ValueError, match="arms"):
        simulate_linear(LinUCBSDPAmp(noise="code"), 100, 2, 0, n_arms=1)


# -- privacy declarations -------------------------------------------------------------------------------


def test_privacy_declarations():
    amp = LinUCBSDPAmp(epsilon=0.12045, delta=1e-6, batch=1000).privacy(10**5, dim=5)
    assert (amp.relation, amp.trust_model) == ("user", "shuffle")
    assert amp.corrected.epsilon == pytest.approx(0.576, abs=0.001)  # Lemma B.4 certified, ~4.8x the nominal eps
    assert amp.corrected.delta == pytest.approx(3.8e-6, rel=0.01)
    # local messages: sensitivities 2 and sqrt(2) at sigma; the batch sum has sqrt(B) times the noise
    sigma = amp_sigma(0.12045, 1e-6, 1000, 10**5)
    assert amp.event.noise_multiplier == pytest.approx(sigma / math.sqrt(6))
    assert amp.lower_event.noise_multiplier == pytest.approx(sigma * math.sqrt(1000) / math.sqrt(6))

    paper_b20 = LinUCBSDPAmp(epsilon=0.2, batch=20).privacy(20000, dim=5)
    assert "Lemma B.4 does not apply" in paper_b20.note  # B = 20: falls back to the local messages' epsilon
    assert "no amplification" in paper_b20.corrected.source and paper_b20.corrected.epsilon < 0.2

    ret = LinUCBSDPAmp(epsilon=1.0, batch=200, users="returning").privacy(20000, dim=5)
    assert ret.relation == "returning-user"
    assert isinstance(ret.event, dp_accounting.SelfComposedDpEvent) and ret.event.count == 100

    vec = LinUCBSDPVec(epsilon=0.2).privacy(20000, dim=5)  # theorem b ~ 1e9: the exact binomial epsilon is ~0
    assert vec.corrected.epsilon < 0.2
    assert dict(vec.implied)["theorem"].epsilon == pytest.approx(0.8, rel=1e-6)  # 2 invocations x doubled range
    code = LinUCBSDPVec(epsilon=0.2, noise="code").privacy(20000, dim=5)  # b = 1530: exact binomial PLD
    assert 1.0 < code.corrected.epsilon < 1.6  # the authors' constants do not give the claimed 0.2
    amp_code = LinUCBSDPAmp(epsilon=1.0, noise="code").privacy(20000, dim=5)
    assert amp_code.corrected.epsilon > 10  # local messages only: ~14.4 at delta = 0.1

    jdp = LinUCBJDP(epsilon=1.0).privacy(1024, dim=5)
    assert jdp.trust_model == "joint" and jdp.event.count == 11  # 1024 leaves: 11 nodes hold leaf 1
    user_level = LinUCBJDP(epsilon=1.0, user_rounds=3)
    assert user_level.sigma(1024) == pytest.approx(3 * LinUCBJDP(epsilon=1.0).sigma(1024))
    assert user_level.privacy(1024, dim=5).relation == "returning-user"
    assert user_level.privacy(1024, dim=5).event.event.noise_multiplier == pytest.approx(
        jdp.event.event.noise_multiplier
    )
    ldp = LinUCBLDP(epsilon=2.0).privacy(100, dim=5)
    assert ldp.trust_model == "local" and "not backed" in ldp.note
    for name in ("linucb", "linucb-jdp", "linucb-ldp", "linucb-sdp-amp", "linucb-sdp-vec"):
        assert name in ALGORITHMS


# -- regret sanity -------------------------------------------------------------------------------------


def test_private_regret_is_at_least_non_private():
    """Same instances (seed), T = 1500, 8 runs: every private variant has more mean regret than LinUCB."""
    base = simulate_linear(LinUCB(), 1500, 8, 5).final_mean
    for alg in (
        LinUCBJDP(noise="code"),
        LinUCBLDP(noise="code"),
        LinUCBSDPAmp(noise="code"),
        LinUCBSDPVec(noise="code"),
        LinUCBSDPAmp(epsilon=1.0, batch=100, users="returning"),
    ):
        curves = simulate_linear(alg, 1500, 8, 5)
        assert curves.final_mean > base, alg


# -- releases: batch bookkeeping and noise laws --------------------------------------------------------


def _table(users, dim=3, arms=2, seed=0, zero=False):
    rng = np.random.default_rng(seed)
    feats = np.zeros((users, arms, dim)) if zero else np.repeat(paper_vectors(rng, (users, 1), dim), arms, axis=1)
    return ContextTable(features=feats, rewards=np.ones((users, arms)))


def test_each_user_enters_exactly_one_batch_release():
    """Only user 17 has data; with negligible noise only batch 17 // B's release moves (Chowdhury & Zhou (ICML 2022),
    Alg. 1: a batch's shuffled messages are its own users')."""
    feats = np.zeros((40, 2, 3))
    feats[17] = [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    tab = ContextTable(features=feats, rewards=np.ones((40, 2))).with_runs(2)
    res = run_batched_linucb(
        tab, AmpSums(1e-12, 3, 10), np.random.default_rng(0), batch=10, regularizer=1.0, record=True
    )
    u = res.released["u"]  # (runs, 4 batches, d)
    assert u.shape == (2, 4, 3)
    np.testing.assert_allclose(u[:, 1, 0], 1.0, atol=1e-9)
    np.testing.assert_allclose(np.delete(u, 1, axis=1), 0.0, atol=1e-9)


def _amp_z(sigma_used, sigma_claimed, size=3000):
    """Standardised released vector sums of one batch (B = 10 users, table data), via the audit target path."""
    tab = _table(10)
    res = run_batched_linucb(
        tab.with_runs(size),
        AmpSums(sigma_used, 3, 10),
        np.random.default_rng(11),
        batch=10,
        regularizer=1.0,
        record=True,
    )
    true = (tab.rewards[:, :1] * tab.features[:, 0]).sum(axis=0)  # both arms of a user are identical
    return ((res.released["u"][:, 0] - true) / (sigma_claimed * math.sqrt(10))).ravel()


def test_amp_release_has_the_stated_noise():
    """KS test of the standardised batch sum against N(0, 1). False-failure rate: 0.1% (p < 1e-3)."""
    assert stats.kstest(_amp_z(0.7, 0.7), "norm").pvalue > 1e-3


def test_amp_release_twin_halved_noise_is_detected():
    """Twin: an implementation with half the claimed noise must fail the same test."""
    assert stats.kstest(_amp_z(0.35, 0.7), "norm").pvalue < 1e-3


def _vec_var(bits_used, bits_claimed, size=4000):
    """Sample variance of released vector entries over its claimed value (zero data: no rounding noise)."""
    g, p, users = 4, 0.25, 10
    tab = _table(users, zero=True).with_runs(size)
    res = run_batched_linucb(
        tab,
        VecSums(g, bits_used, p, 3, users, "paper"),
        np.random.default_rng(5),
        batch=users,
        regularizer=1.0,
        record=True,
    )
    u = res.released["u"][:, 0].ravel()
    claimed = (1.0 / g) ** 2 * users * bits_claimed * p * (1 - p)
    return u, claimed


def test_vec_release_is_unbiased_with_the_binomial_variance():
    """Mean 0 (z-test) and variance (1/g)^2 B b p(1-p) (chi-square, two-sided). False-failure rate <= 0.2%."""
    u, claimed = _vec_var(50, 50)
    z = u.mean() / math.sqrt(claimed / u.size)
    assert abs(z) < stats.norm.ppf(1 - 0.0005)
    chi = (u.size - 1) * u.var(ddof=1) / claimed
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], u.size - 1)
    assert lo < chi < hi


def test_vec_release_twin_half_the_noise_bits_is_detected():
    u, claimed = _vec_var(25, 50)
    chi = (u.size - 1) * u.var(ddof=1) / claimed
    assert chi < stats.chi2.ppf(0.0005, u.size - 1)


def test_audit_target_shapes():
    tab = _table(40)
    for alg, width in (
        (LinUCBSDPAmp(batch=10, noise="code"), 4 * (3 + 9)),
        (LinUCBSDPVec(batch=20, noise="code"), 2 * 12),
    ):
        out = alg.target("released")(tab, np.random.default_rng(0), 5)
        assert out.shape == (5, width)
        acts = alg.target("actions")(tab, np.random.default_rng(0), 5)
        assert acts.shape == (5, 40)
        assert alg.target("model")(tab, np.random.default_rng(0), 5).shape == (5, 3)
    jdp = LinUCBJDP(batch=10, noise="code").target("released")(tab, np.random.default_rng(0), 3)
    assert jdp.shape == (3, 2 * 4 * 16)  # 4 batches x (prefix, node) of (d+1)^2
    with pytest.raises(ValueError, match="observable"):
        LinUCBSDPAmp().target("everything")
