"""Basic behaviour of `dpaudit.audit.audit` on small closed-form targets (exact properties)."""

import numpy as np

from dpaudit.audit import AuditResult, audit


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def randomized_response(data, rng, size):
    keep = rng.random(size) < np.e / (1 + np.e)
    return np.where(keep, data, 1 - data)


def test_laplace_consistent_and_reproducible():
    a = audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=20_000, seed=3)
    b = audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=20_000, seed=3)
    assert a == b
    assert a.epsilon_lower >= 0.0
    assert a.verdict == ("violation" if a.epsilon_lower > 1.0 else "consistent")


def test_discrete_output_uses_categories():
    # Statistical (fixed seed): epsilon_lower <= 1 fails for a fresh seed with probability <= 5%
    # (measured 1/1000 in the coverage benchmark); > 0.8 fails far less often (mean 0.97 at 2*10^4).
    r = audit(randomized_response, 1, 0, claim_epsilon=1.0, samples=20_000, seed=1)
    assert r.discrete and r.output_shape == ()
    assert 0.8 < r.epsilon_lower <= 1.0


def test_json_round_trip():
    r = audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=5_000, seed=0)
    assert AuditResult.from_json(r.to_json()) == r


def actions(data, rng, size):
    """Ten binary decisions; the first is randomized response on the input bit."""
    out = rng.integers(0, 2, (size, 10))
    out[:, 0] = randomized_response(data, rng, size)
    return out


def test_user_score_sees_int64_rows_and_matches_builtin_families():
    seen = []

    def first_action(rows):
        seen.append(rows.dtype)
        return rows[:, 0] * 100  # would overflow in int8: the score must see int64

    user = audit(actions, 1, 0, claim_epsilon=1.0, samples=20_000, seed=2, score=first_action, executor="serial")
    assert set(seen) == {np.dtype(np.int64)}
    assert (
        user.directions[0].score
        == '{"function": "test_user_score_sees_int64_rows_and_matches_builtin_families.<locals>.first_action", "name": "user"}'
    )
    assert 0.8 < user.epsilon_lower <= 1.0  # statistical, fixed seed: see the coverage tests
