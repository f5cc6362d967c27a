"""Cheu et al.'s shuffled bit-sum protocol: formulas, exact encoding/shuffling, fast path vs per message."""

import itertools

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import accounting
from dpaudit.accounting.binomial import binomial_delta
from dpaudit.accounting.events import BinomialDpEvent
from dpaudit.mechanisms.vector_sum import (
    BitSumProtocol,
    binomial_count_pld,
)

ALPHA = 1e-3  # per statistical check: false-failure rate <= 1e-3 (fixed seeds make each run deterministic)


# ---------------------------------------------------------------- formulas


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(num_users=0, num_labels=2, g=4, b=4), "num_users"),
        (dict(num_users=2, num_labels=2, g=0, b=4), "g"),
        (dict(num_users=2, num_labels=2, g=4, b=4, p=1.0), "p"),
        (dict(num_users=2, num_labels=2, g=4, b=4, range="half"), "range"),
        (dict(num_users=2, num_labels=2, g=4, b=4, bound=-1.0), "bound"),
        (dict(num_users=10**6, num_labels=2, g=4, b=10**13), "overflow"),
    ],
)
def test_bad_parameters_raise(kwargs, word):
    with pytest.raises(ValueError, match=word):
        BitSumProtocol(**kwargs)


def test_bad_values_raise():
    proto = BitSumProtocol(3, 2, 4, 8)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="bound"):
        proto.run(rng, np.full((1, 3, 2), 1.5))
    with pytest.raises(ValueError, match="values"):
        proto.run(rng, np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="values"):
        proto.run(rng, np.full((1, 3, 2), np.nan))
    with pytest.raises(ValueError, match="matrices"):
        proto.sum_matrices(rng, np.zeros((1, 3, 3, 3)))
    with pytest.raises(ValueError, match="bits"):
        proto.shuffle_and_count(rng, np.zeros((1, 3, 2, 5), dtype=np.uint8))


# ---------------------------------------------------------------- exact properties


values_st = st.integers(0, 10**6)


@settings(max_examples=40, deadline=None)
@given(
    runs=st.integers(1, 3),
    n=st.integers(1, 5),
    labels=st.integers(1, 4),
    g=st.integers(1, 12),
    b=st.integers(0, 20),
    rng_mode=st.sampled_from(["paper", "normalized"]),
    seed=values_st,
)
def test_messages_hold_exactly_the_encoded_count(runs, n, labels, g, b, rng_mode, seed):
    proto = BitSumProtocol(n, labels, g, b, bound=2.0, range=rng_mode)
    vals = np.random.default_rng(seed).uniform(-2.0, 2.0, (runs, n, labels))
    vals[..., 0] = 2.0  # the top edge of the range
    xhat = proto.encode(np.random.default_rng(seed), vals)
    scaled = (vals + 2.0) * g / proto.unit
    assert np.all((xhat >= np.floor(scaled)) & (xhat <= np.ceil(scaled)) & (xhat <= proto.cap))
    bits = proto.messages(np.random.default_rng(seed + 1), vals)
    assert bits.shape == (runs, n, labels, proto.cap + b)
    ones = bits.sum(-1)
    again = proto.encode(np.random.default_rng(seed + 1), vals)
    assert np.all((ones >= again) & (ones <= again + b))
    counts = proto.shuffle_and_count(np.random.default_rng(seed + 2), bits)
    np.testing.assert_array_equal(counts, ones.sum(1))  # shuffling never changes per-label counts


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), d=st.integers(1, 4), g=st.integers(1, 8), seed=values_st)
def test_analyzer_is_exact_without_noise_on_grid_inputs(n, d, g, seed):
    # inputs on the grid (w g / Δ' an integer) round deterministically; with the binomial noise
    # replaced by its mean p·b·n the analyzer returns the exact sum (the n·Δ de-bias is right).
    proto = BitSumProtocol(n, d, g, 8, bound=1.0)
    rng = np.random.default_rng(seed)
    vals = rng.integers(-g, g + 1, (2, n, d)) / g
    counts = proto.encode(rng, vals).sum(1) + proto.p * proto.b * n
    np.testing.assert_allclose(proto.analyze(counts), vals.sum(1), atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), d=st.integers(1, 3), seed=values_st, per_message=st.booleans())
def test_matrix_sum_is_symmetric(n, d, seed, per_message):
    proto = BitSumProtocol(n, d * (d + 1) // 2, 4, 4)
    x = np.random.default_rng(seed).uniform(-1, 1, (2, n, d))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=-1, keepdims=True))
    out = proto.sum_matrices(np.random.default_rng(seed), x[..., :, None] * x[..., None, :], per_message)
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))


# ---------------------------------------------------------------- statistical


def _counts(proto, vals, seed, per_message):
    rng = np.random.default_rng(seed)
    if per_message:
        return proto.shuffle_and_count(rng, proto.messages(rng, vals))
    return proto.counts(rng, vals)


def _homogeneity_pvalue(a, b):
    """Chi-square test that two integer samples come from one distribution (bins with >= 5 expected)."""
    edges = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, 21)))
    edges[-1] += 1
    ta, _ = np.histogram(a, edges)
    tb, _ = np.histogram(b, edges)
    keep = (ta + tb) > 0
    return stats.chi2_contingency(np.stack([ta[keep], tb[keep]])).pvalue


def _fixture(runs, p=0.25):
    proto = BitSumProtocol(num_users=12, num_labels=3, g=7, b=40, p=p)
    vals = np.random.default_rng(77).uniform(-1, 1, (1, 12, 3)).repeat(runs, 0)
    return proto, vals


def test_fast_path_has_the_per_message_distribution():
    # false-failure rate <= 3 * ALPHA: chi-square homogeneity of each label's count, fast vs per message
    proto, vals = _fixture(4000)
    fast = _counts(proto, vals, 1, False)
    slow = _counts(proto, vals, 2, True)
    assert min(_homogeneity_pvalue(fast[:, k], slow[:, k]) for k in range(3)) > ALPHA


def test_twin_fast_path_with_perturbed_noise_is_detected():
    # twin: the fast path with p = 0.28 instead of 0.25 must be told apart from the per-message path
    proto, vals = _fixture(4000)
    wrong, _ = _fixture(4000, p=0.28)
    fast = _counts(wrong, vals, 1, False)
    slow = _counts(proto, vals, 2, True)
    assert _homogeneity_pvalue(fast[:, 0], slow[:, 0]) < ALPHA


def _error_stats(proto, vals, est):
    err = est - vals.sum(1)
    scaled = (vals[0] + proto.bound) * proto.g / proto.unit
    frac = scaled - np.floor(scaled)
    var = (proto.unit / proto.g) ** 2 * (
        (frac * (1 - frac)).sum(0) + proto.num_users * proto.b * proto.p * (1 - proto.p)
    )
    z = err.mean(0) / np.sqrt(var / err.shape[0])
    chi = (err**2).sum(0) / var  # ~ chi2(runs) if the error variance is var
    p_mean = 2 * stats.norm.sf(np.abs(z)).min()
    p_var = min(2 * min(stats.chi2.cdf(c, err.shape[0]), stats.chi2.sf(c, err.shape[0])) for c in chi)
    return p_mean * 3, p_var * 3, var  # Bonferroni over the 3 labels


def test_analyzer_recovers_the_sum_up_to_the_stated_noise():
    # false-failure rate <= 2 * ALPHA: unbiased (z-test) with the exact error variance (chi-square),
    # for the per-message path and for the fast path; the variance is within the stated bound.
    proto, vals = _fixture(4000)
    for seed, per_message in ((3, True), (4, False)):
        p_mean, p_var, var = _error_stats(proto, vals, proto.run(np.random.default_rng(seed), vals, per_message))
        assert p_mean > ALPHA and p_var > ALPHA
        assert np.all(var <= proto.noise_variance_bound())


def test_twin_cheu_debias_bug_is_detected():
    # twin (Chowdhury & Zhou (ICML 2022), App. C.1 corrects Cheu et al.): de-biasing by Δ instead of n·Δ must fail the mean check
    proto, vals = _fixture(4000)
    est = proto.run(np.random.default_rng(4), vals) + (proto.num_users - 1) * proto.bound
    assert _error_stats(proto, vals, est)[0] < ALPHA


# ---------------------------------------------------------------- exact binomial count profile


def _brute_delta(trials, p, shift, eps):
    x = np.arange(0, trials + shift + 1)
    up, low = stats.binom.pmf(x - shift, trials, p), stats.binom.pmf(x, trials, p)
    return max(np.maximum(up - np.exp(eps) * low, 0).sum(), np.maximum(low - np.exp(eps) * up, 0).sum())


@pytest.mark.parametrize("trials, p, shift", [(200, 0.25, 6), (50, 0.25, 3), (1000, 0.5, 20), (10, 0.25, 0)])
def test_binomial_count_pld_is_pessimistic_and_tight(trials, p, shift):
    pld = binomial_count_pld(trials, p, shift)
    for eps in (0.0, 0.3, 0.8, 1.5):
        brute = _brute_delta(trials, p, shift, eps)
        assert brute - 1e-12 <= pld.get_delta_for_epsilon(eps) <= brute + 1e-3


def test_binomial_count_pld_is_monotone_in_the_shift():
    deltas = [binomial_count_pld(300, 0.25, k).get_delta_for_epsilon(0.5) for k in range(16)]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(deltas))


def test_exact_epsilon_matches_the_checked_value_for_the_author_code_b():
    # P_Vec (Chowdhury & Zhou (ICML 2022), §3.3) with the authors' code's b: Bin(30600, 1/4) shifted by 9 (~ g) or 18 (~ 2g): eps(1e-5) ~ 0.42, 0.88;
    # b = 61 (eps = 1, B = 20): eps(0.1) ~ 0.43 / 1.62
    assert binomial_count_pld(30600, 0.25, 9).get_epsilon_for_delta(1e-5) == pytest.approx(0.42, abs=0.02)
    assert binomial_count_pld(30600, 0.25, 18).get_epsilon_for_delta(1e-5) == pytest.approx(0.88, abs=0.02)
    proto = BitSumProtocol(20, 5, 9, 61, range="normalized")
    assert proto.exact_epsilon(0.1, labels=1) == pytest.approx(0.43, abs=0.02)
    assert BitSumProtocol(20, 5, 9, 61).exact_epsilon(0.1, labels=1) == pytest.approx(1.62, abs=0.02)
    assert proto.exact_epsilon(0.1) > proto.exact_epsilon(0.1, labels=1)  # five labels compose


def test_exact_profile_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="b must"):
        BitSumProtocol(20, 5, 9, 0).label_pld()
    with pytest.raises(ValueError, match="outcomes"):
        BitSumProtocol(20, 5, 9, 10**10).label_pld()  # b of eq. 127 at eps = 0.1
    with pytest.raises(ValueError, match="shift"):
        binomial_count_pld(10, 0.25, -1)


# ---------------------------------------------------------------- the accountable event


def test_event_is_the_binomial_count_per_label_composed_over_labels():
    proto = BitSumProtocol(20, 5, 9, 61)
    label = BinomialDpEvent(trials=20 * 61, probability=0.25, sensitivity=18)  # cap = 2g (range="paper")
    assert proto.label_event() == label
    assert proto.event() == proto.event(5, 1e-3) == dp_accounting.SelfComposedDpEvent(label, 5)
    assert BitSumProtocol(20, 1, 9, 61, range="normalized").event() == BinomialDpEvent(
        trials=1220, probability=0.25, sensitivity=9
    )
    with pytest.raises(ValueError, match="b must"):
        BitSumProtocol(20, 5, 9, 0).label_event()
    with pytest.raises(ValueError, match="delta"):
        proto.event(5, 1.5)


@pytest.mark.parametrize("labels, g, b, rng_mode, delta", [(2, 9, 61, "normalized", 0.1), (1, 9, 1530, "paper", 1e-5)])
def test_accountant_reads_the_exact_epsilon(labels, g, b, rng_mode, delta):
    # the pld accountant composes the same pessimistic binomial PLD as `exact_epsilon`; "best" may
    # only go lower through the exact tail profile (approx), never below the true epsilon
    proto = BitSumProtocol(20, labels, g, b, range=rng_mode)
    exact = proto.exact_epsilon(delta)
    pld = accounting.epsilon(proto.event(), delta, "pld")
    # (up to the FFT round-off bound the pld accountant reserves from delta: PldBackend.fft_slack)
    assert pld == pytest.approx(exact, rel=1e-6) and pld >= exact * (1 - 1e-12)
    best = accounting.epsilon(proto.event(), delta)
    assert best <= pld
    if labels == 1:  # the single-label truth, from the exact tails of dpaudit.accounting.binomial
        assert binomial_delta(20 * b, 0.25, proto.cap, best) <= delta
        assert binomial_delta(20 * b, 0.25, proto.cap, best * (1 - 1e-6)) > delta


def test_accountant_reproduces_the_checked_figures():
    # P_Vec (Chowdhury & Zhou (ICML 2022), §3.3) with the authors' code's b: Bin(30600, 1/4) shifted by 9 (~ g, range="normalized") or 18 (~ 2g,
    # range="paper"): eps(1e-5) ~ 0.42 and 0.88
    for rng_mode, figure in (("normalized", 0.42), ("paper", 0.88)):
        proto = BitSumProtocol(20, 1, 9, 1530, range=rng_mode)
        for acc in ("pld", "approx", "best"):
            assert accounting.epsilon(proto.event(), 1e-5, acc) == pytest.approx(figure, abs=0.01)
