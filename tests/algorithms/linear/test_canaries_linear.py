"""One-run canaries of shuffle-private LinUCB (`dpaudit.algorithms.linear.canaries`).

Exact properties: the canary users' rewards are 1 exactly on the included rounds; with negligible
noise each canary's score <u~_m, phi> is her own inclusion bit.  Statistical tests, fixed seeds:
`one_run` at 95% confidence, so the correct LinUCB-SDP-Amp's bound exceeds its claim with
probability <= 5% (false-failure rate <= 5%; the seed is fixed, so the result is reproducible); the
twin (the authors' simulation sigma at eps = 10, about 200 times less noise) must be caught against
the claim eps = 1.
"""

import numpy as np
import pytest

from dpaudit.algorithms.linear.canaries import CanaryUsers, one_run_target
from dpaudit.algorithms.linear.linucb import LinUCB
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.audit import one_run

DELTA = 1e-6


def test_canary_users_reward_exactly_the_included_rounds():
    env = CanaryUsers(np.eye(3)[:, :2] + 0.0, 50, np.array([3, 20, 21, 49]))
    blk = env.block(18, 10, np.random.default_rng(0))
    assert blk.features.shape == (1, 10, 3, 2)
    rewards = blk.rewards(np.zeros((1, 10), dtype=int), np.random.default_rng(0))[0]
    assert np.flatnonzero(rewards).tolist() == [2, 3]


def test_score_is_the_canarys_own_inclusion_with_negligible_noise():
    algo = LinUCBSDPAmp(batch=10, epsilon=1e6, delta=DELTA, noise="code")
    target = one_run_target(algo, 2_000, 300)
    inclusion = np.random.default_rng(1).random(300) < 0.5
    scores = target.score(target.mechanism(inclusion, np.random.default_rng(2)))
    # 300 canaries in 200 batches: the second canary of a batch adds <phi, phi'> in [-1, 1] to the first's
    assert np.all(scores[inclusion] > scores[~inclusion].max() - 2)
    single = one_run_target(algo, 2_000, 200)
    inc = inclusion[:200]
    np.testing.assert_allclose(single.score(single.mechanism(inc, np.random.default_rng(2))), inc, atol=1e-3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(algorithm=LinUCB(), horizon=1000, num_canaries=10), "batch"),
    (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=1001), "num_canaries"),
    (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=0), "num_canaries"),
    (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=10, n_arms=1), "n_arms"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        one_run_target(**kwargs)


@pytest.mark.parametrize("algo, caught", [
    (LinUCBSDPAmp(batch=20, epsilon=1.0, delta=DELTA), False),
    (LinUCBSDPAmp(batch=20, epsilon=10.0, delta=DELTA, noise="code"), True),
])
def test_one_run_validity_and_twin(algo, caught):
    result = one_run(*one_run_target(algo, 20_000, 1_000), claim_epsilon=1.0, claim_delta=DELTA, seed=0)
    if caught:
        assert result.verdict == "violation" and result.epsilon_lower > 1.0, result
    else:
        assert result.verdict == "consistent" and result.epsilon_lower <= 1.0, result
