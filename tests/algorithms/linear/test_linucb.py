"""LinUCB and the batched template (algorithms/linucb.py): linear algebra, shapes, regret sanity."""

import numpy as np
import pytest

from dpaudit.algorithms.linear.environment import ContextTable, linear_environment, paper_vectors
from dpaudit.algorithms.linear.linucb import (
    ExactSums,
    LinUCB,
    checkpoint_grid,
    confidence_radius,
    run_batched_linucb,
    simulate_linear,
)
from dpaudit.registry import ALGORITHMS
from dpaudit.regret import RegretCurves


class _Recorder(ExactSums):
    """Exact sums that also keep every (phi, y) so a test can solve the ridge system directly."""

    def start(self, runs, dim, horizon, batch, rng):
        super().start(runs, dim, horizon, batch, rng)
        self.phis, self.ys = [], []

    def release(self, phis, ys, rng):
        self.phis.append(phis.copy())
        self.ys.append(ys.copy())
        return super().release(phis, ys, rng)


def test_sherman_morrison_equals_direct_solve():
    env = linear_environment(np.random.default_rng(0), runs=3, horizon=300, dim=4, n_arms=7, contexts="iid")
    rec = _Recorder()
    res = run_batched_linucb(env, rec, np.random.default_rng(1), batch=1, regularizer=0.7)
    # Re-run the first rounds by hand: the actions follow from the ridge estimate of all earlier rounds.
    phis = np.concatenate(rec.phis, axis=1)
    ys = np.concatenate(rec.ys, axis=1)
    env_rng, _ = np.random.default_rng(1).spawn(2)
    blk = env.block(0, 256, env_rng)
    for t in (0, 1, 5, 50, 255):
        v = 0.7 * np.eye(4) + np.einsum("rnd,rne->rde", phis[:, :t], phis[:, :t])
        u = np.einsum("rn,rnd->rd", ys[:, :t], phis[:, :t])
        theta = np.linalg.solve(v, u[..., None])[..., 0]
        vinv = np.linalg.inv(v)
        beta = confidence_radius(t, 4, 0.7, 1 / 300, 0.5, False)
        x = blk.features[:, t]
        idx = np.einsum("rkd,rd->rk", x, theta) + beta * np.sqrt(np.einsum("rkd,rde,rke->rk", x, vinv, x))
        np.testing.assert_array_equal(idx.argmax(axis=1), res.actions[:, t])


def test_result_shapes_and_recorded_releases():
    env = linear_environment(np.random.default_rng(0), runs=4, horizon=103, dim=3, n_arms=5)
    alg = LinUCB(batch=10)
    res = alg.run(env, np.random.default_rng(1), record=True)
    assert res.actions.shape == (4, 103)
    assert res.regret.shape == (4, res.checkpoints.size)
    assert res.released["theta"].shape == (4, 10, 3)  # 10 full batches; the partial tail is not released
    assert np.all(np.diff(res.regret, axis=1) >= -1e-12)


@pytest.mark.parametrize(
    "kwargs,name",
    [(dict(batch=0), "batch"), (dict(regularizer=-1.0), "regularizer"), (dict(width_scale=0.0), "width_scale")],
)
def test_linucb_rejects_nonsense(kwargs, name):
    with pytest.raises(ValueError, match=name):
        LinUCB(**kwargs)


def test_checkpoint_grid():
    cp = checkpoint_grid(1000, 50)
    assert cp[0] == 1 and cp[-1] == 1000 and np.all(np.diff(cp) > 0)
    assert checkpoint_grid(3).tolist() == [1, 2, 3]


def test_linucb_regret_is_sublinear():
    """Mean regret per round falls over time: R(T)/T < R(T/4)/(T/4) / 1.5 (d=5, K=100, 20 runs)."""
    curves = simulate_linear(LinUCB(), horizon=4000, runs=20, seed=0, dim=5, n_arms=100)
    assert isinstance(curves, RegretCurves)
    cp, m = curves.checkpoints, curves.mean()
    quarter = np.searchsorted(cp, 1000)
    assert m[-1] / cp[-1] < (m[quarter] / cp[quarter]) / 1.5


def test_registered_and_simulates():
    for name in ("linucb", "linucb-jdp", "linucb-ldp", "linucb-sdp-amp", "linucb-sdp-vec"):
        entry = ALGORITHMS.get(name)
        kw = {} if name == "linucb" else {"noise": "code"}
        curves = entry.simulate(horizon=60, runs=2, seed=1, dim=3, arms=4, batch=5, **kw)
        assert curves.regret.shape[0] == 2 and curves.horizon == 60
        assert curves.privacy["type"] == "Privacy"


def test_target_of_non_private_linucb():
    rng = np.random.default_rng(0)
    tab = ContextTable(paper_vectors(rng, (12, 3), 2), rng.random((12, 3)))
    assert LinUCB().target("actions")(tab, np.random.default_rng(1), 4).shape == (4, 12)
    assert LinUCB(batch=4).target("model")(tab, np.random.default_rng(1), 4).shape == (4, 2)
    with pytest.raises(ValueError, match="observable"):
        LinUCB().target("released")(tab, np.random.default_rng(1), 4)
