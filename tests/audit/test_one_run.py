"""`dpaudit.audit.one_run`: the game, the result, input validation and the power goals."""

import json
import math

import numpy as np
import pytest

from dpaudit.audit import OneRunResult, one_run
from dpaudit.audit.one_run import default_guess_grid


def laplace_canaries(epsilon):
    """Canary i adds 1 to coordinate i, Laplace(1/epsilon) noise per coordinate: epsilon-DP per canary."""

    def mechanism(inclusion, rng):
        return inclusion + rng.laplace(0.0, 1.0 / epsilon, inclusion.size)

    return mechanism


def identity(output):
    return output


def test_result_fields_and_guesses_are_consistent():
    seen = {}

    def mechanism(inclusion, rng):
        seen["inclusion"] = inclusion.copy()
        return inclusion + rng.laplace(0.0, 1.0, inclusion.size)

    res = one_run(mechanism, 2000, identity, claim_epsilon=1.0, seed=3)
    inc = seen["inclusion"]
    assert inc.dtype == bool and inc.shape == (2000,)
    assert isinstance(res, OneRunResult) and res.selection == "grid"
    assert res.grid_size == len(default_guess_grid(2000)) and res.level == pytest.approx(0.05 / res.grid_size)
    assert len(res.guessed_in) == res.k_plus and len(res.guessed_out) == res.k_minus
    assert not set(res.guessed_in) & set(res.guessed_out)
    assert res.correct_plus == int(inc[list(res.guessed_in)].sum())
    assert res.correct_minus == int((~inc[list(res.guessed_out)]).sum())
    assert res.correct == res.correct_plus + res.correct_minus and res.guesses == res.k_plus + res.k_minus
    assert res.verdict == ("violation" if res.epsilon_lower > 1.0 else "consistent")
    with pytest.raises(AttributeError):
        res.epsilon_lower = 5.0  # frozen
    back = json.loads(res.to_json())
    assert back["type"] == "OneRunResult" and back["epsilon_lower"] == res.epsilon_lower
    assert back["guessed_in"] == list(res.guessed_in)


def test_same_seed_same_result_other_seed_other_coins():
    a = one_run(laplace_canaries(1.0), 500, identity, 1.0, seed=11)
    b = one_run(laplace_canaries(1.0), 500, identity, 1.0, seed=11)
    c = one_run(laplace_canaries(1.0), 500, identity, 1.0, seed=12)
    assert a == b and a.to_dict() != c.to_dict()


def test_fixed_guesses_need_no_correction():
    res = one_run(laplace_canaries(1.0), 1000, identity, 1.0, guesses=(100, 50))
    assert (res.selection, res.grid_size, res.level) == ("fixed", 1, pytest.approx(0.05))
    assert (res.k_plus, res.k_minus, res.guesses) == (100, 50, 150)
    grid = one_run(laplace_canaries(1.0), 1000, identity, 1.0, guesses=[(100, 50), (10, 10)])
    assert (grid.selection, grid.grid_size, grid.level) == ("grid", 2, pytest.approx(0.025))


def test_ties_are_broken_by_index_and_never_overlap():
    res = one_run(lambda inc, rng: np.zeros(inc.size), 10, identity, 1.0, guesses=(4, 6))
    assert res.guessed_in == (0, 1, 2, 3) and res.guessed_out == (4, 5, 6, 7, 8, 9)
    assert res.epsilon_lower == 0.0


def test_default_grid():
    assert default_guess_grid(1) == ((0, 1), (1, 0))
    grid = default_guess_grid(100_000)
    assert all(0 < a + b <= 100_000 for a, b in grid) and (25_000, 25_000) in grid and len(grid) == 323


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(num_canaries=0), "num_canaries"),
        (dict(num_canaries=2.5), "num_canaries"),
        (dict(claim_epsilon=0.0), "claim_epsilon"),
        (dict(claim_epsilon=-1.0), "claim_epsilon"),
        (dict(claim_epsilon=math.inf), "claim_epsilon"),
        (dict(claim_epsilon=math.nan), "claim_epsilon"),
        (dict(claim_delta=1.0), "claim_delta"),
        (dict(claim_delta=-1e-9), "claim_delta"),
        (dict(confidence=0.0), "confidence"),
        (dict(confidence=1.0), "confidence"),
        (dict(guesses=(0, 0)), "guesses"),
        (dict(guesses=(60, 50)), "guesses"),
        (dict(guesses=(-1, 5)), "guesses"),
        (dict(guesses=(1, 2, 3)), "guesses"),
        (dict(seed=-1), "seed"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(mechanism=laplace_canaries(1.0), num_canaries=100, score=identity, claim_epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        one_run(**args)


def test_bad_scores_are_rejected():
    with pytest.raises(ValueError, match=r"score\(output\).*shape \(100,\).*\(99,\)"):
        one_run(laplace_canaries(1.0), 100, lambda out: out[:-1], 1.0)
    with pytest.raises(ValueError, match=r"score\(output\).*shape"):
        one_run(laplace_canaries(1.0), 100, lambda out: out[:, None], 1.0)
    with pytest.raises(ValueError, match=r"score\(output\).*NaN"):
        one_run(laplace_canaries(1.0), 100, lambda out: np.where(out > 2, np.nan, out), 1.0)


# Power goals.  Each run is one fixed seed.  At true epsilon 2 the guesses in the
# Laplace tail are right with probability e^2/(1+e^2) = 0.88, so the expected bound is ~1.95 at
# 10^5 and ~1.8 at 10^4 canaries; falling below 1 would need accuracy below 0.73 on thousands of
# guesses, a deviation of dozens of standard deviations: false-failure probability < 1e-50.


def test_power_true_epsilon_2_with_1e5_canaries():
    res = one_run(laplace_canaries(2.0), 100_000, identity, claim_epsilon=2.0)
    assert res.epsilon_lower >= 1.0
    assert res.epsilon_lower <= 2.0  # and never above the truth here (one seed; coverage is tested separately)


def test_halved_noise_is_caught_with_1e4_canaries():
    res = one_run(laplace_canaries(2.0), 10_000, identity, claim_epsilon=1.0)
    assert res.verdict == "violation" and res.epsilon_lower > 1.5


def test_twin_correct_noise_is_consistent():
    # valid noise for the claim: "violation" has probability <= 5% (the bound's confidence)
    res = one_run(laplace_canaries(1.0), 10_000, identity, claim_epsilon=1.0)
    assert res.verdict == "consistent" and 0.5 < res.epsilon_lower <= 1.0


def test_approximate_dp_claim_uses_the_delta_bound():
    pure = one_run(laplace_canaries(2.0), 2000, identity, claim_epsilon=1.0)
    approx = one_run(laplace_canaries(2.0), 2000, identity, claim_epsilon=1.0, claim_delta=1e-6)
    assert 0.0 < approx.epsilon_lower <= pure.epsilon_lower
    assert approx.claim_delta == 1e-6
