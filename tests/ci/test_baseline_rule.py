"""The false-flag rate of `dpaudit audit --baseline`'s rule on unchanged code, and its twins that must flag.

Each repeat audits a target at 2000 runs per input (the baseline, seed k), then again at 20000 (seed
1000 + k) counting the baseline's event on fresh runs, as `dpaudit audit --baseline` does, and asks
`dpaudit.baseline.compare` for regressions.  The count of flagged repeats out of R is asserted <= c,
the smallest c with P[Binomial(R, 0.05) > c] <= 0.005: a rule exactly at its nominal rate
1 - confidence = 5% fails the check with probability <= 0.5% (the seeds are fixed, so the outcome
is too).  Twins that must flag in more than c repeats: the rule this one replaced (the new
epsilon_lower above the baseline's `epsilon_upper`, an interval for another event) on the same runs,
and the same rule after the noise is halved.  benchmarks/baseline_rule.py measures the rate at
larger sizes (benchmarks/figures/baseline_rule.txt).
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.baseline import compare
from dpaudit.user_audits import UserAuditEntry, UserClaim

RATE = 0.05  # 1 - confidence


def tolerance(repeats: int, false_failure: float = 0.005) -> int:
    return int(np.argmax(stats.binom.sf(np.arange(repeats + 1), repeats, RATE) <= false_failure))


def gaussian(sigma):
    """Sum of clipped values + N(0, sigma^2): tail events leak more the further out (the nightly case)."""

    def target(data, rng, size):
        return np.clip(data, 0.0, 1.0).sum() + rng.normal(0.0, sigma, size)

    return target


def laplace_vector(scale):
    """x + Lap(scale) on 3 coordinates (one differs between the inputs: true epsilon 1/scale)."""

    def target(data, rng, size):
        return data + rng.laplace(0.0, scale, (size, 3))

    return target


TARGETS = {
    "gaussian": (gaussian, 2.0, np.zeros(4), np.r_[1.0, np.zeros(3)]),
    "vector": (laplace_vector, 2.0, np.zeros(3), np.r_[1.0, 0.0, 0.0]),
}


def _entry(make, scale, d0, d1):
    return UserAuditEntry(
        name="e",
        target=make(scale),
        d0=d0,
        d1=d1,
        claim=UserClaim(delta=1e-5, epsilon=5.0),
        samples=2_000,
        algorithm="test",
    )


def _flags(name: str, repeats: int, new_scale_factor: float = 1.0) -> tuple[int, int]:
    """(repeats the rule flags, repeats the replaced rule flags) for target `name`."""
    make, scale, d0, d1 = TARGETS[name]
    ours = replaced = 0
    for k in range(repeats):
        old = _entry(make, scale, d0, d1).run(samples=2_000, seed=k, executor="serial")
        events = {"e": {"declared": old["claims"][0]["event"]}}
        new = _entry(make, scale * new_scale_factor, d0, d1).run(
            samples=20_000, seed=1_000 + k, executor="serial", baseline_events=events
        )
        comparison = compare({"entries": [old]}, {"entries": [new], "settings": {"confidence": 1 - RATE}})
        ours += bool(comparison["regressions"])
        replaced += new["claims"][0]["epsilon_lower"] > old["claims"][0]["event_epsilon_upper"]
    return ours, replaced


@pytest.mark.parametrize("name, repeats", [("gaussian", 100), ("vector", 30)])
def test_unchanged_code_is_rarely_flagged(name, repeats):
    ours, replaced = _flags(name, repeats)
    assert ours <= tolerance(repeats), (name, ours)
    if name == "gaussian":  # twin: the replaced rule compares the bounds of two different events
        assert replaced > tolerance(repeats), replaced


@pytest.mark.parametrize("name, repeats", [("gaussian", 30), ("vector", 30)])
def test_twin_halved_noise_is_flagged(name, repeats):
    ours, _ = _flags(name, repeats, new_scale_factor=0.5)
    assert ours > tolerance(repeats), (name, ours)
