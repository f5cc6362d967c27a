"""The order-statistics analysis of a one-run audit: the exact law of the count of the most confident guesses.

Framework (Xiang, Wang, Xiao, Tian, Wang, "Tight Privacy Audit in One Run", arXiv 2509.08704, 2025): m secret
bits (canary i included iff S_i, fair coins), one run of the mechanism, a decoder that gives every canary a
guess and a confidence score, and a filter that releases only the r guesses with the highest scores; C counts
the correct released guesses.  The paper models the mechanism by its f-DP curve (Dong, Roth, Su, "Gaussian
Differential Privacy", JRSS-B 2022) and reads C through order statistics.  dpaudit re-derives the bound:

(a) Canonical channel.  For a convex trade-off function f, X ~ U[0, 1] when S_i = 0 and X ~ Q_f when
S_i = 1, Q_f with cdf 1 - f(x) (and an atom 1 - f(0) at 0), has trade-off function f; its likelihood
ratio at x is L = -f'(x).  Given X, the best guess is right with probability p = max(L, 1) / (1 + L);
its law G_f over the mixture (U + Q_f) / 2 is the claim's *accuracy law*.  mu-GDP: p = expit(mu |u|),
u ~ N(+-mu/2, 1); (eps, delta)-DP: p = 1 with probability delta, e^eps / (1 + e^eps) otherwise.

(b) Reduction (Blackwell).  Suppose the release is a post-processing of independent per-canary releases
Y_i, each depending on S_i only through its own channel, and each f-DP (T(Y_i | S_i = 0, Y_i | S_i = 1) >= f).
Each channel is then a garbling of the canonical one, so any guesser that makes k guesses from the release
(dpaudit's top-k_+ / bottom-k_- rule, the paper's r most confident guesses, or any other) is a randomised
guesser on m independent canonical channels.  There, given X, the guesses are independent Bernoulli(p_i) at
best, and taking the k largest p_i maximises P[C >= v] for every v (a sum of independent Bernoullis grows
stochastically with each parameter).  So P[C >= v] <= P[B >= v], B the sum over the k largest of m i.i.d.
draws p_i ~ G_f of independent Bernoulli(p_i), and the bound is attained by the canonical channels.

(c) Order statistics.  Break ties in G_f by an independent uniform key, so the canaries' ranks are those of
i.i.d. U(0, 1) variables U_i, p_i = p(U_i) with p(.) the non-increasing quantile function of G_f (p(u) the
accuracy of the canaries with a fraction u of the mass above them).  With U_(k) ~ Beta(k, m - k + 1) the
k-th smallest, the k - 1 smaller ones are i.i.d. uniform on [0, U_(k)] given it, so

    P[B >= v] = E[ P[Binomial(k - 1, M(U_(k)) / U_(k)) + Bernoulli(p(U_(k))) >= v] ],   M(s) = int_0^s p,

and the integrand is non-increasing in U_(k) (M(s)/s and p(s) are).  dpaudit bins U_(k) at 259 edges (the
Beta quantiles at z = -8 .. 8 and 0, 1) and takes each bin's integrand at its left end: an upper bound.

Validity: the bound holds for mechanisms whose canaries do not interfere, as in (b) (the paper's Laplace,
Gaussian and randomized-response canaries, and dpaudit's one-canary-per-release targets).  It is *not* a
bound for every f-DP mechanism: a (0, delta)-DP mechanism that reveals all m bits with probability delta
makes k = 10 guesses all right with probability about delta + 2^-10, more than the canonical channels allow
at m = 100, delta = 1e-3 (0.0020 against 0.0011; tests); the paper's claim of a tight audit for every
(eps, delta)-DP mechanism needs this restriction.  For a pure eps claim (delta = 0) G_f is one atom,
B ~ Binomial(k, e^eps / (1 + e^eps)), which is Steinke, Nasr, Jagielski's bound ("Privacy Auditing with One
(1) Training Run", NeurIPS 2023, Thm 3.1, delta = 0), valid for every mechanism.  For an interfering
mechanism use `dpaudit.audit.one_run_fdp` (valid for all f-DP mechanisms).

The bound grows with the claim (a larger f is a garbling of a smaller one), so the rejected claims of a
family (GDP mu, (eps, delta) at a fixed delta) form an interval at the bottom and all figures of one audit
hold together, as for the f-DP analysis.

Numerics: the GDP law is held on the accuracy grid 1/2 + j 2^-15 (refined near 1, where 1 - p steps by 1.1%),
each cell's mass put at its upper end (a law above G_f: the bound only grows, by at most 3.1e-5 per guess); an event's curve is the upper envelope of
its (eps_j, delta_j)-DP lines (each pushed down by a few ulps, delta_j upper bounds from dpaudit's pld
accountant: a curve below the truth, the safe direction), whose segments give the atoms exactly.  The tail
is rounded up by a relative 1e-9 and an absolute 1e-14 m (the law's masses carry round-off of ~1e-16 each).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy.special import betainc, expit, ndtr
from scipy.stats import beta

from dpaudit.audit.one_run_bound import _pure_epsilon, binomial_tail
from dpaudit.audit.one_run_fdp import _check_counts, _check_delta, _check_level, _check_parameter, event_profile

__all__ = [
    "AccuracyLaw",
    "approx_dp_law",
    "event_law",
    "gaussian_law",
    "order_epsilon_lower",
    "order_mu_lower",
    "order_rejects",
    "order_tail_bound",
]

_EPS = 2.0**-52
_GRID_STEP = 2.0**-15  # accuracy grid of a continuous law
_Z_EDGES = np.linspace(-8.0, 8.0, 257)  # bins of the order statistic U_(k), at its Beta quantiles
_REL_SLACK = 1e-9
_ABS_SLACK = 1e-14  # times m
_BISECTION_STEPS = 16
_FAMILY_START = 1e-3


@dataclass(frozen=True, eq=False)
class AccuracyLaw:
    """A claim's accuracy law G_f (module docstring): atoms `accuracy` (non-increasing, in [1/2, 1]) with
    probabilities `mass` (summing to 1), at or above the exact law; `name` describes the claim."""

    name: str
    accuracy: np.ndarray
    mass: np.ndarray

    @property
    def mean(self) -> float:
        """E[p], the accuracy of a guess on a canary drawn at random."""
        return float(np.sum(self.mass * self.accuracy))


def gaussian_law(mu: float) -> AccuracyLaw:
    """mu-GDP: p = expit(mu |u|), u ~ N(+-mu/2, 1), on the grid 1/2 + j 2^-15 refined near 1 (1 - p stepping
    by 1.1% from 2^-15 down to 2^-52), each cell's mass at its upper end.
    P[p > t] = Phi(-c - mu/2) + Phi(mu/2 - c), c = logit(t) / mu.  The last 64 laws are cached."""
    return _gaussian_law(_check_parameter(mu, "mu"))


@functools.lru_cache(maxsize=64)
def _gaussian_law(mu: float) -> AccuracyLaw:
    if mu == 0.0:
        return AccuracyLaw("0-GDP", np.array([0.5]), np.array([1.0]))
    near_one = 1.0 - _GRID_STEP * 2.0 ** (-np.arange(1, 64 * 37) / 64.0)  # 1 - p to 1.1% down to 2^-52
    grid = np.unique(np.concatenate((0.5 + _GRID_STEP * np.arange(round(0.5 / _GRID_STEP) + 1), near_one)))
    with np.errstate(divide="ignore"):
        c = np.log(grid) - np.log1p(-grid)
    c = c / mu
    above = np.where(np.isfinite(c), ndtr(-c - mu / 2.0) + ndtr(mu / 2.0 - c), 0.0)
    above[0] = 1.0
    mass = np.maximum(above[:-1] - above[1:], 0.0)
    law = AccuracyLaw(f"{mu:g}-GDP", grid[1:][::-1].copy(), mass[::-1].copy())
    law.accuracy.flags.writeable = law.mass.flags.writeable = False
    return law


def _lines_law(name: str, slopes: np.ndarray, intercepts: np.ndarray) -> AccuracyLaw:
    """The accuracy law of f = max(0, max_i (intercepts_i + slopes_i x)) on [0, 1] (slopes < 0, each line
    <= 1 - x): its upper envelope, segment by segment (module docstring, (a))."""
    slopes = np.append(np.asarray(slopes, dtype=float), 0.0)
    intercepts = np.append(np.asarray(intercepts, dtype=float), 0.0)
    order = np.lexsort((-intercepts, slopes))  # slope ascending, the highest intercept first among equal slopes
    hull: list[tuple[float, float]] = []
    for a, b in zip(slopes[order], intercepts[order]):
        if hull and hull[-1][0] == a:
            continue
        while len(hull) >= 2:
            (a1, b1), (a2, b2) = hull[-2], hull[-1]
            # line 2 is never strictly above lines 1 and 3: x_13 <= x_12, x_ij = (b_j - b_i) / (a_i - a_j)
            if (b - b1) * (a1 - a2) <= (b2 - b1) * (a1 - a):
                hull.pop()
            else:
                break
        hull.append((float(a), float(b)))
    # breakpoints of the envelope, clipped to [0, 1]
    starts = [0.0] + [(b2 - b1) / (a1 - a2) for (a1, b1), (a2, b2) in itertools.pairwise(hull)]
    ends = starts[1:] + [1.0]
    f0 = max(b for a, b in hull)
    accuracy, mass = [1.0], [max(1.0 - f0, 0.0) / 2.0]  # Q's atom at 0: S_i = 1 revealed
    for (a, _), lo, hi in zip(hull, starts, ends):
        length = min(hi, 1.0) - max(lo, 0.0)
        if length <= 0.0:
            continue
        ratio = -a
        accuracy.append(min(1.0, max(ratio, 1.0) / (1.0 + ratio) * (1.0 + 4.0 * _EPS)))
        mass.append(length * (1.0 + ratio) / 2.0)
    acc, w = np.array(accuracy), np.array(mass)
    order = np.argsort(-acc, kind="stable")
    return AccuracyLaw(name, acc[order], w[order] / w.sum())


def approx_dp_law(epsilon: float, delta: float) -> AccuracyLaw:
    """(eps, delta)-DP: p = 1 with probability delta, e^eps / (1 + e^eps) otherwise (Dong et al. 2022, Prop. 2.4)."""
    epsilon = _check_parameter(epsilon, "epsilon")
    delta = _check_delta(delta)
    q = min(1.0, float(expit(epsilon)) * (1.0 + 4.0 * _EPS))
    acc = np.array([1.0, q])
    return AccuracyLaw(f"({epsilon:g}, {delta:g})-DP", acc, np.array([delta, 1.0 - delta]))


def event_law(event: dp_accounting.DpEvent) -> AccuracyLaw:
    """The accuracy law of a dp-accounting `DpEvent`'s curve: the upper envelope of its (eps_j, delta(eps_j))-DP
    lines over 100 epsilons up to epsilon(1e-14) (capped at 60), delta from dpaudit's pld accountant, each line
    pushed down by a few ulps (a curve below the event's, module docstring).  Laws of hashable events are cached."""
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")
    try:
        hash(event)
    except TypeError:
        return _event_law(event)
    return _cached_event_law(event)


def _event_law(event: dp_accounting.DpEvent) -> AccuracyLaw:
    eps, deltas = event_profile(event)
    deltas = np.minimum(deltas, 1.0)
    up, down = np.exp(eps), np.exp(-eps)
    slopes = np.concatenate((-up, -down))
    intercepts = np.concatenate((1.0 - deltas - 16.0 * _EPS, down * (1.0 - deltas) - 16.0 * _EPS))
    return _lines_law(f"event {type(event).__name__}", slopes, intercepts)


_cached_event_law = functools.lru_cache(maxsize=16)(_event_law)


@functools.lru_cache(maxsize=512)
def _bins(m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Left ends of the bins of U_(k) ~ Beta(k, m - k + 1) (edges 0, its quantiles at z = -8 .. 8, 1) with
    positive probability, and those probabilities."""
    inner = beta.ppf(ndtr(_Z_EDGES), k, m - k + 1)
    edges = np.unique(np.concatenate(([0.0], inner[np.isfinite(inner)], [1.0])))
    weight = np.maximum(np.diff(betainc(k, m - k + 1, edges)), 0.0)
    keep = weight > 0.0
    left, weight = edges[:-1][keep], weight[keep]
    left.flags.writeable = weight.flags.writeable = False
    return left, weight


def _tails(law: AccuracyLaw, m: int, k: int, v: np.ndarray) -> np.ndarray:
    """Upper bounds on P[B >= v] for each entry of v, B the count of the k most accurate of m canaries."""
    v = np.asarray(v, dtype=float)
    w = law.mass
    cum = np.concatenate(([0.0], np.cumsum(w)))
    cum[-1] = 1.0
    first = np.concatenate(([0.0], np.cumsum(w * law.accuracy)))  # M at the atoms' boundaries

    def at(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M(s) / s, p(s)) at the bins' left ends; the top atom's accuracy at s = 0."""
        j = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, w.size - 1)
        p = law.accuracy[j]
        integral = first[j] + (s - cum[j]) * p
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(s > 0.0, integral / s, p)
        return np.minimum(1.0, mean * (1.0 + 1e-12)), p

    left, weight = _bins(m, k)
    mean, p = at(left)
    vv = v[None, :]
    n = float(k - 1)
    body = (1.0 - p[:, None]) * binomial_tail(vv, n, mean[:, None]) + p[:, None] * binomial_tail(
        vv - 1.0, n, mean[:, None]
    )
    total = (weight[:, None] * body).sum(axis=0)
    return np.minimum(1.0, total * (1.0 + _REL_SLACK) + _ABS_SLACK * m)


def order_tail_bound(law: AccuracyLaw, num_canaries: int, guesses: int, correct: int) -> float:
    """An upper bound on P[C >= correct] for `guesses` guesses among `num_canaries` non-interfering canaries
    whose channels satisfy the claim of `law` (module docstring); attained up to the binning by the canonical
    channels, so it is Xiang et al.'s order-statistics bound for the r = `guesses` most confident guesses."""
    if not isinstance(law, AccuracyLaw):
        raise TypeError(f"law must be an AccuracyLaw, got {type(law).__name__}")
    m, k, v = _check_counts(num_canaries, guesses, correct)
    if k.size != 1:
        raise ValueError("order_tail_bound takes one pair (guesses, correct)")
    return float(_tails(law, m, int(k[0]), v)[0])


def order_rejects(law: AccuracyLaw, num_canaries: int, guesses, correct, level: float) -> np.ndarray:
    """Per pair (k, v): True when the bound on P[C >= v] is <= `level` (the claim is refuted at `level`)."""
    if not isinstance(law, AccuracyLaw):
        raise TypeError(f"law must be an AccuracyLaw, got {type(law).__name__}")
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    return _rejects(law, m, k, v, level)


def _rejects(law: AccuracyLaw, m: int, k: np.ndarray, v: np.ndarray, level: float) -> np.ndarray:
    out = np.zeros(k.size, dtype=bool)
    for i in np.flatnonzero(_possible(k, v, level, law.mean)):
        out[i] = bool(_tails(law, m, int(k[i]), v[i : i + 1])[0] <= level)
    return out


def _possible(k: np.ndarray, v: np.ndarray, level: float, mean: float = 0.5) -> np.ndarray:
    """Pairs that could refute a claim whose law has mean accuracy `mean`: B is stochastically above
    Binomial(k, mean) (k canaries drawn at random give that law; the k most accurate do better), so the
    bound is at least its tail; a pair where that tail exceeds `level` is not rejected."""
    return (v >= 1) & (binomial_tail(v, k, mean) <= level)


def _largest_rejected(
    make: Callable[[float], AccuracyLaw], m: int, k: np.ndarray, v: np.ndarray, level: float, top: float
) -> tuple[int, float]:
    """(pair index, theta): the largest parameter of a family (weaker claims as theta grows) that some pair
    rejects, by steps of x4 from 1e-3 and 16 bisection steps in log theta for the most promising pair; a pair
    that does not reject the best value so far is skipped.  Only rejected values are returned (0.0 if none),
    so the computation's monotonicity is not needed for validity."""
    candidates = np.flatnonzero(_possible(k, v, level))
    if candidates.size == 0:
        return 0, 0.0
    proxy = _pure_epsilon(k[candidates], v[candidates], level)  # Steinke et al.'s pure bound: a ranking only
    best_pair, best = 0, 0.0

    def rejects(theta: float, i: int) -> bool:
        return bool(_tails(make(theta), m, int(k[i]), v[i : i + 1])[0] <= level)

    for i in candidates[np.argsort(-proxy, kind="stable")]:
        lo = best if best > 0.0 else _FAMILY_START
        law = make(lo)
        if not _possible(k[i : i + 1], v[i : i + 1], level, law.mean)[0] or not rejects(lo, int(i)):
            continue
        hi = lo * 4.0
        while hi <= top and rejects(hi, int(i)):
            lo, hi = hi, hi * 4.0
        if hi > top:
            best_pair, best = int(i), lo
            continue
        for _ in range(_BISECTION_STEPS):
            mid = math.sqrt(lo * hi)
            if rejects(mid, int(i)):
                lo = mid
            else:
                hi = mid
        if lo > best:
            best_pair, best = int(i), lo
    return best_pair, best


def order_mu_lower(num_canaries: int, guesses, correct, level: float) -> tuple[int, float]:
    """(pair index, mu_lower): the largest mu of the GDP family that some pair rejects at `level`, a lower bound
    on the GDP mu of a non-interfering mechanism with probability >= 1 - level x pairs; 0.0 if none >= 1e-3."""
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    return _largest_rejected(gaussian_law, m, k, v, level, top=64.0)


def order_epsilon_lower(num_canaries: int, guesses, correct, delta: float, level: float) -> tuple[int, float]:
    """(pair index, epsilon_lower): the largest eps whose (eps, delta)-DP claim some pair rejects at `level`;
    0.0 if none >= 1e-3.  At delta = 0 this is Steinke et al.'s pure bound (binomial tail)."""
    m, k, v = _check_counts(num_canaries, guesses, correct)
    level = _check_level(level)
    delta = _check_delta(delta)
    return _largest_rejected(lambda eps: approx_dp_law(eps, delta), m, k, v, level, top=64.0)
