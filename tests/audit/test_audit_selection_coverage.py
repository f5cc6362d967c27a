"""Statistical tests of the selection-side budget rules: coverage with the uneven direction split
(`direction_share`, on by default) and with the selection extension (`selection_extension`).

With N audits the count of epsilon_lower > true epsilon is asserted <= c, the smallest c with
P[Binomial(N, 0.05) > c] <= 0.005: an auditor exactly at its nominal 5% would fail with probability
<= 0.5%; all seeds are fixed.  Each has a twin whose noise is perturbed (a larger true loss) that the
same check must flag.  The benchmark of 1000 audits per case is benchmarks/power_coverage.py.
"""

import numpy as np
import pytest
from test_audit_coverage import tolerance

from dpaudit.audit import audit

AUDITS = 200


def one_bit(p_one):
    """One bit, 1 with probability `p_one` on x = 1 and 0.1 on x = 0: true epsilon log(10 p_one) for
    p_one >= 0.1, and the direction x = 1 first is the clearly stronger one (log(0.9 / (1 - p_one)) the other)."""

    def target(data, rng, size):
        return (rng.random(size) < (p_one if data else 0.1)).astype(np.int64)

    return target


def laplace(scale):
    def target(data, rng, size):
        return data + rng.laplace(0.0, scale, size)

    return target


def _exceed(target, true_epsilon, samples, **options):
    lows = np.array(
        [
            audit(
                target, 1, 0, claim_epsilon=true_epsilon, samples=samples, seed=s, executor="serial", **options
            ).epsilon_lower
            for s in range(AUDITS)
        ]
    )
    return int(np.sum(lows > true_epsilon)), lows


def test_uneven_direction_split_covers():
    # 20000 runs: the bound is within ~0.1 of log 2, where a too-optimistic level would show.
    over, lows = _exceed(one_bit(0.2), np.log(2.0), 20_000)
    assert over <= tolerance(AUDITS)
    assert lows.mean() > 0.5


def test_uneven_direction_split_twin_fails_with_a_larger_loss():
    # P[1] = 0.3 on x = 1: true epsilon log 3 = 1.10, checked against log 2 (the same check must fail).
    over, _ = _exceed(one_bit(0.3), np.log(2.0), 20_000)
    assert over > tolerance(AUDITS)


@pytest.mark.parametrize("samples", [2_000, pytest.param(20_000, marks=pytest.mark.slow)])
def test_selection_extension_covers(samples):
    over, lows = _exceed(laplace(1.0), 1.0, samples, selection_extension=0.2)
    assert over <= tolerance(AUDITS)
    assert lows.mean() > 0.6


def test_selection_extension_twin_fails_when_the_noise_is_halved():
    over, _ = _exceed(laplace(0.5), 1.0, 2_000, selection_extension=0.2)
    assert over > tolerance(AUDITS)
