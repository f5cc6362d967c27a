"""Every algorithm has the one shape of `interface.PrivateAlgorithm`; privacy takes the horizon (exact tests)."""

import inspect

import dp_accounting
import numpy as np
import pytest

from dpaudit.algorithms.conse.algorithm import ConSEParams
from dpaudit.algorithms.conse.conse import ConSE
from dpaudit.algorithms.conse.environment import PatientExperiment
from dpaudit.algorithms.glm.algorithms import PrivateGLM, ShuffleGLM
from dpaudit.algorithms.glm.environment import GLMEnvironment
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams
from dpaudit.algorithms.linear.linucb import LinUCB
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE, SuccessiveElimination
from dpaudit.algorithms.mab.ftnl import FTNL
from dpaudit.algorithms.mab.hybrid_ucb import HybridUCB
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.ucb import UCB1
from dpaudit.interface import PrivateAlgorithm

ALGORITHMS = [
    UCB1(),
    SuccessiveElimination(),
    DPSE(1.0),
    AnytimeLazyUCB(1.0),
    HybridUCB(1.0),
    FTNL(1.0),
    BatchSE("dist-dp", 1.0),
    LinUCB(),
    LinUCBJDP(epsilon=1.0),
    LinUCBLDP(epsilon=1.0),
    LinUCBSDPAmp(epsilon=1.0),
    LinUCBSDPVec(epsilon=1.0),
    ConSE(PatientExperiment(np.array([0.3]), np.array([0.7])), ConSEParams(epsilon=1.0)),
    PrivateGLM(PrivateGLMParams(epsilon=4.0, delta=0.02)),
    ShuffleGLM(ShuffleGLMParams(epsilon=4.0, delta=0.02)),
]


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_every_algorithm_has_the_one_shape(algorithm):
    assert isinstance(algorithm, PrivateAlgorithm)
    params = list(inspect.signature(algorithm.privacy).parameters.values())
    assert params[0].name == "horizon" and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])  # family inputs by keyword only


def test_privacy_is_a_method_of_the_horizon_not_a_property():
    """Regression: HybridUCB.privacy and BatchSE.privacy were properties at a hidden T (2^22, 10^6)."""

    def trees(event):
        return len(event.events)

    assert trees(HybridUCB(1.0).privacy(8).event) == 3  # trees r = 1..floor(log2 T)
    assert trees(HybridUCB(1.0).privacy(1 << 22).event) == 22
    short, long = BatchSE("dist-dp", 1.0).privacy(64).event, BatchSE("dist-dp", 1.0).privacy(10**6).event
    assert isinstance(short, dp_accounting.DpEvent) and len(short.events) < len(long.events)


@pytest.mark.parametrize(
    "algorithm", [UCB1(), DPSE(1.0), HybridUCB(1.0), BatchSE("dist-dp", 1.0)], ids=lambda a: a.name
)
def test_privacy_rejects_a_bad_horizon(algorithm):
    with pytest.raises(ValueError, match="horizon"):
        algorithm.privacy(0)


def test_family_inputs_are_keyword_only():
    with pytest.raises(TypeError):
        LinUCBJDP(epsilon=1.0).privacy(5, 1024)  # the old (dim, horizon) order must not silently swap
    assert FTNL(1.0, "naive").privacy(10, n_arms=4).event.events[0].count == 4


def test_shuffle_glm_privacy_checks_the_batches_cover_the_horizon():
    algo = ShuffleGLM(ShuffleGLMParams(epsilon=4.0, delta=0.02, first_batch=8, batches=2))
    with pytest.raises(ValueError, match="batch_sizes must sum to horizon=32"):
        algo.privacy(32, dim=2, batch_sizes=[8, 20])


def test_glm_and_conse_wrappers_give_the_functions_declarations():
    env = GLMEnvironment(np.array([1.0, 0.5]), np.full((8, 2, 2), 0.5), "probit")
    params = PrivateGLMParams(epsilon=4.0, delta=0.02)
    assert PrivateGLM(params).privacy(8, env=env).claim.epsilon == 4.0
    conse = ConSE(PatientExperiment(np.array([0.3]), np.array([0.7])), ConSEParams(epsilon=1.0))
    assert conse.privacy(200, types=1).claim.delta == pytest.approx(1 / 200)
    assert ConSE(conse.env, ConSEParams()).privacy(200, types=1).trust_model == "none"


def test_every_environment_names_its_number_of_arms_n_arms():
    """One name for K across the families: `n_arms`; `arms` is left to arrays of arm indices."""
    from dpaudit.algorithms.linear.environment import ContextTable, linear_environment
    from dpaudit.algorithms.mab.environment import RewardTable, make_environment

    rng = np.random.default_rng(0)
    envs = [
        linear_environment(rng, runs=2, horizon=4, dim=2, n_arms=3),
        ContextTable(np.ones((4, 3, 2)), np.ones((4, 3))),
        GLMEnvironment(np.array([1.0, 0.5]), np.full((4, 3, 2), 0.5), "probit"),
        RewardTable(np.zeros((4, 3))),
        make_environment(rng, 2, instance="easy", n_arms=3),
    ]
    assert [env.n_arms for env in envs] == [3] * 5
    assert not any(hasattr(env, "arms") for env in envs)
