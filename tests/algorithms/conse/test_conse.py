"""ConSE / DP-ConSE (Li, Shi, Simchi-Levi (ICML 2024), Algs. 1-2): exact agreement with the per-unit listing, shapes, validation, estimator."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.algorithms.conse.algorithm import ConSEParams, conse_target, epoch_schedule, lap_plus, run_conse
from dpaudit.algorithms.conse.environment import PatientExperiment
from dpaudit.registry import ALGORITHMS
from dpaudit.regret import RegretCurves

SMALL = (0.05, 16.0, 8.0, 8.0)  # reduced constants (the number sequences before Alg. 1): short epochs at small n


def reference_conse(env, data, params, coins, undecided):
    """Algorithm 1 of Li, Shi, Simchi-Levi (ICML 2024) unit by unit (epochs from e = 1, μ reset at every epoch end)."""
    runs, n = data.types.shape
    half = n // 2
    m = env.num_types
    r_e, h_e, _ = epoch_schedule(params, n, 20)
    lengths = np.ceil(r_e).astype(int)
    actions = np.zeros((runs, n), dtype=int)
    estimates = np.full((runs, m), np.nan)
    for r in range(runs):
        kept = [-1] * m
        epoch = [0] * m
        count = [0] * m
        sums = np.zeros((m, 2))
        cnts = np.zeros((m, 2))
        n_j = np.zeros(m)
        for t in range(half):
            j = data.types[r, t]
            n_j[j] += 1
            if kept[j] < 0:
                a = coins[r, t]
                sums[j, a] += data.y1[r, t] if a else data.y0[r, t]
                cnts[j, a] += 1
                count[j] += 1
                if count[j] >= lengths[epoch[j]]:
                    mu = np.where(cnts[j] > 0, sums[j] / np.maximum(cnts[j], 1), 0.0)
                    if mu[1] - mu[0] > 2 * h_e[epoch[j]]:
                        kept[j] = 1
                    elif mu[0] - mu[1] > 2 * h_e[epoch[j]]:
                        kept[j] = 0
                    epoch[j] += 1
                    count[j] = 0
                    sums[j] = 0
                    cnts[j] = 0
            else:
                a = kept[j]
            actions[r, t] = a
        t_min = max(math.log(n), min(n_j ** (1 - params.alpha)))
        t_len = math.ceil(t_min)
        final = [kept[j] if kept[j] >= 0 else undecided[r, j] for j in range(m)]
        seen = np.zeros(m)
        sums = np.zeros((m, 2))
        cnts = np.zeros((m, 2))
        for t in range(half, n):
            j = data.types[r, t]
            seen[j] += 1
            if seen[j] <= t_len:
                a = coins[r, t]
                sums[j, a] += data.y1[r, t] if a else data.y0[r, t]
                cnts[j, a] += 1
            else:
                a = final[j]
            actions[r, t] = a
        mu = np.where(cnts > 0, sums / np.maximum(cnts, 1), 0.0)
        estimates[r] = mu[:, 1] - mu[:, 0]
    return actions, estimates


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_vectorised_conse_equals_the_listing(alpha):
    env = PatientExperiment([0.2, 0.6, 0.5], [0.8, 0.3, 0.55], seasonality=0.5)
    params = ConSEParams(alpha=alpha, constants=SMALL)
    data = env.sample(np.random.default_rng(0), 301, 6)
    res = run_conse(env, data, params, np.random.default_rng(11))
    rng = np.random.default_rng(11)
    coins = (rng.random((6, 301)) < 0.5).astype(int)
    undecided = rng.integers(0, 2, size=(6, 3))
    actions, estimates = reference_conse(env, data, params, coins, undecided)
    np.testing.assert_array_equal(res.actions, actions)
    np.testing.assert_allclose(res.estimates, estimates, atol=1e-12)


def test_shapes_and_released_statistics():
    env = PatientExperiment([0.3, 0.7], [0.7, 0.3])
    data = env.sample(np.random.default_rng(1), 500, 4)
    res = run_conse(env, data, ConSEParams(epsilon=1.0, constants=SMALL), np.random.default_rng(2), release=True)
    assert res.actions.shape == (4, 500) and set(np.unique(res.actions)) <= {0, 1}
    assert res.regret.shape == (4, 500) and np.all(np.diff(res.regret, axis=1) >= 0)
    assert res.estimates.shape == res.rct_lengths.shape == (4, 2)
    rel = res.released
    e = rel["epoch_lengths"].shape[2]
    assert rel["epoch_means"].shape == (4, 2, e, 2) and rel["epoch_done"].shape == (4, 2, e)
    # every completed epoch holds exactly its (noisy) length of arrivals
    counts = rel["epoch_counts"].sum(axis=3)
    np.testing.assert_array_equal(counts[rel["epoch_done"]], np.maximum(rel["epoch_lengths"], 1)[rel["epoch_done"]])
    assert np.all(res.rct_counts.sum(axis=2) <= res.rct_lengths)


@pytest.mark.parametrize("epsilon", [None, 1.0])
def test_phase2_rewards_never_move_actions(epsilon):
    """Phase-2 outcomes are used only for the estimate (Alg. 2 lines 33-36): exactly 0 privacy loss for the actions."""
    env = PatientExperiment([0.3, 0.6], [0.6, 0.4])
    params = ConSEParams(alpha=0.3, epsilon=epsilon, constants=SMALL)
    data = env.sample(np.random.default_rng(3), 400, 5)
    flipped = env.neighbour(data, 250, "reward")
    a = run_conse(env, data, params, np.random.default_rng(4))
    b = run_conse(env, flipped, params, np.random.default_rng(4))
    np.testing.assert_array_equal(a.actions, b.actions)


@pytest.mark.parametrize("epsilon", [None, 2.0])
def test_big_gap_is_identified_and_estimated(epsilon):
    env = PatientExperiment([0.1, 0.9], [0.9, 0.1])
    data = env.sample(np.random.default_rng(5), 20000, 20)
    res = run_conse(env, data, ConSEParams(alpha=0.0, epsilon=epsilon), np.random.default_rng(6))
    np.testing.assert_array_equal(res.kept_arm, np.tile([1, 0], (20, 1)))
    # alpha = 0: RCT of about f_min = 5000 units per type, sd of the estimate about 0.013
    assert np.all(np.abs(res.estimates - env.cate) < 0.08)


def test_lap_plus_support_and_mode():
    x = lap_plus(np.random.default_rng(7), 1.0, 3.2, (20000,))
    assert x.min() >= 0 and np.bincount(x).argmax() == 4


def test_neighbour_differs_in_one_unit():
    env = PatientExperiment([0.3, 0.7, 0.5], [0.7, 0.3, 0.5])
    data = env.sample(np.random.default_rng(8), 50, 3)
    for kind in ("context", "reward", "both"):
        nb = env.neighbour(data, 17, kind)
        diff = (nb.types != data.types) | (nb.y0 != data.y0) | (nb.y1 != data.y1)
        assert np.all(np.nonzero(diff)[1] == 17) and diff[:, 17].all()
    with pytest.raises(ValueError, match="kind"):
        env.neighbour(data, 1, "everything")
    with pytest.raises(ValueError, match="t must be"):
        env.neighbour(data, 50, "reward")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"alpha": 1.5}, "alpha"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"constants": (1, 2, 3)}, "constants"),
        ({"tmin_floor": "x"}, "tmin_floor"),
        ({"c_factor": -1}, "c_factor"),
    ],
)
def test_params_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ConSEParams(**kwargs)


def test_environment_validation():
    with pytest.raises(ValueError, match="mu0"):
        PatientExperiment([1.2], [0.5])
    with pytest.raises(ValueError, match="seasonality"):
        PatientExperiment([0.2], [0.5], seasonality=1.0)
    with pytest.raises(ValueError, match="horizon"):
        PatientExperiment([0.2], [0.5]).sample(np.random.default_rng(0), 0)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 4), n=st.integers(2, 60), alpha=st.floats(0, 1))
def test_every_arrival_is_in_one_epoch_or_rct_exactly(m, n, alpha):
    env = PatientExperiment(np.full(m, 0.4), np.full(m, 0.6))
    data = env.sample(np.random.default_rng(n), n, 2)
    res = run_conse(
        env, data, ConSEParams(alpha=alpha, epsilon=1.0, constants=SMALL), np.random.default_rng(m), release=True
    )
    rel = res.released
    assert rel["epoch_counts"].sum() == 2 * (n // 2)
    per_type = np.stack([np.bincount(t[n // 2 :], minlength=m) for t in data.types])
    np.testing.assert_array_equal(res.rct_counts.sum(axis=2), np.minimum(per_type, res.rct_lengths))


@pytest.mark.parametrize("name", ["conse", "dp-conse"])
def test_registered_simulation(name):
    entry = ALGORITHMS.get(name)
    curves = entry.simulate(horizon=3000, runs=3, seed=1, types=3)
    assert isinstance(curves, RegretCurves) and curves.regret.shape[0] == 3 and curves.horizon == 3000
    assert curves.params["estimator_max_mse"] >= 0
    if name == "dp-conse":
        assert (curves.privacy["claim"]["epsilon"], curves.privacy["claim"]["delta"]) == (1.0, 1 / 3000)
    with pytest.raises(ValueError, match="types"):
        entry.simulate(horizon=100, runs=1, seed=0, types=0)


def test_audit_targets_shapes_and_phase2_reward_invariance():
    env = PatientExperiment([0.3, 0.6], [0.6, 0.4])
    params = ConSEParams(alpha=0.3, epsilon=1.0, constants=SMALL)
    data = env.sample(np.random.default_rng(3), 400, 1)
    for obs, shape in [("estimates", (7, 2)), ("rct_lengths", (7, 2)), ("actions_after", (7, 399 - 250))]:
        out = conse_target(env, params, obs, after=250)(data, np.random.default_rng(0), 7)
        assert out.shape == shape
    white = conse_target(env, params, "epoch_means")(data, np.random.default_rng(0), 5)
    assert white.shape[0] == 5
    # the same through the target: identical coins give identical actions after a phase-2 unit
    nb = env.neighbour(data, 250, "reward")
    tgt = conse_target(env, params, "actions_after", after=250)
    np.testing.assert_array_equal(tgt(data, np.random.default_rng(9), 50), tgt(nb, np.random.default_rng(9), 50))
    with pytest.raises(ValueError, match="observable"):
        conse_target(env, params, "regret")
    with pytest.raises(ValueError, match="size"):
        tgt(data, np.random.default_rng(0), 0)
