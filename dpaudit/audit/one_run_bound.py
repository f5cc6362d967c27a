"""The one-run epsilon lower bound: how many correct membership guesses an (eps, delta)-DP mechanism allows.

Game (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
Algorithm 1): each of m canaries is included by an independent fair coin, the mechanism runs once,
and an attacker who sees only the output makes r guesses (included / excluded) about distinct
canaries; W counts the correct ones.  Their Theorem 3.1: if the mechanism is (eps, delta)-DP with
respect to each canary, then for every v

    P[W >= v] <= f(v) + 2 m delta max_{1 <= i <= v} (f(v - i) - f(v)) / i,
    f(v) = P[Binomial(r, q) >= v],   q = e^eps / (1 + e^eps),

(for delta = 0: W is stochastically dominated by Binomial(r, q)).  For i > v the quotient is
(1 - f(v)) / i, below the i = v term, so the max over 1 <= i <= m is the max over 1 <= i <= v.
f(v - i) - f(v) = P[v - i <= B <= v - 1] is summed from the pmf (not a difference of tails, which
cancels when the tails are close to 1).

Turning the tail bound into a confidence bound on eps at level beta:

- delta = 0: f(v) increases with eps, so the set of rejected eps, {eps: f(v) <= beta}, is an
  interval [0, eps_lower]; eps_lower is found by bisection (its lower end kept).
- delta > 0: the bound b(v) above is not monotone in v or eps everywhere, so two safeguards keep the
  statement exact.  (1) In v: for v >= (r + 1) q the pmf is non-increasing at v - 1, hence every
  window average ending at v is at most the best one ending at v - 1, and b is non-increasing from
  there on; below that point the p-value is taken as 1 (such counts are below about r q + 1,
  where f(v) itself is near 1/2 or more, so little is lost).  The p-value is then non-increasing in v and
  P[p-value <= beta] <= beta.  (2) In eps: the p-value is tested on the fixed grid eps_j = j h
  (h = 0.001) and eps_lower is the last grid point of the prefix of rejected points.  If the true
  eps* were below eps_lower, the first grid point at or above eps* (the mechanism is also
  (eps_j, delta)-DP there) would have been rejected: probability <= beta.  Because b(v) >= f(v),
  the scan stops at the delta = 0 bound.

Tails are regularized incomplete beta functions, P[B >= v] = I_q(v, r - v + 1) (scipy
`betainc`, no inverse); every p-value is rounded up by a relative `_slack` (about 1e-7 at
r = 1e6) for round-off.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc, expit, gammaln

__all__ = ["EPSILON_GRID_STEP", "best_one_run_epsilon", "binomial_tail", "one_run_epsilon", "one_run_p_value"]

EPSILON_GRID_STEP = 1e-3
_BISECTION_STEPS = 100
_CHUNK_CELLS = 2_000_000  # pmf cells evaluated per vectorised step of the delta > 0 scan


def binomial_tail(v, r, q) -> np.ndarray:
    """P[Binomial(r, q) >= v] = I_q(v, r - v + 1): 1 for v <= 0, 0 for v > r (broadcasts)."""
    v, r, q = np.broadcast_arrays(np.asarray(v, dtype=float), np.asarray(r, dtype=float), np.asarray(q, dtype=float))
    inside = (v > 0) & (v <= r)
    val = betainc(np.where(inside, v, 1.0), np.where(inside, r - v + 1.0, 1.0), q)
    return np.where(inside, val, np.where(v <= 0, 1.0, 0.0))


def _window_term(r: int, v: int, q: np.ndarray) -> np.ndarray:
    """max_{1<=i<=v} P[v-i <= B <= v-1] / i for B ~ Bin(r, q), one value per entry of q (v >= 1).

    The pmf, exp(log C(r, j) + j log q + (r - j) log(1 - q)) with log C(r, j) from `gammaln`, is
    summed from v - 1 downwards over [lo, v - 1], lo a few standard deviations below the smallest
    mean in q; windows reaching below lo are bounded above by
    (P[lo <= B <= v-1] + P[B < lo]) / (v - lo + 1).  The log pmf carries an absolute round-off
    of a few ulps of its largest terms, so the result is rounded up by `_slack` and is never
    below the exact value.
    """
    q = np.asarray(q, dtype=float)
    lo = max(0, min(v - 1, math.floor(r * float(q.min()) - 12.0 * math.sqrt(r * 0.25)) - 1))
    j = np.arange(v - 1, lo - 1, -1, dtype=float)  # v-1, v-2, ..., lo
    log_comb = gammaln(r + 1.0) - gammaln(j + 1.0) - gammaln(r - j + 1.0)
    log_pmf = log_comb[None, :] + np.multiply.outer(np.log(q), j) + np.multiply.outer(np.log1p(-q), r - j)
    sums = np.cumsum(np.exp(log_pmf), axis=1)  # S_i = P[v-i <= B <= v-1], i = 1 .. v - lo
    best = np.max(sums / np.arange(1, j.size + 1), axis=1)
    if lo > 0:
        below = betainc(r - lo + 1.0, float(lo), 1.0 - q)  # P[B <= lo - 1] = I_{1-q}(r - lo + 1, lo)
        best = np.maximum(best, (sums[:, -1] + below) / (v - lo + 1))
    return best * (1.0 + _slack(r, q))


def _slack(r: int, q: np.ndarray) -> float:
    """Relative round-up for tails and window sums: 1e-9 + 1e-14 L, L = log r! + r max|log q|, |log(1-q)|.

    64 ulps of the largest log-pmf term; for the incomplete beta it is above the gap (~1e-8 at
    r = 1e8) between scipy's `betainc` and an independent log-space pmf sum (tests).
    """
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        logs = max(float(np.max(-np.log(q))), float(np.max(-np.log1p(-q))))
    return 1e-9 + 1e-14 * (float(gammaln(r + 1.0)) + r * min(logs, 1e3))


def one_run_p_value(num_canaries: int, guesses: int, correct: int, epsilon, delta: float) -> np.ndarray:
    """Upper bound on P[W >= correct] under (epsilon, delta)-DP (Steinke et al. 2023, Thm 3.1).

    Vectorised over `epsilon`.  For delta > 0 it is 1 when correct < (guesses + 1) q (module
    docstring), which makes it non-increasing in `correct`.  Rounded up by a relative `_slack`.
    """
    m, r, v = int(num_canaries), int(guesses), int(correct)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    q = expit(eps)
    if v <= 0:
        return np.ones_like(eps)
    tail = binomial_tail(v, r, q)
    if delta == 0.0:
        return np.minimum(1.0, tail * (1.0 + _slack(r, q)))
    out = np.ones_like(eps)
    above = v >= (r + 1) * q * (1.0 + 1e-12)  # pmf non-increasing from v - 1 on, with a round-off margin
    if np.any(above):
        bound = tail[above] + 2.0 * m * delta * _window_term(r, v, q[above])
        out[above] = np.minimum(1.0, bound * (1.0 + _slack(r, q[above])))
    return out


def _pure_epsilon(guesses: np.ndarray, correct: np.ndarray, level: float) -> np.ndarray:
    """Largest eps with P[Bin(r, e^eps/(1+e^eps)) >= v] <= level, per pair (r, v); 0 if none."""
    r = np.asarray(guesses, dtype=float)
    v = np.asarray(correct, dtype=float)
    slack = 1e-9 + 1e-14 * (gammaln(r + 1.0) + r * 1e3)  # `_slack` at its largest, per pair
    bound = lambda e: binomial_tail(v, r, expit(e)) * (1.0 + slack)  # noqa: E731
    ok0 = bound(np.zeros_like(r)) <= level
    hi = np.ones_like(r)
    for _ in range(64):  # the tail tends to 1 > level as eps grows; 2^64 is never reached
        grow = ok0 & (bound(hi) <= level)
        if not np.any(grow):
            break
        hi = np.where(grow, 2.0 * hi, hi)
    lo = np.zeros_like(r)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        ok = bound(mid) <= level
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(ok0, lo, 0.0)


def _failure_point(num_canaries: int, guesses: int, correct: int, delta: float, level: float, ceiling: float) -> float:
    """A small eps in [0, ceiling] whose p-value exceeds `level` (bisection), else `ceiling`.

    Only a scan limit and a pruning key: the grid-prefix rule is valid for any limit.
    """
    p = lambda e: float(one_run_p_value(num_canaries, guesses, correct, e, delta)[0])  # noqa: E731
    if p(0.0) > level:
        return 0.0
    lo, hi = 0.0, ceiling
    for _ in range(20):
        mid = 0.5 * (lo + hi)
        if p(mid) > level:
            hi = mid
        else:
            lo = mid
    return hi


def _grid_prefix_epsilon(
    num_canaries: int, guesses: int, correct: int, delta: float, level: float, limit: float
) -> float:
    """Last grid point eps_j = j h of the prefix of rejected points, scanning eps_j <= `limit`."""
    last = math.floor(limit / EPSILON_GRID_STEP)
    rows = max(1, _CHUNK_CELLS // max(1, correct))
    best = -1
    for start in range(0, last + 1, rows):
        grid = np.arange(start, min(last, start + rows - 1) + 1)
        p = one_run_p_value(num_canaries, guesses, correct, grid * EPSILON_GRID_STEP, delta)
        failed = np.flatnonzero(p > level)
        if failed.size:
            best = start + int(failed[0]) - 1
            break
        best = int(grid[-1])
    return max(best, 0) * EPSILON_GRID_STEP


def one_run_epsilon(num_canaries: int, guesses, correct, delta: float, level: float) -> np.ndarray:
    """Lower bound on eps at `delta`, valid with probability >= 1 - level, for each pair (r, v).

    delta = 0: exact bisection of f(v) <= level.  delta > 0: the grid-prefix rule of the module
    docstring (step `EPSILON_GRID_STEP`), never above the delta = 0 value.
    """
    r = np.atleast_1d(np.asarray(guesses, dtype=np.int64))
    v = np.atleast_1d(np.asarray(correct, dtype=np.int64))
    pure = _pure_epsilon(r, v, level)
    if delta == 0.0:
        return pure
    args: list[tuple[int, int, int, float, float]] = [
        (num_canaries, int(ri), int(vi), delta, level) for ri, vi in zip(r, v)
    ]
    return np.array(
        [_grid_prefix_epsilon(*a, _failure_point(*a, float(c))) if c > 0 else 0.0 for a, c in zip(args, pure)]
    )


def best_one_run_epsilon(num_canaries: int, guesses, correct, delta: float, level: float) -> tuple[int, float]:
    """(index, bound) of the pair with the largest `one_run_epsilon`, each pair at `level` (the first such pair
    on a tie).

    For delta > 0 the pairs are visited in decreasing order of their delta = 0 bound (an upper
    bound on theirs); a pair whose p-value already exceeds `level` at the best bound so far cannot
    beat it (its prefix of rejected grid points ends below), and is skipped without a scan.
    """
    r = np.atleast_1d(np.asarray(guesses, dtype=np.int64))
    v = np.atleast_1d(np.asarray(correct, dtype=np.int64))
    pure = _pure_epsilon(r, v, level)
    if delta == 0.0:
        best = int(np.argmax(pure))
        return best, float(pure[best])
    args: list[tuple[int, int, int, float, float]] = [
        (num_canaries, int(ri), int(vi), delta, level) for ri, vi in zip(r, v)
    ]
    best, best_eps = 0, 0.0
    for i in np.argsort(-pure, kind="stable"):
        if pure[i] <= best_eps:
            break
        if best_eps > 0 and one_run_p_value(num_canaries, int(r[i]), int(v[i]), best_eps, delta)[0] > level:
            continue
        limit = _failure_point(*args[int(i)], float(pure[i]))
        if limit <= best_eps:
            continue
        eps = _grid_prefix_epsilon(*args[int(i)], limit)
        if eps > best_eps:
            best, best_eps = int(i), eps
    return best, best_eps
