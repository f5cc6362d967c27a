"""DP-ConSE's RCT lengths through the empirical auditor (Li, Shi, Simchi-Levi (ICML 2024), Alg. 2 line 27). Slow: deselected by default."""

import numpy as np
import pytest

from dpaudit.algorithms.conse.algorithm import ConSEParams, conse_target
from dpaudit.algorithms.conse.environment import PatientData, PatientExperiment
from dpaudit.algorithms.conse.privacy import lap_plus_shift_loss
from dpaudit.audit import audit

N = 400


def rct_pair(m: int) -> tuple[PatientData, PatientData]:
    """Type 0 is the rarest in phase 1 (20 arrivals); the neighbour moves its last phase-1 arrival to type 1
    so only f̂ changes and ⌈T_min⌉ drops by one (α = 0). Outcomes are deterministic."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    half = N // 2
    counts = [20] + [(half - 20) // (m - 1)] * (m - 1)
    counts[-1] += half - sum(counts)
    types1 = np.random.default_rng(0).permutation(np.concatenate([np.full(c, j) for j, c in enumerate(counts)]))
    types = np.concatenate([types1, np.arange(N - half) % m])[None, :]
    y0, y1 = np.zeros((1, N)), np.ones((1, N))
    t = int(np.nonzero(types[0, :half] == 0)[0][-1])
    moved = types.copy()
    moved[0, t] = 1
    return PatientData(types, y0, y1), PatientData(moved, y0, y1)


@pytest.mark.slow
def test_rct_lengths_exceed_the_claim_for_many_types():
    """All M lengths T_j = Lap+_ε(T_min) share the centre: one moved arrival costs M·λ(c) ≈ M·ε/2 (M = 5: 2.5),
    above the paper's ε = 1 for the whole algorithm; the corrected bound for this release (M·λ(19)) holds.

    Each lower bound holds with probability 0.95: the second assertion fails falsely at most 5% of seeds
    (the fixed seed makes the test deterministic); the first is the finding (Li, Shi, Simchi-Levi (ICML 2024), Thm 3.5's ε is exceeded).
    """
    m = 5
    env = PatientExperiment(np.zeros(m), np.ones(m))
    d0, d1 = rct_pair(m)
    target = conse_target(env, ConSEParams(alpha=0.0, epsilon=1.0), "rct_lengths")
    res = audit(
        target,
        d0,
        d1,
        claim_epsilon=1.0,
        claim_delta=1 / N,
        samples=40_000,
        seed=1,
        chunk_size=20_000,
        executor="serial",
        score=lambda x: (np.reshape(x, (len(x), -1)) >= 20).sum(axis=1),
    )
    assert res.epsilon_lower > 1.0
    assert res.epsilon_lower <= m * lap_plus_shift_loss(1.0, 19)
