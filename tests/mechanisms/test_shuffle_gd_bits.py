"""P_GD's "bits" sampler (`ShuffleGradientDescent.run_glm`, sampler="bits"): the randomized rounding it draws is
exactly Bernoulli(frac(s)) (exact tests), the link table with its exact fix-up and the optional numba kernel
release what the exact link releases on the same draws (bit for bit), and the released counts follow the
rounding's law (seeded goodness of fit, with a twin that must fail on perturbed rounding bits)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit, ndtr

import dpaudit.mechanisms.shuffle_gd as shuffle_gd
from dpaudit.algorithms.glm.environment import LINKS
from dpaudit.algorithms.shuffle_claims import shuffle_gradient_descent
from dpaudit.mechanisms.shuffle_gd import ShuffleGradientDescent, random_bits16, round_with_bits
from dpaudit.mechanisms.vector_sum import BitSumProtocol

ALPHA = 1e-3  # per goodness-of-fit check: a correct sampler fails it with probability 1e-3 over seeds (seeds fixed)
HAS_NUMBA = shuffle_gd.table_round is not None
CURVATURE = {expit: LINKS["logistic"].sup_second_derivative, ndtr: LINKS["probit"].sup_second_derivative}


def _expected_up(s: float, bits: int, v: float) -> int:
    """1{(B + V)/2¹⁶ < s − ⌊s⌋} in exact rational arithmetic."""
    frac = Fraction(s) - math.floor(s)
    return int((Fraction(bits) + Fraction(v)) / 65536 < frac)


# ---------------------------------------------------------------- exact rounding


@given(
    st.integers(0, 300),
    st.integers(0, 65535),
    st.floats(0.0, 1.0, exclude_max=True),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_round_with_bits_is_the_exact_comparison(whole, j, w, tie, seed):
    """x̂ = ⌊s⌋ + 1{(B + V)/2¹⁶ < frac(s)}, with V the first uniform of the rng, drawn only on a tie."""
    s = whole + (j + w) / 65536.0
    bits = j if tie else (j + 1 + seed % 65535) % 65536
    rng = np.random.default_rng(seed)
    got = round_with_bits(rng, np.array([s]), np.array([bits], dtype=np.uint16))[0]
    t = (s - math.floor(s)) * 65536.0
    is_tie = bits == math.floor(t) and t > math.floor(t)
    v = np.random.default_rng(seed).random() if is_tie else 0.0
    assert got == math.floor(s) + _expected_up(s, bits, v)
    if not is_tie:  # V is not used: any V gives the same comparison, and no uniform was drawn
        assert _expected_up(s, bits, math.nextafter(1.0, 0.0)) == _expected_up(s, bits, 0.0)
        assert rng.random() == np.random.default_rng(seed).random()


@pytest.mark.parametrize("s", [0.0, 3.0, 0.3, 141.99999, 284.0, 7 + 12345.5 / 65536])
def test_round_with_bits_averages_to_the_fraction_exactly(s):
    """Over all 2¹⁶ values of B, P(x̂ = ⌊s⌋ + 1) = (⌊t⌋ + (t − ⌊t⌋))/2¹⁶ = frac(s): the deterministic part is
    counted exactly and the tie (one B) rounds up with probability t − ⌊t⌋ (the V comparison)."""
    bits = np.arange(65536, dtype=np.uint16)
    t = (s - math.floor(s)) * 65536.0
    up = round_with_bits(np.random.default_rng(0), np.full(65536, s), bits) - math.floor(s)
    tie = math.floor(t) if t > math.floor(t) else None
    deterministic = np.delete(up, tie) if tie is not None else up
    assert deterministic.sum() == math.floor(t)
    assert (
        Fraction(int(deterministic.sum())) + (Fraction(t) - math.floor(t) if tie is not None else 0)
        == Fraction(s - math.floor(s)) * 65536
    )


def test_random_bits16_splits_the_words_and_falls_back_for_32_bit_generators():
    words = np.random.default_rng(3).bit_generator.random_raw(3)
    assert np.array_equal(random_bits16(np.random.default_rng(3), (2, 5)).ravel(), words.view(np.uint16)[:10])
    mt = random_bits16(np.random.Generator(np.random.MT19937(3)), (4000,))
    assert mt.dtype == np.uint16 and mt.max() > 60000  # the high bits are used (MT19937's raw words have 32)


# ---------------------------------------------------------------- table + fix-up == exact link


def _problem(seed, runs, n, d, scale):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(runs, n, d)) * scale, (rng.random((runs, n)) < 0.4).astype(float)


@pytest.mark.parametrize("kernel", [False, pytest.param(True, marks=pytest.mark.skipif(not HAS_NUMBA, reason="numba"))])
@pytest.mark.parametrize("step", [2.0**-10, 2.0**-3])  # 2⁻³: a coarse table, so hundreds of entries are fixed up
@pytest.mark.parametrize(
    "range_, lipschitz, link", [("paper", 1.0, ndtr), ("normalized", 0.3, expit), ("paper", 0.3, ndtr)]
)  # 0.3: most gradients are clipped
def test_table_path_releases_what_the_exact_link_releases(monkeypatch, kernel, step, range_, lipschitz, link):
    x, r = _problem(3, 4, 250, 3, 0.8)
    pgd = shuffle_gradient_descent(250, 3, 2.0, 0.01, lipschitz, 2.0, iterations=40, regularization=5.0, range=range_)
    exact = pgd.run_glm(np.random.default_rng(7), x, r, link)
    monkeypatch.setattr(shuffle_gd, "_TABLE_STEP", step)
    if not kernel:
        monkeypatch.setattr(shuffle_gd, "table_round", None)
    fixed = []
    original = shuffle_gd._GlmRounding._exact_sums
    monkeypatch.setattr(
        shuffle_gd._GlmRounding,
        "_exact_sums",
        lambda self, rng, theta, bits, flat: fixed.append(flat.size) or original(self, rng, theta, bits, flat),
    )
    fast = pgd.run_glm(np.random.default_rng(7), x, r, link, link_curvature=CURVATURE[link])
    assert np.array_equal(fast.gradient_sums, exact.gradient_sums)
    assert np.array_equal(fast.iterates, exact.iterates)
    if step > 2.0**-5:
        assert sum(fixed) > 100  # the fix-up path was exercised


def test_table_path_falls_back_outside_the_table():
    """θ outside the ball the table was built for: no entry is decided from the table, the exact link is used."""
    x, r = _problem(4, 2, 60, 2, 1.0)
    proto = BitSumProtocol(60, 2, g=30, b=3)
    theta = np.array([[3.0, -2.0], [0.5, 4.0]])
    out = []
    for curvature in (None, CURVATURE[ndtr]):
        rounding = shuffle_gd._GlmRounding(proto, 1.0, x, r, ndtr, 0.5, curvature)
        out.append(rounding.counts(np.random.default_rng(5), theta))
    assert np.array_equal(out[0], out[1])


def test_shuffle_glm_paper_size_round_is_unchanged_by_the_table():
    """One P_GD round at ShuffleGLM's paper size (n = 5000, d = 3, g = 142): the table path's counts equal the
    exact link's on the same draws, numba or not."""
    x, r = _problem(9, 2, 5000, 3, 1.0)
    x /= np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1.0)
    proto = shuffle_gradient_descent(5000, 3, 2.0, 0.01, 1.0, 2.0, iterations=11590).protocol
    theta = np.array([[1.2, -0.7, 0.9], [-0.1, 1.5, -1.1]])
    exact = shuffle_gd._GlmRounding(proto, 1.0, x, r, ndtr, 2.0, None).counts(np.random.default_rng(1), theta)
    table = shuffle_gd._GlmRounding(proto, 1.0, x, r, ndtr, 2.0, CURVATURE[ndtr])
    assert np.array_equal(table.counts(np.random.default_rng(1), theta), exact)
    if HAS_NUMBA:
        saved, shuffle_gd.table_round = shuffle_gd.table_round, None
        try:
            assert np.array_equal(table.counts(np.random.default_rng(1), theta), exact)
        finally:
            shuffle_gd.table_round = saved


# ---------------------------------------------------------------- the law of the released counts


def _count_pmfs(values: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Per label: (Σ⌊s⌋, pmf of the Poisson-binomial Σ Bernoulli(frac s)) for values (n, labels)."""
    out = []
    for col in values.T:
        pmf = np.array([1.0])
        for p in col - np.floor(col):
            pmf = np.convolve(pmf, [1.0 - p, p])
        out.append((int(np.floor(col).sum()), pmf))
    return out


def _gof_pvalues(sampler: str, replicates: int = 4000, seed: int = 11) -> list[float]:
    """Chi-square p-values (one per label) of the released count Σ_i x̂_i at θ_0 = 0 against its exact law, over
    `replicates` independent runs of one P_GD round with no binomial noise (b = 0: the count is the rounding)."""
    rng = np.random.default_rng(2)
    n, d = 30, 2
    x = rng.normal(size=(n, d)) * 0.7
    r = (rng.random(n) < 0.5).astype(float)
    proto = BitSumProtocol(n, d, g=3, b=0)
    pgd = ShuffleGradientDescent(n, d, 1.0, 0.01, 1.0, 1.0, iterations=1, protocol=proto)
    feats = np.broadcast_to(x, (replicates, n, d))
    rew = np.broadcast_to(r, (replicates, n))
    kw = {"sampler": sampler} if sampler == "uniform" else {"link_curvature": CURVATURE[expit]}
    rel = pgd.run_glm(np.random.default_rng(seed), feats, rew, expit, **kw)
    counts = np.rint((rel.gradient_sums[:, 0] + n * proto.bound) * proto.g / proto.unit).astype(int)
    c = np.clip(expit(np.zeros(n)) - r, -1.0, 1.0)
    c *= 1.0 / np.maximum(np.abs(c) * np.linalg.norm(x, axis=1), 1.0)
    values = np.clip(x * c[:, None] * (proto.g / proto.unit) + proto.g / proto.unit, 0.0, proto.cap)
    pvalues = []
    for k, (base, pmf) in enumerate(_count_pmfs(values)):
        observed = np.bincount(counts[:, k] - base, minlength=pmf.size)
        assert observed.size == pmf.size  # no count outside the support
        expected = pmf * replicates
        keep = expected >= 5  # pool the sparse tails into one cell
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        if exp[-1] == 0:
            obs, exp = obs[:-1], exp[:-1]
        pvalues.append(stats.chisquare(obs, exp).pvalue)
    return pvalues


@pytest.mark.parametrize("sampler", ["bits", "uniform"])
def test_released_counts_follow_the_rounding_law(sampler):
    # false-failure rate <= 2 * ALPHA (two labels, each a chi-square test at ALPHA), for either sampler
    assert min(_gof_pvalues(sampler)) > ALPHA


def test_twin_biased_rounding_bits_are_detected(monkeypatch):
    """Twin: rounding bits confined to [0, 2¹⁵) (U ~ U[0, 1/2), so x̂ rounds up with probability min(1, 2 frac))
    must fail the same goodness-of-fit test."""
    monkeypatch.setattr(
        shuffle_gd,
        "random_bits16",
        lambda rng, shape: np.random.default_rng(int(rng.integers(2**32))).integers(
            0, 1 << 15, size=shape, dtype=np.uint16
        ),
    )
    assert min(_gof_pvalues("bits")) < ALPHA


@pytest.mark.parametrize(
    "kwargs, match", [({"sampler": "fast"}, "sampler"), ({"link_curvature": -1.0}, "link_curvature")]
)
def test_run_glm_rejects_bad_options(kwargs, match):
    pgd = shuffle_gradient_descent(10, 3, 1.0, 0.01, 1.0, 1.0, iterations=2)
    with pytest.raises(ValueError, match=match):
        pgd.run_glm(np.random.default_rng(0), np.zeros((10, 3)), np.zeros(10), expit, **kwargs)


def test_scalar_fix_up_matches_the_array_fix_up_on_ties(monkeypatch):
    """The entry-by-entry fix-up (few entries) and the array fix-up give the same sums and draw the same tie
    uniforms: entries whose bits are set to ⌊2¹⁶ frac(s)⌋ are all ties."""
    x, r = _problem(6, 3, 40, 3, 0.9)
    proto = BitSumProtocol(40, 3, g=30, b=3)
    rounding = shuffle_gd._GlmRounding(proto, 0.5, x, r, ndtr, 1.0, CURVATURE[ndtr])
    theta = np.array([[0.3, -0.4, 0.2], [0.1, 0.5, -0.6], [-0.2, 0.0, 0.7]])
    s = rounding.exact_values(
        rounding.margins(theta, slice(None), slice(None))[:, None, :],
        rounding.r[:, None, :],
        rounding.x_norm[:, None, :],
        rounding.x_scaled,
    )
    bits = random_bits16(np.random.default_rng(0), s.shape)
    flat = np.sort(np.random.default_rng(1).choice(s.size, 20, replace=False))
    t = (s.reshape(-1)[flat] - np.floor(s.reshape(-1)[flat])) * 65536
    bits.reshape(-1)[flat[::2]] = np.floor(t[::2])  # every other entry a tie
    rng_scalar, rng_array = np.random.default_rng(9), np.random.default_rng(9)
    scalar = rounding._exact_sums(rng_scalar, theta, bits, flat)
    monkeypatch.setattr(shuffle_gd, "_SCALAR_ENTRIES", -1)
    array = rounding._exact_sums(rng_array, theta, bits, flat)
    assert np.array_equal(scalar, array)
    assert rng_scalar.random() == rng_array.random() != np.random.default_rng(9).random()  # same ties drawn
