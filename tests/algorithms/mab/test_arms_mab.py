"""Environments of the multi-armed algorithms: instances, exact block sums, the reward table, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.algorithms.mab.environment import (
    HHM_SETTINGS,
    BernoulliArms,
    ClippedGaussianArms,
    RewardTable,
    _discard_uniforms,
    cz_means,
    make_environment,
)
from dpaudit.algorithms.mab.outcome import Outcome, checkpoint_grid, segment_regret


@pytest.mark.parametrize("means", [[0.5], [[0.2]], [0.5, 1.2], [-0.1, 0.5], [0.5, float("nan")], [[[0.5, 0.5]]]])
def test_bad_means_are_rejected_by_name(means):
    with pytest.raises(ValueError, match="means"):
        BernoulliArms(np.array(means, dtype=float))


def test_papers_instances():
    rng = np.random.default_rng(0)
    assert HHM_SETTINGS["hhm-2"] == (0.75, 0.625, 0.5, 0.375, 0.25)
    easy, hard = cz_means(rng, "easy", 50), cz_means(rng, "hard", 50)
    assert easy.shape == hard.shape == (50, 10)
    assert easy.min() >= 0.25 and easy.max() <= 0.75 and hard.min() >= 0.45 and hard.max() <= 0.55
    env = make_environment(rng, 7, instance="hard", rewards="gaussian")
    assert isinstance(env, ClippedGaussianArms) and env.means.shape == (7, 10)
    assert make_environment(rng, 3, instance="hhm-3").n_arms == 5
    with pytest.raises(ValueError, match="instance"):
        make_environment(rng, 3, instance="medium")
    with pytest.raises(ValueError, match="arms"):
        make_environment(rng, 3, instance="hhm-1", n_arms=4)
    with pytest.raises(ValueError, match="rewards"):
        make_environment(rng, 3, means=[0.2, 0.4], rewards="poisson")


def test_reward_table_neighbour_changes_one_round_only():
    table = RewardTable(np.zeros((6, 3)))
    nb = table.neighbour(2, [1.0, 0.0, 1.0])
    diff = np.argwhere(nb.rewards != table.rewards)
    assert set(diff[:, 0]) == {2}
    assert table.neighbour(4, 1.0).rewards[4].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="t must be"):
        table.neighbour(6, 1.0)
    with pytest.raises(ValueError, match="rewards"):
        RewardTable(np.full((3, 2), 1.5))
    with pytest.raises(ValueError, match="more than the table"):
        table.segment_sums(None, np.array([0]), np.array([4]), np.array([3]))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(2, 4), st.data())
def test_table_block_sums_are_exact(n, K, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    table = RewardTable(rng.random((n, K)))
    start = data.draw(st.integers(0, n - 1))
    length = data.draw(st.integers(0, n - start))
    arm = data.draw(st.integers(0, K - 1))
    got = table.segment_sums(rng, np.array([arm]), np.array([start]), np.array([length]))[0]
    assert got == pytest.approx(table.rewards[start : start + length, arm].sum(), abs=1e-9)
    vec = table.vector_sums(rng, start, length, 2)
    assert vec.shape == (2, K) and np.allclose(vec[1], table.rewards[start : start + length].sum(axis=0))


def test_rounding_is_exact_on_binary_rewards_and_bounded_otherwise():
    rng = np.random.default_rng(1)
    table = RewardTable((rng.random((40, 2)) < 0.5).astype(float))
    enc = table.rounded_segment_sums(rng, np.array([0, 1]), np.array([0, 10]), np.array([40, 30]), 7)
    assert enc.tolist() == [7 * table.rewards[:, 0].sum(), 7 * table.rewards[10:, 1].sum()]
    frac = RewardTable(np.full((50, 2), 0.3))
    enc = frac.rounded_segment_sums(rng, np.zeros(200, dtype=int), np.zeros(200, dtype=int), np.full(200, 50), 3)
    assert enc.min() >= 50 * 0 and enc.max() <= 50 * 1 and np.all(enc >= 0)  # x_hat in {0, 1} for 0.3 * 3 = 0.9


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), g=st.integers(1, 50), runs=st.integers(0, 30))
def test_binary_tables_skip_the_rounding_but_draw_the_same_coins(seed, g, runs):
    """A 0/1 table's sums come from integer prefix counts; the generator still advances by one uniform per user,
    so the outputs and the generator's state equal the rounding path's (forced by an unread fractional row)."""
    rng = np.random.default_rng(seed)
    bits = (rng.random((30, 3)) < 0.5).astype(float)
    fast, slow = RewardTable(bits), RewardTable(np.vstack([bits, np.full((1, 3), 0.5)]))
    arms, start = rng.integers(0, 3, runs), rng.integers(0, 15, runs)
    length = rng.integers(0, 16, runs)
    r_fast, r_slow = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    got = fast.rounded_segment_sums(r_fast, arms, start, length, g)
    assert got.dtype == np.int64
    assert np.array_equal(got, slow.rounded_segment_sums(r_slow, arms, start, length, g))
    assert r_fast.bit_generator.state == r_slow.bit_generator.state


def test_discarded_uniforms_advance_the_generator_as_one_draw():
    for count in (0, 1, 7, 8, 9, 100):
        by_blocks, at_once = np.random.default_rng(count), np.random.default_rng(count)
        _discard_uniforms(by_blocks, count, block=8)
        at_once.random(count)
        assert by_blocks.bit_generator.state == at_once.bit_generator.state


def test_stochastic_block_sums_have_the_right_support():
    rng = np.random.default_rng(2)
    mu = np.array([[0.1, 0.9], [0.5, 0.5]])
    for env in (BernoulliArms(mu), ClippedGaussianArms(mu)):
        s = env.segment_sums(rng, np.array([1, 0]), np.zeros(2, int), np.array([100, 0]))
        assert 0 <= s[0] <= 100 and s[1] == 0
        part = env.segment_sums(rng, np.array([1]), np.zeros(1, int), np.array([10]), rows=np.array([0]))
        assert part.shape == (1,)
    with pytest.raises(ValueError, match="rows"):
        BernoulliArms(mu).stream(rng, 3)


def test_segment_regret_matches_the_expanded_actions():
    rng = np.random.default_rng(3)
    R, S, K = 6, 9, 4
    arms = rng.integers(0, K, (R, S))
    lengths = rng.integers(0, 5, (R, S))
    lengths[:, -1] += 40 - lengths.sum(axis=1)
    lengths[:, -1] = np.maximum(lengths[:, -1], 0)
    T = int(lengths.sum(axis=1).max())
    lengths[:, -1] += T - lengths.sum(axis=1)
    out = Outcome(T, K, arms, lengths)
    gaps = rng.random((R, K))
    cp = checkpoint_grid(T, 20)
    direct = np.cumsum(np.take_along_axis(gaps, out.actions(), axis=1), axis=1)[:, cp - 1]
    assert np.allclose(segment_regret(arms, lengths, gaps, cp), direct)
    assert np.array_equal(Outcome.from_actions(out.actions(), K).actions(), out.actions())
    assert np.array_equal(out.pulls().sum(axis=1), np.full(R, T))
