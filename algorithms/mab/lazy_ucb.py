"""Anytime-Lazy-UCB (Hu, Huang, Mehta (arXiv:2102.07929), Hu, Huang & Mehta, Algorithm 1, §4.1; O(1)-memory form of App. A).

Arm j keeps arrays of sizes 2^0, 2^1, ...; each new observation goes into the current array;
when array r fills, the private mean becomes (array sum + Lap(1/eps)) / 2^r (eq. 3): noise
on the SUM, drawn once, data of older arrays forgotten. Rounds 1..K pull each arm once
(array 0, size 1, with its own Lap(1/eps); Hu, Huang, Mehta (arXiv 2021) note a). Afterwards
    A_t = argmax_j  mu_j + sqrt(3 ln t / 2^{r_j}) + 3 ln t / (eps 2^{r_j})        (eq. 4)
with r_j the last filled array (ties: lowest index).

Simulation by events (`engine="events"`, default). Between two fills every index is a
function of u = sqrt(ln t) alone: f_j(u) = mu_j + a_j u + b_j u^2. So the leader J stays
the leader until the first u where some f_k - f_J (a quadratic) turns positive, or until J's
array fills; the rounds in between are one segment, whose reward sum the environment draws
directly. The crossing round is rounded down (a relative margin of 1e-9), so a segment never
runs past a true leader change; at worst a segment ends early and the leader is re-evaluated.
`engine="rounds"` is the straightforward per-round implementation, kept to check and to time
the event engine (benchmarks/simulate.py).

Privacy (Thm 2): pure eps-DP, central, under replace-one round's reward vector; every round's
reward enters exactly one Laplace(1/eps) release of a sensitivity-1 sum (parallel composition).

`forget=False` is the known bug "forgetting not done" (Hu, Huang, Mehta (arXiv 2021), Alg. 1 forgets, §4.1): at each fill the
released sum covers ALL the arm's observations so far (arrays 0..r, 2^{r+1} - 1 items) with fresh
Lap(1/eps), and the mean divides by that count. A reward then enters every later release of its
arm, about log2 T of them: the loss grows to (#later fills) * eps, unbounded over an anytime horizon.
"""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np

from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.mab.base import Algorithm
from dpaudit.algorithms.mab.outcome import Outcome, SegmentLog
from dpaudit.privacy import Guarantee, Privacy
from dpaudit.validation import check_bool, check_choice, check_epsilon, check_finite_array, check_positive_int

__all__ = ["LAZY_ENGINES", "AnytimeLazyUCB", "lazy_array_releases"]

LAZY_ENGINES = ("events", "rounds")
_MARGIN = 1e-9


def lazy_array_releases(
    rng: np.random.Generator, rewards: np.ndarray, epsilon: float, forget: bool = True
) -> np.ndarray:
    """One arm's released noisy array sums for its observation stream, shape (size, arrays).

    rewards[i, n] is the arm's (n+1)-th observation in run i. Array r holds observations
    2^r .. 2^{r+1}-1 (1-based) and is released as its sum + Lap(1/eps) once full; only full
    arrays are returned: the releases of Anytime-Lazy-UCB (Hu, Huang, Mehta (arXiv 2021), Alg. 1), observed
    white-box (K = 1). forget=False: release r is the sum of observations 1 .. 2^{r+1}-1 instead (no forgetting).
    """
    epsilon = check_epsilon(epsilon)
    x = check_finite_array(rewards, "rewards", ndim=2)
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError("rewards must lie in [0, 1]")
    full = (x.shape[1] + 1).bit_length() - 1  # arrays 0..full-1 are complete
    csum = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(x, axis=1)], axis=1)
    lo = (1 << np.arange(full)) - 1 if forget else np.zeros(full, dtype=np.int64)
    hi = (1 << np.arange(1, full + 1)) - 1
    return csum[:, hi] - csum[:, lo] + rng.laplace(0.0, 1.0 / epsilon, (x.shape[0], full))


def _first_crossing(C: np.ndarray, B: np.ndarray, A: np.ndarray, u0: np.ndarray) -> np.ndarray:
    """Smallest u > u0 where d(u) = C + B u + A u^2 becomes > 0, given d(u0) <= 0; inf if never."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        disc = B * B - 4 * A * C
        sq = np.sqrt(np.maximum(disc, 0.0))
        q = -0.5 * (B + np.where(B >= 0, sq, -sq))
        r1, r2 = q / A, C / q
        lo_root, hi_root = np.minimum(r1, r2), np.maximum(r1, r2)
        quad = np.where(A > 0, hi_root, np.where(lo_root > u0, lo_root, np.inf))  # A<0: d>0 only between roots
        quad = np.where(disc >= 0, quad, np.where(A > 0, u0, np.inf))  # A>0, disc<0: round-off at a tie
        lin = np.where(B > 0, -C / B, np.inf)
        root = np.where(A == 0, lin, quad)
        root = np.where(np.isnan(root), np.inf, root)
    return np.where(root > u0, root, u0)


@dataclasses.dataclass(frozen=True)
class AnytimeLazyUCB(Algorithm):
    """Anytime-Lazy-UCB with privacy parameter `epsilon` (Hu, Huang, Mehta, Alg. 1); forget=False is the known bug
    "forgetting not done" (module docstring)."""

    epsilon: float = 1.0
    engine: str = "events"
    forget: bool = True
    name = "anytime-lazy-ucb"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.engine, LAZY_ENGINES, "engine")
        check_bool(self.forget, "forget")

    def privacy(self, horizon: int) -> Privacy:
        """Pure epsilon at every horizon: each observation enters one released array sum."""
        check_positive_int(horizon, "horizon")
        if not self.forget:
            return Privacy(
                "round-vector",
                "central",
                dp_accounting.NonPrivateDpEvent(),
                Guarantee("pure", self.epsilon, source="Hu, Huang, Mehta, Thm 2"),
                Guarantee(
                    "pure",
                    math.inf,
                    source="without forgetting a reward enters every later fill of its arm (Hu, Huang, Mehta, Alg. 1)",
                ),
                "forgetting not done: a reward enters every later fill of its arm with fresh Lap(1/eps), "
                "(#later fills) * eps, unbounded over an anytime horizon",
            )
        event = ParallelComposedDpEvent([dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / self.epsilon)])
        return Privacy(
            "round-vector",
            "central",
            event,
            Guarantee("pure", self.epsilon, source="Hu, Huang, Mehta, Thm 2"),
            None,
            "each round's reward enters one array sum released once with Lap(1/eps): parallel composition",
        )

    def _run(self, env, rng, size, horizon) -> Outcome:
        return (
            self._events(env, rng, size, horizon) if self.engine == "events" else self._rounds(env, rng, size, horizon)
        )

    def _init(self, env, rng, size):
        K, eps = env.n_arms, self.epsilon
        first = np.stack(
            [env.segment_sums(rng, np.full(size, j), np.full(size, j), np.ones(size, np.int64)) for j in range(K)],
            axis=1,
        )
        return first, first + rng.laplace(0.0, 1.0 / eps, (size, K))

    def _close_filled(self, rng, filled, rows, J, acc, r, cnt, releases, mu) -> None:
        """Close the arrays that just filled (rows[filled], arm J): advance r, release the noisy sum
        and the new mean (eq. 3, or without forgetting), restart the count."""
        if not filled.any():
            return
        fr, fj = rows[filled], J[filled]
        r[fr, fj] += 1
        noisy = acc[fr, fj] + rng.laplace(0.0, 1.0 / self.epsilon, fr.size)
        if self.forget:
            acc[fr, fj] = 0.0
            mean = noisy / np.ldexp(1.0, r[fr, fj])
        else:
            mean = noisy / (np.ldexp(1.0, r[fr, fj] + 1) - 1.0)
        releases[fr, fj, r[fr, fj]], mu[fr, fj] = noisy, mean
        cnt[fr, fj] = 0

    def _events(self, env, rng, size, horizon) -> Outcome:
        K, eps = env.n_arms, self.epsilon
        rows = np.arange(size)
        log = SegmentLog(size)
        for j in range(K):
            log.add(j, 1)
        levels = max(horizon.bit_length() + 1, 2)
        releases = np.full((size, K, levels), np.nan)
        first, mu = self._init(env, rng, size)
        releases[:, :, 0] = mu
        r = np.zeros((size, K), dtype=np.int64)
        cnt = np.zeros((size, K), dtype=np.int64)
        acc = np.zeros((size, K)) if self.forget else first
        t = np.full(size, K, dtype=np.int64)  # rounds played so far; the next round is t + 1
        while True:
            live = t < horizon
            if not live.any():
                break
            lam = np.ldexp(1.0, r)
            a, b = np.sqrt(3.0 / lam), 3.0 / (eps * lam)
            u0 = np.sqrt(np.log(t + 1.0))
            J = np.argmax(mu + a * u0[:, None] + b * (u0 * u0)[:, None], axis=1)
            cross = _first_crossing(
                mu - mu[rows, J][:, None], a - a[rows, J][:, None], b - b[rows, J][:, None], u0[:, None]
            )
            cross[rows, J] = np.inf
            ustar = cross.min(axis=1)
            with np.errstate(over="ignore"):
                t_cross = np.floor(np.exp(ustar * ustar) * (1 - _MARGIN))  # last round before the change
            run_len = np.where(np.isfinite(t_cross), np.minimum(t_cross, horizon) - t, horizon)
            run_len = np.maximum(run_len, 1).astype(np.int64)
            to_fill = (np.int64(1) << (r[rows, J] + 1)) - cnt[rows, J]
            length = np.where(live, np.minimum(np.minimum(run_len, to_fill), horizon - t), 0)
            acc[rows, J] += env.segment_sums(rng, J, t, length)
            cnt[rows, J] += length
            log.add(J, length)
            t += length
            filled = live & (length == to_fill)
            self._close_filled(rng, filled, rows, J, acc, r, cnt, releases, mu)
        return log.outcome(horizon, K, {"array_sums": releases})

    def _rounds(self, env, rng, size, horizon) -> Outcome:
        """Straightforward per-round simulation (reference for the event engine)."""
        K, eps = env.n_arms, self.epsilon
        rows = np.arange(size)
        draw = env.stream(rng, size)
        actions = np.empty((size, horizon), dtype=np.int16)
        actions[:, :K] = np.arange(K)
        first = np.stack([draw(j, np.full(size, j)) for j in range(K)], axis=1)
        levels = max(horizon.bit_length() + 1, 2)
        releases = np.full((size, K, levels), np.nan)
        mu = first + rng.laplace(0.0, 1.0 / eps, (size, K))
        releases[:, :, 0] = mu
        r = np.zeros((size, K), dtype=np.int64)
        cnt = np.zeros((size, K), dtype=np.int64)
        acc = np.zeros((size, K)) if self.forget else first.copy()
        for t in range(K, horizon):
            lam = np.ldexp(1.0, r)
            L = np.log(t + 1.0)
            J = np.argmax(mu + np.sqrt(3 * L / lam) + 3 * L / (eps * lam), axis=1)
            actions[:, t] = J
            acc[rows, J] += draw(t, J)
            cnt[rows, J] += 1
            filled = cnt[rows, J] == (np.int64(1) << (r[rows, J] + 1))
            self._close_filled(rng, filled, rows, J, acc, r, cnt, releases, mu)
        return Outcome.from_actions(actions, K, {"array_sums": releases})
