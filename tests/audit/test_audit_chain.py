"""The chain-rule family (dpaudit.audit.chain): exact properties, coverage, its twin, power on the SVT.

Coverage: the auditor's candidates restricted to the chain family, N audits with fixed seeds of a
halting randomized-response mechanism whose true epsilon is 1; the count of epsilon_lower > 1 is
asserted <= c, the smallest c with P[Binomial(N, 0.05) > c] <= 0.005: an auditor exactly at its
nominal 5% would fail the check with probability <= 0.5% (the seeds are fixed, so the outcome is too).
The twin (reports at eps 1/2 instead of 1/4: true epsilon 2) must fail the same check.
benchmarks/power_coverage.py runs 1000 audits (`--only chain-log-ratio`).
"""

import math

import numpy as np
from test_audit_coverage import exceedances as coverage_exceedances
from test_audit_coverage import tolerance

from dpaudit.audit import audit
from dpaudit.audit.chain import ChainLogRatio, _halts, column_groups, fit_chain_score, fit_chain_scores

CONFIDENCE = 0.95
CHAIN = ("chain-log-ratio",)  # the auditor's candidates restricted to the chain family


def rr_halting(eps_bit: float, k: int = 4, c: int = 2):
    """k randomized responses of the bit x at eps_bit; after the c-th reported 1 the rest is -1.
    Every reported bit adds +-eps_bit to the log ratio: true epsilon k * eps_bit (all k reported 0)."""

    def target(data, rng, size):
        keep = rng.random((size, k)) < np.exp(eps_bit) / (1 + np.exp(eps_bit))
        bits = (keep == bool(data)).astype(np.int64)
        before = np.cumsum(bits, axis=1) - bits
        return np.where(before >= c, -1, bits)

    return target


def rr_pattern_log_ratio(row: np.ndarray, eps_bit: float) -> float:
    """Exact log P(row | x = 1) / P(row | x = 0) of `rr_halting`: +eps per reported 1, -eps per 0."""
    return eps_bit * (int(np.sum(row == 1)) - int(np.sum(row == 0)))


# --- exact properties -------------------------------------------------------------------------


def test_column_groups_join_overlapping_codes_only():
    sets = [np.array([-1000.0]), np.array([-2000.0, -1000.0]), np.array([-1.0, 0.0, 1.0]), np.array([0.0, 1.0])]
    g = column_groups(sets)
    assert g[0] == g[1] and g[2] == g[3] and g[0] != g[2]


def test_halting_state_is_detected_and_independent_bits_are_not():
    rng = np.random.default_rng(0)
    x = rr_halting(0.25)(1.0, rng, 2_000).astype(float)
    sets = [np.unique(x[:, j]) for j in range(x.shape[1])]
    assert _halts(x, sets)
    bits = rng.integers(0, 2, (2_000, 4)).astype(float)
    assert not _halts(bits, [np.array([0.0, 1.0])] * 4)
    assert fit_chain_scores(bits, rng.integers(0, 2, (2_000, 4))) == []
    assert fit_chain_scores(rng.normal(size=(100, 3)), rng.normal(size=(100, 3))) == []  # no atoms


def test_chain_score_approaches_the_exact_pattern_log_ratio():
    # 2 * 10^5 fit rows per side: every conditional is estimated to about 0.01, so each of the 11
    # patterns' chain score is within 0.06 of its exact log ratio (shrinkage: 0.5 s.e. per term).
    eps = 0.25
    target = rr_halting(eps)
    rng = np.random.default_rng(1)
    x0, x1 = target(1.0, rng, 200_000).astype(float), target(0.0, rng, 200_000).astype(float)
    sets = [np.unique(np.concatenate([x0[:, j], x1[:, j]])) for j in range(4)]
    sc = fit_chain_score(x0, x1, sets)
    assert isinstance(sc, ChainLogRatio)
    rows = np.unique(x0, axis=0)
    assert len(rows) == 11  # 0..4 reports before the halt: 1 + 4 + 6 patterns with at most two 1s
    got = sc(rows)
    want = np.array([rr_pattern_log_ratio(r, eps) for r in rows])
    assert np.max(np.abs(got - want)) < 0.06, np.c_[rows, got, want]


def test_unseen_histories_add_nothing():
    rng = np.random.default_rng(2)
    x0, x1 = rr_halting(0.25)(1.0, rng, 5_000).astype(float), rr_halting(0.25)(0.0, rng, 5_000).astype(float)
    sc = fit_chain_score(x0, x1, [np.array([-1.0, 0.0, 1.0])] * 4)
    # halted from the first coordinate on: no fitted cell has this history, so the score is 0
    assert sc(np.array([[-1.0, -1.0, -1.0, -1.0]]))[0] == 0.0
    assert sc(np.array([[0.0, 0.0, 0.0, 0.0]]))[0] < 0 < sc(np.array([[1.0, 1.0, -1.0, -1.0]]))[0]


# --- coverage (statistical) -------------------------------------------------------------------


def exceedances(target, true_eps, audits, samples=2_000, seed0=0):
    return coverage_exceedances(
        target, true_eps, audits, samples, seed0=seed0, d0=1.0, d1=0.0, progress=False, families=CHAIN
    )


def test_chain_family_coverage():
    audits = 60
    assert tolerance(audits) == 8
    count, lows = exceedances(rr_halting(0.25), 1.0, audits)
    used = audit(
        rr_halting(0.25), 1.0, 0.0, claim_epsilon=1.0, samples=2_000, seed=0, executor="serial", families=CHAIN
    )
    assert count <= tolerance(audits), count
    assert lows.mean() > 0.2  # and the family does find something
    assert "chain-log-ratio" in used.directions[0].event + used.directions[1].event


def test_chain_coverage_twin_fails_when_the_reports_are_less_noisy():
    # Reports at eps 1/2 instead of 1/4: true epsilon 2, checked against 1.
    audits = 30
    count, _ = exceedances(rr_halting(0.5), 1.0, audits, samples=5_000, seed0=300)
    assert count > tolerance(audits)


# --- power ------------------------------------------------------------------------------------


def svt4(q, c: int = 2, eps: float = 0.5):
    """SVT4 of Lyu, Su, Li (PVLDB 2017, Alg. 4): eps1 = eps/4, rho ~ Lap(1/eps1), nu ~ Lap(1/eps2) per
    query (not scaled by c: its flaw), threshold 1; 1 above, 0 below, -1 after the c-th above."""
    q = np.asarray(q, float)
    eps1 = eps / 4

    def target(data, rng, size):
        rho = rng.laplace(0.0, 1 / eps1, (size, 1))
        above = (
            q * float(data) + (1 - float(data)) * q[::-1] + rng.laplace(0.0, 1 / (eps - eps1), (size, len(q)))
            >= rho + 1
        )
        count = np.cumsum(above, axis=1)
        before = np.concatenate([np.zeros((size, 1), dtype=count.dtype), count[:, :-1]], axis=1)
        return np.where(before >= c, -1, above.astype(np.int64))

    return target


def test_chain_family_is_chosen_on_a_halting_svt():
    # SVT4 with c = 2 on queries [2]*3 + [0]*3 vs reversed, claim eps = 0.5: every family is a
    # candidate; the chain family is fitted on the whole selection split and must win the selection.
    res = audit(svt4([2.0] * 3 + [0.0] * 3), 1.0, 0.0, claim_epsilon=0.5, samples=50_000, seed=3, executor="serial")
    assert any(d.event.startswith(("chain-log-ratio", "-chain-log-ratio")) for d in res.directions)
    assert math.isfinite(res.epsilon_lower) and res.epsilon_lower > 0.0


# --- importance-weighted rates of the threshold choice (dpaudit.audit.selection._mixed_rates) -----


def test_mixed_rates_are_exact_for_the_exact_log_ratio_on_exact_proportions():
    # Two outputs A, B with P0 = (3/4, 1/4), P1 = (1/4, 3/4); the score is the exact log ratio
    # (+-log 3) and the runs hold the outputs in exactly these proportions: the importance-weighted
    # estimates P1 = E0[exp(-s) 1_E], P0 = E1[exp(s) 1_E] equal the plain fractions, for both signs.
    from dpaudit.audit.selection import _exceed, _mixed_rates

    s = math.log(3.0)
    u0 = np.sort(np.array([s] * 75 + [-s] * 25))
    u1 = np.sort(np.array([s] * 25 + [-s] * 75))
    for sign in (1, -1):
        t = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
        p0, p1 = _exceed(u0, sign, t) / 100, _exceed(u1, sign, t) / 100
        m0, m1 = _mixed_rates(u0, u1, sign, t, p0, p1)
        np.testing.assert_allclose(m0, p0, atol=1e-12)
        np.testing.assert_allclose(m1, p1, atol=1e-12)


def test_mixed_rates_use_the_other_sides_runs():
    # A score off by a constant shifts the weighted half only: with s = exact + 0.2 the estimate of P1
    # on {s > t} from d0's runs is e^-0.2 times the true one (P0 from d1's: e^0.2); the plain half is unchanged.
    from dpaudit.audit.selection import _exceed, _mixed_rates

    s = math.log(3.0)
    u0 = np.sort(np.array([s] * 75 + [-s] * 25)) + 0.2
    u1 = np.sort(np.array([s] * 25 + [-s] * 75)) + 0.2
    t = np.array([1.0])  # the event {A}
    p0, p1 = _exceed(u0, 1, t) / 100, _exceed(u1, 1, t) / 100
    m0, m1 = _mixed_rates(u0, u1, 1, t, p0, p1)
    np.testing.assert_allclose(m1, 0.5 * (0.25 + 0.25 * math.exp(-0.2)))
    np.testing.assert_allclose(m0, 0.5 * (0.75 + 0.75 * math.exp(0.2)))


def test_chain_score_is_flagged_as_a_log_ratio_estimate():
    rng = np.random.default_rng(2)
    x0, x1 = rr_halting(0.25)(1.0, rng, 4000), rr_halting(0.25)(0.0, rng, 4000)
    (sc,) = fit_chain_scores(x0, x1)
    assert sc.estimates_log_ratio and sc.coarse_thresholds


def test_mixed_rates_stay_in_the_unit_interval():
    # A score far off the log ratio (+4 on every d1 run) makes E1[exp(s) 1_E] > 1: clipped to 1, so the
    # predicted bounds stay finite numbers (a NaN would win the argmax of the threshold choice).
    from dpaudit.audit.selection import _exceed, _mixed_rates

    u0, u1 = np.sort(np.zeros(10)), np.sort(np.full(10, 4.0))
    t = np.array([-1.0, 1.0])
    m0, m1 = _mixed_rates(u0, u1, 1, t, _exceed(u0, 1, t) / 10, _exceed(u1, 1, t) / 10)
    assert np.all((m0 >= 0) & (m0 <= 1) & (m1 >= 0) & (m1 <= 1))
