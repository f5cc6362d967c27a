"""ConSE and DP-ConSE: the two-arm adaptive experiment over M patient types (Li, Shi, Simchi-Levi (ICML 2024)).

Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design" (ICML 2024): Algorithm 1 (ConSE, §2)
and Algorithm 2 (DP-ConSE, App. A.4), as reconstructed by dpaudit from the paper

Phase 1 (units 1..⌊n/2⌋): per-type successive elimination in epochs e = 1, 2, ... of length R_e
(DP: a noisy length R^j_e = Lap+_ε(2 R_e)); at each epoch end the arm means of that epoch (DP: plus
Lap(2/(ε R_e)) each) eliminate arm i if max_a μ_a - μ_i > 2 h_e (DP: 2 h_e + 2 c_e); means restart.
Phase 2: an RCT of length T_min = max{log n, min_j f̂_j^{1-α}} per type (DP: T_j = Lap+_ε(T_min)),
whose mean difference is the CATE estimate (DP: plus Lap(2/(ε T_j))), then exploitation.

Every reward enters one epoch mean or one estimate; the run is exact, not a per-unit loop: arrivals are
grouped by type with a stable sort, epoch boundaries are cumulative lengths, and epoch means are bincounts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from dpaudit.algorithms.conse.environment import PatientData, PatientExperiment
from dpaudit.mechanisms import discrete_laplace, laplace
from dpaudit.validation import (
    check_bool,
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_positive,
    check_positive_int,
    check_probability,
)

__all__ = [
    "TARGET_OBSERVABLES",
    "ConSEParams",
    "ConSEResult",
    "conse_target",
    "epoch_schedule",
    "lap_plus",
    "rct_lengths_release",
    "run_conse",
]

TARGET_OBSERVABLES = ("estimates", "rct_lengths", "actions_after", "epoch_lengths", "epoch_means")
NO_ESTIMATE = -10.0  # audit targets report a type without a released estimate (T_j = 0) as this value


@dataclasses.dataclass(frozen=True)
class ConSEParams:
    """Parameters of ConSE (epsilon=None) and DP-ConSE (epsilon > 0); defaults are the paper's readings.

    R_e = max{a1 log(b1 n e^2)/Δ_e^2, a2 log(b2 n e^2)/(ε Δ_e)}, Δ_e = 2^-e, constants (a1, b1, a2, b2) =
    (32, 16, 8, 8) (Li, Shi, Simchi-Levi, App. A.4; without ε for ConSE); h_e = sqrt(log(b1 n e^2)/(2 R_e));
    c_e = c_factor log(b2 n e^2)/(ε R_e) with c_factor 2 (the listing; 1 is the proof of Lemma 3.1).
    length_centre: R^j_e = Lap+_ε(length_centre R_e) (dpaudit's reconstruction, default 2).
    tmin_floor "log_n" (listing) or "log_n_over_eps" (Thm 3.3-3.5). undecided: the phase-2 arm of a type
    whose phase 1 ended with both arms is a fair coin fixed per type (data-independent).
    reset_means False is the known bug "means not zeroed at the epoch end" (Li, Shi, Simchi-Levi (ICML 2024), Alg. 2
    line 16 "Zero means" forgotten; line 15 of Alg. 1): epoch e's mean of an arm is over all the type's phase-1 rewards of that arm up to epoch e,
    still with noise Lap(2/(ε R_e)), so a reward enters every later epoch's released mean.
    """

    alpha: float = 0.5
    epsilon: float | None = None
    constants: tuple[float, float, float, float] = (32.0, 16.0, 8.0, 8.0)
    c_factor: float = 2.0
    length_centre: float = 2.0
    tmin_floor: str = "log_n"
    reset_means: bool = True

    def __post_init__(self) -> None:
        check_probability(self.alpha, "alpha")
        if self.epsilon is not None:
            check_epsilon(self.epsilon)
        if len(self.constants) != 4:
            raise ValueError(f"constants must be (a1, b1, a2, b2), got {self.constants!r}")
        for c in self.constants:
            check_positive(c, "constants")
        check_positive(self.c_factor, "c_factor")
        check_positive(self.length_centre, "length_centre")
        check_choice(self.tmin_floor, ("log_n", "log_n_over_eps"), "tmin_floor")
        check_bool(self.reset_means, "reset_means")
        if self.tmin_floor == "log_n_over_eps" and self.epsilon is None:
            raise ValueError("tmin_floor='log_n_over_eps' needs epsilon")

    @property
    def private(self) -> bool:
        """Whether this is DP-ConSE (an epsilon is set) rather than ConSE."""
        return self.epsilon is not None

    @property
    def dp_epsilon(self) -> float:
        """epsilon of DP-ConSE; ValueError for ConSE (epsilon None)."""
        if self.epsilon is None:
            raise ValueError("ConSE (epsilon=None) is not private: it has no epsilon")
        return self.epsilon


def epoch_schedule(params: ConSEParams, n: int, epochs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R_e, h_e, c_e) for e = 1..epochs (Li, Shi, Simchi-Levi, §2 and App. A.4; c_e = 0 for ConSE)."""
    a1, b1, a2, b2 = params.constants
    e = np.arange(1, epochs + 1, dtype=float)
    gap = 2.0**-e
    eps = params.dp_epsilon if params.private else 1.0
    r = np.maximum(a1 * np.log(b1 * n * e**2) / gap**2, a2 * np.log(b2 * n * e**2) / (eps * gap))
    h = np.sqrt(np.log(b1 * n * e**2) / (2 * r))
    c = params.c_factor * np.log(b2 * n * e**2) / (eps * r) if params.private else np.zeros_like(r)
    return r, h, c


def lap_plus(rng: np.random.Generator, epsilon: float, centre: np.ndarray | float, size: tuple[int, ...]) -> np.ndarray:
    """Lap+_ε(m): two-sided geometric with P ∝ exp(-(ε/2)|k|) around ⌈m⌉, renormalised to {0, 1, ...}.

    Li, Shi, Simchi-Levi, App. A.4; exact by rejection of negative draws (renormalised truncation, not
    clamping), using the exact discrete Laplace sampler of dpaudit.mechanisms with scale 2/ε.
    """
    centre = np.broadcast_to(np.ceil(np.asarray(centre, dtype=float)), size).astype(np.int64)
    out = centre + np.asarray(discrete_laplace(rng, 2.0 / epsilon, size), dtype=np.int64)
    bad = out < 0
    while bad.any():
        out[bad] = centre[bad] + np.asarray(discrete_laplace(rng, 2.0 / epsilon, (int(bad.sum()),)), dtype=np.int64)
        bad = out < 0
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class ConSEResult:
    """Output of `run_conse` over R runs of n units and M types.

    actions (R, n) in {0, 1}; regret (R, n) cumulative pseudo-regret Σ_s |Δ(x_s)| 1{a_s ≠ a*(x_s)};
    estimates (R, M) the released Δ̂(X_j) (NaN where T_j = 0); rct_lengths (R, M) T_j; rct_counts (R, M, 2)
    and rct_means / rct_vars (R, M, 2) of each arm in the RCT window (raw, not private: for inference);
    t_min (R,); kept_arm (R, M) the phase-1 winner (-1: undecided). With release=True also the
    phase-1 releases: epoch_lengths (R, M, E) R^j_e, epoch_means (R, M, E, 2) the (noisy) means, and
    epoch_done (R, M, E) whether epoch e ended inside phase 1.
    """

    params: ConSEParams
    actions: np.ndarray
    regret: np.ndarray
    estimates: np.ndarray
    rct_lengths: np.ndarray
    rct_counts: np.ndarray
    rct_means: np.ndarray
    rct_vars: np.ndarray
    t_min: np.ndarray
    kept_arm: np.ndarray
    released: dict[str, np.ndarray] | None = None

    def squared_errors(self, cate: np.ndarray) -> np.ndarray:
        """(Δ̂(X_j) - Δ(X_j))^2, shape (R, M); NaN where no estimate was released."""
        return (self.estimates - np.asarray(cate)[None, :]) ** 2

    def max_mse(self, cate: np.ndarray) -> float:
        """max_j E[(Δ̂(X_j) - Δ(X_j))^2] over the runs (the paper's error e(n, Δ̂), Li, Shi, Simchi-Levi, Eq. 1)."""
        return float(np.nanmax(np.nanmean(self.squared_errors(cate), axis=0)))


def _ranks(types: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rank of each unit among the earlier units of its type, plus the sort order, group starts, counts.

    Runs that all share one arrival sequence (audits repeat one dataset) are ranked once and broadcast.
    """
    runs, n = types.shape
    if runs > 1 and bool((types == types[:1]).all()):
        return tuple(np.repeat(x, runs, axis=0) for x in _ranks(types[:1], m))  # type: ignore[return-value]
    order = np.argsort(types, axis=1, kind="stable")
    counts = np.zeros((runs, m), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(runs), n), types.ravel()), 1)
    starts = np.cumsum(counts, axis=1) - counts
    sorted_types = np.take_along_axis(types, order, axis=1)
    rank_sorted = np.arange(n)[None, :] - np.take_along_axis(starts, sorted_types, axis=1)
    ranks = np.empty_like(rank_sorted)
    np.put_along_axis(ranks, order, rank_sorted, axis=1)
    return ranks, order, starts, counts


def _group_stats(key: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, means (0 where empty) and population variances of `values` grouped by integer `key`."""
    cnt = np.bincount(key, minlength=size).astype(float)
    s1 = np.bincount(key, weights=values, minlength=size)
    s2 = np.bincount(key, weights=values * values, minlength=size)
    safe = np.maximum(cnt, 1.0)
    mean = s1 / safe
    var = np.maximum(s2 / safe - mean**2, 0.0)
    return cnt, mean, var


@dataclasses.dataclass(frozen=True)
class _Phase1Epochs:
    """Phase 1's epoch geometry per (run, type): noisy lengths, their ends, which ended within phase 1,
    and the epoch index of every phase-1 arrival."""

    r_e: np.ndarray
    h_e: np.ndarray
    c_e: np.ndarray
    lengths: np.ndarray
    done: np.ndarray
    epoch_of_arrival: np.ndarray

    @property
    def count(self) -> int:
        return self.r_e.size


def _phase1_epochs(params: ConSEParams, types1: np.ndarray, n: int, m: int, rng: np.random.Generator) -> _Phase1Epochs:
    """Epoch lengths R_e (Lap+_ε(R_e) for DP-ConSE, Alg. 2 line 5), enough epochs to cover phase 1."""
    runs, half = types1.shape
    _, order1, starts1, counts1 = _ranks(types1, m)
    epochs = 1
    while np.ceil(epoch_schedule(params, n, epochs)[0]).sum() < half + 1:
        epochs += 1
    epochs += 1
    while True:
        r_e, h_e, c_e = epoch_schedule(params, n, epochs)
        if params.private:
            lengths = lap_plus(rng, params.dp_epsilon, params.length_centre * r_e[None, None, :], (runs, m, epochs))
        else:
            lengths = np.broadcast_to(np.ceil(r_e).astype(np.int64), (runs, m, epochs)).copy()
        lengths = np.maximum(lengths, 1)
        bounds = np.cumsum(lengths, axis=2)
        if bounds[:, :, -1].min() > half:
            break
        epochs += 2
    done = bounds <= counts1[:, :, None]  # epoch e ended within phase 1
    # epoch index of each phase-1 arrival: number of epoch ends at or before its rank (sorted layout)
    marker = np.zeros((runs, half + 1), dtype=np.int64)
    inside = bounds < counts1[:, :, None]
    r_idx, j_idx, _ = np.nonzero(inside)
    pos = starts1[r_idx, j_idx] + bounds[inside]
    np.add.at(marker, (r_idx, pos), 1)
    # reset the running count at the first arrival of the next type's group
    np.add.at(marker, (np.repeat(np.arange(runs), m), (starts1 + counts1).ravel()), -inside.sum(axis=2).ravel())
    epoch_sorted = np.cumsum(marker, axis=1)[:, :half]
    epoch1 = np.empty_like(epoch_sorted)
    np.put_along_axis(epoch1, order1, epoch_sorted, axis=1)
    return _Phase1Epochs(r_e, h_e, c_e, lengths, done, epoch1)


def _phase1_means(
    params: ConSEParams,
    ep: _Phase1Epochs,
    types1: np.ndarray,
    coins1: np.ndarray,
    rewards1: np.ndarray,
    m: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Per (run, type, epoch, arm) counts and epoch means, plus Lap(2/(ε R_e)) for DP-ConSE (Alg. 2 line 9)."""
    runs = types1.shape[0]
    rows = np.arange(runs)[:, None]
    key = ((rows * m + types1) * ep.count + ep.epoch_of_arrival) * 2 + coins1
    cnt, mean, _ = _group_stats(key.ravel(), rewards1.ravel(), runs * m * ep.count * 2)
    cnt = cnt.reshape(runs, m, ep.count, 2)
    means = mean.reshape(runs, m, ep.count, 2)
    if not params.reset_means:  # the variant whose means run over all epochs so far (not zeroed)
        means = np.cumsum(cnt * means, axis=2) / np.maximum(np.cumsum(cnt, axis=2), 1.0)
    if params.private:
        means = means + laplace(rng, 1.0, means.shape) * (2.0 / (params.epsilon * ep.r_e))[None, None, :, None]
    return cnt, means


def _eliminate(ep: _Phase1Epochs, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Successive elimination over the epochs ended in phase 1: (kept arm or -1, last epoch of fair coins)."""
    runs, m = means.shape[:2]
    threshold = 2 * ep.h_e + 2 * ep.c_e
    active = np.ones((runs, m), dtype=bool)
    kept = np.full((runs, m), -1, dtype=np.int64)
    last_coin_epoch = np.full((runs, m), ep.count, dtype=np.int64)
    for e in range(ep.count):
        diff = means[:, :, e, 1] - means[:, :, e, 0]
        elim = active & ep.done[:, :, e] & (np.abs(diff) > threshold[e])
        kept[elim] = (diff[elim] > 0).astype(np.int64)
        last_coin_epoch[elim] = e
        active &= ~elim
    return kept, last_coin_epoch


def _rct_lengths(
    params: ConSEParams, counts1: np.ndarray, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(T_j, T_min): T_min = max{floor, min_j f̂_j^(1-α)}, T_j = Lap+_ε(T_min) for DP-ConSE (Alg. 2 line 13)."""
    runs, m = counts1.shape
    floor = math.log(n) / params.dp_epsilon if params.tmin_floor == "log_n_over_eps" else math.log(n)
    t_min = np.maximum(floor, np.min(counts1.astype(float) ** (1.0 - params.alpha), axis=1))
    if params.private:
        return lap_plus(rng, params.dp_epsilon, t_min[:, None], (runs, m)), t_min
    return np.broadcast_to(np.ceil(t_min)[:, None], (runs, m)).astype(np.int64).copy(), t_min


def rct_lengths_release(
    params: ConSEParams, data: PatientData, num_types: int, rng: np.random.Generator, size: int | None = None
) -> np.ndarray:
    """The RCT lengths T_j (R, M) that `run_conse` draws on every run of `data`, without the rest of the run.

    With `size`, `data` must hold one run and the result is `size` independent draws on it, (size, M).
    T_j depends on the data only through the phase-1 type counts f̂_j (Li, Shi, Simchi-Levi, ICML 2024,
    Alg. 2 lines 21-29), so this is the same law (the same `_rct_lengths` on the same counts) at a
    fraction of the cost: the white-box release that audits of the lengths need.
    """
    if data.types.max(initial=0) >= num_types:
        raise ValueError(f"data.types must be < num_types {num_types}")
    n = data.horizon
    if n < 2:
        raise ValueError(f"horizon must be at least 2, got {n}")
    counts1 = _ranks(data.types[:, : n // 2], num_types)[3]
    if size is not None:
        size = check_positive_int(size, "size")
        if counts1.shape[0] != 1:
            raise ValueError(f"size needs data with one run, got {counts1.shape[0]}")
        counts1 = np.broadcast_to(counts1, (int(size), num_types))
    return _rct_lengths(params, counts1, n, rng)[0]


def run_conse(
    env: PatientExperiment,
    data: PatientData,
    params: ConSEParams,
    rng: np.random.Generator,
    release: bool = False,
) -> ConSEResult:
    """Run ConSE (params.epsilon None) or DP-ConSE on every run of `data` (Li, Shi, Simchi-Levi, ICML 2024,
    Algorithms 1 and 2).

    Coins, lengths and noises come from `rng`; the output distribution equals that of the per-unit
    listing with these defaults: epochs start at e = 1; μ reset at phase 2; epochs of noisy length 0
    last one arrival, as line 9 tests r_j ≥ R^j_e after incrementing r_j; types with fewer than T_j
    phase-2 arrivals output their estimate at t = n from the available samples.
    """
    m = env.num_types
    if data.types.max(initial=0) >= m:
        raise ValueError(f"data.types must be < num_types {m}")
    runs, n = data.types.shape
    if n < 2:
        raise ValueError(f"horizon must be at least 2, got {n}")
    half = n // 2
    eps = params.epsilon
    coins = (rng.random((runs, n)) < 0.5).astype(np.int64)
    rewards = np.where(coins == 1, data.y1, data.y0)
    rows = np.arange(runs)[:, None]

    # ---- phase 1: epochs per (run, type), noisy means, elimination
    types1 = data.types[:, :half]
    counts1 = _ranks(types1, m)[3]
    ep = _phase1_epochs(params, types1, n, m, rng)
    cnt, means = _phase1_means(params, ep, types1, coins[:, :half], rewards[:, :half], m, rng)
    kept, last_coin_epoch = _eliminate(ep, means)
    exploring = ep.epoch_of_arrival <= np.take_along_axis(last_coin_epoch, types1, axis=1)
    actions1 = np.where(exploring, coins[:, :half], np.take_along_axis(kept, types1, axis=1))

    # ---- phase 2: RCT of length T_j, then the phase-1 arm (a fixed fair coin if undecided)
    t_len, t_min = _rct_lengths(params, counts1, n, rng)
    undecided = rng.integers(0, 2, size=(runs, m))
    final_arm = np.where(kept >= 0, kept, undecided)
    types2 = data.types[:, half:]
    ranks2, _, _, _ = _ranks(types2, m)
    in_rct = ranks2 < np.take_along_axis(t_len, types2, axis=1)
    a2 = coins[:, half:]
    actions2 = np.where(in_rct, a2, np.take_along_axis(final_arm, types2, axis=1))
    key2 = ((rows * m + types2) * 2 + a2)[in_rct]
    rcnt, rmean, rvar = _group_stats(key2, rewards[:, half:][in_rct], runs * m * 2)
    rct_counts = rcnt.reshape(runs, m, 2)
    rct_means = rmean.reshape(runs, m, 2)
    rct_vars = rvar.reshape(runs, m, 2)
    estimates = rct_means[:, :, 1] - rct_means[:, :, 0]
    if params.private:
        scale = 2.0 / (eps * np.maximum(t_len, 1))
        estimates = estimates + laplace(rng, 1.0, estimates.shape) * scale
    estimates = np.where(t_len > 0, estimates, np.nan)

    actions = np.concatenate([actions1, actions2], axis=1)
    cate = env.cate
    best = (cate > 0).astype(np.int64)
    per_unit = np.abs(cate)[data.types] * (actions != best[data.types])
    released = None
    if release:
        released = {
            "epoch_lengths": ep.lengths,
            "epoch_means": means,
            "epoch_counts": cnt,
            "epoch_done": ep.done,
            "rct_lengths": t_len,
            "estimates": estimates,
        }
    return ConSEResult(
        params=params,
        actions=actions.astype(np.int8),
        regret=np.cumsum(per_unit, axis=1),
        estimates=estimates,
        rct_lengths=t_len,
        rct_counts=rct_counts,
        rct_means=rct_means,
        rct_vars=rct_vars,
        t_min=t_min,
        kept_arm=kept,
        released=released,
    )


def conse_target(
    env: PatientExperiment, params: ConSEParams, observable: str = "estimates", after: int = 0
) -> Callable[[PatientData, np.random.Generator, int], np.ndarray]:
    """An audit target `target(data, rng, size) -> array` with first axis `size`.

    data: a `PatientData` whose first run is the dataset; each call runs `size` independent copies of
    the algorithm on it. observable: "estimates" (the released Δ̂ vector, NO_ESTIMATE where T_j = 0),
    "rct_lengths" (T_1..T_M), "actions_after" (a_{after+1..n}, the ADP observable of Def. 1.3 for a unit
    at index `after`, 0-based), "epoch_lengths" / "epoch_means" (white-box phase-1 releases, flattened).
    """
    check_choice(observable, TARGET_OBSERVABLES, "observable")
    after = check_int_at_least(after, 0, "after")

    def target(data: PatientData, rng: np.random.Generator, size: int) -> np.ndarray:
        size = check_positive_int(size, "size")
        if after >= data.horizon:
            raise ValueError(f"after must be < horizon {data.horizon}, got {after}")
        rep = PatientData(
            np.repeat(data.types[:1], size, axis=0),
            np.repeat(data.y0[:1], size, axis=0),
            np.repeat(data.y1[:1], size, axis=0),
        )
        res = run_conse(env, rep, params, rng, release=observable.startswith("epoch"))
        if observable == "estimates":
            return np.where(np.isnan(res.estimates), NO_ESTIMATE, res.estimates)
        if observable == "rct_lengths":
            return res.rct_lengths
        if observable == "actions_after":
            return res.actions[:, after + 1 :]
        assert res.released is not None  # run with release=True for the epoch observables
        return np.asarray(res.released[observable], dtype=float).reshape(size, -1)

    target.__name__ = f"{'dp-conse' if params.private else 'conse'}_{observable}"
    return target
