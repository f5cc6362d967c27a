"""`dpaudit.audit.one_run_order`: the order-statistics bound against brute force of the whole game and independent
exact laws, its order properties, the interfering mechanism it does not cover, its input checks, and
`one_run(..., analysis="order-statistics")` (Xiang, Wang, Xiao, Tian, Wang, "Tight Privacy Audit in One Run",
arXiv 2509.08704, 2025)."""

import itertools
import json
import math

import dp_accounting
import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit
from scipy.stats import binom, norm

from dpaudit.audit import one_run
from dpaudit.audit.one_run_fdp import approx_dp_curve, fdp_tail_bound, gaussian_curve
from dpaudit.audit.one_run_order import (
    AccuracyLaw,
    _lines_law,
    approx_dp_law,
    event_law,
    gaussian_law,
    order_epsilon_lower,
    order_mu_lower,
    order_rejects,
    order_tail_bound,
)


def canonical_game(m, epsilon, delta):
    """Brute force of the whole game on m canonical (eps, delta) channels: every coin vector and every output
    (4 outcomes per canary: 'reveal 0', 'lean 0', 'lean 1', 'reveal 1'); the guesser releases the r guesses of
    largest |log-likelihood ratio| (MAP guess, ties by index).  Returns {r: law of C}."""
    q = 1.0 / (1.0 + math.exp(-epsilon))
    given0 = [delta, (1 - delta) * q, (1 - delta) * (1 - q), 0.0]  # P[outcome | S_i = 0]
    llr = np.array([-np.inf, -epsilon, epsilon, np.inf])  # log P1/P0 per outcome
    laws = {r: np.zeros(r + 1) for r in range(1, m + 1)}
    for bits in itertools.product([0, 1], repeat=m):
        for out in itertools.product(range(4), repeat=m):
            p = 0.5**m
            for b, o in zip(bits, out):
                p *= given0[o] if b == 0 else given0[3 - o]
            if p == 0.0:
                continue
            conf = np.abs(llr[list(out)])
            order = np.argsort(-conf, kind="stable")
            right = np.array([(llr[o] > 0) == (b == 1) for b, o in zip(bits, out)])
            for r, law in laws.items():
                law[int(right[order[:r]].sum())] += p
    return laws


@pytest.mark.parametrize("epsilon, delta", [(1.0, 0.0), (0.5, 0.1), (2.0, 0.02)])
def test_bound_is_the_brute_force_law_of_the_canonical_game(epsilon, delta):
    """m = 4, every r and v: the bound is >= the exact P[C >= v] of the paper's game on canonical channels and
    within 2% of it (the binning of U_(r) is the only loss; none at delta = 0)."""
    m = 4
    law = approx_dp_law(epsilon, delta)
    for r, exact in canonical_game(m, epsilon, delta).items():
        tails = exact[::-1].cumsum()[::-1]
        for v in range(1, r + 1):
            bound = order_tail_bound(law, m, r, v)
            assert tails[v] * (1 - 1e-12) <= bound <= tails[v] * 1.02 + 1e-12, (r, v, bound, tails[v])


def one_run_counts_rr(m, epsilon):
    """Exact law of C under one_run's rule (k_+ highest 'in', k_- lowest 'out') for every pair, canaries by
    randomized response; all 4^m (inclusion, output) pairs."""
    flip = 1.0 / (1.0 + math.exp(epsilon))
    laws = {(a, b): np.zeros(a + b + 1) for a in range(m + 1) for b in range(m + 1 - a) if a + b}
    for bits in itertools.product([False, True], repeat=m):
        inc = np.array(bits)
        for out in itertools.product([False, True], repeat=m):
            y = np.array(out)
            flips = int((y != inc).sum())
            p = 0.5**m * flip**flips * (1.0 - flip) ** (m - flips)
            order = np.argsort(-y.astype(float), kind="stable")
            for (kp, km), law in laws.items():
                law[int(inc[order[:kp]].sum() + (~inc[order[::-1][:km]]).sum())] += p
    return laws


def test_bound_is_above_one_runs_guesses_on_randomized_response():
    """m = 5, every (k_+, k_-) and v: Binomial(k, q) (the bound at delta = 0) is above one_run's exact law."""
    law = approx_dp_law(1.0, 0.0)
    for (kp, km), exact in one_run_counts_rr(5, 1.0).items():
        tails = exact[::-1].cumsum()[::-1]
        for v in range(1, kp + km + 1):
            assert order_tail_bound(law, 5, kp + km, v) >= tails[v] * (1 - 1e-12)


@pytest.mark.parametrize("epsilon, m, k, v", [(0.5, 10, 5, 5), (1.0, 1000, 500, 330), (2.0, 100, 60, 55)])
def test_pure_claim_is_the_binomial_tail(epsilon, m, k, v):
    """delta = 0: one atom, B ~ Binomial(k, e^eps / (1 + e^eps)): Steinke et al.'s bound, to 1e-8."""
    bound = order_tail_bound(approx_dp_law(epsilon, 0.0), m, k, v)
    assert bound == pytest.approx(binom.sf(v - 1, k, expit(epsilon)), rel=1e-8)


def gdp_mean_accuracy(mu):
    """E[expit(mu |u|)], u ~ N(mu/2, 1) (the accuracy of one canonical GDP guess), by quadrature."""
    return integrate.quad(lambda u: expit(mu * abs(u)) * norm.pdf(u - mu / 2), -15, 15 + mu, points=[0.0])[0]


def gdp_best_of(m, mu):
    """E[max of m accuracies] = 1/2 + int_{1/2}^1 (1 - F(t)^m) dt, F(t) = P[|u| <= logit(t) / mu]."""

    def cdf(t):
        c = math.log(t / (1 - t)) / mu
        return norm.cdf(c + mu / 2) - norm.cdf(mu / 2 - c)

    return 0.5 + integrate.quad(lambda t: 1 - cdf(t) ** m, 0.5, 1 - 1e-15, limit=200)[0]


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_gdp_bound_against_independent_exact_laws(mu):
    """All m guessed: B ~ Binomial(m, E[p]); one guess: P[B = 1] = E[max p]; both by quadrature, the bound within
    a relative 1% above (the binning of U_(k) and the accuracy grid are its only losses)."""
    for m, v in [(10, 8), (40, 30), (40, 36)]:
        exact = binom.sf(v - 1, m, gdp_mean_accuracy(mu))
        assert exact * (1 - 1e-9) <= order_tail_bound(gaussian_law(mu), m, m, v) <= exact * 1.01 + 1e-12
    for m in (1, 5, 100):
        exact = gdp_best_of(m, mu)
        assert exact * (1 - 1e-9) <= order_tail_bound(gaussian_law(mu), m, 1, 1) <= exact * 1.01


def test_interfering_mechanism_is_outside_the_bound():
    """A (0.01, 1e-3)-DP mechanism that reveals all 100 bits with probability 1e-3 (else randomized response at
    0.01): 10 guesses are all right with probability ~ 1e-3 + 0.5025^10, above the order-statistics bound (the
    non-interfering condition of the module docstring is needed) and below the f-DP and Steinke et al. bounds."""
    epsilon, delta, m, k = 0.01, 1e-3, 100, 10
    exact = delta + (1 - delta) * expit(epsilon) ** k
    assert order_tail_bound(approx_dp_law(epsilon, delta), m, k, k) < 0.6 * exact
    assert fdp_tail_bound(approx_dp_curve(epsilon, delta), m, k, k) >= exact
    from dpaudit.audit.one_run_bound import one_run_p_value

    assert one_run_p_value(m, k, k, epsilon, delta)[0] >= exact


def test_order_properties_and_comparison_with_the_fdp_bound():
    """Non-increasing in v, non-decreasing in mu, eps and delta, never above the f-DP bound (valid for these
    canonical channels too) by more than its round-off."""
    for m, k in [(50, 20), (1000, 100), (1000, 1000)]:
        vs = np.arange(1, k + 1, max(1, k // 25))
        for mu in (0.3, 1.0, 2.0):
            here = [order_tail_bound(gaussian_law(mu), m, k, int(v)) for v in vs]
            assert np.all(np.diff(here) <= 1e-15)
            more = [order_tail_bound(gaussian_law(mu * 1.3), m, k, int(v)) for v in vs]
            assert np.all(np.array(more) >= np.array(here) - 1e-15)
            fdp = [fdp_tail_bound(gaussian_curve(mu), m, k, int(v)) for v in vs[::5]]
            assert np.all(np.array(here[::5]) <= np.array(fdp) * (1 + 1e-6))
        v = int(0.75 * k)
        by_eps = [order_tail_bound(approx_dp_law(e, 1e-4), m, k, v) for e in (0.5, 1.0, 1.5)]
        by_delta = [order_tail_bound(approx_dp_law(1.0, d), m, k, v) for d in (0.0, 1e-4, 1e-2)]
        assert by_eps == sorted(by_eps) and by_delta == sorted(by_delta)


def test_lines_and_event_laws():
    """The envelope of the two (eps, delta) lines is the two-atom law; a Gaussian event's envelope is a weaker
    claim than its mu-GDP law (a larger bound) and close to it."""
    e, d = 1.0, 1e-3
    lines = _lines_law("x", np.array([-math.exp(e), -math.exp(-e)]), np.array([1 - d, math.exp(-e) * (1 - d)]))
    atoms = {round(a, 12): w for a, w in zip(lines.accuracy, lines.mass)}
    assert atoms.keys() == {1.0, round(expit(e), 12)} and lines.mass.sum() == pytest.approx(1.0)
    assert sum(w for a, w in zip(lines.accuracy, lines.mass) if a == 1.0) == pytest.approx(d)
    law = event_law(dp_accounting.GaussianDpEvent(1.0))
    for m, k, v in [(1000, 50, 45), (10_000, 100, 90), (100, 10, 10)]:
        exact = order_tail_bound(gaussian_law(1.0), m, k, v)
        assert exact <= order_tail_bound(law, m, k, v) <= exact * 1.01


def test_family_searches_return_rejected_values():
    m, k, v = 1000, np.array([500, 250, 100]), np.array([400, 220, 95])
    level = 0.05 / 3
    i, mu = order_mu_lower(m, k, v, level)
    assert mu > 0 and order_rejects(gaussian_law(mu), m, k[i], v[i], level)[0]
    assert not order_rejects(gaussian_law(mu * 1.01), m, k, v, level).any()
    j, eps = order_epsilon_lower(m, k, v, 1e-5, level)
    assert eps > 0 and order_rejects(approx_dp_law(eps, 1e-5), m, k[j], v[j], level)[0]
    assert not order_rejects(approx_dp_law(eps * 1.01, 1e-5), m, k, v, level).any()
    assert order_mu_lower(m, [100], [50], level) == (0, 0.0)


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: order_tail_bound(gaussian_law(1.0), 0, 1, 1), ValueError, "num_canaries"),
        (lambda: order_tail_bound(gaussian_law(1.0), 1.5, 1, 1), TypeError, "num_canaries"),
        (lambda: order_tail_bound(gaussian_law(1.0), 10, 11, 1), ValueError, "guesses"),
        (lambda: order_tail_bound(gaussian_law(1.0), 10, 5, 6), ValueError, "correct"),
        (lambda: order_tail_bound("f", 10, 5, 5), TypeError, "law"),
        (lambda: order_rejects(gaussian_law(1.0), 10, 5, 5, 1.0), ValueError, "level"),
        (lambda: order_rejects(gaussian_law(1.0), 10, 5, 5, "0.05"), TypeError, "level"),
        (lambda: gaussian_law(-1.0), ValueError, "mu"),
        (lambda: gaussian_law("1"), TypeError, "mu"),
        (lambda: approx_dp_law(1.0, 1.0), ValueError, "delta"),
        (lambda: approx_dp_law(math.nan, 0.0), ValueError, "epsilon"),
        (lambda: event_law("gaussian"), TypeError, "event"),
        (lambda: event_law(dp_accounting.NonPrivateDpEvent()), ValueError, "event"),
        (lambda: order_epsilon_lower(10, 5, 5, -0.1, 0.05), ValueError, "delta"),
    ],
)
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=name):
        call()


def gaussian_canaries(sigma):
    return lambda inclusion, rng: inclusion + rng.normal(0.0, sigma, inclusion.size)


def identity(output):
    return output


def test_one_run_result_fields_and_json():
    res = one_run(gaussian_canaries(0.5), 1000, identity, analysis="order-statistics", claim_mu=1.0, seed=2)
    assert res.analysis == "order-statistics" and res.claim_mu == 1.0 and res.claim_epsilon is None
    assert res.verdict == "violation" and res.mu_lower > 1.0 and res.epsilon_lower > 0
    assert res.selection == "grid" and res.level == pytest.approx(0.05 / res.grid_size)
    back = json.loads(res.to_json())
    assert back["analysis"] == "order-statistics" and back["mu_lower"] == res.mu_lower


def test_one_run_reads_the_same_guesses_and_is_tighter_than_fdp():
    """Same seed, same pair: the same count; order-statistics mu_lower >= the f-DP one (its bound is lower)."""
    kw = dict(seed=7, guesses=(200, 200), claim_mu=1.0)
    a = one_run(gaussian_canaries(1.0), 1000, identity, analysis="fdp", **kw)
    b = one_run(gaussian_canaries(1.0), 1000, identity, analysis="order-statistics", **kw)
    assert (a.correct, a.guessed_in, a.guessed_out) == (b.correct, b.guessed_in, b.guessed_out)
    assert b.selection == "fixed" and b.mu_lower >= a.mu_lower


def test_one_run_verdict_is_the_test_of_the_claim():
    """The verdict is "violation" iff some pair rejects the claim's law at level / grid size."""
    pairs = [(250, 250), (64, 0)]
    mech = gaussian_canaries(0.5)
    for claim in ({"claim_mu": 1.5}, {"claim_mu": 3.0}, {"claim_epsilon": 2.0, "claim_delta": 1e-5}):
        res = one_run(mech, 1000, identity, analysis="order-statistics", seed=3, guesses=pairs, **claim)
        fixed = [one_run(mech, 1000, identity, 1.0, seed=3, guesses=g).correct for g in pairs]
        law = gaussian_law(claim["claim_mu"]) if "claim_mu" in claim else approx_dp_law(2.0, 1e-5)
        expected = order_rejects(law, 1000, np.array([500, 64]), np.array(fixed), 0.025).any()
        assert (res.verdict == "violation") == bool(expected)


def test_one_run_event_claim():
    def laplace(inclusion, rng):
        return inclusion + rng.laplace(0.0, 0.25, inclusion.size)

    kw = dict(analysis="order-statistics", seed=1)
    ok = one_run(laplace, 500, identity, claim_event=dp_accounting.LaplaceDpEvent(0.25), **kw)
    bad = one_run(laplace, 500, identity, claim_event=dp_accounting.LaplaceDpEvent(0.5), **kw)
    assert ok.verdict == "consistent" and bad.verdict == "violation"
    assert bad.claim_event == {"type": "LaplaceDpEvent", "noise_multiplier": 0.5}


def test_other_analyses_unchanged():
    a = one_run(gaussian_canaries(1.0), 500, identity, 1.0, seed=4)
    b = one_run(gaussian_canaries(1.0), 500, identity, 1.0, seed=4, analysis="epsilon")
    assert a == b and a.mu_lower is None


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"analysis": "order-statistics"}, ValueError, "analysis='order-statistics' takes exactly one of"),
        ({"analysis": "order-statistics", "claim_mu": 1.0, "claim_epsilon": 1.0}, ValueError, "exactly one of"),
        ({"claim_mu": 1.0}, ValueError, "order-statistics"),
        ({"analysis": "order", "claim_mu": 1.0}, ValueError, "analysis"),
        ({"analysis": "order-statistics", "claim_mu": -1.0}, ValueError, "claim_mu"),
        ({"analysis": "order-statistics", "claim_mu": "1"}, TypeError, "claim_mu"),
        ({"analysis": "order-statistics", "claim_event": "laplace"}, TypeError, "claim_event"),
        ({"analysis": "order-statistics", "claim_epsilon": 0.0}, ValueError, "claim_epsilon"),
        ({"analysis": "order-statistics", "claim_mu": 1.0, "claim_delta": 1.0}, ValueError, "claim_delta"),
    ],
)
def test_bad_claims_name_the_parameter(kwargs, error, match):
    with pytest.raises(error, match=match):
        one_run(gaussian_canaries(1.0), 10, identity, **kwargs)


def test_law_type():
    assert isinstance(gaussian_law(1.0), AccuracyLaw) and gaussian_law(1.0).name == "1-GDP"
