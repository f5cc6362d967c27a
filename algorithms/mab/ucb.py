"""UCB1 (Auer, Cesa-Bianchi, Fischer 2002), non-private baseline; decides every round.

Rounds 1..K pull each arm once; afterwards A_t = argmax_a mu_hat_a + sqrt(2 ln t / n_a)
(ties: lowest index). All runs advance together, one round per step; rewards come from the
environment's stream (pre-drawn in blocks).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpaudit.algorithms.mab.base import Algorithm
from dpaudit.algorithms.mab.outcome import Outcome
from dpaudit.privacy import NON_PRIVATE, Privacy
from dpaudit.validation import check_positive_int

__all__ = ["UCB1"]


@dataclasses.dataclass(frozen=True)
class UCB1(Algorithm):
    """UCB1 with index mu_hat + sqrt(2 ln t / n) (Auer et al. 2002, Fig. 1)."""

    name = "ucb1"

    def privacy(self, horizon: int) -> Privacy:
        """Non-private at every horizon."""
        check_positive_int(horizon, "horizon")
        return NON_PRIVATE

    def _run(self, env, rng, size, horizon) -> Outcome:
        K = env.n_arms
        rows = np.arange(size)
        draw = env.stream(rng, size)
        actions = np.empty((size, horizon), dtype=np.int16)
        total = np.zeros((size, K))
        for a in range(K):
            arms = np.full(size, a)
            total[:, a] = draw(a, arms)
            actions[:, a] = a
        count = np.ones((size, K))
        mean = total.copy()
        inv = np.ones((size, K))  # 1/sqrt(n_a)
        bonus = np.sqrt(2 * np.log(np.arange(1, horizon + 1, dtype=float)))
        for t in range(K, horizon):
            J = np.argmax(mean + bonus[t] * inv, axis=1)
            x = draw(t, J)
            total[rows, J] += x
            count[rows, J] += 1
            mean[rows, J] = total[rows, J] / count[rows, J]
            inv[rows, J] = count[rows, J] ** -0.5
            actions[:, t] = J
        return Outcome.from_actions(actions, K)
