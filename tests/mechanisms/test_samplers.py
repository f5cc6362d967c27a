"""Samplers: exact pmfs by goodness of fit (with twins that must reject), shapes, validation.

Statistical tests: fixed seeds; each asserts a chi-square / KS p-value above ALPHA = 1e-3, so a
correct sampler fails with probability 1e-3 per test over seeds (about 3% for the ~30 tests of
this file together); every twin asserts p < ALPHA for a sampler with perturbed parameter.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpaudit.mechanisms as mech
from dpaudit.mechanisms import counts, discrete, exact

ALPHA = 1e-3


def chi2_pvalue(samples: np.ndarray, pmf, lo: int, hi: int) -> float:
    """Chi-square p-value of integer samples against pmf: bins lo..hi plus the two tails.

    Bins with expected count below 5 are merged with their right neighbour.
    """
    p = [sum(pmf(x) for x in range(lo - 3000, lo))]
    p += [pmf(x) for x in range(lo, hi + 1)]
    p.append(max(1.0 - sum(p), 0.0))
    counts = [(samples < lo).sum()] + [(samples == x).sum() for x in range(lo, hi + 1)]
    counts.append((samples > hi).sum())
    keep_c, keep_e, acc_c, acc_e = [], [], 0.0, 0.0
    for c, e in zip(counts, np.array(p) * samples.size):
        acc_c, acc_e = acc_c + c, acc_e + e
        if acc_e >= 5:
            keep_c.append(acc_c)
            keep_e.append(acc_e)
            acc_c, acc_e = 0.0, 0.0
    keep_c[-1] += acc_c
    keep_e[-1] += acc_e
    keep_e = np.array(keep_e) * (sum(keep_c) / sum(keep_e))
    return float(stats.chisquare(keep_c, keep_e).pvalue)


def dlap_pmf(scale: float):
    return lambda x: math.tanh(1 / (2 * scale)) * math.exp(-abs(x) / scale)


def dgauss_pmf(sigma: float):
    xs = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41)
    z = np.exp(-(xs.astype(float) ** 2) / (2 * sigma**2)).sum()
    return lambda x: math.exp(-(x**2) / (2 * sigma**2)) / z


# ---------------------------------------------------------------- exact pmfs (and twins)


@pytest.mark.parametrize("scale", [0.4, 3, Fraction(17, 3), 40])
def test_discrete_laplace_fits_pmf(scale):
    x = mech.discrete_laplace(np.random.default_rng(11), scale, 50_000)
    w = int(8 * float(scale)) + 3
    assert chi2_pvalue(x, dlap_pmf(float(scale)), -w, w) > ALPHA


def test_discrete_laplace_twin_rejects_scale_times_1_1():
    x = mech.discrete_laplace(np.random.default_rng(11), 3 * 1.1, 50_000)
    assert chi2_pvalue(x, dlap_pmf(3.0), -27, 27) < ALPHA


@pytest.mark.parametrize("sigma", [0.3, 1, 2.5, Fraction(31, 3)])
def test_discrete_gaussian_fits_pmf(sigma):
    x = mech.discrete_gaussian(np.random.default_rng(12), sigma, 50_000)
    w = int(6 * float(sigma)) + 2
    assert chi2_pvalue(x, dgauss_pmf(float(sigma)), -w, w) > ALPHA


def test_discrete_gaussian_twin_rejects_sigma_times_1_1():
    x = mech.discrete_gaussian(np.random.default_rng(12), 2.5 * 1.1, 50_000)
    assert chi2_pvalue(x, dgauss_pmf(2.5), -17, 17) < ALPHA


@pytest.mark.parametrize("p", [0.05, Fraction(1, 3), 0.9])
def test_geometric_fits_pmf(p):
    x = mech.geometric(np.random.default_rng(13), p, 40_000)
    pf = float(p)
    assert chi2_pvalue(x, lambda k: pf * (1 - pf) ** k if k >= 0 else 0.0, 0, int(12 / pf)) > ALPHA


def test_geometric_twin_rejects_perturbed_p():
    x = mech.geometric(np.random.default_rng(13), 0.3 * 1.1, 40_000)
    assert chi2_pvalue(x, lambda k: 0.3 * 0.7**k if k >= 0 else 0.0, 0, 40) < ALPHA


def _force_exact_path(monkeypatch):
    """Widen the float margin so that a large share of draws takes the arbitrary-precision path."""
    monkeypatch.setattr(discrete, "_MARGIN", 0.2)


def test_exact_path_of_discrete_laplace_fits_pmf(monkeypatch):
    _force_exact_path(monkeypatch)
    x = mech.discrete_laplace(np.random.default_rng(14), Fraction(5, 2), 3000)
    assert chi2_pvalue(x, dlap_pmf(2.5), -15, 15) > ALPHA


def test_exact_path_twin_rejects_perturbed_scale(monkeypatch):
    _force_exact_path(monkeypatch)
    x = mech.discrete_laplace(np.random.default_rng(14), Fraction(5, 2) * 2, 3000)
    assert chi2_pvalue(x, dlap_pmf(2.5), -15, 15) < ALPHA


def test_exact_path_of_discrete_gaussian_and_geometric_fit(monkeypatch):
    _force_exact_path(monkeypatch)
    x = mech.discrete_gaussian(np.random.default_rng(15), 1.5, 2000)
    assert chi2_pvalue(x, dgauss_pmf(1.5), -7, 7) > ALPHA
    g = mech.geometric(np.random.default_rng(16), Fraction(1, 4), 2000)
    assert chi2_pvalue(g, lambda k: 0.25 * 0.75**k if k >= 0 else 0.0, 0, 30) > ALPHA


@pytest.mark.parametrize("lam", [0.3, Fraction(7, 2), 250])
def test_poisson_fits_pmf(lam):
    x = mech.poisson(np.random.default_rng(24), lam, 40_000)
    lf = float(lam)
    w = int(6 * math.sqrt(lf)) + 4
    assert chi2_pvalue(x, lambda k: stats.poisson.pmf(k, lf), max(0, int(lf) - w), int(lf) + w) > ALPHA


def test_poisson_twin_rejects_lam_times_1_05():
    x = mech.poisson(np.random.default_rng(24), 250 * 1.05, 40_000)
    assert chi2_pvalue(x, lambda k: stats.poisson.pmf(k, 250.0), 160, 340) < ALPHA


@pytest.mark.parametrize("r,theta", [(0.7, 0.6), (Fraction(1, 8), Fraction(9, 10)), (30, 0.8)])
def test_polya_fits_negative_binomial(r, theta):
    x = mech.polya(np.random.default_rng(17), r, theta, 40_000)
    rf, tf = float(r), float(theta)
    hi = int(rf * tf / (1 - tf) + 8 * math.sqrt(rf * tf) / (1 - tf)) + 10
    assert chi2_pvalue(x, lambda k: stats.nbinom.pmf(k, rf, 1 - tf), 0, hi) > ALPHA


def test_polya_twin_rejects_inverted_theta():
    x = mech.polya(np.random.default_rng(17), 0.7, 0.66, 40_000)
    assert chi2_pvalue(x, lambda k: stats.nbinom.pmf(k, 0.7, 0.4), 0, 40) < ALPHA


def test_polya_shares_sum_to_a_geometric():
    """Chowdhury & Zhou (ICLR 2023) Fact 1: 16 i.i.d. Pólya(1/16, theta) sum to Pólya(1, theta) = Geometric(1-theta)."""
    x = mech.polya(np.random.default_rng(25), Fraction(1, 16), 0.8, (20_000, 16)).sum(axis=1)
    assert chi2_pvalue(x, lambda k: 0.2 * 0.8**k if k >= 0 else 0.0, 0, 40) > ALPHA


@pytest.mark.parametrize("variance", [12.0, Fraction(1, 3)])
def test_skellam_fits_pmf(variance):
    x = mech.skellam(np.random.default_rng(18), variance, 40_000)
    h = float(variance) / 2
    assert chi2_pvalue(x, lambda k: stats.skellam.pmf(k, h, h), -20, 20) > ALPHA


def test_skellam_twin_rejects_variance_times_1_1():
    x = mech.skellam(np.random.default_rng(18), 13.2, 40_000)
    assert chi2_pvalue(x, lambda k: stats.skellam.pmf(k, 6.0, 6.0), -20, 20) < ALPHA


def test_array_parameters_broadcast_per_value():
    rng = np.random.default_rng(26)
    x = mech.skellam(rng, np.array([2.0, 200.0]), (20_000, 2))
    assert x[:, 0].var() == pytest.approx(2.0, rel=0.05) and x[:, 1].var() == pytest.approx(200.0, rel=0.05)
    y = mech.polya(rng, np.array([[1.0], [5.0]]), 0.5, (2, 20_000))
    assert y[0].mean() == pytest.approx(1.0, rel=0.05) and y[1].mean() == pytest.approx(5.0, rel=0.05)


@pytest.fixture
def forced_count_exact_path(monkeypatch):
    """Widen the count tables' error bound so that most draws take the arbitrary-precision path;
    yields the list of exact draws made."""
    calls = []
    real = counts._exact_draw

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(counts, "_SLACK", 0.3)
    monkeypatch.setattr(counts, "_exact_draw", spy)
    counts._table.cache_clear()
    yield calls
    counts._table.cache_clear()


def test_exact_path_of_poisson_fits_pmf(forced_count_exact_path):
    x = mech.poisson(np.random.default_rng(27), Fraction(7, 2), 3000)
    assert len(forced_count_exact_path) > 2000
    assert chi2_pvalue(x, lambda k: stats.poisson.pmf(k, 3.5), 0, 12) > ALPHA


def test_exact_path_of_poisson_twin_rejects(forced_count_exact_path):
    x = mech.poisson(np.random.default_rng(27), Fraction(7, 2) * Fraction(13, 10), 3000)
    assert chi2_pvalue(x, lambda k: stats.poisson.pmf(k, 3.5), 0, 12) < ALPHA


def test_exact_path_of_polya_fits_pmf(forced_count_exact_path):
    x = mech.polya(np.random.default_rng(28), Fraction(1, 8), Fraction(9, 10), 2000)
    assert len(forced_count_exact_path) > 300
    assert chi2_pvalue(x, lambda k: stats.nbinom.pmf(k, 0.125, 0.1), 0, 30) > ALPHA


def test_count_tables_are_certified_by_exact_brackets():
    """Float table bounds lie outside the exact cdf bracket (both sides): every entry of a small
    table, about 40 entries spread over two larger ones, against `cdf_bounds` at 30 digits."""
    for law in (
        counts.poisson_law(Fraction(7, 2)),
        counts.polya_law(Fraction(1, 16), 0.9),
        counts.polya_law(30, Fraction(4, 5)),
    ):
        tab = counts._table(law)
        for t in range(0, tab.below.size, max(1, tab.below.size // 40)):
            lo, hi = counts.cdf_bounds(law, tab.lo + t, 30)
            assert Fraction(int(tab.below[t]) + 1, 2**53) <= lo
            assert hi <= Fraction(int(tab.above[t + 1]), 2**53)


@pytest.mark.parametrize(
    "law,k",
    [
        (counts.poisson_law(Fraction(7, 2)), 2),
        (counts.poisson_law(300), 320),
        (counts.polya_law(Fraction(1, 3), Fraction(1, 2)), 4),
    ],
)
def test_cdf_bounds_bracket_the_cdf(law, k):
    import mpmath

    mpmath.mp.dps = 60
    if law.kind == "poisson":
        lam = mpmath.mpf(law.a.numerator) / law.a.denominator
        ref = sum(mpmath.exp(-lam) * lam**j / mpmath.factorial(j) for j in range(k + 1))
    else:
        r = mpmath.mpf(law.a.numerator) / law.a.denominator
        th = mpmath.mpf(law.theta.numerator) / law.theta.denominator
        ref = sum(
            mpmath.gamma(j + r) / (mpmath.factorial(j) * mpmath.gamma(r)) * th**j * (1 - th) ** r for j in range(k + 1)
        )
    lo, hi = counts.cdf_bounds(law, k, 40)
    assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
    assert hi - lo < Fraction(1, 10**38)


@pytest.mark.parametrize(
    "z", [Fraction(1, 3), Fraction(1, 1024), Fraction(5, 2), Fraction(10**6 + 1), Fraction(123456789, 7)]
)
def test_log_gamma_interval_brackets_loggamma(z):
    import mpmath

    mpmath.mp.dps = 90
    ref = mpmath.loggamma(mpmath.mpf(z.numerator) / z.denominator)
    for digits in (30, 60):
        lo, hi = exact.log_gamma_interval(z, digits)
        assert mpmath.mpf(str(lo)) <= ref <= mpmath.mpf(str(hi))
        assert hi - lo < decimal.Decimal(10) ** (3 - digits)


def test_binomial_fits_pmf_and_twin_rejects():
    rng = np.random.default_rng(19)
    x = mech.binomial(rng, 30, 0.3, 40_000)
    assert chi2_pvalue(x, lambda k: stats.binom.pmf(k, 30, 0.3), 0, 30) > ALPHA
    y = mech.binomial(rng, 30, 0.33, 40_000)
    assert chi2_pvalue(y, lambda k: stats.binom.pmf(k, 30, 0.3), 0, 30) < ALPHA


@pytest.mark.parametrize("sampler,dist", [("laplace", stats.laplace), ("gaussian", stats.norm)])
def test_continuous_fit_ks_and_twin_rejects(sampler, dist):
    rng = np.random.default_rng(20)
    x = getattr(mech, sampler)(rng, 2.0, 20_000)
    assert stats.kstest(x, dist(scale=2.0).cdf).pvalue > ALPHA
    y = getattr(mech, sampler)(rng, 2.2, 20_000)
    assert stats.kstest(y, dist(scale=2.0).cdf).pvalue < ALPHA


def test_randomized_response_keep_rate_and_twin():
    rng = np.random.default_rng(21)
    eps = 1.0
    keep = np.exp(eps) / (1 + np.exp(eps))
    out = mech.randomized_response(rng, np.ones(40_000, dtype=int), eps)
    assert stats.binomtest(int(out.sum()), out.size, keep).pvalue > ALPHA
    twin = mech.randomized_response(rng, np.ones(40_000, dtype=int), 1.2)
    assert stats.binomtest(int(twin.sum()), twin.size, keep).pvalue < ALPHA


def test_k_randomized_response_fits_and_twin():
    rng = np.random.default_rng(22)
    k, eps = 5, 1.0
    probs = np.full(k, 1.0 / (np.exp(eps) + k - 1))
    probs[2] = np.exp(eps) / (np.exp(eps) + k - 1)
    out = mech.k_randomized_response(rng, np.full(40_000, 2), k, eps)
    assert stats.chisquare(np.bincount(out, minlength=k), probs * out.size).pvalue > ALPHA
    twin = mech.k_randomized_response(rng, np.full(40_000, 2), k, 1.15)
    assert stats.chisquare(np.bincount(twin, minlength=k), probs * twin.size).pvalue < ALPHA


# ---------------------------------------------------------------- exact arithmetic


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(7, 2), Fraction(10**6, 7)])
def test_exp_neg_bounds_bracket_the_exponential(x):
    for prec in (30, 60):
        lo, hi = exact.exp_neg_bounds(x, prec)
        with decimal.localcontext() as ctx:
            ctx.prec = prec + 30
            ctx.Emin = decimal.MIN_EMIN
            ref = Fraction((-(decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator))).exp())
        assert lo <= ref <= hi
        assert hi - lo <= ref * (1 + x) * Fraction(3, 10 ** (prec - 2))


@given(st.fractions(min_value=Fraction(1, 100), max_value=1), st.integers(0, 60))
@settings(max_examples=40, deadline=None)
def test_ratio_power_bounds_bracket_exact_power(ratio, k):
    lo, hi = exact.ratio_power_bounds(ratio, k, 40)
    assert lo <= ratio**k <= hi


def test_numpy_log_accuracy_assumption_holds_here():
    """The samplers assume numpy's float64 log has relative error < 2^-42 (module docstring)."""
    rng = np.random.default_rng(23)
    xs = np.concatenate([rng.random(300), 1 - rng.random(100) * 1e-9, rng.random(100) * 1e-300])
    ys = np.log(xs)
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        for x, y in zip(xs, ys):
            ref = decimal.Decimal(float(x)).ln()
            assert abs(decimal.Decimal(float(y)) - ref) <= abs(ref) * decimal.Decimal(2.0**-42)


# ---------------------------------------------------------------- shapes and validation


@given(
    st.one_of(st.integers(0, 5), st.tuples(st.integers(0, 3), st.integers(0, 3))),
    st.sampled_from(["discrete_laplace", "discrete_gaussian", "skellam", "laplace", "gaussian"]),
)
@settings(max_examples=30, deadline=None)
def test_sampler_shapes(size, name):
    out = getattr(mech, name)(np.random.default_rng(0), 1.5, size)
    assert out.shape == ((size,) if isinstance(size, int) else size)


def test_integer_samplers_return_int64():
    rng = np.random.default_rng(0)
    for out in (
        mech.discrete_laplace(rng, 2, 5),
        mech.discrete_gaussian(rng, 2, 5),
        mech.geometric(rng, 0.5, 5),
        mech.polya(rng, 0.5, 0.5, 5),
        mech.skellam(rng, 2.0, 5),
    ):
        assert out.dtype == np.int64


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
@pytest.mark.parametrize("name", ["discrete_laplace", "discrete_gaussian", "skellam", "laplace", "gaussian"])
def test_bad_scale_raises_value_error_naming_it(name, bad):
    with pytest.raises(ValueError, match=r"scale|sigma|variance"):
        getattr(mech, name)(np.random.default_rng(0), bad, 3)


@pytest.mark.parametrize("bad", [True, "2", None])
@pytest.mark.parametrize("name", ["discrete_laplace", "discrete_gaussian", "skellam", "laplace", "gaussian"])
def test_scale_of_the_wrong_type_raises_type_error_naming_it(name, bad):
    with pytest.raises(TypeError, match=r"scale|sigma|variance"):
        getattr(mech, name)(np.random.default_rng(0), bad, 3)


def test_bad_parameters_are_named():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="theta"):
        mech.polya(rng, 1.0, 1.0, 3)
    with pytest.raises(ValueError, match="r must"):
        mech.polya(rng, 0.0, 0.5, 3)
    with pytest.raises(ValueError, match="theta"):
        mech.polya(rng, 1.0, -0.1, 3)
    with pytest.raises(ValueError, match="lam"):
        mech.poisson(rng, float("nan"), 3)
    with pytest.raises(ValueError, match="p must"):
        mech.geometric(rng, 1.5, 3)
    with pytest.raises(ValueError, match="size"):
        mech.discrete_laplace(rng, 1.0, -2)
    with pytest.raises(ValueError, match="broadcast"):
        mech.skellam(rng, np.ones(3), (2, 2))
    with pytest.raises(ValueError, match="epsilon"):
        mech.randomized_response(rng, [0, 1], -1.0)
    with pytest.raises(ValueError, match="k must"):
        mech.k_randomized_response(rng, [0, 1], 1, 1.0)
    with pytest.raises(ValueError, match="values"):
        mech.k_randomized_response(rng, [0, 3], 3, 1.0)


def test_same_seed_same_draws():
    a = mech.discrete_gaussian(np.random.default_rng(5), 3.3, 1000)
    b = mech.discrete_gaussian(np.random.default_rng(5), 3.3, 1000)
    assert np.array_equal(a, b)


def test_wide_laws_split_into_identical_parts_keep_the_pmf(monkeypatch):
    """Above the table limit Poisson(lam) is drawn as a sum of K Poisson(lam/K) (here K = 4)."""
    monkeypatch.setattr(counts, "_SPLIT_TABLE", 200)
    x = mech.poisson(np.random.default_rng(29), 250, 40_000)
    assert chi2_pvalue(x, lambda k: stats.poisson.pmf(k, 250.0), 160, 340) > ALPHA
    y = mech.poisson(np.random.default_rng(29), 250 * 1.05, 40_000)
    assert chi2_pvalue(y, lambda k: stats.poisson.pmf(k, 250.0), 160, 340) < ALPHA


@given(
    st.fractions(min_value=Fraction(1, 50), max_value=60),
    st.fractions(min_value=Fraction(1, 50), max_value=Fraction(49, 50)),
    st.sampled_from(["poisson", "polya"]),
)
@settings(max_examples=60, deadline=None)
def test_count_law_mode_and_tail_ratios(a, theta, kind):
    """The facts the exact cdf brackets rest on: ratios p(k)/p(k-1) are >= 1 up to the mode and
    < 1 after it; up_ratio(j) bounds every later ratio; down_ratio grows up to the mode."""
    law = counts.CountLaw(kind, a, theta if kind == "polya" else Fraction(0))
    m0 = law.mode
    assert all(law.ratio(j) >= 1 for j in range(1, m0 + 1))
    assert law.ratio(m0 + 1) < 1
    for j in (m0, m0 + 1, m0 + 7):
        assert all(law.ratio(i) <= law.up_ratio(j) for i in range(j + 1, j + 40))
    downs = [law.down_ratio(j) for j in range(1, m0 + 1)]
    assert downs == sorted(downs)


def test_table_bucket_guide_equals_binary_search():
    rng = np.random.default_rng(30)
    for law in (counts.poisson_law(250), counts.polya_law(Fraction(1, 64), 0.9)):
        tab = counts._table(law)
        w = np.concatenate(
            [
                np.floor(rng.random(20_000) * 2.0**53),
                tab.below[tab.below >= 0][:500],
                tab.below[tab.below >= 0][:500] + 1,
                [0.0, 2.0**53 - 1],
            ]
        )
        assert np.array_equal(tab.search(w), np.searchsorted(tab.below, w, side="left"))


@pytest.mark.parametrize("scale", [1.0, 2, np.float64(0.3), np.int64(3)])
@pytest.mark.parametrize("size", [None, 5, (3, 4), ()])
def test_scalar_scale_fast_path_draws_what_the_array_path_draws(scale, size):
    """Exact: a scalar scale skips the array validation, and numpy draws the same numbers (same seed, same
    shape) as for the equal 0-d array scale, so simulations keep their outputs bit for bit."""
    from dpaudit.mechanisms.samplers import gaussian, laplace

    shape = () if size is None else size
    for ours, numpy_draw in ((gaussian, "normal"), (laplace, "laplace")):
        got = ours(np.random.default_rng(7), scale, size)
        want = getattr(np.random.default_rng(7), numpy_draw)(0.0, np.asarray(scale, dtype=float), shape)
        assert np.shape(got) == np.shape(want) and np.array_equal(got, want)


@pytest.mark.parametrize(
    "bad, error",
    [(0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), (float("inf"), ValueError), (True, TypeError)],
)
def test_scalar_scale_still_validated(bad, error):
    from dpaudit.mechanisms.samplers import gaussian, laplace

    with pytest.raises(error, match="sigma"):
        gaussian(np.random.default_rng(0), bad, 3)
    with pytest.raises(error, match="scale"):
        laplace(np.random.default_rng(0), bad, 3)
