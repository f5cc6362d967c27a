"""Choosing the distinguishing events on the selection split.

Only the selection runs are looked at here, so any search is free: the estimation split later tests
the few chosen events with Clopper-Pearson bounds (or the thinned ratio test, `dpaudit.audit.ratio`, where it
predicts more) and a Bonferroni correction over exactly those.
The objective is *lower-bound-like*, not the point estimate: it predicts the bound the estimation
split will give at its size, with the selection's own sampling error taken off (two standard
errors, Wilson), so rare events that look extreme by chance lose to well-populated ones.  When no
event of a direction predicts a positive bound that way (a small loss on a short selection split),
the direction's event is chosen on the prediction with one standard error taken off instead: among
events that all predict nothing the argmax is the event of (almost) all runs, which can give no
bound at all.  When even that predicts no positive epsilon (a loss far below the claimed delta's reach:
total variation below delta), the family and the sign are chosen on the predicted Gaussian-DP mu bound,
the only one the event can give.  For outputs with a monotone likelihood ratio one threshold near the best
one is all that is needed.

The charge is a hedge against a lucky argmax, and it costs rare events most: a single outcome of an SVT that
the estimation split would bound best loses to a union of outcomes five to ten times as common.  So in each
direction, the best event by the uncharged prediction among the scores with few candidate events (or
that estimate the log ratio) is tested beside the lead when it is another event (the lead's *twin*,
`EventPlan.twin`), at a third of the lead's level (`dpaudit.audit.verdict.direction_result`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from dpaudit.audit.bounds import wilson_lower, wilson_upper
from dpaudit.audit.ratio import ratio_applies, thinning_mean
from dpaudit.audit.scores import Score

__all__ = ["DIRECTIONS", "EventPlan", "choose_events", "direction_levels"]

#: The two directions: "d0>d1" looks for events more likely under d0 than under d1, and back.
DIRECTIONS = ("d0>d1", "d1>d0")
_UNIFORM_LEVELS = 2048
_TAIL_LEVELS = 256
#: Standard errors of the selection estimate taken off each candidate (guards the argmax against noise).
_SELECTION_Z = 2.0
#: ... and when a score takes at most `_FEW_CANDIDATES` distinct values.
_SELECTION_Z_FEW = 1.0
_FEW_CANDIDATES = 64
#: `direction_levels`: the lead gets its larger share only when the other direction's predicted bound
#: is below this fraction of the lead's.
_LEAD_RATIO = 0.5
#: Log-spaced tail levels on each side among the coarse candidates.
_COARSE_TAIL = 24
#: ... and for scores that estimate log P0/P1 (`estimates_log_ratio`), whose rates are also
#: estimated by importance weights (`_mixed_rates`): their estimate varies less.
_SELECTION_Z_RATIO = 0.5
#: Scores are clipped to [-c, c] in the importance weights exp(+-score).
_WEIGHT_CLIP = 5.0
#: Standard errors of the selection estimate taken off when no candidate's prediction is positive
#: (`choose_events`): the choice is then made on the less charged prediction instead of among events
#: that all predict nothing.
_FALLBACK_Z = 1.0
#: A runner-up family's event is kept only if its predicted bound is at least this fraction of the lead's.
_ALTERNATE_RATIO = 0.5


@dataclass(frozen=True, eq=False)
class EventPlan:
    """The events one direction tests on the estimation split, all of the form {sign*score > t}.

    `threshold` is for the epsilon bound, `mu_threshold` for the Gaussian-DP bound, `grid` the
    thresholds scanned for the trade-off curve (and the curve claim); `selection_first` and
    `selection_second` the fractions of selection runs in each grid event (first input, second).
    """

    direction: str
    score: Score
    sign: int
    threshold: float
    mu_threshold: float
    grid: tuple[float, ...]
    selection_first: tuple[float, ...]
    selection_second: tuple[float, ...]
    predicted: float = -np.inf
    #: Runner-up events of this direction: first the lead's twin if it has one, then the best event of
    #: each other score family (only their `threshold` is counted; `dpaudit.audit.auditor` tests them
    #: beside this one, Bonferroni over all).
    alternates: tuple[EventPlan, ...] = ()
    #: Whether this is a lead's twin: the best event by the uncharged prediction (module docstring).
    twin: bool = False
    #: Whether the epsilon event is bounded by the thinned ratio test (`dpaudit.audit.ratio`) at the level of
    #: both one-sided Clopper-Pearson bounds it replaces.
    ratio: bool = False

    def thresholds(self, with_grid: bool) -> np.ndarray:
        """The thresholds counted on the estimation split, in the order the counts are returned."""
        return np.array([self.threshold, self.mu_threshold, *(self.grid if with_grid else ())], dtype=np.float64)


def _quantiles(sorted_values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Inverted-CDF quantiles (values of the sample itself) of an ascending array."""
    n = len(sorted_values)
    idx = np.clip(np.ceil(levels * n).astype(np.int64) - 1, 0, n - 1)
    return sorted_values[idx]


def _candidates(sorted_values: np.ndarray) -> np.ndarray:
    """Thresholds to try: every distinct value if few, else quantiles incl. log-spaced tails."""
    keep = np.empty(len(sorted_values), dtype=bool)
    keep[0] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=keep[1:])
    if np.count_nonzero(keep) <= _UNIFORM_LEVELS + 2 * _TAIL_LEVELS:
        return sorted_values[keep]
    n = len(sorted_values)
    tail = np.geomspace(1.0 / n, 0.5, _TAIL_LEVELS)
    levels = np.concatenate([np.linspace(0, 1, _UNIFORM_LEVELS), tail, 1 - tail])
    return np.unique(_quantiles(sorted_values, levels))


def _coarse_candidates(sorted_values: np.ndarray) -> np.ndarray:
    """At most `_FEW_CANDIDATES` thresholds: 16 central quantiles and 24 log-spaced ones in each tail
    (down to a mass of 1/1000 or one run).  For smooth learned scores whose best event is a tail: so
    few candidates leave little room for a lucky argmax, so they are charged `_SELECTION_Z_FEW`."""
    n = len(sorted_values)
    tail = np.geomspace(max(1.0 / n, 1e-3), 0.25, _COARSE_TAIL)
    levels = np.concatenate([np.linspace(0.25, 0.75, _FEW_CANDIDATES - 2 * _COARSE_TAIL), tail, 1 - tail])
    return np.unique(_quantiles(sorted_values, levels))


def _exceed(sorted_values: np.ndarray, sign: int, thresholds: np.ndarray) -> np.ndarray:
    """#{sign * v > t} for each t, given the values v sorted ascending."""
    if sign > 0:
        return len(sorted_values) - np.searchsorted(sorted_values, thresholds, side="right")
    return np.searchsorted(sorted_values, -thresholds, side="left")


def _mixed_rates(
    u0: np.ndarray, u1: np.ndarray, sign: int, thresholds: np.ndarray, p0: np.ndarray, p1: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rates of the events {sign*score > t} for a score s ~ log P0/P1 (sorted values u0 on d0's runs,
    u1 on d1's): the mean of the plain fraction and of the importance-weighted estimate from the other
    side's runs, P1(E) ~ E0[exp(-s) 1_E] and P0(E) ~ E1[exp(s) 1_E] (exact when s is the log ratio;
    s clipped to [-_WEIGHT_CLIP, _WEIGHT_CLIP]).  On an event where s is nearly constant the weighted
    estimate of the ratio P0/P1 hardly varies, so the threshold chosen for it is less noisy (chain
    family on SVT34Parallel, benchmarks/peers/)."""

    def weighted(u: np.ndarray, w: np.ndarray) -> np.ndarray:
        cum = np.concatenate([[0.0], np.cumsum(w)])
        if sign > 0:  # {u > t}: a suffix of the ascending values
            return (cum[-1] - cum[np.searchsorted(u, thresholds, side="right")]) / len(u)
        return cum[np.searchsorted(u, -thresholds, side="left")] / len(u)  # {-u > t}: a prefix

    q1 = weighted(u0, np.exp(-np.clip(u0, -_WEIGHT_CLIP, _WEIGHT_CLIP)))
    q0 = weighted(u1, np.exp(np.clip(u1, -_WEIGHT_CLIP, _WEIGHT_CLIP)))
    # a weighted estimate can exceed 1 (weights up to e^_WEIGHT_CLIP): clipped, rates stay rates
    return np.clip(0.5 * (p0 + q0), 0.0, 1.0), np.clip(0.5 * (p1 + q1), 0.0, 1.0)


def _predicted(
    p0: np.ndarray,
    p1: np.ndarray,
    n_sel: int,
    n_est: int,
    z: float,
    delta: float,
    z_sel: float = _SELECTION_Z,
    ratio: tuple[float, float] | None = None,
):
    """Predicted epsilon and mu lower bounds at the estimation size (see the module docstring), and where
    the thinned ratio test (`dpaudit.audit.ratio`; `ratio` = (its mean runs kept, its z)) predicts the
    larger epsilon bound, which is then the one given."""
    q0 = wilson_lower(p0, n_sel, z_sel)
    q1 = wilson_upper(p1, n_sel, z_sel)
    low0 = wilson_lower(q0, n_est, z)
    upp1 = np.maximum(wilson_upper(q1, n_est, z), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where(low0 > delta, np.log(np.maximum(low0 - delta, 1e-300) / upp1), -np.inf)
        mu = ndtri(low0) - ndtri(upp1)
        use = np.zeros(np.shape(eps), dtype=bool)
        if ratio is not None:
            kept, z_ratio = ratio
            share = wilson_lower(q0 / (q0 + q1), kept * (q0 + q1), z_ratio)
            by_ratio = np.where((share > 0) & (share < 1), np.log(share) - np.log1p(-share), -np.inf)
            use = by_ratio > eps
            eps = np.where(use, by_ratio, eps)
    return eps, np.nan_to_num(mu, nan=-np.inf), use


#: A family's trade-off grid for one sign (`_grid`): thresholds, and the fractions of d0's and of d1's
#: selection scores in each event.
_Grid = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]

#: One family's best event in a direction: (predicted bound, score, sign, epsilon threshold, mu threshold,
#: its trade-off grid, whether the ratio test bounds it), as `_plan` takes it.
_Best = tuple[float, Score, int, float, float, _Grid, bool]


def choose_events(
    families: list[tuple[Score, np.ndarray, np.ndarray]],
    n_est: int,
    delta: float,
    level: float,
    grid_size: int,
    alternates: int = 0,
    ratio: bool = False,
) -> dict[str, EventPlan]:
    """Pick, for each direction, the family, sign and thresholds with the best predicted bounds.

    `families` holds (score, scores of d0 selection runs, scores of d1 selection runs); `level` is
    the one-sided level each Clopper-Pearson bound will use on the estimation split.  With
    `alternates` > 0, up to that many runner-up families (each with its own best event, predicted at
    least `_ALTERNATE_RATIO` of the lead's, best first) are kept in `EventPlan.alternates`.  With `ratio`
    (counts that are binomial, delta = 0), each event is bounded by the thinned ratio test at twice `level`
    (`dpaudit.audit.ratio`) where that predicts more than the two one-sided bounds (`EventPlan.ratio`).
    """
    z = -float(ndtri(level))  # not ndtri(1 - level): 1 - level rounds to 1 below level ~ 1e-17
    by_ratio = None
    if ratio and ratio_applies(delta, n_est, level):
        by_ratio = (thinning_mean(n_est), -float(ndtri(2 * level)))
    best: dict[str, dict[int, _Best]] = {d: {} for d in DIRECTIONS}  # per direction, per family
    uncharged: dict[str, dict[int, tuple[float, _Best]]] = {d: {} for d in DIRECTIONS}  # twins' candidates
    fallback: dict[str, dict[int, tuple[float, _Best]]] = {d: {} for d in DIRECTIONS}  # the same at `_FALLBACK_Z`
    by_mu: dict[str, dict[int, tuple[float, _Best]]] = {d: {} for d in DIRECTIONS}  # the best predicted mu
    for f, (score, s0, s1) in enumerate(families):
        n_sel = min(len(s0), len(s1))
        u0, u1 = np.sort(s0), np.sort(s1)
        # Merging two sorted runs: the stable sort (timsort/radix) does it in about linear time, in place
        # (np.sort would sort a copy of the concatenation).
        pooled = np.concatenate([u0, u1])
        pooled.sort(kind="stable")
        cand = _candidates(pooled)
        if getattr(score, "coarse_thresholds", False) and len(cand) > _FEW_CANDIDATES:
            cand = _coarse_candidates(pooled)
        # the grids now: a family's sorted scores are then dropped with the next family's (not kept till the end)
        grids = {sign: _grid(u0, u1, pooled, sign, grid_size) for sign in (1, -1)}
        # Few candidate events (a score with few distinct values: discrete outputs) leave little room
        # for a lucky argmax, so less of the selection noise is taken off.
        z_sel = _SELECTION_Z_FEW if len(cand) <= _FEW_CANDIDATES else _SELECTION_Z
        ratio = bool(getattr(score, "estimates_log_ratio", False))
        if ratio:
            z_sel = min(z_sel, _SELECTION_Z_RATIO)
        for sign in (1, -1):
            t = cand if sign > 0 else -cand[::-1]  # events {sign*score > t}: v > c, or v < c
            p0 = _exceed(u0, sign, t) / len(u0)
            p1 = _exceed(u1, sign, t) / len(u1)
            if ratio:
                p0, p1 = _mixed_rates(u0, u1, sign, t, p0, p1)
            for direction, (a, b) in zip(DIRECTIONS, ((p0, p1), (p1, p0))):
                eps, mu, use = _predicted(a, b, n_sel, n_est, z, delta, z_sel, by_ratio)
                j = int(np.argmax(mu))
                i = int(np.argmax(eps))
                key = float(eps[i])
                if f not in best[direction] or key > best[direction][f][0]:
                    best[direction][f] = (key, score, sign, float(t[i]), float(t[j]), grids[sign], bool(use[i]))
                if z_sel <= _SELECTION_Z_FEW:
                    free, _, free_use = _predicted(a, b, n_sel, n_est, z, delta, 0.0, by_ratio)
                    k = int(np.argmax(free))
                    if f not in uncharged[direction] or free[k] > uncharged[direction][f][0]:
                        uncharged[direction][f] = (
                            float(free[k]),
                            (float(eps[k]), score, sign, float(t[k]), float(t[j]), grids[sign], bool(free_use[k])),
                        )
                plain, plain_use = (
                    (eps, use)
                    if z_sel <= _FALLBACK_Z
                    else _predicted(a, b, n_sel, n_est, z, delta, _FALLBACK_Z, by_ratio)[::2]
                )
                k = int(np.argmax(plain))
                if f not in fallback[direction] or plain[k] > fallback[direction][f][0]:
                    fallback[direction][f] = (
                        float(plain[k]),
                        (float(eps[k]), score, sign, float(t[k]), float(t[j]), grids[sign], bool(plain_use[k])),
                    )
                if f not in by_mu[direction] or mu[j] > by_mu[direction][f][0]:
                    by_mu[direction][f] = (
                        float(mu[j]),
                        (key, score, sign, float(t[i]), float(t[j]), grids[sign], bool(use[i])),
                    )
    plans = {}
    for direction in DIRECTIONS:
        # best first; on a tie the earlier family (the sort is stable)
        ranked = sorted(best[direction].values(), key=lambda b: -b[0])
        top = ranked[0][0]
        if top <= 0:
            # no event's charged prediction is positive: rank by the less charged one (its own
            # charged `predicted` kept, <= 0, so the direction still counts as the weak one)
            ranked_fb = sorted(fallback[direction].values(), key=lambda b: -b[0])
            ranked_mu = sorted(by_mu[direction].values(), key=lambda b: -b[0])
            # nothing predicts a positive epsilon even so: the mu bound is the only one the event can give,
            # so the family and sign are chosen for it (an epsilon-chosen sign is then a coin toss)
            ranked = [b for _, b in (ranked_mu if ranked_fb[0][0] <= 0 else ranked_fb)]
        runners = [b for b in ranked[1:] if top > 0 and b[0] >= _ALTERNATE_RATIO * top][:alternates]
        twins = []
        if top > 0 and uncharged[direction]:
            free, twin = max(uncharged[direction].values(), key=lambda v: v[0])  # the earlier family on a tie
            lead = ranked[0]
            same = twin[1] is lead[1] and (twin[2], twin[3]) == (lead[2], lead[3])
            if free > 0 and not same:
                twins.append(dataclasses.replace(_plan(direction, *twin), twin=True))
        plans[direction] = dataclasses.replace(
            _plan(direction, *ranked[0]),
            alternates=(*twins, *(_plan(direction, *b) for b in runners)),
        )
    return plans


def _grid(u0: np.ndarray, u1: np.ndarray, pooled: np.ndarray, sign: int, grid_size: int) -> _Grid:
    """A family's trade-off grid for `sign`: `grid_size` quantiles of the pooled selection scores (u0, u1 and
    pooled sorted), and the fraction of each input's scores in each event {sign * score > t}."""
    levels = (np.arange(grid_size) + 0.5) / grid_size
    grid = np.unique(sign * _quantiles(pooled, levels))
    f0 = tuple(float(v) for v in _exceed(u0, sign, grid) / len(u0))
    f1 = tuple(float(v) for v in _exceed(u1, sign, grid) / len(u1))
    return tuple(float(g) for g in grid), f0, f1


def _plan(
    direction: str, predicted: float, score: Score, sign: int, t_eps: float, t_mu: float, grid: _Grid, ratio: bool
) -> EventPlan:
    """The plan of one family's best events, with its trade-off grid (`_grid`)."""
    thresholds, f0, f1 = grid
    first, second = (f0, f1) if direction == DIRECTIONS[0] else (f1, f0)
    return EventPlan(direction, score, sign, t_eps, t_mu, thresholds, first, second, predicted, ratio=ratio)


def direction_levels(plans: dict[str, EventPlan], alpha: float, share: float) -> dict[str, float]:
    """One-sided level of each Clopper-Pearson bound of each direction's epsilon event.

    The error probability `alpha` of the epsilon bound is split by Bonferroni over the two
    directions and, within a direction, over its two proportions (p_first lower, p_second upper):
    the direction whose event the selection split predicts the larger bound for (`EventPlan.predicted`;
    the first of DIRECTIONS on a tie) gets `share` of it, the other 1 - `share`:

        level(lead) = share * alpha / 2,   level(other) = (1 - share) * alpha / 2,

    when the other direction is clearly the weaker one (its predicted bound below `_LEAD_RATIO` times
    the lead's, the lead's positive); otherwise alpha / 4 each.  (Two directions of about the same
    strength, e.g. a symmetric mechanism, gain more from taking the larger of two bounds than from a
    better level for one of them.)

    The levels add up to alpha, so by the union bound the larger of the two bounds is below the true
    epsilon with probability >= 1 - alpha; the choice of the lead depends on the selection runs only,
    which are independent of the estimation runs the bounds are computed on.  share = 1/2 is the plain
    split alpha / 4 per proportion.  With share 0.9 the lead's level goes from alpha / 4 to 0.45 alpha
    (z from 2.24 to 2.00 at alpha = 0.05), the other's to alpha / 20 (z 2.81).
    """
    lead = max(DIRECTIONS, key=lambda d: (plans[d].predicted, -DIRECTIONS.index(d)))
    other = DIRECTIONS[1 - DIRECTIONS.index(lead)]
    if not (plans[lead].predicted > 0 and plans[other].predicted < _LEAD_RATIO * plans[lead].predicted):
        share = 0.5
    return {d: (share if d == lead else 1.0 - share) * alpha / 2 for d in DIRECTIONS}
