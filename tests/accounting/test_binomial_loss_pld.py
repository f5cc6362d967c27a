"""The `pld` accountant on binomial counts too wide to enumerate (Cheu, Joseph, Mao, Peng, ICLR 2022 bit sums with
the papers' b ~ 10⁹): `dpaudit.accounting.binomial_loss`, a privacy loss distribution on a grid of losses, against
independent computations: the exact hockey-stick divergence of one count, bounded below and above from scipy's binomial
tails and pmf with their error bounds (`dpaudit.accounting.binomial_tails`; `dpaudit.accounting.binomial` gives the
upper bound), and the sum of k composed counts (a post-processing of them, so its exact ε is a lower bound on theirs).
scipy's tails against mpmath: tests/accounting/test_binomial_deep_tails.py. Exact computations: no false failures;
each check has a twin that an optimistic distribution fails."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit import accounting as A
from dpaudit.accounting import binomial, binomial_loss
from dpaudit.accounting.binomial import binomial_delta, binomial_epsilon
from dpaudit.accounting.binomial_tails import lower_bounds, upper_bounds
from dpaudit.accounting.curves import binomial_enumerated

P = 0.25


def _exact_below(trials: int, shift: int, eps: float) -> float:
    """A lower bound on the exact δ(ε), shift <= 1024: in each direction the level set at float64's threshold (any
    set bounds the supremum below), its window minus (e^ε - 1) times its tail (up: P(t - s <= X < t) and
    P(X >= t); down: P(u - s < X <= u) and P(X <= u - s)), the pmf lowered and the tail raised by their error bounds
    (`dpaudit.accounting.binomial_tails`), then rounded down."""
    t = binomial._threshold(trials, P, shift, eps)
    u = binomial._threshold(trials, P, shift, -eps) - 1
    best = 0.0
    for window, end, tail in (
        (np.arange(t - shift, t), t, binomial._at_least(trials, P, np.array([t]))),
        (np.arange(u - shift + 1, u + 1), u - shift, binomial._at_most(trials, P, np.array([u - shift]))),
    ):
        mass = math.fsum(lower_bounds(stats.binom.pmf(window, trials, P), window, trials, P)) * (1 - 1e-15)
        above = upper_bounds(tail, np.array([end]), trials, P)[0]
        best = max(best, (mass - math.expm1(eps) * (1 + 1e-15) * above) * (1 - 1e-15))
    return best


@pytest.mark.parametrize("trials, shift", [(2 * 10**8, 18), (20 * 331_226_459, 18), (2**52, 566), (10**12, 1)])
def test_one_count_is_above_the_exact_divergence_and_within_three_percent(trials, shift):
    """δ(ε) of the accountant's PLD >= a lower bound on the exact divergence (level sets of the likelihood ratio) at
    every ε of a grid over [0, 4μ], and <= 1.03 of an upper bound on it (`binomial_delta`) + 1e-12 (2.6% seen, at 2⁵²
    trials, where the grid's tails carry their error bound, ~10⁻⁷ of P(X >= t)); the same count
    moved by shift - 1 (an optimistic twin) falls below the lower bound somewhere."""
    assert not binomial_enumerated(trials, P, shift)
    event = A.BinomialDpEvent(trials=trials, probability=P, sensitivity=shift)
    mu = shift / math.sqrt(trials * P * (1 - P))
    grid = np.linspace(0.0, 4 * mu, 9)[1:]
    for eps in grid:
        below, above = _exact_below(trials, shift, float(eps)), binomial_delta(trials, P, shift, float(eps))
        assert below <= A.delta(event, float(eps), "pld") <= above * 1.03 + 1e-12
    if shift > 1:
        twin = binomial_loss.binomial_loss_pld(trials, P, shift - 1)
        assert any(twin.get_delta_for_epsilon(float(e)) < _exact_below(trials, shift, float(e)) for e in grid)


@pytest.mark.parametrize("trials, shift, labels", [(20 * 331_226_459, 18, 20), (2**47, 40, 20), (10**9, 3, 200)])
def test_composed_counts_between_their_sum_and_one_percent_above(trials, shift, labels):
    """k labels, each count + Bin(N, p) moved by s: their sum, count + Bin(kN, p) moved by ks, is a post-processing,
    so its exact ε is a lower bound (`binomial_epsilon`, an upper bound on it, less 10⁻⁵ relative, certified below by
    its δ being above the target); the accountant's is above it by at most 1% and the k intervals the grid can add (`dpaudit budget linucb-sdp-vec --horizon 10000 --delta 1e-6`'s 20 labels: 0.0067917 against
    0.0067661)."""
    label = A.BinomialDpEvent(trials=trials, probability=P, sensitivity=shift)
    event = dp_accounting.SelfComposedDpEvent(label, labels)
    grid = labels * binomial_loss.default_interval(trials, P, shift)
    for delta in (1e-3, 1e-6, 1e-9):
        lower = binomial_epsilon(labels * trials, P, labels * shift, delta) * (1 - 1e-5)
        assert lower == 0 or _exact_below(labels * trials, labels * shift, lower) > delta
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
    lower = binomial_epsilon(20 * trials, P, 20 * shift, 1e-6) * (1 - 1e-5)
    assert _exact_below(20 * trials, 20 * shift, lower) > 1e-6
    assert lower <= alone < mixed < alone + 20 * 1e-4 + 2e-4
    mu = shift / math.sqrt(trials * P * (1 - P))
    assert binomial_loss.default_interval(trials, P, shift) == pytest.approx(mu / 200)


def test_beyond_exact_doubles_and_huge_losses_are_refused():
    with pytest.raises(A.UnsupportedEventError, match="2\\^52"):
        A.epsilon(A.BinomialDpEvent(trials=2**52 + 1, probability=P, sensitivity=4), 1e-6, "pld")
    with pytest.raises(ValueError, match="trials"):
        binomial_loss.binomial_loss_pld(2**52 + 1, P, 4)
    with pytest.raises(ValueError, match="shift"):
        binomial_loss.binomial_loss_pld(10, P, 11)
    with pytest.raises(A.UnsupportedEventError, match="beyond 700"):  # a shift of 1.5·10⁵ counts on sd 5000
        A.epsilon(A.BinomialDpEvent(trials=10**8, probability=0.5, sensitivity=150_000), 1e-6, "pld")
    with pytest.raises(A.UnsupportedEventError, match="disjoint within"):  # 5·10⁵ counts: 100 sd
        A.epsilon(A.BinomialDpEvent(trials=10**8, probability=0.5, sensitivity=500_000), 1e-6, "pld")
    with pytest.raises(ValueError, match="beyond 40 sd"):
        binomial_loss.binomial_loss_pld(10**8, 0.5, 500_000)
