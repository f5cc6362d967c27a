"""From the estimation counts to the result: each direction's bounds, the claimed-curve test and the verdict.

Each direction's epsilon events (its lead and up to two runner-ups) are tested at Bonferroni shares of
its level with one-sided Clopper-Pearson bounds on the estimation split (or with the thinned ratio test,
`dpaudit.audit.ratio`); the largest bound is reported, valid by the union bound.  With a claimed curve every
scanned threshold is tested against it (`curve_check`).  Sources: docs/concepts/auditor.md.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import dpaudit
from dpaudit.audit.bounds import cp_lower, cp_upper, epsilon_from_rates, mu_from_rates, probit_cp_lower, probit_cp_upper
from dpaudit.audit.describe import describe_target
from dpaudit.audit.event_codec import encode_event
from dpaudit.audit.options import AuditOptions, Plan, claimed_deltas
from dpaudit.audit.outputs import OutputSpec
from dpaudit.audit.ratio import log_ratio_lower, ratio_applies
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult
from dpaudit.audit.selection import DIRECTIONS, EventPlan, direction_levels

__all__ = [
    "LEAD_SHARE",
    "THINNING_STREAM",
    "TWIN_SHARE",
    "Counts",
    "assemble",
    "curve_check",
    "direction_result",
    "event_name",
]

#: With alternates, the lead event's share of its direction's level (`direction_result`).  benchmarks/peers/
#: at 10^6 runs, true bound of the events tested, mean over 6 selection draws (the lead alone / the lead
#: at 1/2 / at 3/4 with two alternates; benchmarks/selection_draws.py): SVT3 0.096 / 0.107 / 0.106,
#: NumericalSVT 0.0266 / 0.0263 / 0.0263, PrefixSum (where the lead is right) 0.768 / 0.761 / 0.764; on
#: the benchmark's seeds 0/1 the larger share keeps Rappor above StatDP's 0.2416 (1/2: 0.241 on seed 1).
LEAD_SHARE = 0.75
#: The lead's twin's share of the lead's level (`dpaudit.audit.selection`, `direction_result`).  benchmarks/
#: peers/ at 10^7 runs, seeds 0-2, the rows whose bounds a twin moves (the twin's share 1/2 / 1/3 / 1/4):
#: SVT6 on seed 1 0.3187 -> 0.3560 / 0.3512 / 0.3478 and on seed 2 0.2999 -> 0.3158 / 0.3110 / 0.3077, where
#: the twin is the single most extreme outcome; NumericalSVT 0.0446 -> 0.0437 / 0.0441 / 0.0442 (seed 1),
#: SVT3 0.2170 -> 0.2131 / 0.2147 / 0.2154 (seed 1), SVT2 0.0636 -> 0.0626 / 0.0630 / 0.0632 (seed 2), where
#: the lead was right and tested at a smaller level.
TWIN_SHARE = 1 / 3
#: The seed stream (`spawn_key`) of the ratio test's thinning draws (`dpaudit.audit.ratio`, `assemble`):
#: disjoint from the runs' (() and 2**31 + 1, `dpaudit.audit.auditor`), the probe's (2**31) and the
#: time box's stages' (2**31 + 2, `dpaudit.audit.anytime`).
THINNING_STREAM = 2**31 + 3


@dataclass(frozen=True)
class Counts:
    """What the estimation counted: the events chosen per direction (`plans`; fold A's when cross-fitted,
    with fold B's in `partner`), the counts of the runs in them (`counts`, in the order of
    `dpaudit.audit.auditor.plan_args`) and the runs per side they were counted on (`nobs`)."""

    plans: dict[str, EventPlan]
    counts: list[np.ndarray]
    partner: dict[str, EventPlan] | None
    nobs: int


def direction_result(
    plan: EventPlan,
    first: np.ndarray,
    second: np.ndarray,
    n: int,
    delta: float,
    level_eps: float,
    level_mu: float,
    alternates: tuple[tuple[EventPlan, int, int], ...] = (),
    rng: np.random.Generator | None = None,
) -> DirectionResult:
    """The bounds of one direction.  Its epsilon events are the lead's and `alternates` (plan, count
    of the first input, of the second); with alternates the lead is tested at level_eps * `LEAD_SHARE`
    and each alternate at an equal part of the rest.  A twin of the lead (`EventPlan.twin`, first among the
    alternates) takes `TWIN_SHARE` of the lead's part (of all of level_eps when there is no other
    alternate).  The levels add up to level_eps, so by the union bound the largest of the bounds is valid
    at level_eps (which events are tested depends on the selection runs only).  An event with
    `EventPlan.ratio` is bounded by the thinned ratio test at twice its level (the level of its two
    one-sided bounds; `dpaudit.audit.ratio`), thinned by `rng` (a fixed seed when None), unless twice the
    level exceeds 1/2 (a confidence below about 1/2).  The mu and
    trade-off fields are the lead's."""
    if rng is None:
        rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(THINNING_STREAM,)))
    events = ((plan, int(first[0]), int(second[0])), *alternates)
    twins = sum(1 for a, _, _ in alternates if a.twin)
    others = len(alternates) - twins
    lead = level_eps * (LEAD_SHARE if others else 1.0)
    levels = [lead * (1 - TWIN_SHARE * twins)] + [lead * TWIN_SHARE] * twins
    levels += [level_eps * (1 - LEAD_SHARE) / max(others, 1)] * others
    bounds = []
    thinned: list[tuple[int, ...] | None] = []  # None: two one-sided bounds; else the thinned counts
    for (event, c1, c2), level in zip(events, levels):
        low, upp = float(cp_lower(c1, n, level)), float(cp_upper(c2, n, level))
        eps = float(epsilon_from_rates(low, upp, delta))
        kept: tuple[int, ...] | None = None
        if event.ratio and ratio_applies(delta, n, level):
            by_ratio, t = log_ratio_lower(c1, c2, n, 2 * level, rng)
            eps = max(by_ratio, 0.0)
            kept = () if t is None else (t.nobs_first, t.count_first, t.nobs_second, t.count_second)
        bounds.append((eps, low, upp))
        thinned.append(kept)
    best = max(range(len(events)), key=lambda i: (bounds[i][0], -i))  # the lead on a tie
    chosen, k1, k2 = events[best]
    _, p1_low, p2_upp = bounds[best]
    chosen_kept = thinned[best]
    level = levels[best]
    m1, m2 = int(first[1]), int(second[1])
    mu_low = max(float(probit_cp_lower(m1, n, level_mu) - probit_cp_upper(m2, n, level_mu)), 0.0)
    if len(first) > 2:
        split, grid_first, grid_second = "estimation", first[2:] / n, second[2:] / n
    else:
        split = "selection"
        grid_first, grid_second = np.array(plan.selection_first), np.array(plan.selection_second)
    return DirectionResult(
        direction=plan.direction,
        event=event_name(chosen),
        score=json.dumps(chosen.score.describe(), sort_keys=True),
        threshold=chosen.threshold,
        nobs=n,
        count_first=k1,
        count_second=k2,
        p_first_lower=p1_low,
        p_second_upper=p2_upp,
        epsilon_lower=bounds[best][0],
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
        level=float(level),
        events_tested=len(events),
        lead_event=event_name(plan),
        event_state=_event_state(chosen),
        bound="clopper-pearson" if chosen_kept is None else "ratio",
        thinned=() if chosen_kept is None else chosen_kept,
    )


def event_name(plan: EventPlan) -> str:
    """The event's label, e.g. "score > 0.5" ("-score > 0.5" for the reversed sign)."""
    return f"{'' if plan.sign > 0 else '-'}{plan.score.name} > {plan.threshold!r}"


def _event_state(plan: EventPlan) -> str:
    """The event of `plan` as JSON (`dpaudit.audit.event_codec`); "" for a score the codec does not know."""
    try:
        return encode_event(plan.score, plan.sign, plan.threshold, plan.direction)
    except TypeError:
        return ""


def curve_check(
    delta_of: Callable[[float], float],
    name: str,
    rates: list[tuple[np.ndarray, np.ndarray]],
    n: int,
    alpha: float,
    points: int,
    claim_epsilon: float,
) -> CurveCheck:
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
    claimed = claimed_deltas(delta_of, eps_grid)
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


def assemble(target: Any, o: AuditOptions, p: Plan, spec: OutputSpec, counted: Counts) -> AuditResult:
    """Bounds from the counts, the verdict and the result record (`p`: the plan as the run ended,
    its split sizes extended when the selection was)."""
    plans, counts, partner, nobs = counted.plans, counted.counts, counted.partner, counted.nobs
    directions = []
    rates = []
    # Cross-fitted: two folds may lead in different directions, so the split stays even.
    levels = (
        direction_levels(plans, p.alpha_point, o.direction_share)
        if partner is None
        else dict.fromkeys(DIRECTIONS, p.level_eps)
    )
    thinning = np.random.default_rng(np.random.SeedSequence(o.seed, spawn_key=(THINNING_STREAM,)))
    at = len(DIRECTIONS)  # counts of the alternates follow the directions' (`dpaudit.audit.auditor.plan_args`)
    for i, d in enumerate(DIRECTIONS):
        first, second = (counts[i][0], counts[i][1]) if d == "d0>d1" else (counts[i][1], counts[i][0])
        alternates = []
        for a in plans[d].alternates:
            c = counts[at][:, 0]
            alternates.append((a, int(c[0]), int(c[1])) if d == "d0>d1" else (a, int(c[1]), int(c[0])))
            at += 1
        if partner is not None:
            # Cross-fitted counts are sums of two binomials: Hoeffding's comparison covers every count
            # except 1 (lower bounds) and nobs - 1 (upper bounds), taken as 0 and nobs (docs/concepts/auditor.md).
            first = np.where(first <= 1, 0, first)
            second = np.where(second >= nobs - 1, nobs, second)
        r = direction_result(
            plans[d], first, second, nobs, o.claim_delta, levels[d], p.level_mu, tuple(alternates), thinning
        )
        if partner is not None:
            q = partner[d]
            other = f"{'' if q.sign > 0 else '-'}{q.score.name} > {q.threshold!r}"
            r = dataclasses.replace(
                r, event=f"cross-fitted: {r.event} (fold A) + {other} (fold B)", lead_event="", event_state=""
            )
        directions.append(r)
        rates.append((first[2:], second[2:]))
    best = max(directions, key=lambda r: r.epsilon_lower)
    best_mu = max(directions, key=lambda r: r.mu_lower)
    curve = None
    if p.delta_of is not None:
        curve = curve_check(
            p.delta_of, p.claim_name, rates, p.n_est, p.alpha - p.alpha_point, o.curve_points, o.claim_epsilon
        )
    violation = best.epsilon_lower > o.claim_epsilon or (curve is not None and curve.violation)
    return AuditResult(
        epsilon_lower=best.epsilon_lower,
        verdict="violation" if violation else "consistent",
        claim_epsilon=o.claim_epsilon,
        claim_delta=o.claim_delta,
        confidence=o.confidence,
        samples=o.samples,
        seed=o.seed,
        chunk_size=o.chunk_size,
        selection_fraction=o.selection_fraction,
        selection_samples=p.n_sel,
        estimation_samples=nobs,  # cross-fitted: every run is counted (by the other fold's event)
        output_shape=spec.row_shape,
        discrete=spec.discrete,
        direction=best.direction,
        directions=tuple(directions),
        mu_lower=best_mu.mu_lower,
        mu_point=best_mu.mu_point,
        curve=curve,
        version=dpaudit.__version__,
        target=describe_target(target, o.target_name),
    )
