"""SE and DP-SE: epoch structure, the authors' shared-noise bug, regret sanity, validation."""

import math

import numpy as np
import pytest

from dpaudit.algorithms.mab.elimination import DPSE, SuccessiveElimination
from dpaudit.algorithms.mab.environment import BernoulliArms, RewardTable
from dpaudit.algorithms.mab.outcome import checkpoint_grid

S2 = np.array([0.75, 0.625, 0.5, 0.375, 0.25])


def test_dpse_first_epoch_length_and_release_shapes():
    T = 10**6
    out = DPSE(epsilon=1.0).run(BernoulliArms(S2), np.random.default_rng(0), 3, T)
    beta, d = 1 / T, 0.5
    want = 1 + math.floor(max(32 * math.log(8 * 5 / beta) / d**2, 8 * math.log(4 * 5 / beta) / d))
    assert out.lengths[:, :5].tolist() == [[want] * 5] * 3
    sums = out.statistics["noisy_sums"]
    assert sums.shape[0] == 3 and sums.shape[2] == 5
    assert np.all(out.lengths.sum(axis=1) == T)


def test_shared_noise_variant_decides_without_noise():
    """The shared-noise bug of the authors' code (Chowdhury & Zhou (ICLR 2023), Sec. 7 footnote 5): one Laplace draw for all arms cancels, so actions are a
    function of the rewards alone; with independent noise they are not."""
    rng = np.random.default_rng(1)
    table = RewardTable((rng.random((6000, 2)) < [0.6, 0.5]).astype(float))
    shared = DPSE(epsilon=0.5, beta=0.5, noise="shared")
    acts = [shared.run(table, np.random.default_rng(s), 4).actions() for s in range(3)]
    assert all(np.array_equal(acts[0][0], a) for arr in acts for a in arr)
    correct = DPSE(epsilon=0.5, beta=0.5).run(table, np.random.default_rng(0), 40)
    assert len({tuple(a) for a in correct.pulls()}) > 1
    assert math.isinf(shared.privacy(100).corrected.epsilon) and DPSE(epsilon=0.5).privacy(100).corrected is None


def test_private_regret_exceeds_non_private_and_is_sublinear():
    env = BernoulliArms(S2)
    T, cp = 200_000, np.array([20_000, 200_000])
    se = SuccessiveElimination().run(env, np.random.default_rng(2), 200, T).regret(S2, cp)
    dp = DPSE(epsilon=0.2).run(env, np.random.default_rng(3), 200, T).regret(S2, cp)
    assert dp[:, -1].mean() > se[:, -1].mean()
    for reg in (se, dp):
        avg = reg.mean(axis=0) / cp
        assert avg[1] < avg[0]


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: DPSE(epsilon=0.0), "epsilon"),
        (lambda: DPSE(epsilon=-1.0), "epsilon"),
        (lambda: DPSE(epsilon=float("nan")), "epsilon"),
        (lambda: DPSE(beta=1.0), "beta"),
        (lambda: DPSE(noise="none"), "noise"),
        (lambda: SuccessiveElimination(beta=0.0), "beta"),
    ],
)
def test_bad_parameters_name_themselves(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_horizon_and_size_validation():
    env = BernoulliArms(S2)
    with pytest.raises(ValueError, match="horizon"):
        DPSE().run(env, np.random.default_rng(0), 2, 4)
    with pytest.raises(ValueError, match="size"):
        DPSE().run(env, np.random.default_rng(0), 0, 100)
    with pytest.raises(ValueError, match="horizon must be given"):
        DPSE().run(env, np.random.default_rng(0), 2)
    with pytest.raises(TypeError, match="rng"):
        DPSE().run(env, 0, 2, 100)


def test_target_contract_for_audits():
    table = RewardTable(np.zeros((300, 2)))
    target = DPSE(epsilon=1.0, beta=0.5).target(observable="noisy_sums")
    out = target(table, np.random.default_rng(0), 7)
    assert out.shape[0] == 7
    acts = DPSE(epsilon=1.0, beta=0.5).target()(table, np.random.default_rng(0), 5)
    assert acts.shape == (5, 300)
    with pytest.raises(ValueError, match="observable"):
        DPSE().target(observable="tree")(table, np.random.default_rng(0), 2)
    assert checkpoint_grid(300, 10)[-1] == 300
