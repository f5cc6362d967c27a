"""The shuffler and Chowdhury & Zhou's (ICML 2022) P_Amp (§3.2, Algs. 2-4): exact properties, the paper's formulas, seeded statistics."""

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.accounting.events import ShuffledDpEvent
from dpaudit.mechanisms.shuffle import (
    GaussianShuffleProtocol,
    fmt20_amplification,
    fmt20_amplification_applies,
    fmt21_local_delta_term,
    gaussian_ldp_sigma,
    permutations,
    shuffle,
)

ALPHA = 1e-3  # per statistical check: false-failure rate <= 1e-3 (fixed seeds make each run deterministic)


# ---------------------------------------------------------------- shuffler, exact


@settings(max_examples=40, deadline=None)
@given(runs=st.integers(1, 4), n=st.integers(1, 30), width=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
def test_shuffle_permutes_whole_messages_within_each_run(runs, n, width, seed):
    rng = np.random.default_rng(seed)
    shape = (runs, n) if width == 0 else (runs, n, width)
    msgs = rng.integers(0, 5, size=shape)
    out = shuffle(np.random.default_rng(seed + 1), msgs)
    assert out.shape == msgs.shape
    for r in range(runs):
        a = msgs[r].reshape(n, -1)
        b = out[r].reshape(n, -1)
        assert sorted(map(tuple, a)) == sorted(map(tuple, b))  # same multiset of whole messages


@settings(deadline=None)
@given(runs=st.integers(1, 5), n=st.integers(1, 50), seed=st.integers(0, 1000))
def test_permutations_are_permutations(runs, n, seed):
    perm = permutations(np.random.default_rng(seed), runs, n)
    np.testing.assert_array_equal(np.sort(perm, axis=1), np.tile(np.arange(n), (runs, 1)))


def test_shuffle_rejects_bad_shapes():
    with pytest.raises(ValueError, match="messages"):
        shuffle(np.random.default_rng(0), np.arange(4))
    with pytest.raises(ValueError, match="runs"):
        permutations(np.random.default_rng(0), 0, 3)


# ---------------------------------------------------------------- shuffler, statistical


def _perm_pvalue(perms):
    codes = perms[:, 0] * 3 + perms[:, 1]  # the 6 permutations of (0, 1, 2) have codes 1, 2, 3, 5, 6, 7
    return stats.chisquare(np.bincount(codes, minlength=9)[[1, 2, 3, 5, 6, 7]]).pvalue


def test_shuffler_is_uniform_over_all_permutations():
    # false-failure rate <= ALPHA: chi-square over the 3! = 6 permutations of 3 messages
    perms = permutations(np.random.default_rng(1), 30_000, 3)
    assert _perm_pvalue(perms) > ALPHA


def test_twin_non_uniform_shuffler_is_detected():
    # twin: a "shuffler" that only rotates (3 of the 6 permutations) must fail the same check
    rng = np.random.default_rng(2)
    shift = rng.integers(0, 3, 30_000)
    perms = (np.arange(3)[None, :] + shift[:, None]) % 3
    assert _perm_pvalue(perms) < ALPHA


def test_target_message_lands_anywhere_uniformly():
    # no-shuffle detection (the shuffler S_Amp, Chowdhury & Zhou (ICML 2022), Alg. 3): a marked message at position 0 is found uniformly over
    # the n positions; false-failure rate <= ALPHA; twin: the identity "shuffler" is detected.
    n, runs = 8, 16_000
    msgs = np.zeros((runs, n), dtype=int)
    msgs[:, 0] = 1
    pos = np.argmax(shuffle(np.random.default_rng(3), msgs), axis=1)
    assert stats.chisquare(np.bincount(pos, minlength=n)).pvalue > ALPHA
    assert stats.chisquare(np.bincount(np.argmax(msgs, axis=1), minlength=n) + 1).pvalue < ALPHA


# ---------------------------------------------------------------- P_Amp formulas


def test_gaussian_ldp_sigma_refuses_what_the_classical_mechanism_cannot_give():
    with pytest.raises(ValueError, match="epsilon0"):
        gaussian_ldp_sigma(1.5, 1e-6)
    with pytest.raises(ValueError, match="delta0"):
        gaussian_ldp_sigma(0.5, 0.0)
    assert gaussian_ldp_sigma(0.5, 1e-6) == pytest.approx(4 * math.sqrt(2 * math.log(2.5e6)) / 0.5)


@settings(max_examples=50, deadline=None)
@given(eps0=st.floats(0.01, 3.0), n=st.integers(10**3, 10**7))
def test_fmt20_amplification_never_exceeds_local_epsilon(eps0, n):
    if fmt20_amplification_applies(eps0, n, 1e-6):
        eps, _ = fmt20_amplification(eps0, 0.0, n, 1e-6)
        assert 0 < eps < eps0 + 1e-12


def test_fmt21_local_delta_term():
    assert fmt21_local_delta_term(0.5, 1.0, 1e-9, 1000) == pytest.approx(
        (math.exp(0.5) + 1) * (1 + math.exp(-1) / 2) * 1e-6
    )


def test_pamp_events():
    p = GaussianShuffleProtocol(dim=4, num_users=1000, sigma=26.0, sigma_matrix=13.0)
    ev = p.local_event()
    assert isinstance(ev, dp_accounting.GaussianDpEvent)
    assert ev.noise_multiplier == pytest.approx(1 / math.sqrt((2 / 26) ** 2 + (2 / 13) ** 2))
    eps0 = p.local_epsilon(1e-9)
    ref = dp_accounting.gaussian_mechanism.get_epsilon_gaussian(ev.noise_multiplier, 1e-9)
    assert ref <= eps0 <= ref + 1e-6
    assert p.sum_event().noise_multiplier == pytest.approx(ev.noise_multiplier * math.sqrt(1000))
    central = p.central_event(1e-9)
    assert central == ShuffledDpEvent(local_epsilon=eps0, num_users=1000, local_delta=1e-9)
    local = GaussianShuffleProtocol.from_local_privacy(0.5, 1e-6, 4, 20)
    assert local.sigma == pytest.approx(4 * math.sqrt(2 * math.log(2.5e6)) / 0.5)
    # the classical Gaussian calibration is valid: the exact local epsilon at delta0 is below 0.5
    assert local.local_epsilon(1e-6) < 0.5


def _inputs(rng, runs, n, d):
    phi = rng.normal(size=(runs, n, d))
    phi /= np.maximum(1.0, np.linalg.norm(phi, axis=-1, keepdims=True))
    y = rng.uniform(-1, 1, (runs, n, 1))
    return phi * y, phi[..., :, None] * phi[..., None, :]


def test_pamp_bad_inputs():
    p = GaussianShuffleProtocol(dim=2, num_users=3, sigma=1.0)
    rng = np.random.default_rng(0)
    v, m = _inputs(rng, 2, 3, 2)
    with pytest.raises(ValueError, match="vectors"):
        p.run(rng, 2 * v + 1.0, m)
    with pytest.raises(ValueError, match="symmetric"):
        p.run(rng, v, m + np.array([[0, 0.1], [0, 0]]))
    with pytest.raises(ValueError, match="vectors"):
        p.run(rng, v[:, :2], m)
    with pytest.raises(ValueError, match="sigma"):
        GaussianShuffleProtocol(dim=2, num_users=3, sigma=0.0)
    with pytest.raises(ValueError, match="num_users"):
        GaussianShuffleProtocol(dim=2, num_users=0, sigma=1.0)


def _reference_accepts(v, m):
    """The input checks as first written (allclose symmetry, norms via np.linalg.norm)."""
    return bool(
        np.allclose(m, np.swapaxes(m, -1, -2))
        and not np.any(np.linalg.norm(v, axis=-1) > 1.0 + 1e-9)
        and not np.any(np.linalg.norm(m, axis=(-2, -1)) > 1.0 + 1e-9)
    )


@settings(max_examples=60, deadline=None)
@given(
    runs=st.integers(1, 3),
    n=st.integers(1, 5),
    d=st.integers(1, 4),
    seed=st.integers(0, 10**6),
    asym=st.sampled_from([0.0, 1e-12, 1e-3]),
    scale_v=st.sampled_from([0.5, 1.0, 1 + 1e-12, 1 + 1e-6, 2.0]),
    scale_m=st.sampled_from([0.5, 1.0, 1 + 1e-12, 1 + 1e-6, 2.0]),
)
def test_pamp_input_checks_accept_exactly_what_the_reference_accepts(runs, n, d, seed, asym, scale_v, scale_m):
    rng = np.random.default_rng(seed)
    v, m = _inputs(rng, runs, n, d)
    v = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300) * scale_v
    m = m / np.maximum(np.linalg.norm(m, axis=(-2, -1), keepdims=True), 1e-300) * scale_m
    if d > 1:
        m[..., 0, 1] += asym
    p = GaussianShuffleProtocol(dim=d, num_users=n, sigma=1.0)
    try:
        p.run(rng, v, m)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted == _reference_accepts(v, m)


@settings(max_examples=20, deadline=None)
@given(runs=st.integers(1, 3), n=st.integers(1, 6), d=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_pamp_messages_are_symmetric_and_shaped(runs, n, d, seed):
    rng = np.random.default_rng(seed)
    p = GaussianShuffleProtocol(dim=d, num_users=n, sigma=0.5)
    v, m = _inputs(rng, runs, n, d)
    m1, m2 = p.randomize(rng, v, m)
    assert m1.shape == (runs, n, d) and m2.shape == (runs, n, d, d)
    np.testing.assert_array_equal(m2, np.swapaxes(m2, -1, -2))
    u, vv = p.run(rng, v, m, per_message=True)
    np.testing.assert_array_equal(vv, np.swapaxes(vv, -1, -2))
    assert u.shape == (runs, d)
    y1, y2 = p.shuffle(rng, m1, m2)
    np.testing.assert_allclose(p.analyze(y1, y2)[0], m1.sum(1), atol=1e-12)  # the analyzer's sum ignores order


# ---------------------------------------------------------------- P_Amp, statistical


def _pamp_errors(p, runs, seed, per_message):
    rng = np.random.default_rng(seed)
    v, m = _inputs(np.random.default_rng(99), 1, p.num_users, p.dim)
    v, m = np.repeat(v, runs, 0), np.repeat(m, runs, 0)
    u, vv = p.run(rng, v, m, per_message=per_message)
    return u - v.sum(1), vv - m.sum(1)


def test_pamp_fast_path_equals_per_message_and_recovers_the_sum():
    # false-failure rate <= 4 * ALPHA: two-sample KS (fast vs per message) on two entries, and
    # KS of the standardised error against N(0, 1) (the stated noise sigma*sqrt(n)).
    p = GaussianShuffleProtocol(dim=3, num_users=10, sigma=0.7)
    fu, fv = _pamp_errors(p, 8000, 4, False)
    su, sv = _pamp_errors(p, 8000, 5, True)
    assert stats.ks_2samp(fu[:, 0], su[:, 0]).pvalue > ALPHA
    assert stats.ks_2samp(fv[:, 0, 1], sv[:, 0, 1]).pvalue > ALPHA
    sd_u, sd_m = p.sum_noise_std()
    assert stats.kstest(fu[:, 1] / sd_u, "norm").pvalue > ALPHA
    assert stats.kstest(sv[:, 1, 2] / sd_m, "norm").pvalue > ALPHA


def test_twin_pamp_perturbed_noise_is_detected():
    # twin: the same checks must reject a protocol whose per-user noise is 15% too small
    p = GaussianShuffleProtocol(dim=3, num_users=10, sigma=0.7)
    weak = GaussianShuffleProtocol(dim=3, num_users=10, sigma=0.7 * 0.85)
    fu, _ = _pamp_errors(weak, 8000, 4, False)
    su, _ = _pamp_errors(p, 8000, 5, True)
    assert stats.ks_2samp(fu[:, 0], su[:, 0]).pvalue < ALPHA
    assert stats.kstest(fu[:, 1] / p.sum_noise_std()[0], "norm").pvalue < ALPHA


def test_central_event_reads_through_the_accounting_engine():
    from dpaudit import accounting

    p = GaussianShuffleProtocol(
        dim=5, num_users=1000, sigma=26.31
    )  # Thm B.1's sigma at eps = 0.12045, delta = 1e-6, B = 1000
    eps0 = p.local_epsilon(1e-9)
    shuffled = accounting.epsilon(p.central_event(1e-9), 1e-5)
    assert 0 < shuffled < eps0 / 5  # amplification
    # the event carries delta0: the accountant's delta already holds the FMT21 Thm 3.8 term, at
    # least its value at eps' = 0 (any eps' <= eps may serve), on top of the pure part
    d = accounting.delta(p.central_event(1e-9), shuffled)
    assert d <= 1e-5
    pure = accounting.delta(ShuffledDpEvent(local_epsilon=eps0, num_users=1000), shuffled)
    assert d >= pure + 2 * (1 + math.exp(-eps0) / 2) * 1000 * 1e-9
    # at delta = 2e-6 the term (>= 2.56e-6 here) leaves nothing to amplify: only the local bound
    # remains (the pure description claimed eps ~ 0.08 here)
    assert accounting.epsilon(p.central_event(1e-9), 2e-6) > 0.99 * eps0
    assert fmt21_local_delta_term(shuffled, eps0, 1e-9, 1000) > 2e-6
