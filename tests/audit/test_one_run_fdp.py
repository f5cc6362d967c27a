"""`dpaudit.audit.one_run_fdp`: the f-DP tail bound against exact worst cases, its tight cases, its order
properties and its input checks (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One
Run", ICML 2025, Alg. 3)."""

import itertools
import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import binom, norm

from dpaudit.audit.one_run_fdp import (
    TradeoffCurve,
    approx_dp_curve,
    event_curve,
    fdp_epsilon_lower,
    fdp_mu_lower,
    fdp_rejects,
    fdp_tail_bound,
    gaussian_curve,
    tradeoff_curve,
)


def rr_tradeoff(epsilon):
    """The exact trade-off function of binary randomized response at epsilon (Dong, Roth, Su 2022, Prop. 2.4)."""
    return lambda a: np.maximum(0.0, np.maximum(1.0 - math.exp(epsilon) * a, math.exp(-epsilon) * (1.0 - a)))


def one_run_counts_rr(m, epsilon):
    """Exact law of the correct count under one_run's guess rule for every (k_+, k_-), canaries by randomized
    response (canary i's bit flipped with probability 1/(1+e^eps)); enumerates all 4^m (inclusion, output) pairs."""
    flip = 1.0 / (1.0 + math.exp(epsilon))
    laws = {}
    for kp in range(m + 1):
        for km in range(m + 1 - kp):
            if kp + km:
                laws[(kp, km)] = np.zeros(kp + km + 1)
    for bits in itertools.product([False, True], repeat=m):
        inc = np.array(bits)
        for out in itertools.product([False, True], repeat=m):
            y = np.array(out)
            flips = int((y != inc).sum())
            p = 0.5**m * flip**flips * (1.0 - flip) ** (m - flips)
            order = np.argsort(-y.astype(float), kind="stable")
            rev = order[::-1]
            for (kp, km), law in laws.items():
                c = int(inc[order[:kp]].sum() + (~inc[rev[:km]]).sum())
                law[c] += p
    return laws


@pytest.mark.parametrize("m", [3, 6])
def test_bound_is_above_the_exact_law_of_one_runs_guesses_on_randomized_response(m):
    """Every (k_+, k_-) and every v: the bound from the exact RR curve, from the tabulated exact curve and
    from dp-accounting's RandomizedResponseDpEvent through the pld accountant are >= the exact P[C >= v]."""
    epsilon = 1.0
    curves = [
        approx_dp_curve(epsilon, 0.0),
        tradeoff_curve(rr_tradeoff(epsilon)),
        event_curve(dp_accounting.RandomizedResponseDpEvent(2.0 / (1.0 + math.exp(epsilon)), 2)),
    ]
    for (kp, km), law in one_run_counts_rr(m, epsilon).items():
        k = kp + km
        tails = law[::-1].cumsum()[::-1]  # P[C >= v]
        for v in range(1, k + 1):
            for curve in curves:
                assert fdp_tail_bound(curve, m, k, v) >= tails[v] * (1 - 1e-12), (curve.name, kp, km, v)


def test_eight_canaries_all_guessed_against_the_binomial():
    """m = 8, all guessed: the exact worst case of RR is Binomial(8, e^eps/(1+e^eps)) (each guess right with
    probability q given the output, independently); the bound is above it at every v and equal at v = 8."""
    for epsilon in (0.5, 1.0, 2.0):
        q = 1.0 / (1.0 + math.exp(-epsilon))
        for v in range(1, 9):
            bound = fdp_tail_bound(approx_dp_curve(epsilon, 0.0), 8, 8, v)
            assert bound >= binom.sf(v - 1, 8, q)
        assert fdp_tail_bound(approx_dp_curve(epsilon, 0.0), 8, 8, 8) == pytest.approx(q**8, rel=1e-9)


@pytest.mark.parametrize("m, k", [(1, 1), (5, 5), (8, 4), (20, 3), (100, 10), (8, 1)])
def test_all_guesses_right_is_tight_for_pure_dp(m, k):
    """P[all k guesses right] <= q^k under eps-DP and RR attains it: the recursion gives q^k, never below."""
    q = 1.0 / (1.0 + math.exp(-1.0))
    bound = fdp_tail_bound(approx_dp_curve(1.0, 0.0), m, k, k)
    assert q**k <= bound <= q**k * (1 + 1e-9)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_one_canary_is_tight_for_gdp(mu):
    """One canary, one guess: the best accuracy of a mu-GDP test is Phi(mu/2) (the symmetric point of the curve)."""
    bound = fdp_tail_bound(gaussian_curve(mu), 1, 1, 1)
    assert norm.cdf(mu / 2) <= bound <= norm.cdf(mu / 2) * (1 + 1e-9)


def gaussian_top_score_exact(m, mu):
    """P[the canary with the top score is included], canaries N(mu b_i, 1): sum over n included of
    Bin(n; m, 1/2) n int phi(x - mu) Phi(x - mu)^(n-1) Phi(x)^(m-n) dx."""
    total = 0.0
    for n in range(1, m + 1):
        inner = integrate.quad(
            lambda x, n=n: n * norm.pdf(x - mu) * norm.cdf(x - mu) ** (n - 1) * norm.cdf(x) ** (m - n), -12, 12 + mu
        )[0]
        total += binom.pmf(n, m, 0.5) * inner
    return total


def gaussian_best_single_guess(m, mu):
    """The best single guess among m Gaussian canaries: pick the largest |x - mu/2| and guess its sign;
    right with probability E[expit(mu A)], A the largest of m |x_i - mu/2| (1-D quadrature)."""

    def cdf(a):  # P[|x - mu/2| <= a] for x ~ (N(0,1) + N(mu,1)) / 2
        return norm.cdf(a + mu / 2) - norm.cdf(-a + mu / 2)

    def pdf(a):
        return norm.pdf(a + mu / 2) + norm.pdf(a - mu / 2)

    return integrate.quad(lambda a: 1 / (1 + math.exp(-mu * a)) * m * cdf(a) ** (m - 1) * pdf(a), 0, 20)[0]


@pytest.mark.parametrize("m", [1, 2, 4, 8])
@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_single_guess_bound_is_above_gaussian_canaries(m, mu):
    """GDP through Gaussian canaries computed exactly (quadrature): one_run's top-score guess and the best
    single guess among m canaries are both below the bound for k = 1, v = 1."""
    bound = fdp_tail_bound(gaussian_curve(mu), m, 1, 1)
    assert bound >= gaussian_top_score_exact(m, mu)
    assert bound >= gaussian_best_single_guess(m, mu) * (1 - 1e-9)


def test_exact_size_of_the_test_on_randomized_response():
    """The exact rejection probability of the true claim, all m canaries guessed (C ~ Binomial(m, q), RR's worst
    case), is <= the level: sum_c P[C = c] 1{c rejects} <= 0.05, and not far below (the test is not void)."""
    for epsilon, m in [(0.5, 100), (1.0, 1000), (2.0, 1000), (1.0, 10)]:
        q = 1.0 / (1.0 + math.exp(-epsilon))
        c = np.arange(m + 1)
        rejected = fdp_rejects(approx_dp_curve(epsilon, 0.0), m, np.full(m + 1, m), c, 0.05)
        size = binom.pmf(c, m, q)[rejected].sum()
        assert size <= 0.05
        if m >= 100:
            assert size >= 0.02


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 60),
    data=st.data(),
    mu=st.floats(0.05, 3.0),
)
def test_bound_is_non_increasing_in_v_and_non_decreasing_in_mu(m, data, mu):
    k = data.draw(st.integers(1, m))
    v = data.draw(st.integers(1, k))
    factor = data.draw(st.floats(1.0, 2.0))
    here = fdp_tail_bound(gaussian_curve(mu), m, k, v)
    if v < k:
        assert fdp_tail_bound(gaussian_curve(mu), m, k, v + 1) <= here
    assert fdp_tail_bound(gaussian_curve(mu * factor), m, k, v) >= here


def test_family_searches_return_rejected_values():
    """mu_lower and epsilon_lower are rejected by the pair they name, a little more is not rejected by any."""
    m, k, v = 1000, np.array([500, 250, 100]), np.array([400, 220, 95])
    level = 0.05 / 3
    i, mu = fdp_mu_lower(m, k, v, level)
    assert mu > 0 and fdp_rejects(gaussian_curve(mu), m, k[i], v[i], level)[0]
    assert not fdp_rejects(gaussian_curve(mu * 1.01), m, k, v, level).any()
    j, eps = fdp_epsilon_lower(m, k, v, 1e-5, level)
    assert eps > 0 and fdp_rejects(approx_dp_curve(eps, 1e-5), m, k[j], v[j], level)[0]
    assert not fdp_rejects(approx_dp_curve(eps * 1.01, 1e-5), m, k, v, level).any()
    assert fdp_mu_lower(m, [100], [50], level) == (0, 0.0)


def test_event_curve_is_below_the_true_curve_and_close_to_it():
    """A Gaussian event's envelope is a weaker claim than its exact mu-GDP curve (inverse power not above
    the exact one: the safe direction), and not much weaker."""
    sigma = 1.0
    curve = event_curve(dp_accounting.GaussianDpEvent(sigma))
    y = np.linspace(1e-6, 0.999, 2000)
    exact = norm.cdf(norm.ppf(y) - 1.0 / sigma)
    approx = curve.inverse_lower(y)
    assert np.all(approx <= exact)
    assert np.all(approx >= 0.9 * exact - 1e-3)
    # Laplace(1): its exact curve (Dong, Roth, Su 2022, Sec. 2.3) sampled finely gives the exact inverse power
    # (up to the sampling step); the envelope's is not above it, and within 1% of f_{1,0}'s (the curve is 1-DP).
    a = np.linspace(0.0, 1.0, 400_001)
    exact_laplace = np.where(
        a < math.exp(-1) / 2, 1 - math.e * a, np.where(a <= 0.5, math.exp(-1) / (4 * a + 1e-300), 0)
    )
    exact_laplace = np.where(a > 0.5, math.exp(-1) * (1 - a), exact_laplace)
    upper = a[np.minimum(np.searchsorted(1 - exact_laplace, y), a.size - 1)]
    laplace = event_curve(dp_accounting.LaplaceDpEvent(1.0)).inverse_lower(y)
    assert np.all(laplace <= upper)
    assert np.all(laplace >= 0.99 * approx_dp_curve(1.0, 0.0).inverse_lower(y))


def test_tabulated_curve_is_convexified_below_a_non_convex_sample():
    """A non-convex f (a step) is replaced by a convex curve below it: the inverse power is never above the one
    of the convex minorant, computed by hand for f = 1 on [0, 1/2), 0 after (minorant 1 - 2a)."""
    curve = tradeoff_curve(lambda a: np.where(a < 0.5, 1.0, 0.0))
    y = np.linspace(0.0, 1.0, 101)
    assert np.all(curve.inverse_lower(y) <= y / 2 + 1e-12)


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: fdp_tail_bound(gaussian_curve(1.0), 0, 1, 1), ValueError, "num_canaries"),
        (lambda: fdp_tail_bound(gaussian_curve(1.0), 1.5, 1, 1), TypeError, "num_canaries"),
        (lambda: fdp_tail_bound(gaussian_curve(1.0), 10, 11, 1), ValueError, "guesses"),
        (lambda: fdp_tail_bound(gaussian_curve(1.0), 10, 5, 6), ValueError, "correct"),
        (lambda: fdp_tail_bound("f", 10, 5, 5), TypeError, "curve"),
        (lambda: fdp_rejects(gaussian_curve(1.0), 10, 5, 5, 1.0), ValueError, "level"),
        (lambda: fdp_rejects(gaussian_curve(1.0), 10, 5, 5, "0.05"), TypeError, "level"),
        (lambda: gaussian_curve(-1.0), ValueError, "mu"),
        (lambda: gaussian_curve("1"), TypeError, "mu"),
        (lambda: approx_dp_curve(1.0, 1.0), ValueError, "delta"),
        (lambda: tradeoff_curve(3.0), TypeError, "f"),
        (lambda: tradeoff_curve(lambda a: a), ValueError, "non-increasing"),
        (lambda: tradeoff_curve(lambda a: 2.0 - a), ValueError, "f must return"),
        (lambda: event_curve("gaussian"), TypeError, "event"),
        (lambda: event_curve(dp_accounting.NonPrivateDpEvent()), ValueError, "event"),
    ],
)
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_curve_type():
    assert isinstance(gaussian_curve(1.0), TradeoffCurve) and gaussian_curve(1.0).name == "1-GDP"


def greedy_total_mp(m, k, v, tau, mu, digits=40):
    """The recursion (2) in 40-digit arithmetic with the exact GDP inverse power: r_0 + h_0."""
    import mpmath

    with mpmath.workdps(digits):
        r, h = mpmath.mpf(tau) * v / m, mpmath.mpf(tau) * (k - v) / m
        for i in range(v - 1, -1, -1):
            inv = mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * r) - mu) if 0 < r < 1 else mpmath.mpf(r >= 1)
            new = max(h, inv)
            r, h = r + mpmath.mpf(i) / (k - i) * (new - h), new
        return r + h


@pytest.mark.parametrize("m, k, v, mu", [(1, 1, 1, 1.0), (10, 10, 9, 2.0), (100, 60, 50, 1.0), (1000, 500, 330, 0.5)])
def test_rejection_at_the_reported_tail_is_not_round_off(m, k, v, mu):
    """At tau = fdp_tail_bound (the smallest tau found rejected, the sharpest case) the 40-digit recursion also
    rejects (r_0 + h_0 > k / m), and at tau 1e-6 below it the float recursion does not (the bound is close)."""
    tau = fdp_tail_bound(gaussian_curve(mu), m, k, v)
    assert tau < 1.0
    assert greedy_total_mp(m, k, v, tau, mu) > mpmath_fraction(k, m)
    assert not fdp_rejects(gaussian_curve(mu), m, k, v, tau * (1 - 1e-6))[0]


def mpmath_fraction(k, m):
    import mpmath

    with mpmath.workdps(40):
        return mpmath.mpf(k) / m
