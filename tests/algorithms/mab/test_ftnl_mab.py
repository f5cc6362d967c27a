"""FTNL with Report Noisy Max (Hu, Huang, Mehta (arXiv:2102.07929), Algs. 2-3): epochs, the RNM gap under the paper's neighbouring, privacy."""

import math

import numpy as np
import pytest

from dpaudit.algorithms.mab.environment import BernoulliArms, RewardTable
from dpaudit.algorithms.mab.ftnl import FTNL


def test_epochs_double_and_epoch_zero_plays_action_one():
    out = FTNL(1.0).run(BernoulliArms(np.array([0.9, 0.1, 0.5])), np.random.default_rng(0), 4, 100)
    assert out.lengths[0].tolist() == [1, 2, 4, 8, 16, 32, 37]
    assert np.all(out.arms[:, 0] == 0)
    assert out.statistics["noisy_sums"].shape == (4, 6, 3)  # the truncated 7th epoch releases nothing


def _table(n_epoch: int, flip: bool) -> RewardTable:
    """K = 2; epoch s0 (length n_epoch, rounds n_epoch..2n_epoch-1, 1-based) holds (0, 1) rewards;
    the neighbour replaces one of its rounds by (1, 0) (Hu, Huang, Mehta (arXiv 2021), §2.2)."""
    T = 4 * n_epoch - 1
    x = np.zeros((T, 2))
    x[n_epoch - 1 : 2 * n_epoch - 1] = [0.0, 1.0]
    if flip:
        x[n_epoch - 1] = [1.0, 0.0]
    return RewardTable(x)


def _p_choose_first(noise: str, flip: bool, n_epoch: int, runs: int, seed: int) -> float:
    acts = FTNL(1.0, noise).target()(_table(n_epoch, flip), np.random.default_rng(seed), runs)
    return float((acts[:, 2 * n_epoch - 1] == 0).mean())  # action of the epoch after s0


def test_rnm_under_the_papers_neighbouring_exceeds_eps():
    """Exact: P_D = P(L1 - L2 > n), P_D' = P(L1 - L2 > n - 2), P(D > x) = (2 + eps x) e^{-eps x}/4.
    At eps = 1, n = 4: 0.02747 vs 0.13534 (log-ratio 1.595 > eps). 2e5 runs per side: the estimates
    are within 5 s.e. of the exact values (false failure < 1e-5), and the log-ratio > 1.3.
    Twin (noise='fixed', Lap(2/eps)): log-ratio 2*0.5 + log(3/4) = 0.71 < eps."""
    n, runs = 4, 200_000
    tail = lambda x, e: (2 + e * x) * math.exp(-e * x) / 4  # noqa: E731
    p0, p1 = _p_choose_first("paper", False, n, runs, 1), _p_choose_first("paper", True, n, runs, 2)
    for p, want in ((p0, tail(n, 1.0)), (p1, tail(n - 2, 1.0))):
        assert abs(p - want) < 5 * math.sqrt(want * (1 - want) / runs)
    assert math.log(p1 / p0) > 1.3
    f0, f1 = _p_choose_first("fixed", False, n, runs, 3), _p_choose_first("fixed", True, n, runs, 4)
    assert abs(math.log(f1 / f0) - (1.0 + math.log(3 / 4))) < 0.1
    assert math.log(f1 / f0) < 1.0


def test_privacy_declarations():
    assert (
        FTNL(0.5).privacy(100, n_arms=2).claim.epsilon == 0.5
        and FTNL(0.5).privacy(100, n_arms=2).corrected.epsilon == 1.0
    )
    assert FTNL(0.5, "fixed").privacy(100, n_arms=2).corrected is None
    naive = FTNL(0.5, "naive").privacy(100, n_arms=4)
    assert naive.event.events[0].count == 4 and naive.event.events[0].event.noise_multiplier == 8.0
    with pytest.raises(ValueError, match="noise"):
        FTNL(1.0, "double")


def test_regret_is_smaller_with_more_privacy_budget():
    env = BernoulliArms(np.array([0.75, 0.7, 0.7, 0.7, 0.7]))
    cp = np.array([2**16])
    small = FTNL(0.05).run(env, np.random.default_rng(5), 400, 2**16).regret(env.means, cp).mean()
    large = FTNL(5.0).run(env, np.random.default_rng(6), 400, 2**16).regret(env.means, cp).mean()
    assert small > large
