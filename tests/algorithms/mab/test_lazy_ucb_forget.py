"""Anytime-Lazy-UCB's "forgetting not done" variant (Hu, Huang, Mehta (arXiv 2021), Alg. 1 without forgetting): exact structure of its releases."""

import math

import numpy as np
import pytest

from dpaudit.algorithms.mab.environment import RewardTable
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB, lazy_array_releases


@pytest.mark.parametrize("trial", range(4))
def test_no_forgetting_engines_agree(trial):
    """The event engine and the per-round loop release the same cumulative noisy sums and take the same actions."""
    rng = np.random.default_rng(300 + trial)
    K = int(rng.integers(2, 5))
    T = int(rng.integers(K, 1500))
    eps = float(rng.choice([0.5, 4.0, 64.0]))
    table = RewardTable((rng.random((T, K)) < rng.random(K)).astype(float))
    a = AnytimeLazyUCB(eps, "events", forget=False).run(table, np.random.default_rng(trial), 1)
    b = AnytimeLazyUCB(eps, "rounds", forget=False).run(table, np.random.default_rng(trial), 1)
    assert np.array_equal(a.actions(), b.actions())
    sa, sb = a.statistics["array_sums"], b.statistics["array_sums"]
    assert np.array_equal(np.isnan(sa), np.isnan(sb)) and np.allclose(np.nan_to_num(sa), np.nan_to_num(sb))


def test_no_forgetting_releases_cover_all_past_observations():
    """Release r is the sum of the arm's observations 1 .. 2^{r+1}-1 (noise negligible at eps = 1e12)."""
    x = np.random.default_rng(0).random((3, 20))
    rel = lazy_array_releases(np.random.default_rng(1), x, 1e12, forget=False)
    want = np.stack([x[:, :1].sum(1), x[:, :3].sum(1), x[:, :7].sum(1), x[:, :15].sum(1)], axis=1)
    assert rel.shape == (3, 4) and np.allclose(rel, want, atol=1e-9)
    # through the algorithm (K = 2): arm 1's first observation (its init pull) is in every later release of arm 1
    tab = np.zeros((200, 2))
    tab[0, 0] = 1.0
    for engine in ("events", "rounds"):
        sums = AnytimeLazyUCB(1e12, engine, forget=False).run(RewardTable(tab), np.random.default_rng(2), 2)
        arm1 = sums.statistics["array_sums"][:, 0]
        assert np.isfinite(arm1[:, :3]).all() and np.allclose(arm1[np.isfinite(arm1)], 1.0, atol=1e-9)
        fixed = AnytimeLazyUCB(1e12, engine).run(RewardTable(tab), np.random.default_rng(2), 2)
        later = fixed.statistics["array_sums"][:, 0, 1:]
        assert np.allclose(later[np.isfinite(later)], 0.0, atol=1e-9)


def test_no_forgetting_declares_the_bug():
    priv = AnytimeLazyUCB(1.0, forget=False).privacy(64)
    assert priv.claim.epsilon == 1.0 and priv.corrected.epsilon == math.inf
    assert AnytimeLazyUCB(1.0).privacy(64).corrected is None
    with pytest.raises(TypeError, match="forget"):
        AnytimeLazyUCB(1.0, forget="no")
