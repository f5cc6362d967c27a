"""Statistical tests: coverage of the lower bound, the uncorrected scan's false alarms, power.

Coverage: the auditor runs many times on mechanisms whose true epsilon is known; the fraction of
audits with epsilon_lower > true epsilon must be at most 1 - confidence = 5%.  With N audits the
count is asserted <= c, the smallest c with P[Binomial(N, 0.05) > c] <= 0.005: if the auditor were
exactly at its nominal 5% the test would still fail with probability <= 0.5%; all seeds are fixed.
Twin tests (perturbed noise) show the same check does fail when the noise is too small.
"""

import numpy as np
from scipy import stats

from dpaudit.audit import audit

CONFIDENCE = 0.95


def tolerance(audits: int, rate: float = 1 - CONFIDENCE, false_failure: float = 0.005) -> int:
    """Smallest c with P[Binomial(audits, rate) > c] <= false_failure."""
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def laplace(scale):
    def target(data, rng, size):
        return data + rng.laplace(0.0, scale, size)

    return target


def randomized_response(epsilon):
    def target(data, rng, size):
        keep = rng.random(size) < np.exp(epsilon) / (1 + np.exp(epsilon))
        return np.where(keep, data, 1 - data)

    return target


def discrete_laplace(epsilon):
    """X + G1 - G2 with G geometric on {0,1,...}: pmf ∝ exp(-epsilon |k|) (Inusah, Kozubowski 2006)."""

    def target(data, rng, size):
        q = np.exp(-epsilon)
        return data + (rng.geometric(1 - q, size) - rng.geometric(1 - q, size))

    return target


def gaussian_delta(epsilon, mu):
    """Exact delta(epsilon) of mu-GDP (Balle, Wang 2018; Dong, Roth, Su 2022)."""
    return stats.norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)


def gaussian(data, rng, size):
    return data + rng.normal(0.0, 1.0, size)


def exceedances(target, true_epsilon, audits, samples, delta=0.0, seed0=0, d0=1, d1=0, **options):
    """(number of the `audits` seeded audits whose epsilon_lower exceeds `true_epsilon`, the bounds);
    `options` go to `audit` (e.g. families=...)."""
    lows = np.array(
        [
            audit(
                target,
                d0,
                d1,
                claim_epsilon=true_epsilon,
                claim_delta=delta,
                samples=samples,
                confidence=CONFIDENCE,
                seed=seed0 + s,
                executor="serial",
                **options,
            ).epsilon_lower
            for s in range(audits)
        ]
    )
    return int(np.sum(lows > true_epsilon)), lows


def test_coverage_laplace_rr_discrete_laplace():
    audits = 300  # per mechanism, 2000 runs per side each
    c = tolerance(audits)
    assert c == 25
    for target in (laplace(1.0), randomized_response(1.0), discrete_laplace(1.0)):
        count, lows = exceedances(target, 1.0, audits, 2_000)
        assert count <= c, (target, count)
        assert lows.mean() > 0.7  # and the bound is not vacuous


def test_coverage_twin_fails_when_the_noise_is_halved():
    # Laplace with scale 1/2 has epsilon 2; checked against "true" epsilon 1 the coverage test fails.
    audits = 40
    count, _ = exceedances(laplace(0.5), 1.0, audits, 2_000, seed0=1000)
    assert count > tolerance(audits)


def naive_max_over_thresholds(x0, x1, delta, confidence=CONFIDENCE):
    """The auditor NOT to ship: every threshold's one-sided 95% bound on log((p0-delta)/p1)
    (Katz log-ratio interval), maximised over all thresholds on the same runs, no correction."""
    z = stats.norm.ppf(confidence)
    n = len(x0)
    thresholds = np.unique(np.concatenate([x0, x1]))
    best = 0.0
    for a, b in ((np.sort(x0), np.sort(x1)), (np.sort(x1), np.sort(x0))):
        p0 = (n - np.searchsorted(a, thresholds, "right")) / n
        p1 = (n - np.searchsorted(b, thresholds, "right")) / n
        ok = (p0 > delta) & (p1 > 0) & (p0 < 1)
        p0, p1 = p0[ok], p1[ok]
        sd = np.sqrt(p0 * (1 - p0) / (n * (p0 - delta) ** 2) + (1 - p1) / (n * p1))
        best = max(best, float(np.max(np.log((p0 - delta) / p1) - z * sd)))
    return best


def test_uncorrected_threshold_scan_inflates_false_alarms_and_ours_does_not():
    # Correct Gaussian mechanism (mu = 1), claim = its exact (epsilon, delta(epsilon)) at epsilon = 1.
    epsilon, audits, naive_audits, n = 1.0, 200, 600, 10_000
    delta = float(gaussian_delta(epsilon, 1.0))
    rng = np.random.default_rng(2024)
    naive = np.array(
        [naive_max_over_thresholds(1 + rng.normal(size=n), rng.normal(size=n), delta) for _ in range(naive_audits)]
    )
    naive_alarms = int(np.sum(naive > epsilon))
    ours, _ = exceedances(gaussian, epsilon, audits, n, delta=delta, seed0=5000)
    # The naive count is asserted above the 5% tolerance (if the naive scan were valid it would be
    # below it with probability >= 99.5%).
    assert naive_alarms > tolerance(naive_audits), naive_alarms
    assert ours <= tolerance(audits)


def shared_noise(data, rng, size):
    """BUG: one Laplace draw added to both statistics; their difference is noise-free."""
    z = rng.laplace(0.0, 2.0, size)
    return np.stack([data[0] + z, data[1] + z], axis=1)


def independent_noise(data, rng, size):
    """Correct: independent Lap(2) per coordinate; L1 sensitivity 2 between (1,0) and (0,1): 1-DP."""
    return np.asarray(data, dtype=float) + rng.laplace(0.0, 2.0, (size, 2))


def leaky_actions(data, rng, size):
    """BUG: integer action vector whose last entry reads the raw bit (e.g. a raw mean used once)."""
    noisy = randomized_response(1.0)(data, rng, size)
    return np.stack([noisy, rng.integers(0, 2, size), np.full(size, data)], axis=1)


def noise_scaled_to_data(data, rng, size):
    """BUG: noise scale calibrated to the data (10 statistics, same centre): only the spread leaks."""
    return rng.laplace(0.0, 1.0 + data, (size, 10))


def private_actions(data, rng, size):
    noisy = randomized_response(1.0)(data, rng, size)
    return np.stack([noisy, rng.integers(0, 2, size), rng.integers(0, 2, size)], axis=1)


def test_power_buggy_variants_are_caught():
    # Each bug doubles epsilon or removes the noise: at 10^4 runs per side the lower bound is many
    # standard errors above 1, so a miss has negligible probability for any seed.
    opts = dict(claim_epsilon=1.0, samples=10_000, seed=11, executor="serial")
    assert audit(laplace(0.5), 1.0, 0.0, **opts).verdict == "violation"  # half the noise scale
    assert audit(randomized_response(2.0), 1, 0, **opts).verdict == "violation"
    assert audit(discrete_laplace(2.0), 1, 0, **opts).verdict == "violation"
    shared = audit(shared_noise, np.array([1.0, 0.0]), np.array([0.0, 1.0]), **opts)
    assert shared.verdict == "violation" and shared.epsilon_lower > 5
    assert audit(leaky_actions, 1, 0, **opts).verdict == "violation"
    assert audit(noise_scaled_to_data, 1.0, 0.0, **opts).verdict == "violation"


def test_power_twins_correct_variants_are_consistent():
    # Correct mechanisms: a false "violation" has probability <= 5% per fresh seed (fixed here).
    opts = dict(claim_epsilon=1.0, samples=10_000, seed=11, executor="serial")
    indep = audit(independent_noise, np.array([1.0, 0.0]), np.array([0.0, 1.0]), **opts)
    assert indep.verdict == "consistent" and indep.epsilon_lower > 0.5
    actions = audit(private_actions, 1, 0, **opts)
    assert actions.verdict == "consistent" and actions.epsilon_lower > 0.7
