"""The `pld` accountant on binomial counts too wide to enumerate (Cheu, Joseph, Mao, Peng, ICLR 2022 bit sums with
the papers' b ~ 10⁹): `dpaudit.accounting.binomial_loss`, a privacy loss distribution on a grid of losses, against
independent computations: the exact hockey-stick divergence of one count from binomial tails
(`dpaudit.accounting.binomial`), the sum of k composed counts (a post-processing of them, so its exact ε is a lower
bound on theirs), and mpmath sums of the binomial pmf for the tails the grid trusts. Exact computations: no false
failures; each check has a twin that an optimistic distribution fails."""

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from scipy import stats

from dpaudit import accounting as A
from dpaudit.accounting import binomial_loss
from dpaudit.accounting.binomial import binomial_delta, binomial_epsilon
from dpaudit.accounting.curves import binomial_enumerated

P = 0.25


@pytest.mark.parametrize("trials, shift", [(2 * 10**8, 18), (20 * 331_226_459, 18), (2**52, 566), (10**12, 1)])
def test_one_count_is_above_the_exact_tails_and_within_two_percent(trials, shift):
    """δ(ε) of the accountant's PLD >= the exact divergence (level sets of the likelihood ratio) at every ε of a
    grid over [0, 4μ], and <= 1.02 of it + 1e-12; the same count moved by shift - 1 (an optimistic twin) falls
    below the exact divergence somewhere."""
    assert not binomial_enumerated(trials, P, shift)
    event = A.BinomialDpEvent(trials=trials, probability=P, sensitivity=shift)
    mu = shift / math.sqrt(trials * P * (1 - P))
    grid = np.linspace(0.0, 4 * mu, 9)[1:]
    for eps in grid:
        exact = binomial_delta(trials, P, shift, float(eps))
        assert exact * (1 - 1e-9) <= A.delta(event, float(eps), "pld") <= exact * 1.02 + 1e-12
    if shift > 1:
        twin = binomial_loss.binomial_loss_pld(trials, P, shift - 1)
        assert any(twin.get_delta_for_epsilon(float(e)) < binomial_delta(trials, P, shift, float(e)) for e in grid)


@pytest.mark.parametrize("trials, shift, labels", [(20 * 331_226_459, 18, 20), (2**47, 40, 20), (10**9, 3, 200)])
def test_composed_counts_between_their_sum_and_one_percent_above(trials, shift, labels):
    """k labels, each count + Bin(N, p) moved by s: their sum, count + Bin(kN, p) moved by ks, is a post-processing,
    so its exact ε (binomial tails) is a lower bound; the accountant's is above it by at most 1% and the k intervals
    the grid can add (`dpaudit budget linucb-sdp-vec --horizon 10000 --delta 1e-6`'s 20 labels: 0.0067917 against
    0.0067661)."""
    label = A.BinomialDpEvent(trials=trials, probability=P, sensitivity=shift)
    event = dp_accounting.SelfComposedDpEvent(label, labels)
    grid = labels * binomial_loss.default_interval(trials, P, shift)
    for delta in (1e-3, 1e-6, 1e-9):
        lower = binomial_epsilon(labels * trials, P, labels * shift, delta)
        value = A.epsilon(event, delta, "pld")
        assert lower <= value <= 1.01 * lower + grid
        assert A.epsilon(event, delta) == min(value, A.epsilon(event, delta, "approx"))


def test_interval_is_refined_for_binomial_branches_only():
    """A branch of such counts alone is discretised at min(1e-5, μ/200); mixed with a Laplace release it keeps the
    accountant's interval (coarser, still valid: above the refined answer and the sum's lower bound)."""
    trials, shift = 20 * 331_226_459, 18
    counts = dp_accounting.SelfComposedDpEvent(A.BinomialDpEvent(trials=trials, probability=P, sensitivity=shift), 20)
    laplace = dp_accounting.LaplaceDpEvent(1e4)
    alone = A.epsilon(counts, 1e-6, "pld")
    mixed = A.epsilon(dp_accounting.ComposedDpEvent([counts, laplace]), 1e-6, "pld")
    assert binomial_epsilon(20 * trials, P, 20 * shift, 1e-6) <= alone < mixed < alone + 20 * 1e-4 + 2e-4
    mu = shift / math.sqrt(trials * P * (1 - P))
    assert binomial_loss.default_interval(trials, P, shift) == pytest.approx(mu / 200)


def test_beyond_exact_doubles_and_huge_losses_are_refused():
    with pytest.raises(A.UnsupportedEventError, match="2\\^52"):
        A.epsilon(A.BinomialDpEvent(trials=2**52 + 1, probability=P, sensitivity=4), 1e-6, "pld")
    with pytest.raises(ValueError, match="trials"):
        binomial_loss.binomial_loss_pld(2**52 + 1, P, 4)
    with pytest.raises(ValueError, match="shift"):
        binomial_loss.binomial_loss_pld(10, P, 11)
    with pytest.raises(A.UnsupportedEventError, match="beyond 700"):  # a shift of 5·10⁵ counts on sd 5000
        A.epsilon(A.BinomialDpEvent(trials=10**8, probability=0.5, sensitivity=500_000), 1e-6, "pld")


def _exact_cdf(trials: int, k: int) -> mpmath.mpf:
    """P(X <= k), X ~ Bin(N, 1/4), summed from 40 sd below the mean in 30-digit arithmetic (the rest < 1e-340)."""
    with mpmath.workdps(30):
        p = mpmath.mpf(1) / 4
        start = max(0, int(trials * 0.25 - 40 * math.sqrt(trials * 0.1875)))
        term = mpmath.exp(mpmath.loggamma(trials + 1) - mpmath.loggamma(start + 1) - mpmath.loggamma(trials - start + 1)
                          + start * mpmath.log(p) + (trials - start) * mpmath.log(1 - p))
        total = term
        for x in range(start, k):
            term *= (trials - x) * p / ((x + 1) * (1 - p))
            total += term
        return total


@pytest.mark.parametrize("trials", [10**5, 4 * 10**6])
def test_the_tails_it_trusts_are_within_their_margin(trials):
    """scipy's cdf at z in [-30, 0] against mpmath: within 1/20 of the margin the grid adds (`_TAIL_RELATIVE`); the
    error itself is above ulp, so no margin of a few ulp would do (the twin)."""
    sd = math.sqrt(trials * 0.1875)
    worst = 0.0
    for z in (-30.0, -12.5, -4.0, -1.5, -0.4):
        k = int(trials * 0.25 + z * sd)
        exact = _exact_cdf(trials, k)
        error = float(abs(mpmath.mpf(stats.binom.cdf(k, trials, 0.25)) - exact) / exact)
        margin = binomial_loss._TAIL_RELATIVE * math.sqrt(trials) * (1 + abs(z))
        assert error <= margin / 20
        worst = max(worst, error)
    assert worst > 8 * 2.0**-52
