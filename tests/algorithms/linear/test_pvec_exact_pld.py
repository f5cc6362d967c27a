"""The tightest sound budget of LinUCB-SDP-Vec (Chowdhury & Zhou, "Shuffle Private Linear Contextual Bandits",
ICML 2022, §3.3 P_Vec): a PLD of the exact binomial counts built on a loss grid (`binomial_loss_pld`), against
independent computations: the exact binomial tails (one label), dp-accounting's enumerated PLD with optimistic
rounding (a lower bound, where enumeration is possible), and the counts' normal limit (the paper's b ~ 10⁹)."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

from dpaudit import accounting
from dpaudit.accounting.binomial import binomial_delta
from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.algorithms.linear.claims import pvec_exact_epsilon
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPVec, vec_parameters
from dpaudit.algorithms.shuffle_claims import binomial_loss_pld, bit_sum_pld


@pytest.mark.parametrize("trials, shift", [(100_000, 18), (20 * 46_909_183, 18), (2**52, 566)])
def test_one_label_against_the_exact_binomial_tails(trials, shift):
    """δ(ε) of the grid PLD is above the exact hockey-stick divergence (level sets of the likelihood ratio,
    incomplete beta functions; an upper bound, within scipy's error bounds) at every ε of a grid, and within 3% + 10⁻¹² of
    it (2.6% seen at 2⁵² trials, where the grid's tails carry their error bound)."""
    pld = binomial_loss_pld(trials, 0.25, shift)
    mu = shift / math.sqrt(trials * 0.25 * 0.75)
    for eps in np.linspace(0.0, 4 * mu, 9):
        exact = binomial_delta(trials, 0.25, shift, float(eps))
        grid = pld.get_delta_for_epsilon(float(eps))
        assert exact * (1 - 1e-9) <= grid <= exact * 1.03 + 1e-12


def _optimistic_enumerated(trials: int, p: float, shift: int, vdi: float) -> pld_lib.PrivacyLossDistribution:
    """dp-accounting's PLD of the enumerated counts, losses rounded down and truncated mass dropped: its δ(ε)
    never exceeds the exact one (a lower reference)."""
    x = np.arange(trials + 1)
    logpmf = stats.binom.logpmf(x, trials, p)
    base = dict(zip(x.tolist(), logpmf.tolist()))
    shifted = dict(zip((x + shift).tolist(), logpmf.tolist()))
    return pld_lib.from_two_probability_mass_functions(
        base,
        shifted,
        pessimistic_estimate=False,
        value_discretization_interval=vdi,
        symmetric=False,
        log_mass_truncation_bound=-60.0,
    )


def test_composed_labels_between_the_enumerated_optimistic_pld_and_five_percent_above():
    trials, shift, labels = 20_000, 6, 20
    lower = _optimistic_enumerated(trials, 0.25, shift, 2e-5).self_compose(labels)
    grid = bit_sum_pld(1, labels, shift // 2, trials, 0.25)  # cap 2g = 6, Bin(1·b, p) per label
    for delta in (1e-3, 1e-6, 1e-9):
        exact_below = lower.get_epsilon_for_delta(delta)
        value = grid.get_epsilon_for_delta(delta)
        assert exact_below <= value <= 1.05 * exact_below


def test_linucb_sdp_vec_default_budget_tightest_value():
    """Paper's experiment parameters (d = 5, B = 20, ε = 1, δ = 0.1; `dpaudit budget linucb-sdp-vec --horizon 2000
    --batch 20 --at-delta 1e-6`): the approx row (KOV composition of one (ε0, δ0) point per label) says 0.0799;
    the exact counts' PLD says 0.0197, above the normal-limit value and within 2% of it."""
    g, b, p = vec_parameters(1.0, 0.1, 20, 5, 2000)
    mu = 2 * g * math.sqrt(20) / math.sqrt(20 * b * p * (1 - p))  # 20 labels, Bin(B b, p), shift 2g
    declared = LinUCBSDPVec(epsilon=1.0, delta=0.1, batch=20).privacy(2000, dim=5)
    for delta, approx_row in ((1e-3, 0.0130), (1e-6, 0.0799)):
        value = pvec_exact_epsilon(g, b, p, 5, 20, delta)
        assert accounting.epsilon(declared.event, delta, "approx") == pytest.approx(approx_row, rel=1e-2)
        assert gaussian_epsilon(mu, delta) <= value <= 1.03 * gaussian_epsilon(mu, delta)
        assert value < approx_row / 3


def test_returning_users_compose_the_batches():
    """Returning users (Thm 4.2(ii)): M = T/B = 100 batches of the returning b; within 6% above the normal limit."""
    g, b, p = vec_parameters(1.0, 0.1, 20, 5, 2000, "returning")
    mu = 2 * g * math.sqrt(20 * 100) / math.sqrt(20 * b * p * (1 - p))
    value = pvec_exact_epsilon(g, b, p, 5, 20, 1e-6, batches=100)
    assert gaussian_epsilon(mu, 1e-6) <= value <= 1.06 * gaussian_epsilon(mu, 1e-6)


def test_loss_grid_refuses_counts_beyond_float_exactness():
    with pytest.raises(ValueError, match="2\\^52"):
        binomial_loss_pld(2**52 + 1, 0.25, 4)
    with pytest.raises(ValueError, match="b must be >= 1"):
        bit_sum_pld(10, 3, 4, 0)
