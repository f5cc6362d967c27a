"""One-run canaries of batched private LinUCB (`dpaudit.algorithms.linear.canaries`).

Exact properties: the canary users' rewards are 1 exactly on the included rounds; the mechanism
hands the score only the released statistic of the trust model (shuffle: the analyzer's batch sum;
local: each user's message; joint DP: the noisy tree prefixes); with negligible noise each canary's
score <r_i, phi> is her own inclusion bit.  Non-private batched LinUCB is rejected.

Statistical tests, fixed seeds: `one_run` at 95% confidence, so a correct algorithm's bound exceeds
its claim with probability <= 5% per validity case (false-failure rate <= 5%; the seeds are fixed,
so the result is reproducible).  Twins that must be caught against the claim eps = 1 (delta = 1e-6):
the authors' simulation noise ("code") at a larger eps, about 200 (SDP-Amp: sigma 0.094 vs 20.3),
57 (LDP: 0.38 vs 21.7) and 10^4 (JDP: 0.039 vs 403) times less noise than the sound configuration.
(A tenth of the noise is not enough here: SDP-Amp's batch sum carries 20 users' noise, and JDP's
prefix increments the tree's; the twins' bounds over seeds 0-2 were >= 3.1.)
"""

import numpy as np
import pytest

from dpaudit.algorithms.linear.canaries import RELEASED, CanaryUsers, LinearView, one_run_target
from dpaudit.algorithms.linear.linucb import LinUCB
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec
from dpaudit.audit import one_run

DELTA = 1e-6


def test_canary_users_reward_exactly_the_included_rounds():
    env = CanaryUsers(np.eye(3)[:, :2] + 0.0, 50, np.array([3, 20, 21, 49]))
    blk = env.block(18, 10, np.random.default_rng(0))
    assert blk.features.shape == (1, 10, 3, 2)
    rewards = blk.rewards(np.zeros((1, 10), dtype=int), np.random.default_rng(0))[0]
    assert np.flatnonzero(rewards).tolist() == [2, 3]


QUIET = [  # negligible noise
    LinUCBSDPAmp(batch=10, epsilon=1e6, delta=DELTA, noise="code"),
    LinUCBLDP(batch=10, epsilon=1e6, delta=DELTA),
    LinUCBJDP(batch=10, epsilon=1e6, delta=DELTA),
]


@pytest.mark.parametrize("algo", QUIET, ids=lambda a: a.name)
def test_score_is_the_canarys_own_inclusion_with_negligible_noise(algo):
    target = one_run_target(algo, 2_000, 300)
    inclusion = np.random.default_rng(1).random(300) < 0.5
    view = target.mechanism(inclusion, np.random.default_rng(2))
    assert isinstance(view, LinearView) and view.name == RELEASED[type(algo.make_release(5, 2_000))]
    scores = target.score(view)
    if isinstance(algo, LinUCBLDP):  # her own message: the second canary of a batch does not enter it
        np.testing.assert_allclose(scores, inclusion, atol=1e-3)
    else:  # 300 canaries in 200 batches: the second canary of a batch adds <phi, phi'> in [-1, 1]
        assert np.all(scores[inclusion] > scores[~inclusion].max() - 2)
    single = one_run_target(algo, 2_000, 200)
    inc = inclusion[:200]
    np.testing.assert_allclose(single.score(single.mechanism(inc, np.random.default_rng(2))), inc, atol=1e-2)


def test_the_view_of_the_vector_protocol_is_its_analyzer_sum():
    target = one_run_target(LinUCBSDPVec(batch=10, epsilon=1.0, delta=DELTA), 200, 20)
    view = target.mechanism(np.ones(20, dtype=bool), np.random.default_rng(0))
    assert view.name == "u" and view.released.shape == (20, 5) and target.score(view).shape == (20,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(algorithm=LinUCB(), horizon=1000, num_canaries=10), "batch"),
        (dict(algorithm=LinUCB(batch=10), horizon=1000, num_canaries=10), "algorithm: linucb releases no noisy"),
        (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=1001), "num_canaries"),
        (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=0), "num_canaries"),
        (dict(algorithm=LinUCBSDPAmp(batch=20), horizon=1000, num_canaries=10, n_arms=1), "n_arms"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        one_run_target(**kwargs)


CASES = [  # (algorithm, expect a violation of (eps, delta) = (1, 1e-6))
    (LinUCBSDPAmp(batch=20, epsilon=1.0, delta=DELTA), False),
    (LinUCBSDPAmp(batch=20, epsilon=10.0, delta=DELTA, noise="code"), True),
    (LinUCBLDP(batch=20, epsilon=1.0, delta=DELTA), False),
    (LinUCBLDP(batch=20, epsilon=10.0, delta=DELTA, noise="code"), True),
    (LinUCBJDP(batch=20, epsilon=1.0, delta=DELTA), False),
    (LinUCBJDP(batch=20, epsilon=1000.0, delta=DELTA, noise="code"), True),
]


@pytest.mark.parametrize(
    "algo, caught", CASES, ids=[f"{a.name}-eps{a.epsilon:g}-{'twin' if c else 'sound'}" for a, c in CASES]
)
def test_one_run_validity_and_twin(algo, caught):
    # sound: false-failure rate <= 5% (95% confidence)
    result = one_run(*one_run_target(algo, 20_000, 1_000), claim_epsilon=1.0, claim_delta=DELTA, seed=0)
    if caught:
        assert result.verdict == "violation" and result.epsilon_lower > 1.0, result
    else:
        assert result.verdict == "consistent" and result.epsilon_lower <= 1.0, result
