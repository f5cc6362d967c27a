"""Linear contextual environments (algorithms/contexts.py): generator, blocks, neighbours."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.algorithms.linear.environment import ContextTable, linear_environment, paper_vectors


@given(dim=st.integers(1, 12), n=st.integers(1, 20), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_paper_vectors_unit_norm_with_constant_last_entry(dim, n, seed):
    v = paper_vectors(np.random.default_rng(seed), (n,), dim)
    assert v.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0)
    if dim > 1:
        np.testing.assert_allclose(v[:, -1], 1 / np.sqrt(2))


@pytest.mark.parametrize("contexts", ["fixed", "iid"])
def test_block_shapes_and_means_in_unit_interval(contexts):
    env = linear_environment(np.random.default_rng(0), runs=3, horizon=50, dim=4, n_arms=6, contexts=contexts)
    blk = env.block(0, 7, np.random.default_rng(1))
    assert blk.features.shape == (3, 7, 6, 4) and blk.means.shape == (3, 7, 6)
    assert np.all((blk.means >= 0) & (blk.means <= 1))
    np.testing.assert_allclose(blk.means, np.einsum("rnkd,rd->rnk", blk.features, env.theta))
    acts = np.zeros((3, 7), dtype=int)
    y = blk.rewards(acts, np.random.default_rng(2))
    assert y.shape == (3, 7) and set(np.unique(y)) <= {0.0, 1.0}
    assert np.all(blk.regret(acts) >= 0)
    np.testing.assert_array_equal(blk.chosen_features(acts), blk.features[:, :, 0])


@pytest.mark.parametrize(
    "kwargs",
    [dict(runs=0), dict(dim=0), dict(n_arms=1), dict(contexts="adversarial")],
)
def test_environment_rejects_nonsense(kwargs):
    base = dict(runs=2, horizon=10, dim=3, n_arms=4, contexts="fixed")
    base.update(kwargs)
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        linear_environment(np.random.default_rng(0), **base)


def _table(seed=0, users=6, arms=3, dim=2):
    rng = np.random.default_rng(seed)
    return ContextTable(
        features=paper_vectors(rng, (users, arms), dim), rewards=rng.integers(0, 2, (users, arms)) * 1.0
    )


@pytest.mark.parametrize("kind", ["context", "reward", "both"])
@given(user=st.integers(0, 5))
@settings(max_examples=10, deadline=None)
def test_neighbour_changes_exactly_one_user(kind, user):
    tab = _table()
    nb = tab.neighbour(user, kind)
    f_changed = np.any(nb.features != tab.features, axis=(1, 2))
    r_changed = np.any(nb.rewards != tab.rewards, axis=1)
    changed = f_changed | r_changed
    assert changed.sum() == 1 and changed[user]
    assert f_changed[user] == (kind in ("context", "both"))
    assert r_changed[user] == (kind in ("reward", "both"))


def test_neighbour_with_explicit_replacement_and_validation():
    tab = _table()
    new_f = np.zeros((3, 2))
    nb = tab.neighbour(2, "context", features=new_f)
    np.testing.assert_array_equal(nb.features[2], new_f)
    with pytest.raises(ValueError, match="user"):
        tab.neighbour(6)
    with pytest.raises(ValueError, match="kind"):
        tab.neighbour(0, "everything")
    with pytest.raises(ValueError, match="features"):
        tab.neighbour(0, "context", features=np.zeros((2, 2)))


def test_table_blocks_serve_the_same_users_to_every_run():
    tab = _table().with_runs(4)
    blk = tab.block(1, 3, np.random.default_rng(0))
    assert blk.features.shape == (4, 3, 3, 2)
    acts = np.tile(np.array([0, 1, 2]), (4, 1))
    y = blk.rewards(acts, np.random.default_rng(0))
    np.testing.assert_array_equal(y, np.tile(tab.rewards[[1, 2, 3], [0, 1, 2]], (4, 1)))


def test_neighbour_rounds_replaces_one_returning_user_everywhere():
    tab = _table(users=8)
    nb = tab.neighbour_rounds([1, 4, 6], "context")
    changed = np.any(nb.features != tab.features, axis=(1, 2))
    assert changed.tolist() == [False, True, False, False, True, False, True, False]
    np.testing.assert_array_equal(nb.rewards, tab.rewards)
    with pytest.raises(ValueError, match="rounds"):
        tab.neighbour_rounds([])


def _authors_generator(dim, runs, n_arms=100):
    """The instance loop of the authors' LinBanditPrivate.py __main__ block (Chowdhury & Zhou, ICML 2022, §5 fn. 7), verbatim."""
    np.random.seed(2)
    out = []
    for _run in range(runs):
        basis = np.eye(dim)
        basis[:, -1] = 1
        X = np.random.randn(n_arms, dim - 1)
        X /= np.sqrt(np.square(X).sum(axis=1))[:, np.newaxis]
        X = np.hstack((X, np.ones((n_arms, 1))))
        X[: basis.shape[0], :] = basis
        theta = np.random.randn(dim - 1)
        theta *= 0.5 / np.sqrt(np.square(theta).sum())
        theta = np.append(theta, [0.5])
        out.append((X, theta))
    return out


@pytest.mark.parametrize("dim", [5, 10, 15])
def test_authors_instances_are_their_codes_rescaled_to_unit_norm(dim):
    from dpaudit.algorithms.linear.environment import authors_instances

    theta, feats = authors_instances(dim, 4)
    for r, (X, th) in enumerate(_authors_generator(dim, 4)):
        np.testing.assert_allclose(feats[r] * np.sqrt(2), X, rtol=0, atol=1e-14)
        np.testing.assert_allclose(theta[r] / np.sqrt(2), th, rtol=0, atol=1e-14)
        np.testing.assert_allclose(feats[r] @ theta[r], X @ th, rtol=0, atol=1e-12)  # the same means
    assert np.all(np.linalg.norm(feats, axis=-1) <= 1 + 1e-12)
    np.testing.assert_allclose(np.linalg.norm(theta, axis=-1), 1.0)
    assert np.all((feats @ theta[:, :, None] >= 0) & (feats @ theta[:, :, None] <= 1))


def test_linear_environment_authors_instances_and_errors():
    from dpaudit.algorithms.linear.environment import authors_instances, linear_environment

    env = linear_environment(np.random.default_rng(9), 3, 100, dim=5, instances="authors")
    theta, feats = authors_instances(5, 3)
    assert np.array_equal(env.theta, theta) and np.array_equal(env.fixed_features, feats)
    with pytest.raises(ValueError, match="contexts"):
        linear_environment(np.random.default_rng(0), 2, 100, instances="authors", contexts="iid")
    with pytest.raises(ValueError, match="instances"):
        linear_environment(np.random.default_rng(0), 2, 100, instances="paper")
    with pytest.raises(ValueError, match="dim"):
        authors_instances(1, 2)
