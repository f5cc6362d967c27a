"""What `one_run` counts and reports (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run",
NeurIPS 2023, Algorithm 1), exact: a correct "out" guess is an excluded canary among the k_- lowest scores, a
correct "in" guess an included one among the k_+ highest (canaries ordered by score, ties by index); the bound is that of
`one_run_epsilon` on those counts; the result carries the inputs it was given; seed defaults to 0 and must be a
non-negative integer (not a bool); a bad canary count is named in the error.  The mechanism here releases the
coins themselves (a perfect attacker), so every count is known.
"""

import numpy as np
import pytest

from dpaudit.audit.one_run import default_guess_grid, one_run
from dpaudit.audit.one_run_bound import one_run_epsilon


def reveal(inclusion, rng):
    return inclusion.astype(float)


def score(output):
    return output


@pytest.mark.parametrize("guesses", [(0, 20), (15, 15), (25, 0)])
def test_every_guess_of_a_perfect_attacker_is_correct_and_bounded_as_such(guesses):
    res = one_run(reveal, 100, score, claim_epsilon=1.0, seed=3, guesses=guesses)
    k = sum(guesses)
    assert (res.k_plus, res.k_minus, res.guesses) == (*guesses, k)
    assert (res.correct, res.correct_plus, res.correct_minus) == (k, guesses[0], guesses[1])
    assert res.epsilon_lower == float(one_run_epsilon(100, [k], [k], 0.0, 0.05)[0]) > 0


def test_ties_are_broken_by_canary_index():
    # three score levels in a random pattern: canaries ordered by score, highest first, ties by index; the k_+
    # "in" guesses are the first of that order, the k_- "out" guesses the last (the highest indices among ties)
    pattern = np.random.default_rng(0).integers(0, 3, 200).astype(float)
    res = one_run(lambda inclusion, rng: pattern, 200, score, claim_epsilon=1.0, guesses=(30, 30))
    order = [int(i) for i in np.argsort(-pattern, kind="stable")]
    assert order[:30] == sorted(order[:30]) and pattern[order[:30]].min() == pattern.max()
    assert sorted(res.guessed_in) == sorted(order[:30])
    assert sorted(res.guessed_out) == sorted(order[-30:]) and pattern[order[-30:]].max() == pattern.min()


def test_result_carries_its_inputs_and_the_verdict_is_strict():
    res = one_run(reveal, 64, score, claim_epsilon=0.5, claim_delta=1e-6, confidence=0.9, seed=11, guesses=(8, 8))
    assert (res.claim_epsilon, res.claim_delta, res.confidence, res.seed, res.num_canaries) == (0.5, 1e-6, 0.9, 11, 64)
    assert res.version and isinstance(res.version, str)
    at_bound = one_run(
        reveal, 64, score, claim_epsilon=res.epsilon_lower, claim_delta=1e-6, confidence=0.9, seed=11, guesses=(8, 8)
    )
    assert at_bound.epsilon_lower == res.epsilon_lower and at_bound.verdict == "consistent"  # not above the claim


def test_seed_defaults_to_zero_and_must_be_a_non_negative_integer():
    def noisy(inclusion, rng):
        return inclusion + rng.normal(0.0, 1.0, inclusion.size)

    assert one_run(noisy, 50, score, claim_epsilon=1.0) == one_run(noisy, 50, score, claim_epsilon=1.0, seed=0)
    for bad in (True, -1, 1.5):
        with pytest.raises(ValueError, match="seed"):
            one_run(noisy, 50, score, claim_epsilon=1.0, seed=bad)


def test_a_bad_canary_count_is_named():
    with pytest.raises(ValueError, match=r"^num_canaries "):
        default_guess_grid(0)
    with pytest.raises(ValueError, match=r"^num_canaries "):
        one_run(reveal, 0, score, claim_epsilon=1.0)
