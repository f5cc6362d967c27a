"""LinUCB-SDP-Vec's whole-run budget (Chowdhury & Zhou, "Shuffle Private Linear Contextual Bandits", ICML 2022,
§3.3 P_Vec, Thms 3.5 and 4.2(ii)) states the tightest sound value: the `pld` accountant's privacy loss distribution
of the exact binomial counts (a grid of losses, `dpaudit.accounting.binomial_loss`), the same figure as
`pvec_exact_epsilon`, checked against the sum of the batch's counts (a post-processing, its exact ε a lower bound)
and the counts' normal limit. Exact computations: no false failures."""

import math

import pytest

from dpaudit import accounting
from dpaudit.accounting.binomial import binomial_epsilon
from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.algorithms.linear.claims import pvec_exact_epsilon
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPVec
from dpaudit.budgets import algorithm_budget


def test_budget_at_ten_thousand_users_is_the_exact_counts_pld():
    """`dpaudit budget linucb-sdp-vec --horizon 10000 --delta 1e-6`: 0.0067917 from the pld row (the approx row,
    one (ε0, δ0) point of each label's profile composed, says 0.026893), 0.4% above the lower bound of the
    batch's sum of 20 counts, and pvec_exact_epsilon's figure."""
    out = algorithm_budget("linucb-sdp-vec", 10_000, {"delta": 1e-6})
    rows = {r["accountant"]: r for r in out["results"]}
    assert rows["pld"]["supported"] and out["best"]["accountant"] == "pld"
    assert out["corrected"]["epsilon"] == pytest.approx(0.0067917, rel=1e-4) == rows["pld"]["epsilon"]
    assert "pld accountant" in out["corrected"]["source"]
    assert rows["approx"]["epsilon"] == pytest.approx(0.026893, rel=1e-4)
    algo = LinUCBSDPVec(delta=1e-6)
    g, b, p = algo.parameters(5, 10_000)
    lower = binomial_epsilon(20 * 20 * b, p, 20 * 2 * g, 1e-6)  # 20 users per batch, 20 labels, shift 2g each
    assert lower <= out["corrected"]["epsilon"] <= 1.005 * lower
    assert out["corrected"]["epsilon"] == pytest.approx(pvec_exact_epsilon(g, b, p, 5, 20, 1e-6), rel=1e-5)


def test_paper_defaults():
    """T = 20000, δ = 0.1 (the experiments', §5): the counts are (0, 0.1)-DP, written ε = 1e-12; at δ = 1e-6 the
    pld row says 0.0197 (approx 0.0799)."""
    declared = LinUCBSDPVec().privacy(20_000, dim=5)
    assert declared.corrected.epsilon == 1e-12 and declared.corrected.delta == 0.1
    assert "pld accountant" in declared.corrected.source
    assert accounting.epsilon(declared.event, 1e-6, "pld") == pytest.approx(0.0197, abs=1e-4)


def test_returning_users_are_accounted_from_the_counts_with_at_most_2_52_bits():
    """Returning users (Thm 4.2(ii)), T = 10000, δ = 1e-6: each count has 4.7e15 noise bits, accounted with 2^52 (a
    count with fewer is at least as revealing), so both accountants answer (before: neither, and the theorem's
    3.25 was stated); the pld value is above the normal limit of the 500 batches' 20 counts and within 30% of it."""
    declared = LinUCBSDPVec(delta=1e-6, users="returning").privacy(10_000, dim=5)
    assert "2^52" in declared.note and "pld accountant" in declared.corrected.source
    g = LinUCBSDPVec(delta=1e-6, users="returning").parameters(5, 10_000)[0]
    mu = 2 * g * math.sqrt(20 * 500) / math.sqrt(2**52 * 0.25 * 0.75)
    assert gaussian_epsilon(mu, 1e-6) <= declared.corrected.epsilon <= 1.3 * gaussian_epsilon(mu, 1e-6)
    assert declared.corrected.epsilon < dict(declared.implied)["theorem"].epsilon / 1000
