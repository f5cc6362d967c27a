"""`one_run(..., analysis="fdp")`: the result, the claims it takes, its agreement with the bound module, and
its input checks; `analysis="epsilon"` unchanged."""

import json
import math

import dp_accounting
import numpy as np
import pytest

from dpaudit.audit import one_run
from dpaudit.audit.one_run_fdp import approx_dp_curve, fdp_rejects, gaussian_curve


def gaussian_canaries(sigma):
    def mechanism(inclusion, rng):
        return inclusion + rng.normal(0.0, sigma, inclusion.size)

    return mechanism


def identity(output):
    return output


def test_fdp_result_fields_and_json():
    res = one_run(gaussian_canaries(0.5), 1000, identity, analysis="fdp", claim_mu=1.0, claim_delta=1e-5, seed=2)
    assert res.analysis == "fdp" and res.claim_mu == 1.0 and res.claim_epsilon is None and res.claim_event is None
    assert res.mu_lower is not None and res.mu_lower > 0 and res.epsilon_lower > 0
    assert res.selection == "grid" and res.level == pytest.approx(0.05 / res.grid_size)
    assert res.correct == res.correct_plus + res.correct_minus and res.guesses == res.k_plus + res.k_minus
    back = json.loads(res.to_json())
    assert back["analysis"] == "fdp" and back["mu_lower"] == res.mu_lower and back["claim_epsilon"] is None


def test_epsilon_analysis_is_unchanged_and_default():
    a = one_run(gaussian_canaries(1.0), 500, identity, 1.0, seed=4)
    b = one_run(gaussian_canaries(1.0), 500, identity, 1.0, seed=4, analysis="epsilon")
    assert a == b and a.analysis == "epsilon" and a.mu_lower is None and a.claim_mu is None


def test_same_run_both_analyses_see_the_same_guesses():
    a = one_run(gaussian_canaries(1.0), 1000, identity, 1.0, 1e-5, seed=7, guesses=(200, 200))
    b = one_run(gaussian_canaries(1.0), 1000, identity, 1.0, 1e-5, seed=7, guesses=(200, 200), analysis="fdp")
    assert (a.correct, a.guessed_in, a.guessed_out) == (b.correct, b.guessed_in, b.guessed_out)
    assert b.selection == "fixed" and b.level == pytest.approx(0.05)


@pytest.mark.parametrize(
    "claim", [{"claim_mu": 0.3}, {"claim_mu": 3.0}, {"claim_epsilon": 0.5}, {"claim_epsilon": 4.0}]
)
def test_verdict_is_the_test_of_the_claims_curve(claim):
    """The verdict is "violation" iff some pair of the grid rejects the claim's curve at level / grid size."""
    res = one_run(
        gaussian_canaries(0.5), 1000, identity, analysis="fdp", seed=3, guesses=[(250, 250), (64, 0)], **claim
    )
    k = np.array([250 + 250, 64])
    curve = gaussian_curve(claim["claim_mu"]) if "claim_mu" in claim else approx_dp_curve(claim["claim_epsilon"], 0.0)
    fixed = [one_run(gaussian_canaries(0.5), 1000, identity, 1.0, seed=3, guesses=g) for g in [(250, 250), (64, 0)]]
    v = np.array([r.correct for r in fixed])
    assert (res.verdict == "violation") == bool(fdp_rejects(curve, 1000, k, v, 0.025).any())
    if "claim_mu" in claim:
        assert (res.verdict == "violation") == (res.mu_lower >= claim["claim_mu"])
    else:
        assert (res.verdict == "violation") == (res.epsilon_lower >= claim["claim_epsilon"])


def test_event_claim():
    """A Laplace event at its true scale is consistent; claimed at twice the scale (half the epsilon), refuted."""

    def laplace(inclusion, rng):
        return inclusion + rng.laplace(0.0, 0.25, inclusion.size)

    ok = one_run(laplace, 500, identity, analysis="fdp", claim_event=dp_accounting.LaplaceDpEvent(0.25), seed=1)
    bad = one_run(laplace, 500, identity, analysis="fdp", claim_event=dp_accounting.LaplaceDpEvent(0.5), seed=1)
    assert ok.verdict == "consistent" and bad.verdict == "violation"
    assert bad.claim_event == {"type": "LaplaceDpEvent", "noise_multiplier": 0.5} and bad.claim_epsilon is None
    json.loads(bad.to_json())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"analysis": "fdp"}, ValueError, "exactly one of"),
        ({"analysis": "fdp", "claim_mu": 1.0, "claim_epsilon": 1.0}, ValueError, "exactly one of"),
        ({"claim_mu": 1.0}, ValueError, "analysis='epsilon' takes claim_epsilon only"),
        ({"claim_epsilon": 1.0, "claim_event": dp_accounting.LaplaceDpEvent(1.0)}, ValueError, "claim_epsilon only"),
        ({"analysis": "f-dp", "claim_mu": 1.0}, ValueError, "analysis"),
        ({"analysis": 3, "claim_mu": 1.0}, TypeError, "analysis"),
        ({"analysis": "fdp", "claim_mu": -1.0}, ValueError, "claim_mu"),
        ({"analysis": "fdp", "claim_mu": math.inf}, ValueError, "claim_mu"),
        ({"analysis": "fdp", "claim_mu": "1"}, TypeError, "claim_mu"),
        ({"analysis": "fdp", "claim_event": "laplace"}, TypeError, "claim_event"),
        ({"analysis": "fdp", "claim_mu": 1.0, "confidence": 1.0}, ValueError, "confidence"),
        ({"analysis": "fdp", "claim_mu": 1.0, "claim_delta": 1.0}, ValueError, "claim_delta"),
        ({"analysis": "fdp", "claim_epsilon": 0.0}, ValueError, "claim_epsilon"),
    ],
)
def test_bad_claims_name_the_parameter(kwargs, error, match):
    with pytest.raises(error, match=match):
        one_run(gaussian_canaries(1.0), 10, identity, **kwargs)
