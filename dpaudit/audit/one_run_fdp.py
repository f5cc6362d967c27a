"""The f-DP analysis of a one-run audit: how many correct guesses an f-DP mechanism allows.

Game (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023, Alg. 1):
m canaries, each included by an independent fair coin S_i; the mechanism runs once; from its
output the attacker guesses the bit of exactly k canaries (the others abstain) and C counts the
correct guesses.  Analysis: Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One
Run" (ICML 2025; arXiv 2410.22235): the recursion of their Algorithm 3 (the guessing game with
abstentions, two options per canary) and the theorem that justifies it.  dpaudit re-derives it:

Let the mechanism be f-DP with respect to each canary (Dong, Roth, Su, "Gaussian Differential
Privacy", JRSS-B 2022, Def. 2.3): every test of S_i = 0 against S_i = 1, in both orders, has type II
error >= f(type I error), whatever the other bits are; write fbar(x) = 1 - f(x) (concave, non-
decreasing: the largest power at level x) and fbar^-1(y) = inf {x >= 0: fbar(x) >= y}.  For a level
j, the tests {G_i = b and #correct guesses among the other canaries >= j} (a function of the output
and S_-i) give, by f-DP, the concavity of fbar and averaging over i (Jensen),

    R_{j+1} <= fbar(H_j),   R_j = E[C 1{C >= j}] / m,   H_j = E[(k - C) 1{C >= j}] / m,        (1)

for j = 0 .. k - 1, since sum_i 1{guess i right, others' count >= j} = C 1{C >= j + 1} and
sum_i 1{guess i wrong, others' count >= j} = (k - C) 1{C >= j}.  With p_t = P[C = t] these are
convex constraints on the law of C.  The recursion (Mahloujifar et al., Alg. 3): start from
r_v = tau v / m, h_v = tau (k - v) / m (mass tau at v), and for i = v - 1, ..., 0

    h_i = max(h_{i+1}, fbar^-1(r_{i+1})),   r_i = r_{i+1} + i / (k - i) (h_i - h_{i+1}),       (2)

i.e. put at level i the least mass that satisfies (1) at i.  Theorem (their main result for this
game): if r_0 + h_0 > k / m then P[C >= v] < tau.  Proof used here: (a) the least total mass of
any law of C with P[C >= v] = tau' satisfying (1) below v is the greedy one of (2) (exchange: mass
above the greedy amount at the highest level where they differ can move one level down, which
relaxes every constraint below and keeps the total); (b) moving mass from a level above v down
to v only relaxes (1) below v, and the greedy total is non-decreasing in tau (move the extra
mass of tau' > tau one level below v); (c) the true law has total mass 1, i.e. r_0 + h_0 = k / m.
The same exchanges show the total is non-decreasing in v and in the claim's strength (a pointwise
larger f), so the set of rejected claims of a family (GDP mu, (eps, delta) at a fixed delta) is an
interval at the bottom, and rejecting any claim f implies rejecting the true curve f* >= f: every
figure of one audit holds simultaneously with probability >= 1 - level (Bonferroni over pairs).

The tail bound on P[C >= v] is the smallest tau (bisection in log tau) at which (2) rejects.

Floating point: the greedy is run on values rounded so that the computed state is never "larger"
than the exact one: fbar^-1 is evaluated as a lower bound (Gaussian: its argument and result
pushed down by a relative 1e-10; (eps, delta): each line moved down by 8 ulps of its terms;
a tabulated curve: the grid point below), the mass added at a level is rounded down, h rounded
up by 4 ulps and r down by 16 ulps of r + h (the greedy total is non-decreasing along adding mass
at a level above the current one and moving mass up, which these roundings undo), and r_0 + h_0
must exceed k / m by a relative 1e-12.  A rejection is therefore never an artefact of round-off.

Curves: `gaussian_curve(mu)` (f(a) = Phi(Phi^-1(1 - a) - mu), fbar^-1(y) = Phi(Phi^-1(y) - mu));
`approx_dp_curve(eps, delta)` (f = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)), Dong et al.
Prop. 2.4); `tradeoff_curve(f)` for a callable trade-off function; `event_curve(event)` for a
dp-accounting `DpEvent`: f(a) = max_j max(0, 1 - delta_j - e^eps_j a, e^-eps_j (1 - delta_j - a))
over a grid of eps_j with delta_j = delta(eps_j) from the pld accountant.  A mechanism that is
(eps, delta(eps))-DP for every eps is f_{eps, delta(eps)}-DP for each, hence f-DP for their maximum;
delta_j an upper bound and a finite grid (no interpolation) only make f smaller, a weaker claim,
which can only lower the chance of rejecting a true claim: that is the safe direction.  (A larger f
than the truth - lower bounds on delta, or interpolation between grid points - could reject a true
claim.)  Tabulated curves are replaced by the lower convex hull of their lower step function on a
logit-spaced grid, a convex trade-off function below f, so the Jensen step above stays valid.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dp_accounting
import numpy as np
from scipy.special import expit, ndtr, ndtri

__all__ = [
    "TradeoffCurve",
    "approx_dp_curve",
    "event_curve",
    "event_profile",
    "fdp_epsilon_lower",
    "fdp_mu_lower",
    "fdp_rejects",
    "fdp_tail_bound",
    "gaussian_curve",
    "tradeoff_curve",
]

_EPS = 2.0**-52
_TOTAL_MARGIN = 1e-12  # relative margin of the final test r_0 + h_0 > k / m
_GAUSS_MARGIN = 1e-10  # relative margin of the Gaussian fbar^-1 (scipy's ndtr / ndtri are far more accurate)
_GRID_POINTS = 2**15  # logit-spaced abscissae of a tabulated curve
_EVENT_EPSILONS = 100  # epsilons of the envelope of an event's (eps, delta(eps)) curves
_FIRST_ROUND = 1e-3 * 2.0 ** (np.arange(32) / 2.0)  # parameter grid of a family search, 1e-3 .. 46
_REFINE_POINTS = 24
_REFINE_ROUNDS = 2

Inverse = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class TradeoffCurve:
    """A claimed trade-off curve f, held as a lower bound on fbar^-1(y) = inf {x: 1 - f(x) >= y}.

    `inverse_lower(y)` is vectorised and never above the exact value; `name` describes the claim.
    """

    name: str
    inverse_lower: Callable[[np.ndarray], np.ndarray]


def _gaussian_inverse(y: np.ndarray, mu: np.ndarray | float) -> np.ndarray:
    """Lower bound on Phi(Phi^-1(y) - mu), the inverse power of mu-GDP; 0 for y <= 0, 1 for y >= 1."""
    inside = (y > 0.0) & (y < 1.0)
    z = ndtri(np.where(inside, y, 0.5))
    z = z - _GAUSS_MARGIN * (1.0 + np.abs(z)) - mu * (1.0 + _GAUSS_MARGIN)
    val = ndtr(z) * (1.0 - _GAUSS_MARGIN)
    return np.where(inside, val, np.where(y >= 1.0, 1.0 - _GAUSS_MARGIN, 0.0))


def _approx_inverse(y: np.ndarray, epsilon: np.ndarray | float, delta: float) -> np.ndarray:
    """Lower bound on max(0, (y - delta) e^-eps, 1 - delta - e^eps (1 - y)), the inverse power of
    (eps, delta)-DP (Dong, Roth, Su, JRSS-B 2022, Prop. 2.4), each line pushed down by 8 ulps of its terms."""
    y = np.minimum(y, 1.0)
    down, up = np.exp(-epsilon), np.exp(epsilon)
    low = (y - delta) * down - 8.0 * _EPS * (np.abs(y) + delta) * down
    tail = 1.0 - y
    high = 1.0 - delta - up * tail - 8.0 * _EPS * (1.0 + delta + up * np.abs(tail))
    return np.maximum(0.0, np.maximum(low, high))


def gaussian_curve(mu: float) -> TradeoffCurve:
    """mu-GDP: f(a) = Phi(Phi^-1(1 - a) - mu) (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022)."""
    mu = _check_parameter(mu, "mu")
    return TradeoffCurve(f"{mu:g}-GDP", lambda y: _gaussian_inverse(np.asarray(y, dtype=float), np.float64(mu)))


def approx_dp_curve(epsilon: float, delta: float) -> TradeoffCurve:
    """(eps, delta)-DP: f(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) (Dong et al. 2022, Prop. 2.4)."""
    epsilon = _check_parameter(epsilon, "epsilon")
    delta = _check_delta(delta)
    return TradeoffCurve(
        f"({epsilon:g}, {delta:g})-DP",
        lambda y: _approx_inverse(np.asarray(y, dtype=float), np.float64(epsilon), delta),
    )


def _logit_grid() -> np.ndarray:
    return np.concatenate(([0.0], expit(np.linspace(-60.0, 60.0, _GRID_POINTS)), [1.0]))


def _lower_hull(x: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Values at x of the lower convex hull of the points (x, f) (x increasing; Andrew's monotone chain)."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (f[b] - f[a]) * (x[i] - x[a]) >= (f[i] - f[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], f[hull])


def _tabulated(name: str, x: np.ndarray, f_values: np.ndarray) -> TradeoffCurve:
    """A curve from f on the grid x: its lower step function f(x_{i+1}) on (x_i, x_{i+1}] is below f
    (f is non-increasing); the lower convex hull of its corners, pushed down by 1e-12, is a convex
    trade-off function below f.  fbar^-1(y) >= x_{i-1}, i the first grid point with 1 - hull >= y - 1e-12."""
    corners = np.concatenate((f_values[1:], [0.0]))  # the step function's value on (x_i, x_{i+1}] at x_i
    hull = np.clip(_lower_hull(x, corners) - 1e-12, 0.0, 1.0)
    power = 1.0 - hull  # non-decreasing

    def inverse(y: np.ndarray) -> np.ndarray:
        i = np.searchsorted(power, np.asarray(y, dtype=float) - 1e-12, side="left")
        return np.where(i > 0, x[np.maximum(i - 1, 0)], 0.0)

    return TradeoffCurve(name, inverse)


def tradeoff_curve(f: Callable[[Any], Any], name: str = "f") -> TradeoffCurve:
    """A claimed trade-off function f on [0, 1]: convex, continuous, non-increasing, f(a) <= 1 - a
    (Dong, Roth, Su, JRSS-B 2022, Prop. 2.2).  It is sampled on a logit-spaced grid of 2^15 points and
    replaced by a convex curve below it (module docstring), so a sample that dips is never trusted
    between grid points.  TypeError if f is not callable, ValueError if its values are not finite, in
    [0, 1] and non-increasing."""
    if not callable(f):
        raise TypeError(f"f must be a callable trade-off function, got {type(f).__name__}")
    x = _logit_grid()
    try:
        values = np.asarray(f(x), dtype=float)
    except (TypeError, ValueError):
        values = np.array([float(f(float(a))) for a in x])
    if values.shape != x.shape:
        values = np.array([float(f(float(a))) for a in x])
    if not np.all(np.isfinite(values)) or values.min() < -1e-12 or values.max() > 1.0 + 1e-12:
        raise ValueError("f must return finite values in [0, 1] on [0, 1]")
    if np.any(np.diff(values) > 1e-12):
        raise ValueError("f must be non-increasing on [0, 1] (a trade-off function)")
    return _tabulated(name, x, np.clip(values, 0.0, 1.0))


def event_curve(event: dp_accounting.DpEvent) -> TradeoffCurve:
    """The trade-off curve of a dp-accounting `DpEvent`: the upper envelope of the (eps_j, delta(eps_j))-DP
    curves over 100 epsilons up to epsilon(1e-14) (capped at 60), delta from dpaudit's pld accountant
    (a valid upper bound), so the curve is below the event's true curve (module docstring).  Curves of
    hashable events are cached (the last 16)."""
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")
    try:
        hash(event)
    except TypeError:
        return _event_curve(event)
    return _cached_event_curve(event)


def event_profile(event: dp_accounting.DpEvent) -> tuple[np.ndarray, np.ndarray]:
    """(eps_j, delta(eps_j)): 100 epsilons up to epsilon(1e-14) (at least 1e-3, at most 60), each delta an
    upper bound from dpaudit's pld accountant; ValueError for an event with no finite epsilon there."""
    from dpaudit.accounting import Accountant

    accountant = Accountant("pld").compose(event)
    top = accountant.epsilon(1e-14)
    if not math.isfinite(top):
        raise ValueError(f"event must be private (a finite epsilon at delta = 1e-14), got {event!r}")
    eps = np.linspace(0.0, min(max(top, 1e-3), 60.0), _EVENT_EPSILONS + 1)[1:]
    return eps, np.array([accountant.delta(float(e)) for e in eps])


def _event_curve(event: dp_accounting.DpEvent) -> TradeoffCurve:
    eps, deltas = event_profile(event)
    x = _logit_grid()
    values = np.zeros_like(x)
    for e, d in zip(eps, deltas):  # each line pushed down by a few ulps of its terms
        a = 1.0 - d - math.exp(e) * x - 8.0 * _EPS * (2.0 + math.exp(e) * x)
        b = math.exp(-e) * (1.0 - d - x) - 8.0 * _EPS * 2.0
        values = np.maximum(values, np.maximum(a, b))
    return _tabulated(f"event {type(event).__name__}", x, np.minimum(values, 1.0 - x))


_cached_event_curve = functools.lru_cache(maxsize=16)(_event_curve)


def _greedy_rejects(inverse: Inverse, num_canaries: int, guesses, correct, tau) -> np.ndarray:
    """For each element: does the recursion (2) from mass tau at `correct` reach r_0 + h_0 > k / m?

    `inverse(y, index)` is a lower bound on fbar^-1(y) for the elements `index`.  Elements leave the
    loop when their total already exceeds k / m (the total only grows: rejected) or when no mass is
    added at a level (nothing changes afterwards: not rejected).
    """
    k, c, tau = np.broadcast_arrays(
        np.asarray(guesses, dtype=float), np.asarray(correct, dtype=np.int64), np.asarray(tau, dtype=float)
    )
    k, c, tau = k.ravel(), c.ravel(), tau.ravel()
    m = float(num_canaries)
    limit = k / m * (1.0 + _TOTAL_MARGIN)
    h = tau * (k - c) / m * (1.0 + 4.0 * _EPS)
    r = tau * c / m
    r = r - 16.0 * _EPS * (r + h)
    reject = (r + h) > limit
    idx = np.flatnonzero((c >= 1) & ~reject)
    j, r, h, k, limit = c[idx] - 1.0, r[idx], h[idx], k[idx], limit[idx]
    while idx.size:
        add = np.maximum(inverse(r, idx) - h, 0.0) * (1.0 - 4.0 * _EPS)
        h_new = (h + add) * (1.0 + 4.0 * _EPS)
        r_new = r + (j / (k - j)) * add
        r_new = r_new - 16.0 * _EPS * (r_new + h_new)
        over = (r_new + h_new) > limit
        reject[idx[over]] = True
        keep = (add > 0.0) & ~over & (j > 0)
        if keep.all():
            j, r, h = j - 1.0, r_new, h_new
        else:
            idx, j, r, h, k, limit = idx[keep], j[keep] - 1.0, r_new[keep], h_new[keep], k[keep], limit[keep]
    return reject


def _check_counts(num_canaries, guesses, correct) -> tuple[int, np.ndarray, np.ndarray]:
    if isinstance(num_canaries, bool) or not isinstance(num_canaries, (int, np.integer)):
        raise TypeError(f"num_canaries must be an integer, got {type(num_canaries).__name__}")
    m = int(num_canaries)
    if m < 1:
        raise ValueError(f"num_canaries must be >= 1, got {m}")
    k = np.atleast_1d(np.asarray(guesses))
    v = np.atleast_1d(np.asarray(correct))
    if k.dtype.kind not in "iu" or v.dtype.kind not in "iu":
        raise TypeError("guesses and correct must be integers")
    k, v = np.broadcast_arrays(k.astype(np.int64), v.astype(np.int64))
    if np.any(k < 1) or np.any(k > m):
        raise ValueError(f"guesses must lie in [1, num_canaries = {m}], got {k.tolist()[:5]}")
    if np.any(v < 0) or np.any(v > k):
        raise ValueError(f"correct must lie in [0, guesses], got {v.tolist()[:5]}")
    return m, k.ravel(), v.ravel()


def _check_level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)):
        raise TypeError(f"level must be a real number, got {type(level).__name__}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return float(level)


def _check_parameter(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not (math.isfinite(float(value)) and float(value) >= 0.0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return float(value)


def _check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return float(delta)


def fdp_rejects(curve: TradeoffCurve, num_canaries: int, guesses, correct, level: float) -> np.ndarray:
    """Per pair (k, v): True when v correct guesses out of k reject "f-DP" at `level`, i.e. the
    recursion (2) at tau = level ends with r_0 + h_0 > k / m, so P[C >= v] < level under the claim
    (Mahloujifar, Melis, Chaudhuri, ICML 2025, Alg. 3; module docstring)."""
    if not isinstance(curve, TradeoffCurve):
        raise TypeError(f"curve must be a TradeoffCurve, got {type(curve).__name__}")
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    return _greedy_rejects(lambda y, _: curve.inverse_lower(y), m, k, v, level)


def fdp_tail_bound(curve: TradeoffCurve, num_canaries: int, guesses: int, correct: int) -> float:
    """An upper bound on P[C >= correct] for an f-DP mechanism and `guesses` guesses among
    `num_canaries` canaries: the smallest tau found (60 bisection steps in log tau over [1e-300, 1])
    at which the recursion rejects, so it is never below the theorem's bound; 1 if none."""
    if not isinstance(curve, TradeoffCurve):
        raise TypeError(f"curve must be a TradeoffCurve, got {type(curve).__name__}")
    m, k, v = _check_counts(num_canaries, guesses, correct)
    if k.size != 1:
        raise ValueError("fdp_tail_bound takes one pair (guesses, correct)")

    def rejects(tau: float) -> bool:
        return bool(_greedy_rejects(lambda y, _: curve.inverse_lower(y), m, k, v, tau)[0])

    lo, hi = math.log(1e-300), 0.0
    if rejects(math.exp(lo)):
        return 1e-300
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if rejects(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return 1.0 if hi == 0.0 else math.exp(hi)


def _largest_rejected(make: Callable[[np.ndarray], Inverse], m: int, k, v, level: float) -> tuple[int, float]:
    """(pair index, theta): the largest parameter theta of a family (weaker claims as theta grows) that
    some pair rejects at `level`, by grid rounds: 32 geometric points 1e-3 .. 46, then twice 24
    points between the last rejected and the next; (0, 0.0) if none is rejected.  Only values that
    were rejected are returned, so no monotonicity of the computation is assumed for validity."""
    pairs = np.arange(k.size)
    grid = _FIRST_ROUND
    best_pair, best = 0, 0.0
    upper = math.inf
    for round_ in range(_REFINE_ROUNDS + 1):
        theta = np.repeat(grid[None, :], pairs.size, axis=0).ravel()
        pair = np.repeat(pairs, grid.size)
        inverse = make(theta)
        hit = _greedy_rejects(inverse, m, k[pair], v[pair], level).reshape(pairs.size, grid.size)
        if hit.any():
            cols = np.flatnonzero(hit.any(axis=0))
            top = int(cols[-1])
            if grid[top] > best:
                best = float(grid[top])
                best_pair = int(pairs[np.flatnonzero(hit[:, top])[0]])
            upper = float(grid[top + 1]) if top + 1 < grid.size else upper
            pairs = pairs[hit[:, top]]
        elif round_ == 0:
            return 0, 0.0
        else:
            upper = float(grid[0])
        if not math.isfinite(upper):
            break
        grid = np.linspace(best, upper, _REFINE_POINTS + 2)[1:-1]
    return best_pair, best


def fdp_mu_lower(num_canaries: int, guesses, correct, level: float) -> tuple[int, float]:
    """(pair index, mu_lower): the largest mu of the GDP family rejected at `level` by some pair, a lower
    bound on the mechanism's GDP mu (it is not mu-GDP for any mu <= mu_lower) with probability
    >= 1 - level x pairs; 0.0 when no mu >= 1e-3 is rejected."""
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    return _largest_rejected(lambda mu: lambda y, i: _gaussian_inverse(y, mu[i]), m, k, v, level)


def fdp_epsilon_lower(num_canaries: int, guesses, correct, delta: float, level: float) -> tuple[int, float]:
    """(pair index, epsilon_lower): the largest eps such that some pair rejects (eps, delta)-DP, as an
    f-DP claim, at `level`; a lower bound on the mechanism's epsilon at `delta`; 0.0 if none >= 1e-3."""
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    delta = _check_delta(delta)
    return _largest_rejected(lambda eps: lambda y, i: _approx_inverse(y, eps[i], delta), m, k, v, level)
