"""ShuffleGLM's fused P_GD (`ShuffleGradientDescent.run_glm`) releases exactly what the generic P_GD releases.

The fused loop draws, per round, the same uniforms (one per user and label) and the same binomial noise in the
same order as `run` with `glm_gradients`, so on one seed the released gradient sums, iterates and θ̄ are equal
bit for bit: the law of every released quantity is unchanged, with no statistical tolerance to state.
"""

import numpy as np
import pytest
from scipy.special import expit, ndtr

import dpaudit.mechanisms.shuffle_gd as shuffle_gd
from dpaudit.algorithms.glm.environment import paper_glm_environment
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams, run_shuffle_glm
from dpaudit.algorithms.shuffle_claims import shuffle_gradient_descent
from dpaudit.mechanisms.shuffle_gd import ShuffleGradientDescent, glm_gradients
from dpaudit.mechanisms.vector_sum import BitSumProtocol


def _users(seed, runs, n, d, scale):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(runs, n, d)) * scale, (rng.random((runs, n)) < 0.4).astype(float)


@pytest.mark.parametrize("range_", ["paper", "normalized"])
@pytest.mark.parametrize("lipschitz", [1.0, 0.3])  # 0.3: most gradients are clipped
@pytest.mark.parametrize("link", [expit, ndtr])
def test_run_glm_equals_run_on_the_same_seed(range_, lipschitz, link):
    x, r = _users(3, 4, 250, 3, 0.8)
    pgd = shuffle_gradient_descent(250, 3, 2.0, 0.01, lipschitz, 2.0, iterations=40, regularization=5.0, range=range_)
    slow = pgd.run(np.random.default_rng(7), glm_gradients(x, r, link), 4)
    fast = pgd.run_glm(np.random.default_rng(7), x, r, link, sampler="uniform")
    assert np.array_equal(fast.gradient_sums, slow.gradient_sums)
    assert np.array_equal(fast.iterates, slow.iterates)
    assert np.array_equal(fast.theta_bar, slow.theta_bar)


def test_run_glm_shared_features_and_author_protocol():
    """(n, d) features shared by the runs, and a protocol with few noise bits (an author-code b)."""
    x, r = _users(4, 1, 120, 2, 1.5)
    proto = BitSumProtocol(120, 2, g=30, b=3)
    pgd = ShuffleGradientDescent(120, 2, 1.0, 0.01, 1.0, 1.0, iterations=25, protocol=proto)
    slow = pgd.run(np.random.default_rng(1), glm_gradients(x[0], r[0], expit), 1)
    fast = pgd.run_glm(np.random.default_rng(1), x[0], r[0], expit, sampler="uniform")
    assert np.array_equal(fast.gradient_sums, slow.gradient_sums)


def test_run_glm_twin_differs_when_the_noise_changes():
    """Twin of the equality tests: one fewer noise bit per message changes the release on the same seed."""
    x, r = _users(5, 2, 120, 2, 1.0)
    base = dict(num_users=120, dim=2, epsilon=1.0, delta=0.01, lipschitz=1.0, radius=1.0, iterations=10)
    proto = BitSumProtocol(120, 2, g=30, b=40)
    fewer = BitSumProtocol(120, 2, g=30, b=39)
    a = ShuffleGradientDescent(**base, protocol=proto).run_glm(np.random.default_rng(2), x, r, expit, sampler="uniform")
    b = ShuffleGradientDescent(**base, protocol=fewer).run(np.random.default_rng(2), glm_gradients(x, r, expit), 2)
    assert not np.array_equal(a.gradient_sums, b.gradient_sums)


@pytest.mark.parametrize(
    "features, rewards, match",
    [
        (np.zeros((2, 10, 3)), np.zeros((2, 9)), "rewards must have shape"),
        (np.zeros((2, 11, 3)), np.zeros((2, 11)), "features must end in shape"),
        (np.full((2, 10, 3), np.nan), np.zeros((2, 10)), "features"),
    ],
)
def test_run_glm_rejects_bad_input(features, rewards, match):
    pgd = shuffle_gradient_descent(10, 3, 1.0, 0.01, 1.0, 1.0, iterations=2)
    with pytest.raises(ValueError, match=match):
        pgd.run_glm(np.random.default_rng(0), features, rewards, expit)


def _shuffle_glm(monkeypatch, run_glm=None, kernel=True):
    env = paper_glm_environment(np.random.default_rng(0), 3, 10, 400, 2.0, "probit")
    data = env.sample(np.random.default_rng(1), 3)
    params = ShuffleGLMParams(epsilon=4.0, first_batch=150, lam=1.0, gamma=0.5, batches=3, pgd_iterations=30)
    with monkeypatch.context() as m:
        if run_glm is not None:
            m.setattr(ShuffleGradientDescent, "run_glm", run_glm)
        if not kernel:
            m.setattr(shuffle_gd, "table_round", None)
        return run_shuffle_glm(env, data, params, np.random.default_rng(2))


def _assert_same_release(a, b):
    assert a.batch_ends.size == 3
    for name in ("actions", "thetas", "matrices", "regret"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_shuffle_glm_release_unchanged_by_the_fused_pgd(monkeypatch):
    """Every released quantity of ShuffleGLM (V, H_k, θ̂_k, actions) with the fused P_GD's "uniform" sampler equals
    the generic P_GD's on one seed."""
    original = ShuffleGradientDescent.run_glm

    def uniform(self, rng, features, rewards, link, link_curvature=None):
        return original(self, rng, features, rewards, link, sampler="uniform")

    def generic(self, rng, features, rewards, link, link_curvature=None):
        return self.run(rng, glm_gradients(features, rewards, link), features.shape[0])

    _assert_same_release(_shuffle_glm(monkeypatch, uniform), _shuffle_glm(monkeypatch, generic))


def test_shuffle_glm_release_unchanged_by_the_link_table(monkeypatch):
    """ShuffleGLM as run (bits sampler, link table, numba kernel if installed) releases what the exact link
    releases on one seed, and the same without numba."""
    original = ShuffleGradientDescent.run_glm

    def exact(self, rng, features, rewards, link, link_curvature=None):
        return original(self, rng, features, rewards, link)

    reference = _shuffle_glm(monkeypatch, exact)
    _assert_same_release(_shuffle_glm(monkeypatch), reference)
    _assert_same_release(_shuffle_glm(monkeypatch, kernel=False), reference)
