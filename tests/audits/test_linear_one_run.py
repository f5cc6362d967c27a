"""The one-run LinUCB-SDP-Amp entries (`dpaudit.audits.linear.one_run_entries`) and their canaries' -1 reward.

Exact properties: an excluded canary's reward is `excluded_reward` exactly on her round (1 when included, 0
elsewhere), a reward outside Assumption 3.1's |y| <= 1 (Chowdhury & Zhou, ICML 2022) or not below the
included 1 is refused naming the parameter, and the entries keep their design (T = 10^6, two canaries per
batch, reward -1 when excluded, one guess pair fixed in advance).

Statistical test, fixed seed: a small copy of the entries (T = 2 10^4, 2000 canaries, two per batch) run by
the catalog runner at 95% confidence, so the sound one's bound exceeds a true claim with probability <= 5%
(false-failure rate <= 5%).  Twin that must be caught: the authors' simulation sigma at eps = 10, about 200
times less noise, against the claim eps = 1.
"""

import dataclasses
import functools

import numpy as np
import pytest

from dpaudit.algorithms.linear.canaries import CanaryUsers, one_run_target
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.entries import Claim
from dpaudit.entry_runner import run_entry
from dpaudit.registry import AUDITS, load_plugins

load_plugins()

NAMES = ("linucb-sdp-amp.one-run", "linucb-sdp-amp.one-run-low-noise")


def test_excluded_canaries_get_the_excluded_reward_on_their_round_only():
    env = CanaryUsers(np.eye(3)[:, :2] + 0.0, 50, np.array([3, 20]), np.array([21, 49]), -1.0)
    rewards = env.block(18, 10, np.random.default_rng(0)).rewards(np.zeros((1, 10), dtype=int), None)[0]
    assert rewards.tolist() == [0, 0, 1, -1, 0, 0, 0, 0, 0, 0]
    assert CanaryUsers(np.eye(3)[:, :2] + 0.0, 50, np.array([3])).off_reward == 0.0


@pytest.mark.parametrize("value", [1.0, -1.5, 2.0, float("nan")])
def test_an_excluded_reward_outside_the_range_is_refused(value):
    with pytest.raises(ValueError, match="excluded_reward"):
        one_run_target(LinUCBSDPAmp(batch=20), 1000, 10, excluded_reward=value)


@pytest.mark.parametrize("value", ["-1", True, None])
def test_an_excluded_reward_of_the_wrong_type_is_refused(value):
    with pytest.raises(TypeError, match="excluded_reward"):
        one_run_target(LinUCBSDPAmp(batch=20), 1000, 10, excluded_reward=value)


def test_with_negligible_noise_the_score_is_the_canary_s_own_reward_plus_her_batch_mate_s():
    quiet = LinUCBSDPAmp(batch=10, epsilon=1e6, delta=1e-6, noise="code")
    target = one_run_target(quiet, 2_000, 400, excluded_reward=-1.0)
    inclusion = np.random.default_rng(1).random(400) < 0.5
    scores = target.score(target.mechanism(inclusion, np.random.default_rng(2)))
    own = np.where(inclusion, 1.0, -1.0)
    mate = np.roll(own, 200)  # canary k and k + 200 share batch k mod 200; all users of a batch act alike
    np.testing.assert_allclose(scores, own + mate, atol=1e-2)


@pytest.mark.parametrize("name", NAMES)
def test_the_entries_keep_their_design(name):
    entry = AUDITS.get(name)
    assert entry.horizon == 1_000_000 and entry.num_canaries == 2 * entry.horizon // 20
    assert entry.guesses == ((entry.num_canaries // 4, entry.num_canaries // 4),)
    assert entry.target.keywords["excluded_reward"] == -1.0


@pytest.mark.parametrize("name, verdict", [(NAMES[0], "consistent"), (NAMES[1], "violation")])
def test_a_small_copy_passes_sound_and_catches_the_twin(name, verdict):
    entry = AUDITS.get(name)
    algo = entry.target.args[0]
    small = dataclasses.replace(
        entry,
        target=functools.partial(one_run_target, algo, 20_000, 2_000, dim=5, n_arms=100, excluded_reward=-1.0),
        horizon=20_000,
        num_canaries=2_000,
        guesses=((500, 500),),
        claims=(Claim("paper", delta=1e-6, epsilon=1.0, expect=verdict),),
    )
    rec = run_entry(small, confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    (claim,) = rec["claims"]
    assert claim["verdict"] == verdict and rec["ok"], claim
