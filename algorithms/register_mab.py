"""Registers the multi-armed and full-information algorithms (seeds 001, 004, baselines) for `dpaudit regret`."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpaudit.algorithms.arms import INSTANCES, REWARD_MODELS, make_environment
from dpaudit.algorithms.elimination import DPSE, DPSE_NOISES, SuccessiveElimination
from dpaudit.algorithms.outcome import checkpoint_grid
from dpaudit.algorithms.ucb import UCB1
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param
from dpaudit.regret import RegretCurves
from dpaudit.validation import check_int_at_least

__all__ = ["float_list", "simulate_regret", "MAB_ENTRIES"]


def float_list(text: str) -> tuple[float, ...]:
    """Parse '0.9,0.5,0.5' into a tuple of floats (the --means option)."""
    try:
        return tuple(float(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise ValueError(f"means must be comma-separated numbers, got {text!r}") from None


def _optional_float(text: str) -> float | None:
    return None if str(text).lower() == "none" else float(text)


def _env_params(instance: str, rewards: str) -> tuple[Param, ...]:
    return (
        Param("instance", str, instance, "arm means: seed 001 settings s001-1..3 (K=5) or seed 004 random easy/hard (K=--arms)", INSTANCES),
        Param("means", float_list, None, "explicit arm means, comma-separated (overrides --instance)"),
        Param("arms", int, None, "number of arms K for the random easy/hard instances (default 10)"),
        Param("rewards", str, rewards, "reward law: bernoulli or gaussian (N(mu, 0.1^2) clipped to [0,1])", REWARD_MODELS),
        Param("checkpoints", int, 200, "number of rounds at which the regret curve is recorded"),
    )


EPSILON = Param("epsilon", float, 1.0, "privacy parameter epsilon > 0")


def simulate_regret(
    name: str,
    factory: Callable[..., Any],
    *,
    horizon: int,
    runs: int,
    seed: int,
    instance: str,
    means=None,
    arms: int | None = None,
    rewards: str = "bernoulli",
    checkpoints: int = 200,
    **params: Any,
) -> RegretCurves:
    """Build the environment and the algorithm, run `runs` runs, return the regret curves."""
    runs = check_int_at_least(runs, 1, "runs")
    horizon = check_int_at_least(horizon, 1, "horizon")
    check_int_at_least(checkpoints, 1, "checkpoints")
    env_ss, algo_ss = np.random.SeedSequence(seed).spawn(2)
    env = make_environment(np.random.default_rng(env_ss), runs, instance=instance, means=means, arms=arms, rewards=rewards)
    algo = factory(**params)
    out = algo.run(env, np.random.default_rng(algo_ss), runs, horizon)
    cp = checkpoint_grid(horizon, checkpoints)
    record = {"instance": instance if means is None else None, "means": None if means is None else list(means),
              "arms": env.n_arms, "rewards": rewards, "seed": seed, **params}
    return RegretCurves(name, cp, out.regret(env.means, cp), algo.privacy.to_json(), record)


def _entry(name: str, summary: str, factory, params: tuple[Param, ...], instance: str, rewards: str) -> AlgorithmEntry:
    def simulate(horizon: int, runs: int, seed: int, **kw: Any) -> RegretCurves:
        env = {p.name: kw.pop(p.name, p.default) for p in _env_params(instance, rewards)}
        return simulate_regret(name, factory, horizon=horizon, runs=runs, seed=seed, **env, **kw)

    simulate.__name__ = f"simulate_{name.replace('-', '_')}"
    return AlgorithmEntry(name, summary, simulate, (*_env_params(instance, rewards), *params))


MAB_ENTRIES = (
    _entry("ucb1", "UCB1 (Auer et al. 2002), non-private baseline", UCB1, (), "s001-1", "bernoulli"),
    _entry("se", "successive elimination, doubling epochs, non-private baseline", SuccessiveElimination,
           (Param("beta", _optional_float, None, "confidence parameter in (0,1); default 1/T"),), "s001-1", "bernoulli"),
    _entry("dp-se", "DP-SE (Sajed & Sheffet 2019), central pure eps-DP", DPSE,
           (EPSILON, Param("beta", _optional_float, None, "confidence parameter in (0,1); default 1/T"),
            Param("noise", str, "per-arm", "per-arm (correct) or shared (authors' seed-004 code, bug B7)", DPSE_NOISES)),
           "s001-1", "bernoulli"),
)

for _e in MAB_ENTRIES:
    ALGORITHMS.register(_e.name, _e)
