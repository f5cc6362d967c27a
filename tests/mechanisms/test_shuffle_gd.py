"""P_GD (Sarmasarkar, App. T): formulas, events, projection/clipping, and the released gradient sums."""

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit

from dpaudit.accounting.events import BinomialDpEvent
from dpaudit.mechanisms.shuffle_gd import (
    ShuffleGradientDescent,
    advanced_composition,
    clip_rows,
    glm_gradients,
    pgd_iterations,
    pgd_round_privacy,
    pgd_step_size,
    project_ball,
)
from dpaudit.mechanisms.vector_sum import BitSumProtocol

ALPHA = 1e-3  # per statistical check: false-failure rate <= 1e-3 (fixed seeds make each run deterministic)


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    r = (rng.random(n) < expit(x @ np.linspace(1, -1, d))).astype(float)
    return x, r


# ---------------------------------------------------------------- formulas


def test_paper_formulas():
    n, d, eps, delta = 1000, 5, 1.0, 1e-3
    t = pgd_iterations(eps, delta, n, d)
    assert t == math.floor(eps**2 * n**2 / (d * math.log(n * d / delta) ** 3)) == 54
    assert pgd_iterations(eps, delta, n, d, log_power=1) == math.floor(1e6 / (5 * math.log(5e6)))
    assert pgd_iterations(0.01, delta, 10, d) == 1  # at least one round
    assert pgd_step_size(4.0, 2.0, 16) == pytest.approx(1.0)
    eps_it, delta_it = pgd_round_privacy(eps, delta, t)
    assert eps_it == pytest.approx(eps / (2 * math.sqrt(2 * t * math.log(1 / delta))))
    assert delta_it == pytest.approx(delta / (t + 1))


def test_advanced_composition_closed_form():
    e, dl = advanced_composition(0.1, 1e-6, 10, 1e-5)
    assert e == pytest.approx(0.1 * math.sqrt(20 * math.log(1e5)) + 10 * 0.1 * math.expm1(0.1))
    assert dl == pytest.approx(10 * 1e-6 + 1e-5)


def test_events_compose_the_rounds():
    proto = BitSumProtocol(200, 3, g=29, b=10**6)
    pgd = ShuffleGradientDescent(200, 3, 1.0, 1e-3, lipschitz=1.0, radius=1.0, iterations=7, protocol=proto)
    ev = pgd.event()
    assert isinstance(ev, dp_accounting.SelfComposedDpEvent) and ev.count == 7
    proto = pgd.protocol
    label = BinomialDpEvent(trials=200 * proto.b, probability=proto.p, sensitivity=proto.cap)
    assert ev.event == dp_accounting.SelfComposedDpEvent(label, 3)  # the d = 3 labels of one round
    assert pgd.round_privacy == pgd_round_privacy(1.0, 1e-3, 7) and pgd.round_privacy[1] == 1e-3 / 8


# ---------------------------------------------------------------- exact properties


@settings(max_examples=30, deadline=None)
@given(
    runs=st.integers(1, 4),
    d=st.integers(1, 4),
    radius=st.floats(0.1, 5.0),
    scale=st.floats(0.0, 100.0),
    seed=st.integers(0, 10**6),
)
def test_projection_and_clipping(runs, d, radius, scale, seed):
    v = np.random.default_rng(seed).normal(size=(runs, d)) * scale
    p = project_ball(v, radius)
    assert np.all(np.linalg.norm(p, axis=-1) <= radius * (1 + 1e-12))
    inside = np.linalg.norm(v, axis=-1) <= radius
    np.testing.assert_array_equal(p[inside], v[inside])
    c = clip_rows(v, radius)
    np.testing.assert_allclose(c, p)
    assert np.all(np.abs(c) <= radius)  # entries never overshoot (the randomizer's range check)
    one_axis = clip_rows(np.stack([v[:, 0], np.zeros(runs)], axis=1), radius)
    assert np.all(np.abs(one_axis) <= radius)


@settings(max_examples=10, deadline=None)
@given(runs=st.integers(1, 3), seed=st.integers(0, 10**6), per_message=st.booleans())
def test_iterates_stay_in_the_ball_and_huge_gradients_are_clipped(runs, seed, per_message):
    n, d = 6, 2
    proto = BitSumProtocol(n, d, g=5, b=8)
    pgd = ShuffleGradientDescent(n, d, 1.0, 1e-2, lipschitz=1.0, radius=0.5, iterations=5, protocol=proto)

    def huge(theta):  # clipped to norm L before randomizing
        return np.full((theta.shape[0], n, d), 1e6)

    rel = pgd.run(np.random.default_rng(seed), huge, runs, per_message)
    assert rel.iterates.shape == (runs, 5, d) and rel.gradient_sums.shape == (runs, 5, d)
    assert np.all(np.linalg.norm(rel.iterates, axis=-1) <= 0.5 + 1e-12)
    np.testing.assert_allclose(rel.theta_bar, rel.iterates.mean(1))


def test_glm_gradients():
    x, r = _data(5, 3)
    theta = np.array([[0.1, -0.2, 0.3], [0.0, 0.0, 0.0]])
    g = glm_gradients(x, r, expit)(theta)
    for k in range(2):
        expect = (expit(x @ theta[k]) - r)[:, None] * x
        np.testing.assert_allclose(g[k], expect)
    with pytest.raises(ValueError, match="rewards"):
        glm_gradients(x, r[:3], expit)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=1.0), "delta"),
        (dict(lipschitz=0.0), "lipschitz"),
        (dict(radius=-1.0), "radius"),
        (dict(iterations=0), "iterations"),
        (dict(step_size=0.0), "step_size"),
        (dict(regularization=-1.0), "regularization"),
        (dict(range="x"), "range"),
        (dict(protocol=BitSumProtocol(9, 3, 4, 4)), "protocol"),
    ],
)
def test_bad_parameters_raise(kwargs, word):
    base = dict(num_users=10, dim=3, epsilon=1.0, delta=1e-3, lipschitz=1.0, radius=1.0, iterations=3)
    base.update(kwargs)
    with pytest.raises(ValueError, match=word):
        ShuffleGradientDescent(**base)


def test_bad_gradient_shape_raises():
    pgd = ShuffleGradientDescent(4, 2, 1.0, 1e-2, 1.0, 1.0, iterations=2, protocol=BitSumProtocol(4, 2, 4, 4))
    with pytest.raises(ValueError, match="gradients"):
        pgd.run(np.random.default_rng(0), lambda th: np.zeros((th.shape[0], 3, 2)), 2)


# ---------------------------------------------------------------- statistical


def _round_errors(b, seed):
    """Released gradient sums minus the true clipped sums at the released iterates."""
    x, r = _data(40, 3, seed=1)
    true_proto = BitSumProtocol(40, 3, g=13, b=200)
    used = BitSumProtocol(40, 3, g=13, b=b)
    pgd = ShuffleGradientDescent(40, 3, 1.0, 1e-2, 1.0, 1.0, iterations=4, protocol=used)
    grads = glm_gradients(x, r, expit)
    rel = pgd.run(np.random.default_rng(seed), grads, runs=3000)
    truth = np.stack([clip_rows(grads(rel.iterates[:, t]), 1.0).sum(1) for t in range(4)], axis=1)
    err = (rel.gradient_sums - truth).reshape(-1)
    bound = true_proto.noise_variance_bound()
    noise_var = (1 / 13) ** 2 * 40 * 200 * 0.1875  # the binomial part; rounding adds <= 40/4 units
    return err, noise_var, bound


def test_released_gradient_sums_are_unbiased_with_the_stated_noise():
    # false-failure rate <= 2 * ALPHA: z-test of the mean; the variance lies between the binomial
    # part and the stated bound (chi-square one-sided checks on 36000 errors).
    err, lo, hi = _round_errors(200, 7)
    n = err.size
    assert 2 * stats.norm.sf(abs(err.mean()) / math.sqrt(hi / n)) > ALPHA
    s = (err**2).sum()
    assert stats.chi2.sf(s / hi, n) > ALPHA / 2 and stats.chi2.cdf(s / lo, n) > ALPHA / 2


def test_twin_halved_noise_bits_are_detected():
    # twin: a protocol with b = 100 instead of 200 (too little noise) must fail the lower check
    err, lo, _ = _round_errors(100, 7)
    assert stats.chi2.cdf((err**2).sum() / lo, err.size) < ALPHA
