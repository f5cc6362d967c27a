"""Successive arm elimination in epochs: the engine, non-private SE and DP-SE (Sajed & Sheffet 2019).

Epoch e (1-based): every active arm is pulled l_e times in index order by fresh rounds; each
arm's epoch sum is released (privately or not) and only that epoch's data is used
("forgetting"); an arm is kept iff  mu_a + c_e >= max_{a'} (mu_{a'} - c_e). When one arm is
left it is played to the horizon. The final, incomplete epoch releases nothing.
Every run is an array row; the environment draws each epoch sum directly (binomial for
Bernoulli arms), which has the same distribution as adding the epoch's rewards one by one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import dp_accounting
import numpy as np

from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.mab.base import Algorithm
from dpaudit.algorithms.mab.outcome import Outcome, SegmentLog
from dpaudit.mechanisms.noise_source import DPAUDIT_NOISE, NoiseSource, check_noise_source
from dpaudit.privacy import NON_PRIVATE, Guarantee, Privacy
from dpaudit.validation import check_choice, check_epsilon, check_open_unit, check_positive_int

__all__ = ["DPSE", "DPSE_NOISES", "SuccessiveElimination", "eliminate"]

# release(rng, env, active (R,K) bool, start (R,K) int, length (R,) int, epoch) ->
#     (private sums (R,K), {name: (R,K) array of released statistics})
Release = Callable[..., tuple[np.ndarray, dict[str, np.ndarray]]]


def eliminate(
    env,
    rng: np.random.Generator,
    size: int,
    horizon: int,
    *,
    length: Callable[[int, np.ndarray], np.ndarray],
    release: Release,
    radius: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
) -> Outcome:
    """Run the epoch/elimination template for `size` runs (see module docstring).

    length(e, n_active) -> (R,) pulls per active arm in epoch e; radius(e, n_active, length)
    -> (R,) confidence radius. Released statistics come back stacked as (R, epochs, K) arrays
    with NaN where nothing was released.
    """
    K = env.n_arms
    active = np.ones((size, K), dtype=bool)
    t = np.zeros(size, dtype=np.int64)
    log = SegmentLog(size)
    stats: dict[str, list[np.ndarray]] = {}
    e = 0
    while True:
        n_active = active.sum(axis=1)
        running = (t < horizon) & (n_active > 1)
        if not running.any():
            break
        e += 1
        lens = np.where(running, np.asarray(length(e, n_active), dtype=np.int64), 0)
        order = np.cumsum(active, axis=1) - active  # position of each arm among the active ones
        start = t[:, None] + lens[:, None] * order
        play = np.where(active, np.clip(horizon - start, 0, lens[:, None]), 0)
        for a in range(K):
            log.add(a, play[:, a])
        end = t + lens * n_active
        complete = running & (end <= horizon)
        rel_active = active & complete[:, None]
        sums, released = release(rng, env, rel_active, start, lens, e)
        for name, value in released.items():
            stats.setdefault(name, []).append(np.where(rel_active, value, np.nan))
        mu = np.where(rel_active, sums / np.maximum(lens, 1)[:, None], -np.inf)
        c = np.asarray(radius(e, n_active, np.maximum(lens, 1)), dtype=float)[:, None]
        best_lcb = np.max(mu - c, axis=1, keepdims=True)
        keep = mu + c >= best_lcb
        active = np.where(complete[:, None], active & keep, active)
        t = np.where(running, np.minimum(end, horizon), t)
    survivor = np.argmax(active, axis=1)
    log.add(survivor, horizon - t)
    statistics = {name: np.stack(v, axis=1) for name, v in stats.items()}
    statistics["epochs"] = np.full(size, e)
    return log.outcome(horizon, K, statistics)


def _raw_sums(rng, env, active, start, lens) -> np.ndarray:
    """Each active arm's exact epoch sum (0 where inactive), drawn arm by arm for all runs."""
    out = np.zeros(active.shape)
    for a in range(active.shape[1]):
        rows = active[:, a]
        if rows.any():
            out[rows, a] = env.segment_sums(
                rng, np.full(rows.sum(), a), start[rows, a], lens[rows], np.flatnonzero(rows)
            )
    return out


def _beta(beta: float | None, horizon: int) -> float:
    return 1.0 / horizon if beta is None else beta


@dataclasses.dataclass(frozen=True)
class SuccessiveElimination(Algorithm):
    """Non-private successive elimination with doubling epochs l_e = 2^e (Even-Dar et al. 2006).

    Radius c_e = sqrt(log(4|S| e^2 / beta) / (2 l_e)): Chowdhury & Zhou's (ICLR 2023) batch template (its Lemma 2)
    without the noise terms; beta defaults to 1/T.
    """

    beta: float | None = None
    name = "se"

    def __post_init__(self) -> None:
        if self.beta is not None:
            check_open_unit(self.beta, "beta")

    def privacy(self, horizon: int) -> Privacy:
        """Non-private at every horizon."""
        check_positive_int(horizon, "horizon")
        return NON_PRIVATE

    def _run(self, env, rng, size, horizon) -> Outcome:
        beta = _beta(self.beta, horizon)

        def release(rng, env, active, start, lens, e):
            return _raw_sums(rng, env, active, start, lens), {}

        return eliminate(
            env,
            rng,
            size,
            horizon,
            length=lambda e, n: np.full(n.shape, 2**e),
            release=release,
            radius=lambda e, n, ell: np.sqrt(np.log(4 * n * e**2 / beta) / (2 * ell)),
        )


DPSE_NOISES = ("per-arm", "shared")


@dataclasses.dataclass(frozen=True)
class DPSE(Algorithm):
    """DP-SE (Sajed & Sheffet 2019), central pure epsilon-DP, as in Chowdhury & Zhou's (ICLR 2023) code (Sec. 7
    footnote 5; class DPSE).

    Epoch e: Delta_e = 2^-e,
      l_e = 1 + floor(max(32 log(8|S|e^2/beta)/Delta_e^2, 8 log(4|S|e^2/beta)/(eps Delta_e))),
      noisy sum S_a + Lap(1/eps) per arm, radius c_e = sqrt(log(8|S|e^2/beta)/(2 l_e)) + log(4|S|e^2/beta)/(l_e eps).
    Hu, Huang, Mehta's (arXiv:2102.07929) experiments (§6) use beta = 1/T (default), Chowdhury & Zhou's (ICLR 2023, Sec. 7) beta = 0.1.

    noise='shared' is the authors' public code (Chowdhury & Zhou (ICLR 2023), Sec. 7, footnote 5): one Laplace draw per
    epoch added to every arm's sum; it cancels in the comparisons, so the decisions are noise-free.
    noise_source: what draws (and adds) the Laplace noise (`dpaudit.mechanisms.noise_source`; default dpaudit's own
    sampler, a DP library's with `dpaudit.adapters.noise`).
    """

    epsilon: float = 1.0
    beta: float | None = None
    noise: str = "per-arm"
    noise_source: NoiseSource = DPAUDIT_NOISE
    name = "dp-se"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.beta is not None:
            check_open_unit(self.beta, "beta")
        check_choice(self.noise, DPSE_NOISES, "noise")
        check_noise_source(self.noise_source)

    def privacy(self, horizon: int) -> Privacy:
        """Pure epsilon at every horizon: each reward enters one released epoch sum (parallel composition)."""
        check_positive_int(horizon, "horizon")
        eps = self.epsilon
        claim = Guarantee(
            "pure", eps, source="Sajed & Sheffet 2019; Hu, Huang, Mehta, §6 and Chowdhury & Zhou 2023, §7 baselines"
        )
        if self.noise == "shared":
            return Privacy(
                "round-vector",
                "central",
                dp_accounting.NonPrivateDpEvent(),
                claim,
                Guarantee(
                    "pure",
                    math.inf,
                    source="one noise draw shared by all arms cancels in the elimination test (public code of Chowdhury & Zhou, ICLR 2023, Sec. 7 footnote 5)",
                ),
                "one Laplace draw shared by all arms cancels in the elimination test: decisions are a "
                "deterministic function of the rewards (authors' public code)",
            )
        event = ParallelComposedDpEvent([dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / eps)])
        return Privacy(
            "round-vector",
            "central",
            event,
            claim,
            None,
            "each reward enters one epoch sum with Lap(1/eps), sensitivity 1: parallel composition",
        )

    def _run(self, env, rng, size, horizon) -> Outcome:
        eps, beta = self.epsilon, _beta(self.beta, horizon)

        def length(e, n):
            d = 2.0**-e
            ell = np.maximum(32 * np.log(8 * n * e**2 / beta) / d**2, 8 * np.log(4 * n * e**2 / beta) / (eps * d))
            return 1 + np.floor(np.minimum(ell, 4 * horizon)).astype(np.int64)

        def release(rng, env, active, start, lens, e):
            raw = _raw_sums(rng, env, active, start, lens)
            if self.noise == "shared":
                noisy = raw + self.noise_source.laplace(rng, np.zeros((active.shape[0], 1)), 1.0 / eps)
            else:
                noisy = self.noise_source.laplace(rng, raw, 1.0 / eps)
            return noisy, {"noisy_sums": noisy}

        def radius(e, n, ell):
            return np.sqrt(np.log(8 * n * e**2 / beta) / (2 * ell)) + np.log(4 * n * e**2 / beta) / (ell * eps)

        return eliminate(env, rng, size, horizon, length=length, release=release, radius=radius)
