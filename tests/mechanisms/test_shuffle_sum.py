"""P_Shuffle of Chowdhury & Zhou (ICLR 2023) (Thm 3): parameters, per-message vs fast path, analyzer, noise law, events.

Statistical tests: fixed seeds; each asserts a chi-square p-value above ALPHA = 1e-3 (false
failure probability 1e-3 per test over seeds, about 0.3% for the three of this file); each has a
twin asserting p < ALPHA when the noise is perturbed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import accounting
from dpaudit.algorithms.mab.claims import shuffle_sum_proof_event
from dpaudit.mechanisms import ShuffleSum

ALPHA = 1e-3


def contingency_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample chi-square on integer samples; values with fewer than 10 pooled counts merged."""
    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v), np.sum(b == v)] for v in values], dtype=float)
    rows, acc = [], np.zeros(2)
    for row in table:
        acc += row
        if acc.sum() >= 10:
            rows.append(acc)
            acc = np.zeros(2)
    if acc.sum():
        rows[-1] = rows[-1] + acc
    return float(stats.chi2_contingency(np.array(rows)).pvalue)


def test_parameters_follow_theorem_3():
    eps, n, T = 1.0, 16, 10**6
    proto = ShuffleSum(eps, n, horizon=T)
    p_prime = 1 / (2 * T)
    g = math.ceil(eps / 2 * math.sqrt(n))
    tau = math.ceil(g / (eps / 2) * math.log(2 / p_prime))
    assert (proto.params.g, proto.params.tau, proto.params.m) == (g, tau, n * g + 2 * tau + 1) == (2, 61, 155)
    assert proto.eps_tilde == eps / 4 and proto.eps_prime == eps / 2 and proto.p == p_prime
    assert proto.d == proto.params.m - 1
    assert proto.theta == pytest.approx(math.exp(-0.5 / 2))
    assert ShuffleSum(eps, n, horizon=T, theta_reading="printed").theta == pytest.approx(math.exp(-1 / 2))


def test_fast_path_has_the_law_of_the_per_message_run():
    proto = ShuffleSum(1.0, 4, p=0.1, flip=0.05)
    x = np.tile([0.0, 1.0, 0.3, 0.7], (4000, 1))
    slow = proto.run(np.random.default_rng(1), x)
    fast = proto.run_fast(np.random.default_rng(2), x)
    assert slow.bits.shape == (4000, 4 * proto.d)
    assert np.array_equal(slow.ones, slow.bits.sum(axis=1))
    assert contingency_pvalue(slow.ones, fast.ones) > ALPHA


def test_fast_path_twin_rejects_a_different_flip_probability():
    x = np.tile([0.0, 1.0, 0.3, 0.7], (4000, 1))
    slow = ShuffleSum(1.0, 4, p=0.1, flip=0.1).run(np.random.default_rng(1), x)
    fast = ShuffleSum(1.0, 4, p=0.1, flip=0.05).run_fast(np.random.default_rng(2), x)
    assert contingency_pvalue(slow.ones, fast.ones) < ALPHA


def test_analyzer_recovers_the_modular_sum_and_the_reward_sum():
    """With the default flip a flip anywhere has probability <= p'/2 per release (1e-7 here), so the
    decoded aggregate is the modular sum of the messages; |z - sum x| <= tau/g + rounding whenever
    the total noise is within tau (probability >= 1 - p')."""
    proto = ShuffleSum(1.0, 16, horizon=10**6)
    x = np.random.default_rng(3).random((3000, 16))
    for rel in (proto.run(np.random.default_rng(4), x[:300]), proto.run_fast(np.random.default_rng(5), x)):
        assert np.array_equal(rel.aggregate, np.mod(rel.messages.sum(axis=-1), proto.params.m))
        err = np.abs(rel.estimate - x[: rel.estimate.shape[0]].sum(axis=-1))
        assert np.all(err <= proto.params.tau / proto.params.g + 16 / proto.params.g + 1e-9)


def _total_noise(proto: ShuffleSum, seed: int, runs: int) -> np.ndarray:
    """Decoded aggregate minus the (deterministic) encoded sum, as an integer in (-m/2, m/2]."""
    x = np.tile(np.array([0.0, 1.0] * 8), (runs, 1))
    agg = proto.run_fast(np.random.default_rng(seed), x).aggregate
    m = proto.params.m
    d = np.mod(agg - 8 * proto.params.g, m)
    return np.where(d > m // 2, d - m, d)


def _dlap_pvalue(noise: np.ndarray, scale: float) -> float:
    lo, hi = -int(8 * scale) - 2, int(8 * scale) + 2
    pmf = np.array([math.tanh(1 / (2 * scale)) * math.exp(-abs(v) / scale) for v in range(lo, hi + 1)])
    counts = np.array([np.sum(noise == v) for v in range(lo, hi + 1)], dtype=float)
    keep = pmf * noise.size >= 5
    obs = np.append(counts[keep], noise.size - counts[keep].sum())
    exp = np.append(pmf[keep], 1 - pmf[keep].sum()) * noise.size
    return float(stats.chisquare(obs, exp).pvalue)


def test_modular_sum_noise_is_discrete_laplace_g_over_eps_prime():
    proto = ShuffleSum(1.0, 16, horizon=10**6)
    noise = _total_noise(proto, 6, 20_000)
    assert _dlap_pvalue(noise, proto.params.g / proto.eps_prime) > ALPHA


def test_modular_sum_noise_twin_rejects_the_printed_theta():
    proto = ShuffleSum(1.0, 16, horizon=10**6, theta_reading="printed")
    noise = _total_noise(proto, 6, 20_000)
    assert _dlap_pvalue(noise, proto.params.g / proto.eps_prime) < ALPHA


def test_events_through_the_accountants():
    proto = ShuffleSum(1.0, 16, horizon=10**6)
    assert accounting.epsilon(proto.event(), delta=0.0) == pytest.approx(1.0)
    assert accounting.epsilon(proto.modular_sum_event(), delta=0.0) == pytest.approx(0.5, rel=1e-6)
    assert accounting.epsilon(shuffle_sum_proof_event(proto), delta=0.0) == pytest.approx(
        1.0, rel=1e-6
    )  # Thm 3's proof
    printed = ShuffleSum(1.0, 16, horizon=10**6, theta_reading="printed")
    assert accounting.epsilon(printed.modular_sum_event(), delta=0.0) == pytest.approx(1.0, rel=1e-6)
    # the provable bound of the unary randomized-response instantiation is valid but far looser
    eps0 = proto.local_epsilon()
    assert eps0 == pytest.approx(proto.d * math.log((1 - proto.flip) / proto.flip))
    assert accounting.epsilon(proto.server_view_event(), delta=1e-6) > proto.epsilon
    no_flips = ShuffleSum(1.0, 16, p=0.1, flip=0.0)
    assert accounting.epsilon(no_flips.server_view_event(), delta=1e-6) == math.inf


@given(st.integers(1, 6), st.data())
@settings(max_examples=40, deadline=None)
def test_decode_inverts_a_flip_free_count(k, data):
    proto = ShuffleSum(1.0, 6, p=0.01)
    s = data.draw(st.integers(0, k * proto.d))
    assert int(proto.decode(np.array([s]), k)[0]) == s % proto.params.m


def test_bad_inputs_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="horizon"):
        ShuffleSum(1.0, 16)
    with pytest.raises(ValueError, match="horizon"):
        ShuffleSum(1.0, 16, horizon=10, p=0.1)
    with pytest.raises(ValueError, match="flip"):
        ShuffleSum(1.0, 16, p=0.1, flip=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        ShuffleSum(0.0, 16, p=0.1)
    with pytest.raises(ValueError, match="too small"):
        ShuffleSum(1.0, 16, p=0.1, m=10)
    with pytest.raises(ValueError, match="theta_reading"):
        ShuffleSum(1.0, 16, p=0.1, theta_reading="other")
    with pytest.raises(ValueError, match="last axis"):
        ShuffleSum(1.0, 4, p=0.1).run(np.random.default_rng(0), np.zeros((2, 5)))
    with pytest.raises(ValueError, match="rewards"):
        ShuffleSum(1.0, 4, p=0.1).run_fast(np.random.default_rng(0), np.full((2, 4), 2.0))


def test_theta_reading_is_named_by_the_paper():
    """ "proof" (θ = exp(-eps'/g), what the proof of Thm 3 needs) is the default; "printed" is the other
    reading; any other value is refused, naming the parameter."""
    proof = ShuffleSum(1.0, 16, horizon=10**6)
    assert proof.theta_reading == "proof" and proof.theta == pytest.approx(math.exp(-0.5 / proof.params.g))
    assert "theta_reading='proof'" in repr(proof)
    with pytest.raises(ValueError, match="theta_reading"):
        ShuffleSum(1.0, 16, horizon=10**6, theta_reading="notes")
    printed = ShuffleSum(1.0, 16, horizon=10**6, theta_reading="printed")
    assert printed.theta != proof.theta  # the twin: the two readings differ
