"""End-to-end audit of LinUCB-SDP-Amp's shuffled view (Chowdhury & Zhou (ICML 2022), Alg. 1 with P_Amp, Algs. 2-4) with dpaudit.audit.

The target user is in batch 1 with (phi = e1, y = 1) vs (phi = -e1, y = 1); the other B - 1 users send
phi = 0 (their messages are pure noise). Observable: the analyzer's whole view (the shuffled vector
messages), scored by the likelihood-ratio statistic for P_Amp's Gaussian messages (Chowdhury & Zhou (ICML 2022), Alg. 2),
L = logsumexp_k(<Y_k, e1>/sigma^2) - logsumexp_k(-<Y_k, e1>/sigma^2), which is order-invariant.
"""

import numpy as np
import pytest
from scipy.special import logsumexp

from dpaudit.algorithms.linear.environment import ContextTable
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.audit import audit

B, D = 20, 2


def _pair():
    feats = np.zeros((B, 2, D))
    feats[0] = [[1.0, 0.0], [1.0, 0.0]]
    d0 = ContextTable(features=feats, rewards=np.ones((B, 2)))
    return d0, d0.neighbour(0, "context")


def _view(alg):
    sigma = alg.sigma(B)
    target = alg.target("released")  # columns in key order: V, shuffled_V, shuffled_u, u

    def view(data, rng, size):
        out = target(data, rng, size)
        start = D * D + B * D * D
        first = out[:, start : start + B * D].reshape(size, B, D)[:, :, 0] / sigma**2
        return logsumexp(first, axis=1) - logsumexp(-first, axis=1)

    return view


def _audit(epsilon, noise):
    alg = LinUCBSDPAmp(batch=B, epsilon=epsilon, delta=0.1, noise=noise, per_message=True)
    d0, d1 = _pair()
    return audit(
        _view(alg), d0, d1, claim_epsilon=epsilon, claim_delta=0.1, samples=20_000, seed=1, workers=1, progress=False
    )


def test_authors_code_noise_violates_the_claim_at_the_papers_setting():
    """B = 20, eps = 1, delta = 0.1 (Chowdhury & Zhou 2022, Fig. 1(b)) with the authors' sigma = sqrt(ln(2.5B/delta))/(eps sqrt B):
    the shuffled view is not (1, 0.1)-DP. Fixed seed; the auditor's bound is a 95% lower bound."""
    result = _audit(1.0, "code")
    assert result.verdict == "violation" and result.epsilon_lower > 1.0


def test_theorem_noise_twin_is_consistent():
    """Twin: the theorem's sigma at a valid (eps, B) (eps = 0.2 <= sqrt(log(2/delta)/B)) must not be flagged.
    False-failure rate <= 5% (the auditor's confidence 0.95), fixed seed."""
    result = _audit(0.2, "paper")
    assert result.verdict == "consistent"
    assert result.epsilon_lower == pytest.approx(0.0, abs=0.2)
