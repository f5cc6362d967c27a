"""`audit`: a confidence lower bound on the privacy loss of a black-box randomized target.

Procedure (sources in the package docstring):
1. Probe the target with two runs per input to check its outputs (rows, NaN, shapes) early.
2. Draw `samples` runs per input in seeded chunks; the first `selection_fraction` of them form the
   selection split, the rest the estimation split.
3. On the selection split, fit score functions (learned ones on its first half) and choose, per
   direction, one event {sign*score > t} for epsilon, one for mu and a grid of thresholds.
4. On the estimation split, count the runs in those events and apply one-sided Clopper-Pearson bounds
   with the error probability 1 - confidence split by Bonferroni over everything tested.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
from typing import Any, Callable

import dp_accounting
import numpy as np

import dpaudit
from dpaudit.audit.bounds import (
    best_case_epsilon,
    cp_lower,
    cp_upper,
    epsilon_from_rates,
    mu_from_rates,
    probit_cp_lower,
    probit_cp_upper,
)
from dpaudit.audit.execution import (
    CheckpointStore,
    OutputSpec,
    draw,
    estimation_chunk,
    fingerprint_data,
    normalise,
    open_runner,
    plan_chunks,
    progress_bar,
    run_chunks,
    selection_chunk,
)
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult
from dpaudit.audit.scores import Score, UserScore, fit_scores
from dpaudit.audit.selection import DIRECTIONS, EventPlan, choose_events
from dpaudit.validation import (
    check_delta,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
)

__all__ = ["audit"]

_PROBE_SIZE = 2
_MIN_SAMPLES = 10
_MAX_SAMPLES = 2**50


def _claim_curve(claim: Any, accountant: str) -> tuple[Any, Callable[[float], float], str]:
    """The claim as an object, its delta(epsilon) and its name.

    A DpEvent is composed once into a `dpaudit.accounting.Accountant`, so the event is prepared and
    validated once and every epsilon the curve test queries reuses that state; an accountant result
    with a `delta(epsilon)` method (Accountant, PureDp, RdpCurve, Zcdp, ...) or a callable is used as is.
    """
    if isinstance(claim, dp_accounting.DpEvent):
        from dpaudit.accounting import Accountant

        composed = Accountant(accountant).compose(claim)
        return composed, composed.delta, f"{claim!r} ({accountant})"
    if callable(getattr(claim, "delta", None)):
        return claim, claim.delta, repr(claim)
    if callable(claim):
        return claim, claim, getattr(claim, "__qualname__", repr(claim))
    raise ValueError(
        f"claim must be a dp_accounting.DpEvent, an object with a delta(epsilon) method or a callable "
        f"epsilon -> delta, got {claim!r}"
    )


def _claim_epsilon_of(claim: Any, claim_delta: float) -> float:
    if callable(getattr(claim, "epsilon", None)):
        return float(claim.epsilon(claim_delta))
    if isinstance(getattr(claim, "epsilon", None), (int, float)) and not callable(claim):
        return float(claim.epsilon)  # a pure-DP guarantee object holding its epsilon
    raise ValueError("claim_epsilon is required (it can only be derived from a DpEvent claim or an accountant "
                     "result with an epsilon(delta) method)")


def _samples_needed(claim_epsilon: float, delta: float, level: float, fraction: float) -> int:
    """Smallest samples per side for which a perfect distinguisher could exceed claim_epsilon."""
    n = 1
    while best_case_epsilon(n, delta, level) <= claim_epsilon:
        n *= 2
        if n > _MAX_SAMPLES:
            raise ValueError(f"claim_epsilon={claim_epsilon} cannot be exceeded by any audit of practical size "
                             f"(over {_MAX_SAMPLES} runs per side would be needed)")
    lo, hi = n // 2, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if best_case_epsilon(mid, delta, level) > claim_epsilon else (mid, hi)
    return max(_MIN_SAMPLES, math.ceil(hi / (1 - fraction)) + 1)


def _probe(target, d0, d1, seed: int, score: Score | None) -> OutputSpec:
    """Run the target twice per input and check that the outputs are usable and consistent."""
    root = np.random.SeedSequence(seed, spawn_key=(2**31,))  # disjoint from the chunk seeds
    rngs = [np.random.default_rng(s) for s in root.spawn(2)]
    out0, spec0 = normalise(target(d0, rngs[0], _PROBE_SIZE), _PROBE_SIZE, "d0")
    out1 = draw(target, d1, rngs[1], _PROBE_SIZE, spec0, "d1")
    if score is not None:
        score(out0)
        score(out1)
    return spec0


def _events_key(plans: dict[str, EventPlan], with_grid: bool) -> str:
    h = hashlib.sha256()
    for d in DIRECTIONS:
        p = plans[d]
        h.update(pickle.dumps((d, p.sign, p.thresholds(with_grid).tobytes(), type(p.score).__name__,
                               p.score.describe())))
        for arr in ("keys", "values", "weights"):
            if hasattr(p.score, arr):
                h.update(np.ascontiguousarray(getattr(p.score, arr)).tobytes())
    return h.hexdigest()


def _families(score: Score | None, sel0: np.ndarray, sel1: np.ndarray) -> list[tuple[Score, np.ndarray, np.ndarray]]:
    """Candidate scores with their values on the runs they are chosen on (see module docstring)."""
    if score is not None:
        return [(score, score(sel0), score(sel1))]
    half = len(sel0) // 2
    out = []
    for sc in fit_scores(sel0[:half], sel1[:half]):
        a, b = (sel0[half:], sel1[half:]) if sc.learned else (sel0, sel1)
        out.append((sc, sc(a), sc(b)))
    return out


def _direction_result(plan: EventPlan, first: np.ndarray, second: np.ndarray, n: int, delta: float,
                      level_eps: float, level_mu: float) -> DirectionResult:
    k1, k2 = int(first[0]), int(second[0])
    p1_low = float(cp_lower(k1, n, level_eps))
    p2_upp = float(cp_upper(k2, n, level_eps))
    m1, m2 = int(first[1]), int(second[1])
    mu_low = max(float(probit_cp_lower(m1, n, level_mu) - probit_cp_upper(m2, n, level_mu)), 0.0)
    if len(first) > 2:
        split, grid_first, grid_second = "estimation", first[2:] / n, second[2:] / n
    else:
        split = "selection"
        grid_first, grid_second = np.array(plan.selection_first), np.array(plan.selection_second)
    name = f"{'' if plan.sign > 0 else '-'}{plan.score.name}"
    return DirectionResult(
        direction=plan.direction,
        event=f"{name} > {plan.threshold!r}",
        score=json.dumps(plan.score.describe(), sort_keys=True),
        threshold=plan.threshold,
        nobs=n,
        count_first=k1,
        count_second=k2,
        p_first_lower=p1_low,
        p_second_upper=p2_upp,
        epsilon_lower=float(epsilon_from_rates(p1_low, p2_upp, delta)),
        epsilon_point=float(epsilon_from_rates(k1 / n, k2 / n, delta)),
        mu_threshold=plan.mu_threshold,
        mu_count_first=m1,
        mu_count_second=m2,
        mu_lower=mu_low,
        mu_point=float(mu_from_rates(m1 / n, m2 / n)),
        tradeoff_split=split,
        tradeoff_thresholds=plan.grid,
        tradeoff_alpha=tuple(float(v) for v in grid_second),
        tradeoff_beta=tuple(float(v) for v in 1.0 - grid_first),
    )


def _curve_check(delta_of: Callable[[float], float], name: str, rates: list[tuple[np.ndarray, np.ndarray]],
                 n: int, alpha: float, points: int, claim_epsilon: float) -> CurveCheck:
    """Test delta(eps) at every scanned event; Bonferroni over all events and both proportions.

    The claimed curve is evaluated once per grid epsilon (`points` calls in all, however many events
    were scanned); the lower bounds of all events are compared with it at once.
    """
    events = sum(len(a) for a, _ in rates)
    level = alpha / (2 * events)
    lows = np.concatenate([cp_lower(a, n, level) for a, _ in rates])
    upps = np.concatenate([cp_upper(b, n, level) for _, b in rates])
    with np.errstate(divide="ignore"):
        reach = np.where(lows > 0, np.log(np.maximum(lows, 1e-300)) - np.log(upps), 0.0)
    # Grid on (0, max]: accountants define delta(epsilon) for epsilon > 0 only.
    eps_grid = np.linspace(0.0, max(float(reach.max()), claim_epsilon), points + 1)[1:]
    claimed = np.array([float(delta_of(float(e))) for e in eps_grid])
    if not np.all((claimed >= 0) & (claimed <= 1)):
        raise ValueError(f"the claimed curve returned delta values outside [0, 1]: {claimed[(claimed < 0) | (claimed > 1)][:3]}")
    delta_low = np.maximum((lows[None, :] - np.exp(eps_grid)[:, None] * upps[None, :]).max(axis=1), 0.0)
    excess = delta_low - claimed
    i = int(np.argmax(excess))
    return CurveCheck(
        claim=name,
        alpha=alpha,
        events_tested=int(events),
        epsilons=tuple(float(e) for e in eps_grid),
        claimed_delta=tuple(float(c) for c in claimed),
        delta_lower=tuple(float(d) for d in delta_low),
        violation=bool(excess[i] > 0),
        worst_epsilon=float(eps_grid[i]),
        worst_excess=float(excess[i]),
    )


def audit(
    target: Callable[[Any, np.random.Generator, int], Any],
    d0: Any,
    d1: Any,
    claim_epsilon: float | None = None,
    claim_delta: float = 0.0,
    samples: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    *,
    claim: Any = None,
    claim_accountant: str = "best",
    score: Callable[[np.ndarray], Any] | None = None,
    selection_fraction: float = 0.1,
    grid_size: int = 32,
    curve_points: int = 64,
    executor: Any = None,
    workers: int | None = None,
    chunk_size: int = 250_000,
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
) -> AuditResult:
    """Lower-bound the privacy loss of `target` between neighbouring inputs `d0` and `d1`.

    target(data, rng, size) returns `size` runs (first axis) on `data`: scalars, integer vectors
    or real vectors.  `samples` runs per input; the result's `epsilon_lower` is a lower bound on
    epsilon at `claim_delta` valid with probability >= `confidence`, taking both directions.

    Options: `claim` a DpEvent (composed once into a dpaudit.accounting.Accountant), an accountant
    result with a delta(epsilon) method, or a callable eps -> delta,
    whose whole curve is tested at `curve_points` epsilons (half of 1 - confidence is then spent on
    it; `claim_accountant` names the dpaudit.accounting accountant for a DpEvent); `score` a function of
    a batch of outputs replacing the built-in score families; `selection_fraction` of the runs used
    to choose events; `grid_size` thresholds scanned for the trade-off curve; `executor` None (auto),
    "serial", "process" (with `workers`), a Dask scheduler address ("dask://host:port",
    "dask://tcp://host:port", "tcp://host:port", "inproc://..."; a client of its own is opened and
    closed), a distributed.Client (default or not) or a concurrent.futures.Executor; `chunk_size` runs per side per chunk (part of what the result
    depends on, like `seed`); `checkpoint_dir` to store finished chunks and resume; `progress`
    True/False/None (None: a bar when stderr is a terminal).
    """
    if not callable(target):
        raise ValueError(f"target must be callable as target(data, rng, size), got {target!r}")
    claim_delta = check_delta(claim_delta, "claim_delta")
    if claim is not None:
        claim_obj, delta_of, claim_name = _claim_curve(claim, claim_accountant)
        if claim_epsilon is None:
            claim_epsilon = _claim_epsilon_of(claim_obj, claim_delta)
    elif claim_epsilon is None:
        raise ValueError("claim_epsilon is required (or pass claim=<DpEvent>)")
    claim_epsilon = check_epsilon(claim_epsilon, "claim_epsilon")
    confidence = check_open_unit(confidence, "confidence")
    samples = check_int_at_least(samples, _MIN_SAMPLES, "samples")
    seed = check_int_at_least(seed, 0, "seed")
    selection_fraction = check_open_unit(selection_fraction, "selection_fraction")
    grid_size = check_int_at_least(grid_size, 2, "grid_size")
    curve_points = check_int_at_least(curve_points, 2, "curve_points")
    chunk_size = check_int_at_least(chunk_size, 1, "chunk_size")
    if workers is not None:
        workers = check_int_at_least(workers, 1, "workers")
    if score is not None and not callable(score):
        raise ValueError(f"score must be a function of a batch of outputs, got {score!r}")

    alpha = 1.0 - confidence
    alpha_point = alpha / 2 if claim is not None else alpha
    level_eps = alpha_point / 4  # two directions x two proportions
    level_mu = alpha / 4
    n_sel = max(4, round(selection_fraction * samples))
    n_est = samples - n_sel
    if n_est < 1 or best_case_epsilon(n_est, claim_delta, level_eps) <= claim_epsilon:
        need = _samples_needed(claim_epsilon, claim_delta, level_eps, selection_fraction)
        raise ValueError(
            f"samples={samples} is too few: even a perfectly distinguishing event could not give an epsilon "
            f"lower bound above claim_epsilon={claim_epsilon} at confidence={confidence}; use samples >= {need}"
        )

    user_score = UserScore(score) if score is not None else None
    spec = _probe(target, d0, d1, seed, user_score)

    chunks = plan_chunks(n_sel, n_est, chunk_size)
    seeds = np.random.SeedSequence(seed).spawn(len(chunks))
    sel_chunks = [c for c in chunks if c.phase == "selection"]
    est_chunks = [c for c in chunks if c.phase == "estimation"]
    store = None
    if checkpoint_dir is not None:
        manifest = {
            "format": 1, "seed": seed, "samples": samples, "chunk_size": chunk_size,
            "selection_fraction": selection_fraction, "confidence": confidence, "claim_delta": claim_delta,
            "target": getattr(target, "__qualname__", type(target).__qualname__),
            "data": fingerprint_data((d0, d1)), "score": None if score is None else user_score.describe()["function"],
        }
        store = CheckpointStore(checkpoint_dir, manifest)

    payload = (target, d0, d1, user_score)
    with open_runner(executor, workers, max(len(sel_chunks), len(est_chunks)), payload) as runner, \
            progress_bar(progress, 2 * samples) as bar:
        sel = run_chunks(
            runner, sel_chunks,
            lambda c: (selection_chunk, (target, d0, d1, seeds[c.index], c.size, spec)),
            store, "", bar,
        )
        sel0 = np.concatenate([sel[c.index][0] for c in sel_chunks])
        sel1 = np.concatenate([sel[c.index][1] for c in sel_chunks])
        plans = choose_events(_families(user_score, sel0, sel1), n_est, claim_delta, level_eps, grid_size)
        del sel, sel0, sel1
        # The grid is counted on the estimation split only when a claimed curve is tested on it;
        # otherwise the trade-off points are read off the selection split (cheaper chunks).
        with_grid = claim is not None
        plan_args = [(plans[d].score, plans[d].sign, plans[d].thresholds(with_grid)) for d in DIRECTIONS]
        est = run_chunks(
            runner, est_chunks,
            lambda c: (estimation_chunk, (target, d0, d1, seeds[c.index], c.size, spec, plan_args)),
            store, _events_key(plans, with_grid), bar,
        )
    counts = [sum(est[c.index][i] for c in est_chunks) for i in range(len(DIRECTIONS))]

    directions = []
    rates = []
    for i, d in enumerate(DIRECTIONS):
        first, second = (counts[i][0], counts[i][1]) if d == "d0>d1" else (counts[i][1], counts[i][0])
        directions.append(_direction_result(plans[d], first, second, n_est, claim_delta, level_eps, level_mu))
        rates.append((first[2:], second[2:]))
    best = max(directions, key=lambda r: r.epsilon_lower)
    best_mu = max(directions, key=lambda r: r.mu_lower)
    curve = None
    if claim is not None:
        curve = _curve_check(delta_of, claim_name, rates, n_est, alpha - alpha_point, curve_points, claim_epsilon)
    violation = best.epsilon_lower > claim_epsilon or (curve is not None and curve.violation)
    return AuditResult(
        epsilon_lower=best.epsilon_lower,
        verdict="violation" if violation else "consistent",
        claim_epsilon=claim_epsilon,
        claim_delta=claim_delta,
        confidence=confidence,
        samples=samples,
        seed=seed,
        chunk_size=chunk_size,
        selection_fraction=selection_fraction,
        selection_samples=n_sel,
        estimation_samples=n_est,
        output_shape=spec.row_shape,
        discrete=spec.discrete,
        direction=best.direction,
        directions=tuple(directions),
        mu_lower=best_mu.mu_lower,
        mu_point=best_mu.mu_point,
        curve=curve,
        version=dpaudit.__version__,
    )
