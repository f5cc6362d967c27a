"""The masked-value family (dpaudit.audit.masked): exact properties, coverage with its twin, power.

Coverage: the auditor restricted to the family (`families=("masked-value-log-ratio",)`) on mechanisms
whose true epsilon is known, N audits with fixed seeds; the count of epsilon_lower > true epsilon is
asserted <= c, the smallest c with P[Binomial(N, 0.05) > c] <= 0.005: an auditor exactly at its nominal
5% would fail each check with probability <= 0.5%.  The twin (noise perturbed: true epsilon 4 or 2,
claim 1) must fail the same check.  benchmarks/power_coverage.py runs 1000 audits per mechanism
(benchmarks/figures/power_coverage_1000.txt).
"""

import numpy as np
import pytest
from test_audit_coverage import exceedances as coverage_exceedances
from test_audit_coverage import tolerance

from dpaudit.audit import audit
from dpaudit.audit.families import FAMILIES, family_of
from dpaudit.audit.masked import MaskedValueScore, fit_masked_scores, masked_features

CONFIDENCE = 0.95
FAMILY = ("masked-value-log-ratio",)


def sentinel_values(rr_eps: float, scale: float):
    """Four independent queries, each released as x + Lap(scale) with randomized response at rr_eps
    (kept w.p. e^rr_eps / (1 + e^rr_eps) if x = 1, else the sentinel 0): true epsilon between x = 1
    and 0 is 4 (rr_eps + 1 / scale) (all four released, values beyond 0 and 1)."""

    def target(data, rng, size):
        keep = rng.random((size, 4)) < np.exp(rr_eps) / (1 + np.exp(rr_eps))
        released = keep == bool(data)
        return np.where(released, float(data) + rng.laplace(0.0, scale, (size, 4)), 0.0)

    return target


def flag_value(rr_eps: float, scale: float):
    """Randomized response of x at rr_eps, and x + Lap(scale) released only with the flag up (sentinel
    -1000 otherwise): true epsilon rr_eps + 1 / scale between x = 1 and 0."""

    def target(data, rng, size):
        flag = (rng.random(size) < np.exp(rr_eps) / (1 + np.exp(rr_eps))) == bool(data)
        value = float(data) + rng.laplace(0.0, scale, size)
        return np.stack([flag.astype(float), np.where(flag, value, -1000.0)], axis=1)

    return target


def exceedances(target, true_eps, audits, samples=2_000, seed0=0):
    return coverage_exceedances(
        target, true_eps, audits, samples, seed0=seed0, d0=1.0, d1=0.0, progress=False, families=FAMILY
    )


# --- exact properties -------------------------------------------------------------------------


def test_family_is_registered():
    assert "masked-value-log-ratio" in FAMILIES
    assert family_of("masked-value-log-ratio") == "masked-value-log-ratio"


def test_features_count_sentinels_and_sum_masked_values():
    p = MaskedValueScore(alphabet=np.array([-1000.0, 0.0]), center=np.array([1.0, 2.0, 3.0]), inv_scale=0.5)
    x = np.array([[0.0, 4.0, -1000.0], [3.0, 0.0, 0.0], [-1000.0, -1000.0, -1000.0], [-9.0, 12.0, 2.0]])
    f = masked_features(x, p)
    u = [[1.0], [1.0], [], [-5.0, 5.0, -0.5]]  # (x_j - c_j) / 2 on the real entries
    expected = [[sum(np.asarray(r) == s) for s in (-1000.0, 0.0)] for r in x]
    expected = [e + [np.sign(v).sum(), np.clip(v, -4, 4).sum()] for e, v in zip(expected, map(np.array, u))]
    np.testing.assert_allclose(f, np.array(expected, dtype=float))


def test_score_is_the_standardised_logit_of_the_feature_matrix():
    rng = np.random.default_rng(0)
    target = sentinel_values(0.125, 8.0)
    (sc,) = fit_masked_scores(target(1.0, rng, 4_000), target(0.0, rng, 4_000))
    assert sc.name == "masked-value-log-ratio" and list(sc.alphabet) == [0.0]
    x = target(1.0, rng, 500)
    f = masked_features(x, sc)
    np.testing.assert_allclose(sc(x), ((f - sc.feature_mean) / sc.feature_scale) @ sc.weights, atol=1e-9)


def test_logit_recovers_the_log_ratio_of_sentinel_values():
    # Exact log ratio of sentinel_values(1/8, 8): -1/8 per sentinel, +1/8 per released value >= 1 and
    # -1/8 + 1/8 = 0 per value <= 0 (randomized response +1/8, Laplace term -1/8).  So four values far
    # above both locations vs four sentinels differ by 8/8 + 4/8 = 1.5, and four values far below vs
    # four sentinels by 4/8 = 0.5.  At 100000 rows per side the fitted weights' standard errors give the
    # differences a standard error below 0.03: 0.15 is over 5 of them (failure rate < 1e-6).
    rng = np.random.default_rng(2)
    target = sentinel_values(0.125, 8.0)
    (sc,) = fit_masked_scores(target(1.0, rng, 100_000), target(0.0, rng, 100_000))
    s = sc(np.array([[6.0] * 4, [0.0] * 4, [-5.0] * 4]))
    assert abs((s[0] - s[1]) - 1.5) < 0.15, s
    assert abs((s[2] - s[1]) - 0.5) < 0.15, s


def test_not_fitted_without_both_sentinels_and_real_values():
    rng = np.random.default_rng(3)
    real = rng.laplace(0, 1, (1_000, 3))
    assert fit_masked_scores(real, real + 1) == []  # no sentinel
    flags = (rng.random((1_000, 3)) < 0.5).astype(float)
    assert fit_masked_scores(flags, flags) == []  # no real value
    assert fit_masked_scores(rng.laplace(0, 1, 1_000), rng.laplace(1, 1, 1_000)) == []  # scalars
    ints = rng.integers(0, 20, (1_000, 3)).astype(float)
    assert fit_masked_scores(ints, ints) == []  # more than 8 shared atoms: not "sentinels + values"


def test_values_are_rounded_against_float_artefacts():
    # u is rounded to 9 decimals: x and x * (1 + 2^-52) (one ulp apart) give the same features.
    p = MaskedValueScore(alphabet=np.array([0.0]), center=np.array([0.3, 0.3]), inv_scale=1 / 3)
    x = np.array([[0.7, 1.9], [0.0, 5.5]])
    np.testing.assert_array_equal(masked_features(x, p), masked_features(x * (1 + 2.0**-52), p))


def test_bad_family_name_is_refused():
    with pytest.raises(ValueError, match="families"):
        audit(sentinel_values(0.125, 8.0), 1.0, 0.0, claim_epsilon=1.0, samples=2_000, families=("masked-value",))


# --- coverage (statistical) -------------------------------------------------------------------


@pytest.mark.parametrize("target", [sentinel_values(0.125, 8.0), flag_value(0.5, 2.0)])
def test_coverage(target):
    audits = 60
    assert tolerance(audits) == 8
    count, lows = exceedances(target, 1.0, audits)
    assert count <= tolerance(audits), count
    assert lows.mean() > 0.1  # and the family does find something (1000 audits: 0.157 and 0.661)


@pytest.mark.parametrize("target", [sentinel_values(0.5, 2.0), flag_value(1.0, 1.0)])
def test_coverage_twin_fails_when_the_noise_is_perturbed(target):
    # Same check, the claim staying 1 while the true epsilon is 4 (sentinel values, noise quartered:
    # with it halved, true epsilon 2, the family at 2000 runs exceeds 1 in only 2 of 60 audits) or 2
    # (flag + value, noise halved): the count must exceed the tolerance (60/60 and > 8 measured).
    count, _ = exceedances(target, 1.0, 60)
    assert count > tolerance(60), count
