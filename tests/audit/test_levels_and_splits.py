"""The error levels the auditor promises, and the independence of the runs it draws.

Cross-fitting (`crossfit=True`) tests each direction's two proportions at (1 - confidence) / 4 each
(two directions x two proportions, Bonferroni); the claimed-curve check tests every scanned event at
alpha / (2 * events) with alpha = (1 - confidence) / 2.  Each level is pinned exactly (the reported
bounds are recomputed from the reported counts at that level) and by coverage: many seeded audits of
a mechanism whose true privacy loss is known, counting how often the bound overstates it.  Each
coverage test has a twin that recomputes the same audits' bounds at the broken level and must fail
the same check.  The runs: every chunk of both splits and both inputs gets a random stream of its
own (recorded by the target itself).  The audits of float outputs here run with `float_check="off"`: the
levels are those of one audit (`test_float_check.py` checks the split between two).

False-failure rates are stated at each test (binomial tails, computed in the test); seeds are fixed,
so the outcome is deterministic: the rates say how often a fresh choice of seeds would fail.
"""

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.audit import audit
from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates
from dpaudit.audit.chunks import plan_chunks

FALSE_FAILURE = 1e-3


def tolerance(audits: int, rate: float, false_failure: float = FALSE_FAILURE) -> int:
    """Smallest c with P[Binomial(audits, rate) > c] <= false_failure."""
    return int(np.argmax(stats.binom.sf(np.arange(audits + 1), audits, rate) <= false_failure))


def randomized_response(epsilon):
    """Keeps the bit with probability e^eps / (1 + e^eps): exactly eps-DP, and the event {output = 1}
    has exactly the ratio e^eps between the inputs 1 and 0 (the bound can be tight there)."""
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))

    def target(data, rng, size):
        return np.where(rng.random(size) < keep, data, 1 - data)

    return target


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


# --- 1. cross-fitting: level (1 - confidence) / 4 per proportion ---------------------------------

CF_EPSILON, CF_SAMPLES, CF_CONFIDENCE, CF_AUDITS = 1.0, 400, 0.5, 200
CF_ALPHA = 1 - CF_CONFIDENCE


def crossfit_exceed_probability(level: float) -> float:
    """Exact P[epsilon_lower > CF_EPSILON] of a cross-fitted audit of randomized response whose folds
    both pick {1} for d0>d1 and {0} for d1>d0 (the only events with a ratio above 1; checked on the
    counts below): every run is counted, so K1 (1s of d0) ~ Bin(n, p) and K2 (1s of d1) ~ Bin(n, 1 - p)
    are independent; d0>d1 bounds log(L(K1) / U(K2)), d1>d0 log(L(n - K2) / U(n - K1)), with the
    cross-fitted count rule (a lower count of 1 taken as 0, an upper count of n - 1 as n)."""
    n, p = CF_SAMPLES, np.exp(CF_EPSILON) / (1 + np.exp(CF_EPSILON))
    k = np.arange(n + 1)
    low = cp_lower(np.where(k <= 1, 0, k), n, level)
    upp = cp_upper(np.where(k >= n - 1, n, k), n, level)
    e1 = epsilon_from_rates(low[:, None], upp[None, :], 0.0)  # [K1, K2]
    e2 = epsilon_from_rates(low[::-1][None, :], upp[::-1][:, None], 0.0)  # [K1, K2]: L(n-K2) / U(n-K1)
    joint = stats.binom.pmf(k, n, p)[:, None] * stats.binom.pmf(k, n, 1 - p)[None, :]
    return float(joint[(e1 > CF_EPSILON) | (e2 > CF_EPSILON)].sum())


@pytest.fixture(scope="module")
def crossfit_audits():
    # selection_fraction 0.3: 60 selection runs per fold and side, so a fold picks a reversed event
    # only if its d0 runs show fewer 1s than its d1 runs (about 1e-8 per fold)
    return [
        audit(
            randomized_response(CF_EPSILON),
            1,
            0,
            claim_epsilon=CF_EPSILON,
            samples=CF_SAMPLES,
            confidence=CF_CONFIDENCE,
            seed=seed,
            crossfit=True,
            selection_fraction=0.3,
            families=("identity",),
            executor="serial",
            progress=False,
        )
        for seed in range(CF_AUDITS)
    ]


def recomputed_crossfit_bound(res, level: float) -> float:
    return max(
        float(
            epsilon_from_rates(
                cp_lower(d.count_first, d.nobs, level), cp_upper(d.count_second, d.nobs, level), res.claim_delta
            )
        )
        for d in res.directions
    )


@pytest.mark.parametrize(
    "target, d0, d1, claim, confidence",
    [
        (randomized_response(1.0), 1, 0, 1.0, 0.95),
        (laplace, 1.0, 0.0, 1.0, 0.95),
        (laplace, 1.0, 0.0, 1.0, 0.8),
    ],
)
def test_crossfit_tests_each_proportion_at_a_quarter_of_alpha(target, d0, d1, claim, confidence):
    # Exact, no statistics: the reported Clopper-Pearson bounds are those of the reported counts at
    # (1 - confidence) / 4, over all `samples` runs, whatever the target and its chosen events.
    level = (1 - confidence) / 4
    for seed in range(3):
        res = audit(
            target,
            d0,
            d1,
            claim_epsilon=claim,
            samples=4_000,
            confidence=confidence,
            seed=seed,
            crossfit=True,
            executor="serial",
            progress=False,
            float_check="off",
        )
        assert res.estimation_samples == 4_000
        for d in res.directions:
            assert d.level == pytest.approx(level, rel=1e-12)
            assert d.nobs == 4_000 and d.events_tested == 1
            assert d.p_first_lower == float(cp_lower(d.count_first, d.nobs, level))
            assert d.p_second_upper == float(cp_upper(d.count_second, d.nobs, level))
            assert d.epsilon_lower == float(epsilon_from_rates(d.p_first_lower, d.p_second_upper, 0.0))
        assert res.epsilon_lower == recomputed_crossfit_bound(res, level)


def test_crossfit_levels_of_the_coverage_audits(crossfit_audits):
    for res in crossfit_audits:
        assert res.epsilon_lower == recomputed_crossfit_bound(res, CF_ALPHA / 4)
        assert all(d.level == CF_ALPHA / 4 for d in res.directions)
        # the exact model's premise: d0>d1 counts {1}, d1>d0 counts {0} (together they count each run once)
        fwd, back = res.directions
        assert fwd.count_first + back.count_second == CF_SAMPLES
        assert fwd.count_second + back.count_first == CF_SAMPLES


def test_crossfit_coverage_matches_the_quarter_level(crossfit_audits):
    # The exact exceedance probability at alpha / 4 is 0.0984 (at alpha / 2 it would be 0.258; at
    # confidence 0.95 the two are 0.003 and 0.009, too close to tell apart by coverage at this cost).
    # c = 34: if the auditor were exactly at its level, P[more than 34 of 200 exceed] = 5.9e-4 is the
    # false-failure rate (measured: 23 of 200); at alpha / 2 it would fail with probability 0.998.
    rate = crossfit_exceed_probability(CF_ALPHA / 4)
    assert rate == pytest.approx(0.0984, abs=5e-4)
    assert crossfit_exceed_probability(CF_ALPHA / 2) == pytest.approx(0.258, abs=1e-3)
    c = tolerance(CF_AUDITS, rate)
    assert c == 34 and stats.binom.sf(c, CF_AUDITS, rate) <= FALSE_FAILURE
    exceed = sum(res.epsilon_lower > CF_EPSILON for res in crossfit_audits)
    assert exceed <= c, exceed
    assert exceed >= 1  # near-tight: the check is not vacuous
    assert np.mean([res.epsilon_lower for res in crossfit_audits]) > 0.5


def test_crossfit_coverage_twin_fails_at_half_alpha(crossfit_audits):
    # The same runs and counts, bounds recomputed at alpha / 2 per proportion (the broken split):
    # the coverage check above must fail.
    c = tolerance(CF_AUDITS, crossfit_exceed_probability(CF_ALPHA / 4))
    exceed = sum(recomputed_crossfit_bound(res, CF_ALPHA / 2) > CF_EPSILON for res in crossfit_audits)
    assert exceed > c, exceed


# --- 2. the claimed-curve check: Bonferroni over every scanned event ------------------------------

CURVE_CONFIDENCE, CURVE_AUDITS, CURVE_SAMPLES = 0.5, 100, 1_000
#: The Laplace(1) mechanism with sensitivity 1, whose PLD curve is exact to 3e-10 (above the true
#: delta(eps) = 1 - e^((eps - 1) / 2)): a true claim, tight at every event {x > t}, 0 < t < 1.
CURVE_CLAIM = dp_accounting.LaplaceDpEvent(noise_multiplier=1.0)


@pytest.fixture(scope="module")
def curve_audits():
    return [
        audit(
            laplace,
            1.0,
            0.0,
            claim=CURVE_CLAIM,
            claim_accountant="pld",
            claim_epsilon=1.0,
            samples=CURVE_SAMPLES,
            confidence=CURVE_CONFIDENCE,
            seed=1000 + seed,
            grid_size=128,
            curve_points=128,
            executor="serial",
            progress=False,
            float_check="off",
        )
        for seed in range(CURVE_AUDITS)
    ]


def recomputed_delta_lower(res, level: float) -> np.ndarray:
    """max over every scanned event of (L_first - e^eps U_second), clamped at 0, at each tested eps,
    from the estimation counts the result reports (its trade-off points)."""
    lows, upps = [], []
    for d in res.directions:
        assert d.tradeoff_split == "estimation"
        first = np.rint((1.0 - np.array(d.tradeoff_beta)) * d.nobs).astype(np.int64)
        second = np.rint(np.array(d.tradeoff_alpha) * d.nobs).astype(np.int64)
        lows.append(cp_lower(first, d.nobs, level))
        upps.append(cp_upper(second, d.nobs, level))
    lows, upps = np.concatenate(lows), np.concatenate(upps)
    eps = np.array(res.curve.epsilons)
    return np.maximum((lows[None, :] - np.exp(eps)[:, None] * upps[None, :]).max(axis=1), 0.0)


def curve_violated(res, delta_lower: np.ndarray) -> bool:
    return bool(np.any(delta_lower > np.array(res.curve.claimed_delta)))


def test_curve_check_tests_every_event_at_its_bonferroni_share(curve_audits):
    # Exact: alpha = (1 - confidence) / 2 goes to the curve, split over both proportions of every event.
    for res in curve_audits:
        c = res.curve
        assert c.alpha == pytest.approx((1 - CURVE_CONFIDENCE) / 2, rel=1e-12)
        assert c.events_tested == sum(len(d.tradeoff_thresholds) for d in res.directions) > 100
        want = recomputed_delta_lower(res, c.alpha / (2 * c.events_tested))
        np.testing.assert_allclose(c.delta_lower, want, rtol=0, atol=1e-15)
        assert c.violation == curve_violated(res, np.array(c.delta_lower))
    # the pin has teeth: positive lower bounds, which another level would change
    some = curve_audits[0]
    assert max(some.curve.delta_lower) > 0.05
    assert not np.allclose(some.curve.delta_lower, recomputed_delta_lower(some, some.curve.alpha / 2))


def test_curve_check_false_violations_stay_within_its_alpha(curve_audits):
    # The claim is true, so each audit flags it with probability <= alpha = 0.25 (the promise).
    # c = 39: P[more than 39 of 100 | rate 0.25] = 6.9e-4 is the false-failure rate (measured: 0 of
    # 100).  Without the Bonferroni split (each event at alpha / 2) 50 of these 100 audits flag it
    # (twin below); at a rate of 1/2 the check fails with probability 0.98.
    c = tolerance(CURVE_AUDITS, (1 - CURVE_CONFIDENCE) / 2)
    assert c == 39 and stats.binom.sf(c, CURVE_AUDITS, 0.25) <= FALSE_FAILURE
    flagged = sum(res.curve.violation for res in curve_audits)
    assert flagged <= c, flagged


def test_curve_check_twin_without_bonferroni_fails(curve_audits):
    c = tolerance(CURVE_AUDITS, (1 - CURVE_CONFIDENCE) / 2)
    flagged = sum(curve_violated(res, recomputed_delta_lower(res, res.curve.alpha / 2)) for res in curve_audits)
    assert flagged > c, flagged


# --- 4. every chunk of both splits and both inputs draws from a stream of its own ----------------


class StreamRecorder:
    """A target that records the seed and the initial state of every generator it is given."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def __call__(self, data, rng, size):
        seq = rng.bit_generator.seed_seq
        state = rng.bit_generator.state["state"]
        self.calls.append((data, size, (seq.entropy, tuple(seq.spawn_key)), (state["state"], state["inc"])))
        return self.inner(data, rng, size)


@pytest.mark.parametrize("n_sel, n_est, size", [(10, 90, 7), (1, 1, 1), (100, 0, 30), (25, 1000, 25)])
def test_chunk_indices_are_distinct_across_the_splits(n_sel, n_est, size):
    chunks = plan_chunks(n_sel, n_est, size)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert sum(c.size for c in chunks if c.phase == "selection") == n_sel
    assert sum(c.size for c in chunks if c.phase == "estimation") == n_est


@pytest.mark.parametrize(
    "epsilon, options, extended",
    [
        (1.0, {"selection_extension": 0.0}, False),
        (0.05, {}, True),  # a weak pilot: estimation chunks move to the selection split
        (1.0, {"crossfit": True}, False),
    ],
)
def test_every_chunk_side_and_split_gets_its_own_stream(epsilon, options, extended):
    samples, chunk = 1_200, 100
    rec = StreamRecorder(randomized_response(epsilon))
    res = audit(
        rec,
        1,
        0,
        claim_epsilon=0.01,
        samples=samples,
        seed=7,
        chunk_size=chunk,
        executor="serial",
        progress=False,
        **options,
    )
    assert (res.selection_samples > round(0.1 * samples)) == extended
    n_sel = round(0.1 * samples)
    chunks = plan_chunks(n_sel, samples - n_sel, chunk)
    assert len([c for c in chunks if c.phase == "selection"]) >= 2
    # the probe (one call per input) and one call per chunk and input, each chunk drawn once
    assert len(rec.calls) == 2 + 2 * len(chunks)
    assert sorted(size for _, size, _, _ in rec.calls[2:]) == sorted(2 * [c.size for c in chunks])
    seeds = [s for _, _, s, _ in rec.calls]
    states = [s for _, _, _, s in rec.calls]
    assert len(set(seeds)) == len(seeds), "a seed was used twice"
    assert len(set(states)) == len(states), "a random stream was used twice"
    on_d0 = {s for data, _, _, s in rec.calls if data == 1}
    on_d1 = {s for data, _, _, s in rec.calls if data == 0}
    assert len(on_d0) == len(on_d1) == 1 + len(chunks) and not on_d0 & on_d1
