"""Shuffle-SE: Chowdhury & Zhou's (ICLR 2023) batch elimination on P_Shuffle (Thm 3) through mechanisms.ShuffleSum."""

import math

import numpy as np
import pytest

from dpaudit.accounting.events import EpsilonDeltaDpEvent, ParallelComposedDpEvent
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.environment import BernoulliArms, RewardTable, cz_means
from dpaudit.algorithms.mab.shuffle_view import shuffle_count_epsilon
from dpaudit.mechanisms.shuffle_sum import ShuffleSum
from dpaudit.registry import ALGORITHMS, load_plugins


def test_shuffle_se_declares_the_claim_and_the_servers_exact_view():
    algo = BatchSE("shuffle", 1.0, base=4)
    assert algo.name == "shuffle-se"
    priv = algo.privacy(40)  # batches of 4 and 16 users
    assert priv.trust_model == "shuffle" and priv.relation == "user-reward"
    assert priv.claim.notion == "pure" and priv.claim.epsilon == 1.0 and "Thm 3" in priv.claim.source
    assert isinstance(priv.event, ParallelComposedDpEvent)
    assert all(isinstance(e, EpsilonDeltaDpEvent) and e.delta == 0 for e in priv.event.events)
    # the largest batch's count of ones: log f(0)/f(g) (3.87), far below the unamplified bits' (m-1) log((1-f)/f)
    assert priv.corrected.notion == "pure"
    assert priv.corrected.epsilon == pytest.approx(shuffle_count_epsilon(algo.secagg(16, 40)), rel=1e-12)
    assert priv.claim.epsilon < priv.corrected.epsilon < ShuffleSum(1.0, 16, p=1 / 80).local_epsilon() / 100
    assert "count of ones" in priv.corrected.source and "exact to" in priv.corrected.source
    assert algo.secagg(16, 40).p == pytest.approx(1 / 80)  # p' = q = 1/(2T) (Thm 3)
    assert math.isfinite(algo.privacy(10**5).corrected.epsilon)
    returning = BatchSE("shuffle", 1.0, base=4, returning=2)
    assert returning.batch_epsilon == 0.5 and "App. I" in returning.privacy(40).claim.source


def test_shuffle_se_releases_the_count_of_ones_user_by_user():
    """On a table, the release of (batch 1, arm 0) is the server's count C of ones: an integer in [0, k d];
    with eps large the decoded sum is the users' rewards, so the all-zero arm is eliminated first."""
    tab = np.zeros((200, 2))
    tab[:, 0] = 1.0
    algo = BatchSE("shuffle", 1.0, base=4, p=0.1)
    out = algo.run(RewardTable(tab), np.random.default_rng(0), 50)
    ones = out.statistics["aggregates"][:, 0, :]
    d = algo.secagg(4, 200).d
    assert np.all(ones == np.rint(ones)) and np.all((ones >= 0) & (ones <= 4 * d))
    sure = BatchSE("shuffle", 200.0, base=4, p=0.1).run(RewardTable(tab), np.random.default_rng(1), 50)
    assert np.all(sure.pulls()[:, 0] > sure.pulls()[:, 1])


def test_shuffle_se_regret_sanity_against_dist_dp_se():
    """Same instances and seeds: Shuffle-SE's radius uses eps' = eps/2, so it pays more than Dist-DP-SE but
    stays within a small factor, and its time-average regret falls with T. Measured (40 runs, T = 10^5):
    shuffle / dist-dp regret ratio about 1.3; the bounds 1.0 and 3.0 leave a wide margin (fixed seeds)."""
    mu = cz_means(np.random.default_rng(2), "easy", 40)
    env, cp = BernoulliArms(mu), np.array([10_000, 100_000])
    shuf = BatchSE("shuffle", 0.5, base=4, p=0.1).run(env, np.random.default_rng(3), 40, 100_000).regret(mu, cp).mean(0)
    dist = BatchSE("dist-dp", 0.5, base=4, p=0.1).run(env, np.random.default_rng(4), 40, 100_000).regret(mu, cp).mean(0)
    assert 1.0 < shuf[-1] / dist[-1] < 3.0
    assert shuf[1] / cp[1] < shuf[0] / cp[0]


def test_shuffle_se_is_registered():
    load_plugins()
    entry = ALGORITHMS.get("shuffle-se")
    curves = entry.simulate(horizon=2000, runs=3, seed=0, epsilon=1.0, base=4)
    assert curves.privacy["claim"]["epsilon"] == 1.0
