"""What Shuffle-SE's server sees, exactly: the count of ones of one P_Shuffle release (Chowdhury & Zhou, "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023, Thm 3, App. D.2, with `mechanisms.ShuffleSum`'s unary
randomized-response bits).

One release of n users: user i sends y_i = (x̂_i + η_i) mod m, η_i = Pólya(1/n, θ) - Pólya(1/n, θ), as d = m - 1
unary bits each flipped with probability f; the server sees the count C = Bin(S, 1 - f) + Bin(n d - S, f) of ones,
S = Σ_i y_i over the integers. C is a post-processing of S (the flips do not depend on the inputs given S), and
S = y_1 + (the others' sum, independent of user 1), so ε(C) <= ε(S) <= ε(y_1):

- `shuffle_count_epsilon`: the pure ε of y_1, log f(0)/f(g) for f the Pólya-difference pmf (an upper bound on
  ε(C) for every n, computed from f(0) and f(g) alone);
- `shuffle_sum_lower_epsilon`, `shuffle_count_lower_epsilon`: ε(S) and ε(C) from below, on the pair "every
  reward 0" against "user 1's reward 1" at the outcome S = 0, resp. C = 0 (the flips' share bounded);
- `shuffle_sum_pmf`, `worst_over_inputs`, `shuffle_sum_enumerated_epsilon`: S's pmf by convolving the users'
  wrapped shares, and ε(S) maximised over every multiset of the other users' encodings (small n only: the
  catalog's exact view, an independent check of the bound).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator

import numpy as np
from scipy import stats
from scipy.special import gammaln, logsumexp

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.accounting.pmf import pmf_pure_epsilon
from dpaudit.mechanisms.shuffle_sum import ShuffleSum
from dpaudit.validation import check_positive

__all__ = [
    "fold",
    "polya_difference_log_pmf",
    "polya_difference_pmf",
    "share_law",
    "shuffle_count_epsilon",
    "shuffle_count_event",
    "shuffle_count_lower_epsilon",
    "shuffle_sum_enumerated_epsilon",
    "shuffle_sum_lower_epsilon",
    "shuffle_sum_pmf",
    "worst_over_inputs",
]

_TAIL_RELATIVE = 1e-15  # the Pólya-difference series is cut where its remainder is below this fraction
_ROUND_OFF = 1e-9  # relative margin on a computed log-ratio: floating-point sums of a few thousand terms
_TINY = 1e-300  # a positive missing mass that underflows is carried as this (rounded up)


# ---- the pure epsilon of one release from the Pólya-difference pmf at two points


def polya_difference_log_pmf(k: int, r: float, theta: float) -> tuple[float, float]:
    """[lower, upper] on log f(k), f the pmf of η = G1 - G2, G_i ~ Pólya(r, θ) independent (pmf
    Γ(j+r)/(Γ(r) j!) θ^j (1-θ)^r; Chowdhury & Zhou (ICLR 2023), Fact 1): f(k) = Σ_j P(j + |k|) P(j).

    The terms fall by at least θ² per step (P(j+1)/P(j) = θ(j+r)/(j+1) <= θ for r <= 1), so the series is cut
    after J terms, its remainder at most the last term times θ²/(1 - θ²) (added to the upper end)."""
    k = abs(int(k))
    check_positive(r, "r")
    if not 0.0 < theta < 1.0:
        raise ValueError(f"theta must lie in (0, 1), got {theta!r}")
    if r > 1.0:
        raise ValueError(f"r must be <= 1 (a share of the Pólya noise), got {r!r}")
    log_theta = math.log(theta)
    ratio_tail = -math.log1p(-theta * theta)  # log 1/(1 - θ²)
    terms = math.ceil((math.log(_TAIL_RELATIVE) - ratio_tail) / (2 * log_theta)) + 1
    j = np.arange(terms, dtype=float)

    def log_p(x: np.ndarray) -> np.ndarray:
        return gammaln(x + r) - gammaln(r) - gammaln(x + 1) + x * log_theta + r * math.log1p(-theta)

    series = log_p(j + k) + log_p(j)
    lower = float(logsumexp(series))
    remainder = float(series[-1]) + 2 * log_theta - math.log1p(-theta * theta)
    upper = float(np.logaddexp(lower, remainder))
    return lower - _ROUND_OFF * (1 + abs(lower)), upper + _ROUND_OFF * (1 + abs(upper))


def shuffle_count_epsilon(protocol: ShuffleSum) -> float:
    """Pure ε (rounded up) of one Shuffle-SE release as the server sees it, the count of ones C, over every
    one-user change: ε(C) <= ε(S) <= the pure ε of y_1 = (x̂_1 + η_1) mod m (module docstring), whose laws for
    x̂_1 = a, b are the Pólya-difference pmf f folded mod m and shifted by a, b (0 <= a < b <= g). With r = 1/n <= 1
    every Pólya pmf is log-convex, so f is log-convex on k >= 0, f(k + 1)/f(k) is non-decreasing there and
    |log f(k)/f(k + Δ)| <= log f(0)/f(Δ) for every k; a ratio of folded sums is at most its worst term's, and f
    decreases in |k|: the bound is log f(0)/f(g), for the pair (0, g). It is also ε(S) up to the fold
    (`shuffle_sum_lower_epsilon`), and ε(C) up to the flips (`shuffle_count_lower_epsilon`)."""
    n, g = protocol.params.n, protocol.params.g
    top = polya_difference_log_pmf(0, 1.0 / n, protocol.theta)[1]
    bottom = polya_difference_log_pmf(g, 1.0 / n, protocol.theta)[0]
    return top - bottom


def _log_folded(protocol: ShuffleSum, t: int, x: int, upper: bool) -> float:
    """A bound on log u_x(t), u_x(t) = P((x + η) mod m = t) = Σ_i f(i m + t - x) (0 <= t - x + m): from below its
    term i = 0; from above its terms |i| <= 1 and the rest by the geometric decay f(k + 1) <= θ f(k), k >= 0
    (P(j+1)/P(j) <= θ for r <= 1): Σ_{|i| >= 2} <= 2 max_term θ^m/(1 - θ^m)."""
    n, m = protocol.params.n, protocol.params.m
    r, theta = 1.0 / n, protocol.theta
    if not upper:
        return polya_difference_log_pmf(t - x, r, theta)[0]
    terms = [polya_difference_log_pmf(i * m + t - x, r, theta)[1] for i in (-1, 0, 1)]
    far = math.log(2.0) + max(terms) + m * math.log(theta) - math.log1p(-(theta**m))
    return float(logsumexp([*terms, far]))


def shuffle_sum_lower_epsilon(protocol: ShuffleSum) -> float:
    """The pure ε of the flip-free count S from below: S = 0 needs every y_i = 0, so on the pair (every x̂_i = 0)
    against (x̂_1 = g, the others 0) P_0(S = 0)/P_g(S = 0) = u_0(0)/u_g(0), the others' factor cancelling."""
    g = protocol.params.g
    return _log_folded(protocol, 0, 0, upper=False) - _log_folded(protocol, 0, g, upper=True)


def shuffle_count_lower_epsilon(protocol: ShuffleSum) -> float:
    """The pure ε of the count C from below, on the same pair at C = 0. P(C = 0 | S = s) = (1 - f)^{nd} ρ^s with
    ρ = f/(1 - f) <= 1, and S = 1 needs one y_i = 1 and the others 0, so with u = u_0(0)

        P_0(C = 0) >= (1 - f)^{nd} u^n,
        P_g(C = 0) <= (1 - f)^{nd} (u_g(0) u^{n-1} + ρ (u_g(1) u^{n-1} + (n - 1) u_g(0) u_0(1) u^{n-2}) + ρ²),

    and ε(C) >= log u - log(u_g(0) + ρ u_g(1) + ρ (n - 1) u_g(0) u_0(1)/u + ρ² u^{-(n-1)}), increasing in u."""
    n, g, f = protocol.params.n, protocol.params.g, protocol.flip
    log_u = _log_folded(protocol, 0, 0, upper=False)
    log_ug0 = _log_folded(protocol, 0, g, upper=True)
    if f == 0.0:
        return log_u - log_ug0
    log_rho = math.log(f) - math.log1p(-f)
    others = math.log(n - 1) + log_ug0 + _log_folded(protocol, 1, 0, upper=True) - log_u if n > 1 else -math.inf
    flips = [log_rho + _log_folded(protocol, 1, g, upper=True), log_rho + others, 2 * log_rho - (n - 1) * log_u]
    return log_u - float(logsumexp([log_ug0, *flips]))


def shuffle_count_event(protocol: ShuffleSum) -> EpsilonDeltaDpEvent:
    """One Shuffle-SE release as the accounting engine sees it: pure (`shuffle_count_epsilon`, 0)."""
    return EpsilonDeltaDpEvent(shuffle_count_epsilon(protocol), 0.0)


# ---- the law of S by convolution, and its pure epsilon over every input (small n)


def polya_difference_pmf(r: float, theta: float, width: int) -> tuple[np.ndarray, float]:
    """pmf of Pólya(r, θ) - Pólya(r, θ) (Pólya(r, θ) = negative binomial NB(r, 1 - θ), scipy's pmf) on
    -width..width, and the mass missed: 2 P(Pólya > width)."""
    a = stats.nbinom.pmf(np.arange(width + 1), r, 1 - theta) * (1 - 1e-13)
    tail = float(stats.nbinom.sf(width, r, 1 - theta))
    return np.convolve(a, a[::-1]), 2 * max(tail, _TINY)


def fold(pmf: np.ndarray, low: int, m: int) -> np.ndarray:
    """The pmf of X mod m for X with `pmf` on low, low + 1, ..."""
    out = np.zeros(m)
    np.add.at(out, np.mod(np.arange(pmf.size) + low, m), pmf)
    return out


@functools.lru_cache(maxsize=8)
def share_law(protocol: ShuffleSum) -> tuple[np.ndarray, float]:
    """pmf of η_i = Pólya(1/n, θ) - Pólya(1/n, θ) folded on Z_m (ShuffleSum.randomize), and its slack."""
    width = math.ceil(-745.0 / math.log(protocol.theta)) + 40  # θ^width < 1e-323: beyond float range
    pmf, slack = polya_difference_pmf(1.0 / protocol.params.n, protocol.theta, width)
    return fold(pmf, -width, protocol.params.m), slack


def shuffle_sum_pmf(protocol: ShuffleSum, encodings: tuple[int, ...]) -> tuple[np.ndarray, float]:
    """pmf of S = Σ_i ((x̂_i + η_i) mod m) on 0..k(m-1) for the users' encodings x̂_i (mechanisms.ShuffleSum),
    and its slack (the users' slacks add)."""
    share, slack = share_law(protocol)
    out = np.array([1.0])
    for x in encodings:
        out = np.convolve(out, np.roll(share, x))
    return out, len(encodings) * slack


def _configurations(n: int, g: int) -> Iterator[tuple[int, ...]]:
    """Every multiset of the other n - 1 users' encodings in 0..g, as a tuple of counts of 1..g."""

    def rec(left: int, values: int) -> Iterator[tuple[int, ...]]:
        if values == 0:
            yield ()
            return
        for c in range(left + 1):
            for rest in rec(left - c, values - 1):
                yield (c, *rest)

    yield from rec(n - 1, g)


def _others(counts: tuple[int, ...], n: int) -> tuple[int, ...]:
    out = [v for v, c in enumerate(counts, start=1) for _ in range(c)]
    return tuple(out + [0] * (n - 1 - len(out)))


def worst_over_inputs(protocol: ShuffleSum, view: Callable[[np.ndarray, np.ndarray, float], float]) -> float:
    """max over the other users' encodings and the changed user's pair (a, b), a < b, of view(S's pmf at a,
    S's pmf at b, slack): every multiset of the others' encodings is enumerated (C(n - 1 + g, g) of them)."""
    n, g = protocol.params.n, protocol.params.g
    share, share_slack = share_law(protocol)
    worst = 0.0
    for counts in _configurations(n, g):
        rest, rest_slack = shuffle_sum_pmf(protocol, _others(counts, n))
        laws = [np.convolve(rest, np.roll(share, a)) for a in range(g + 1)]
        slack = rest_slack + share_slack
        for a in range(g + 1):
            for b in range(a + 1, g + 1):
                worst = max(worst, view(laws[a], laws[b], slack))
    return worst


@functools.lru_cache(maxsize=8)
def shuffle_sum_enumerated_epsilon(protocol: ShuffleSum) -> float:
    """Pure ε (rounded up) of the flip-free count S of one release over every one-user change, by enumeration
    (`worst_over_inputs` of `dpaudit.accounting.pmf.pmf_pure_epsilon`): an upper bound on the count C's."""
    return worst_over_inputs(protocol, pmf_pure_epsilon)
