"""The thinned ratio test (`dpaudit.audit.ratio`): exact coverage of the conditional Poisson test by
enumeration, the thinned counts' law, seeded coverage on binomial counts, and its use in the audit.

Exact properties (validation, monotonicity, the Chernoff bound) are hypothesis examples; the
statistical tests are seeded, each with its false-failure rate and a twin that must fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.ratio import (
    MAX_NOBS,
    TAIL,
    best_case_log_ratio,
    log_ratio_from_counts,
    log_ratio_lower,
    ratio_applies,
    thin,
    thinning_mean,
)
from dpaudit.audit.scores import UserScore
from dpaudit.audit.selection import EventPlan, choose_events
from dpaudit.audit.verdict import direction_result


@given(st.integers(1, MAX_NOBS))
@settings(max_examples=60, deadline=None)
def test_thinning_mean_meets_its_tail(n):
    m = thinning_mean(n)
    assert 0 < m < n
    n1 = n + 1.0
    assert -(n1 * math.log(n1 / m) - n1 + m) <= math.log(TAIL)  # the Chernoff bound at m
    assert stats.poisson.sf(n, m) <= TAIL  # the exact tail is below it


@given(st.integers(1, 10**8), st.integers(1, 10**8))
@settings(max_examples=60, deadline=None)
def test_thinning_mean_grows_with_the_runs(a, b):
    lo, hi = sorted((a, b))
    assert thinning_mean(lo) <= thinning_mean(hi)


@pytest.mark.parametrize(
    ("nobs", "tail"),
    [(0, TAIL), (MAX_NOBS + 1, TAIL), (True, TAIL), (10.0, TAIL), (10, 0.0), (10, 1.0), (10, math.nan)],
)
def test_thinning_mean_names_the_bad_parameter(nobs, tail):
    with pytest.raises(ValueError, match="nobs" if tail == TAIL else "tail"):
        thinning_mean(nobs, tail)


@pytest.mark.parametrize("level", [0.0, 0.6, math.nan, True])
def test_log_ratio_lower_names_the_level(level):
    with pytest.raises(ValueError, match="level"):
        log_ratio_lower(5, 3, 100, level, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("k0", "k1", "name"), [(-1, 3, "count_first"), (101, 3, "count_first"), (5, 2.5, "count_second")]
)
def test_log_ratio_lower_names_the_bad_count(k0, k1, name):
    with pytest.raises(ValueError, match=name):
        log_ratio_lower(k0, k1, 100, 0.05, np.random.default_rng(0))


def test_counts_broadcast():
    k0, k1 = np.array([0, 5, 4000]), np.array([3, 0, 2650])
    out = log_ratio_from_counts(k0, k1, 0.05)
    assert out.shape == (3,) and out[0] == -math.inf
    assert list(out[1:]) == [float(log_ratio_from_counts(5, 0, 0.05)), float(log_ratio_from_counts(4000, 2650, 0.05))]


@given(st.integers(0, 5000), st.integers(0, 5000), st.integers(1, 50))
@settings(max_examples=80, deadline=None)
def test_the_bound_rises_with_the_first_count_and_falls_with_the_second(k0, k1, step):
    if k0 + k1 == 0:
        return
    b = log_ratio_from_counts(k0, k1, 0.025)
    assert log_ratio_from_counts(k0 + step, k1, 0.025) >= b
    assert log_ratio_from_counts(k0, k1 + step, 0.025) <= b
    assert b <= (math.log(k0 / k1) if k0 and k1 else math.inf)  # below the point estimate


def test_the_bound_is_the_clopper_pearson_share_and_is_finite_without_second_counts():
    pi = float(cp_lower(4000, 6650, 0.05))
    assert log_ratio_from_counts(4000, 2650, 0.05) == pytest.approx(math.log(pi / (1 - pi)), rel=1e-9)
    assert 1 - float(cp_upper(2650, 6650, 0.05)) == pytest.approx(pi, rel=1e-12)
    for total in (10, 10**6, 10**12):  # P[Bin(K, pi) >= K] = pi^K = level
        log_pi = math.log(0.05) / total
        assert log_ratio_from_counts(total, 0, 0.05) == pytest.approx(log_pi - math.log(-math.expm1(log_pi)), rel=1e-9)
    assert log_ratio_from_counts(0, 7, 0.05) == -math.inf


def _enumerated_error(lam0: float, lam1: float, level: float, bound_level: float) -> float:
    """P[log_ratio_from_counts(K0, K1, bound_level) > log(lam0 / lam1)] for K_i ~ Poisson(lam_i), by summing
    over the totals K (Poisson(lam0 + lam1)) and, given K, the first count (Binomial(K, pi))."""
    truth, lam, pi = math.log(lam0 / lam1), lam0 + lam1, lam0 / (lam0 + lam1)
    top = int(lam + 12 * math.sqrt(lam) + 20)
    error = 0.0
    for total in range(1, top + 1):
        k0 = np.arange(total + 1)
        over = k0[log_ratio_from_counts(k0, total - k0, bound_level) > truth]
        if len(over):
            error += stats.poisson.pmf(total, lam) * stats.binom.sf(over[0] - 1, total, pi)
    return error


@pytest.mark.parametrize(("lam0", "lam1"), [(3.0, 1.0), (40.0, 30.0), (300.0, 200.0), (60.0, 2.0)])
def test_the_conditional_test_covers_exactly(lam0, lam1):
    """Exact (no sampling): the error is at most the level at every rate pair; the twin, the bound at twice
    the level, exceeds it where the counts are large (the test is nearly exact there)."""
    level = 0.05
    assert _enumerated_error(lam0, lam1, level, level) <= level
    if lam1 >= 200:
        assert _enumerated_error(lam0, lam1, level, 2 * level) > level


def test_thinned_counts_are_poisson():
    """Seeded: thinned binomial counts against Poisson(m p) by a chi-square test at p-value 1e-3 (false-failure
    rate 1e-3); the twin keeps a fixed round(m) runs (binomial, half the variance at p = 1/2) and must fail."""
    rng = np.random.default_rng(20)
    n, p, reps = 400, 0.5, 6000
    m = thinning_mean(n)
    counts = rng.binomial(n, p, size=reps)
    kept = np.array([thin(int(k), 0, n, m, rng).count_first for k in counts])  # type: ignore[union-attr]
    fixed = np.array([rng.hypergeometric(int(k), n - int(k), round(m)) for k in counts])

    def pvalue(x: np.ndarray) -> float:
        lam = m * p
        edges = np.arange(math.floor(lam - 3 * math.sqrt(lam)), math.ceil(lam + 3 * math.sqrt(lam)) + 1)
        observed = np.array([np.sum(x < edges[0])] + [np.sum(x == e) for e in edges] + [np.sum(x > edges[-1])])
        probs = np.concatenate(
            [[stats.poisson.cdf(edges[0] - 1, lam)], stats.poisson.pmf(edges, lam), [stats.poisson.sf(edges[-1], lam)]]
        )
        return float(stats.chisquare(observed, reps * probs / probs.sum()).pvalue)

    assert pvalue(kept) > 1e-3
    assert pvalue(fixed) < 1e-3


def test_the_thinned_bound_covers_binomial_counts():
    """Seeded: 4000 pairs of binomial counts whose true log ratio is 0.2, bounded at level 0.2; the failures
    stay below the binomial quantile 1 - 1e-3 of Bin(4000, 0.2) (false-failure rate 1e-3).  The twin's
    counts have a 5% larger first rate (the truth understated) and must fail it."""
    rng = np.random.default_rng(21)
    n, p1, reps, level, truth = 200_000, 0.004, 4000, 0.2, 0.2
    limit = stats.binom.ppf(1 - 1e-3, reps, level)

    def failures(scale: float) -> int:
        k0 = rng.binomial(n, p1 * math.exp(truth) * scale, size=reps)
        k1 = rng.binomial(n, p1, size=reps)
        return sum(log_ratio_lower(int(a), int(b), n, level, rng)[0] > truth for a, b in zip(k0, k1))

    assert failures(1.0) <= limit
    assert failures(1.05) > limit


def _plan(ratio: bool) -> EventPlan:
    return EventPlan("d0>d1", UserScore(lambda x: x), 1, 0.5, 0.5, (0.5,), (0.1,), (0.05,), 1.0, ratio=ratio)


def test_direction_result_bounds_a_ratio_event_by_the_test_and_records_it():
    n, level = 1_000_000, 0.0125
    first, second = np.array([4000, 4000]), np.array([2650, 2650])
    split = direction_result(_plan(False), first, second, n, 0.0, level, level)
    ratio = direction_result(_plan(True), first, second, n, 0.0, level, level, rng=np.random.default_rng(3))
    assert split.bound == "clopper-pearson" and split.thinned == ()
    assert split.epsilon_lower == pytest.approx(math.log(split.p_first_lower / split.p_second_upper), rel=1e-12)
    assert ratio.bound == "ratio"
    n0, k0, n1, k1 = ratio.thinned
    assert max(n0, n1) <= n and k0 <= 4000 and k1 <= 2650
    assert ratio.epsilon_lower == log_ratio_from_counts(k0, k1, 2 * level)
    assert ratio.epsilon_lower > split.epsilon_lower
    # with delta > 0 the ratio does not bound epsilon: the two one-sided bounds do
    assert direction_result(_plan(True), first, second, n, 1e-4, level, level).bound == "clopper-pearson"


def test_the_selection_takes_the_ratio_test_where_it_predicts_more():
    """A rare event at 10^6 estimation runs: the ratio test.  An event of most runs at 2000: two one-sided
    bounds (the thinning drops 9% of the runs there, and Poisson counts vary more)."""
    rng = np.random.default_rng(4)
    rare0, rare1 = rng.random(200_000) < 0.004, rng.random(200_000) < 0.003
    plans = choose_events(
        [(UserScore(lambda x: x), rare0.astype(float), rare1.astype(float))], 10**6, 0.0, 0.0125, 8, ratio=True
    )
    assert plans["d0>d1"].ratio
    assert not choose_events(
        [(UserScore(lambda x: x), rare0.astype(float), rare1.astype(float))], 10**6, 0.0, 0.0125, 8
    )["d0>d1"].ratio
    common0, common1 = rng.random(200_000) < 0.9, rng.random(200_000) < 0.8
    plans = choose_events(
        [(UserScore(lambda x: x), common0.astype(float), common1.astype(float))], 2000, 0.0, 0.0125, 8, ratio=True
    )
    assert not plans["d0>d1"].ratio


def _one_sided_rr(x, rng, size):
    return (rng.random(size) < (0.5 if x else 0.05)).astype(float)


@pytest.mark.parametrize("confidence", [0.05, 0.3, 0.5, 0.95])
def test_a_low_confidence_falls_back_to_two_bounds(confidence):
    """A lead direction's level 0.9 (1 - confidence) / 2 per proportion: the ratio test, at twice it, takes levels up
    to 1/2 only; above that the two one-sided bounds are used (their own levels stay below 1/2)."""
    from dpaudit import audit

    r = audit(
        _one_sided_rr, 0.0, 1.0, claim_epsilon=5.0, samples=200_000, confidence=confidence, seed=0, progress=False
    )
    lead = next(d for d in r.directions if d.direction == r.direction)
    assert lead.bound == ("ratio" if 2 * lead.level <= 0.5 else "clopper-pearson")
    assert 0.0 < r.epsilon_lower < 5.0


@given(st.integers(1, 10**6), st.integers(0, 10**6), st.integers(1, 10**6), st.sampled_from([1e-6, 0.025, 0.5]))
@settings(max_examples=200, deadline=None)
def test_no_counts_beat_the_best_case(k0, k1, nobs, level):
    """Exact: every kept count pair with k0 <= nobs gives at most the best case, log(pi / (1 - pi)) with
    pi = level^(1/nobs), which rises with the runs."""
    k0 = min(k0, nobs)
    best = best_case_log_ratio(nobs, level)
    pi = level ** (1.0 / nobs)
    assert best == pytest.approx(math.log(pi / (1.0 - pi)), rel=1e-9, abs=1e-9)
    assert float(log_ratio_from_counts(k0, k1, level)) <= best
    assert best_case_log_ratio(nobs + 1, level) > best


def _perfect(x, rng, size):
    return np.full(size, int(x))


def test_a_claim_only_the_ratio_test_can_refute_is_audited_not_refused():
    """At delta = 0 a claim between the two bounds' best case (10.04 at 10^5 estimation runs per side, 95%) and
    the ratio test's (10.21) is planned, and a perfectly distinguishing target refutes it. Twin: just above the
    ratio test's best case the claim is refused before any run."""
    from dpaudit import audit
    from dpaudit.audit.options import TooFewSamplesError

    samples = 111_111  # 11 111 selection runs, 10^5 estimation runs per side
    r = audit(_perfect, 1.0, 0.0, claim_epsilon=10.1, samples=samples, seed=0, progress=False)
    assert r.estimation_samples == 10**5 and r.verdict == "violation" and r.epsilon_lower > 10.1
    with pytest.raises(TooFewSamplesError, match="samples=111111 is too few"):
        audit(_perfect, 1.0, 0.0, claim_epsilon=10.21, samples=samples, seed=0, progress=False)


@given(
    st.sampled_from([0.0, 1e-12, 1e-5, 0.5]),
    st.sampled_from([1, 10**6, MAX_NOBS, MAX_NOBS + 1, 10**12]),
    st.sampled_from([1e-9, 0.1, 0.25, 0.2500001, 0.4]),
)
def test_the_ratio_test_applies_at_pure_dp_within_numpys_sampler_and_levels_up_to_a_quarter(delta, nobs, level):
    """Exact: the test (at twice the per-proportion level) bounds an event only at delta = 0, for at most
    MAX_NOBS runs per side, and when twice the level is at most 1/2."""
    assert ratio_applies(delta, nobs, level) == (delta == 0.0 and nobs <= MAX_NOBS and level <= 0.25)


@pytest.mark.parametrize("nobs", [0, -3, 2.5, True, float("nan")])
def test_the_best_case_names_bad_runs(nobs):
    with pytest.raises(ValueError, match="nobs must be a positive integer"):
        best_case_log_ratio(nobs, 0.05)
