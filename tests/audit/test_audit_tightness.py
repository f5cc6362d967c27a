"""Reproduction-scale tightness targets (95% confidence), marked slow.

Laplace at true epsilon 1: epsilon_lower >= 0.95 at 10^5 runs per side and >= 0.98 at 10^6;
Gaussian mechanism with mu = 1: mu_lower >= 0.97 at 10^6.  These are statistical: with the fixed
seeds they pass; measured values (benchmarks/audit.py) sit well above the targets (about 0.975
and 0.994 for Laplace, 0.993 for mu), so the false-failure rate over fresh seeds is small.
"""

import numpy as np
import pytest

from dpaudit.audit import audit


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def gaussian(data, rng, size):
    return data + rng.normal(0.0, 1.0, size)


@pytest.mark.slow
@pytest.mark.parametrize("samples, target", [(10**5, 0.95), (10**6, 0.98)])
def test_laplace_tightness(samples, target):
    assert audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=samples, seed=0).epsilon_lower >= target


@pytest.mark.slow
def test_gaussian_mu_tightness():
    r = audit(gaussian, 1.0, 0.0, claim_epsilon=1.0, claim_delta=0.1, samples=10**6, seed=0)
    assert r.mu_lower >= 0.97
    assert np.isfinite(r.mu_point)
