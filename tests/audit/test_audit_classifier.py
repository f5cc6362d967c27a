"""The logistic-regression family (dpaudit.audit.classifier): exact properties, coverage, power.

Coverage: the auditor restricted to the family (`families=("logistic-regression",)`) on mechanisms whose
true epsilon is known, N audits with fixed seeds; the count of epsilon_lower > true epsilon is asserted
<= c, the smallest c with P[Binomial(N, 0.05) > c] <= 0.005: an auditor exactly at its nominal 5% would
fail each check with probability <= 0.5%.  The twin (noise halved: true epsilon 2, claim 1) must fail
the same check.  benchmarks/power_coverage.py runs 1000 audits per mechanism
(benchmarks/figures/power_coverage_1000.txt).
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit import audit
from dpaudit.audit.classifier import (
    LogisticScore,
    _feature_columns,
    _fit_weights,
    fit_classifier_scores,
    logistic_features,
)
from dpaudit.audit.families import FAMILIES

CONFIDENCE = 0.95


def tolerance(audits: int, rate: float = 1 - CONFIDENCE, false_failure: float = 0.005) -> int:
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def flag_value(data, rng, size):
    """Randomized response of the bit x at eps 0.5, and x + Lap(2) released only with the flag up
    (sentinel -1000 otherwise): true epsilon 0.5 + 1/2 = 1 between x = 1 and 0."""
    flag = (rng.random(size) < np.exp(0.5) / (1 + np.exp(0.5))) == bool(data)
    value = float(data) + rng.laplace(0.0, 2.0, size)
    return np.stack([flag.astype(float), np.where(flag, value, -1000.0)], axis=1)


def repeated_laplace(scale):
    """x + Lap(scale) released 4 times independently: true epsilon 4 / scale between x = 1 and 0."""

    def target(data, rng, size):
        return float(data) + rng.laplace(0.0, scale, (size, 4))

    return target


def grid_laplace(data, rng, size):
    """Discrete Laplace on the grid 0.25 Z (eps 1 per unit of x) as floats: bits are functions of the value."""
    q = np.exp(-0.25)
    return float(data) + 0.25 * (rng.geometric(1 - q, size) - rng.geometric(1 - q, size)).astype(float)


def exceedances(target, true_eps, audits, samples=2_000, seed0=0, **options):
    lows = np.array(
        [
            audit(
                target,
                1.0,
                0.0,
                claim_epsilon=true_eps,
                samples=samples,
                confidence=CONFIDENCE,
                seed=seed0 + s,
                executor="serial",
                progress=False,
                families=("logistic-regression",),
                **options,
            ).epsilon_lower
            for s in range(audits)
        ]
    )
    return int(np.sum(lows > true_eps)), lows


# --- exact properties -------------------------------------------------------------------------


def test_score_is_the_standardised_logit_of_the_feature_matrix():
    rng = np.random.default_rng(0)
    x0, x1 = flag_value(1.0, rng, 4_000), flag_value(0.0, rng, 4_000)
    (sc,) = fit_classifier_scores(x0, x1)
    assert sc.name == "logistic-regression" and len(sc.atom_values) >= 3  # flags 0/1 and the sentinel
    x = flag_value(1.0, rng, 500)
    f = logistic_features(x, sc)
    np.testing.assert_allclose(sc(x), ((f - sc.feature_mean) / sc.feature_scale) @ sc.weights, atol=1e-9)


def test_weights_are_the_penalised_maximum_likelihood():
    # The preconditioned L-BFGS fit against Newton's method run to convergence on the same loss:
    # sum of log(1 + e^t) - y t, t = standardised features @ w + intercept, plus w.w / 2.
    rng = np.random.default_rng(5)
    x0, x1 = flag_value(1.0, rng, 3_000), flag_value(0.0, rng, 3_000)
    (sc,) = fit_classifier_scores(x0, x1)
    f0, f1 = logistic_features(x0, sc), logistic_features(x1, sc)
    mean, scale, w = _fit_weights(f0, f1)
    xs = (np.concatenate([f0, f1]) - mean) / scale
    xa = np.concatenate([xs, np.ones((len(xs), 1))], axis=1)
    y = np.concatenate([np.ones(len(f0)), np.zeros(len(f1))])
    pen = np.append(np.ones(xs.shape[1]), 0.0)
    v = np.zeros(xa.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-xa @ v))
        v -= np.linalg.solve(xa.T @ (xa * (p * (1 - p))[:, None]) + np.diag(pen), xa.T @ (p - y) + pen * v)
    np.testing.assert_allclose(w, v[:-1], atol=2e-5)


def test_feature_count_matches_the_columns():
    rng = np.random.default_rng(6)
    x = flag_value(1.0, rng, 2_000)
    (sc,) = fit_classifier_scores(x, flag_value(0.0, rng, 2_000))
    assert logistic_features(x, sc).shape == (2_000, len(list(_feature_columns(x, sc))))
    g = grid_laplace(1.0, rng, 2_000)
    (bits,) = fit_classifier_scores(g, grid_laplace(0.0, rng, 2_000), float_bits=True)
    assert logistic_features(g, bits).shape == (2_000, len(list(_feature_columns(g, bits))))


def test_pooled_features_are_the_per_coordinate_features_summed():
    rng = np.random.default_rng(1)
    x = rng.laplace(0.0, 3.0, (1_000, 3))
    common = dict(
        center=np.array([0.1, -0.2, 0.3]), inv_scale=np.array([1 / 3, 0.5, 0.0]), has_cont_flag=np.zeros(3, dtype=bool)
    )
    per = logistic_features(x, LogisticScore(**common))
    pooled = logistic_features(x, LogisticScore(pooled=True, **common))
    assert per.shape == (1_000, 10) and pooled.shape == (1_000, 5)  # coordinate 2 has no continuous part
    np.testing.assert_allclose(pooled, per[:, :5] + per[:, 5:], atol=1e-12)
    u = np.round((x[:, 0] - 0.1) / 3, 9)
    np.testing.assert_array_equal(
        per[:, :5],
        np.stack(
            [np.sign(u), np.clip(u, -0.25, 0.25), np.clip(u, -1, 1), np.clip(u, -4, 4), np.minimum(np.abs(u), 4)],
            axis=1,
        ),
    )


def test_logit_recovers_the_log_ratio_of_independent_bits():
    # Bit 0 is 1 with probability 0.7 under d0 and 0.3 under d1, bits 1-3 fair: the log likelihood ratio
    # is linear in the bits, 2 log(7/3) = 1.69 per unit of bit 0.  At 40000 rows per side the fitted
    # coefficient's standard error is about 0.02; 0.1 is 5 standard errors (failure rate < 1e-6).
    rng = np.random.default_rng(2)
    n = 40_000

    def bits(p):
        return np.concatenate([(rng.random((n, 1)) < p), rng.random((n, 3)) < 0.5], axis=1).astype(np.int64)

    (sc,) = fit_classifier_scores(bits(0.7), bits(0.3))
    rows = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])
    s = sc(rows)
    assert abs((s[0] - s[1]) - 2 * np.log(7 / 3)) < 0.1
    assert abs(s[2] - s[1]) < 0.1


def test_family_is_known_and_scalars_need_float_bits():
    assert "logistic-regression" in FAMILIES
    rng = np.random.default_rng(3)
    a, b = rng.laplace(0, 1, 1_000), rng.laplace(1, 1, 1_000)
    assert fit_classifier_scores(a, b) == []
    assert [s.name for s in fit_classifier_scores(a, b, float_bits=True)] == ["logistic-regression"]
    names = [s.name for s in fit_classifier_scores(rng.laplace(0, 1, (1_000, 3)), rng.laplace(1, 1, (1_000, 3)))]
    assert names == ["logistic-regression-whitened-pooled"]


# --- coverage (statistical) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, options",
    [
        (flag_value, {}),
        (repeated_laplace(4.0), {}),
        (grid_laplace, {"float_bits": True}),
    ],
)
def test_coverage(target, options):
    audits = 60
    assert tolerance(audits) == 8
    count, lows = exceedances(target, 1.0, audits, **options)
    assert count <= tolerance(audits), count
    assert lows.mean() > 0.2  # and the family does find something


def test_coverage_twin_fails_when_the_noise_is_halved():
    # Lap(2) instead of Lap(4): true epsilon 2, checked against 1.
    audits = 30
    count, _ = exceedances(repeated_laplace(2.0), 1.0, audits, samples=5_000, seed0=900)
    assert count > tolerance(audits)


# --- power (seeded) ---------------------------------------------------------------------------


def test_pooled_logit_beats_the_other_families_on_repeated_releases():
    # Seeded, deterministic: x + Lap(40) released 20 times, true epsilon 0.5 (x = 1 vs 0); per coordinate
    # the shift is below its standard error at 5000 fit rows, the common shift is not.
    def target(data, rng, size):
        return float(data) + rng.laplace(0.0, 40.0, (size, 20))

    kw = dict(claim_epsilon=0.5, samples=100_000, seed=0, executor="serial")
    others = tuple(f for f in FAMILIES if f != "logistic-regression")
    old = audit(target, 1.0, 0.0, families=others, **kw).epsilon_lower
    new = audit(target, 1.0, 0.0, **kw)
    assert new.epsilon_lower <= 0.5
    assert new.epsilon_lower > old + 0.01, (new.epsilon_lower, old)
    assert "logistic-regression" in new.directions[0].event + new.directions[1].event
