"""Privacy loss distribution of the binomial count mechanism on a grid of privacy losses, for any number of trials.

Release Y = c + X with X ~ Bin(N, p); one user moves the count c by s. The log likelihood ratio
R(y) = log f(y - s)/f(y) (f the Bin(N, p) pmf) is non-decreasing in y (the binomial is log-concave;
`dpaudit.accounting.binomial`), so each grid cell ((k-1)v, kv] of the privacy loss is an interval of counts, found
by a search of the tabulated ratio, and its mass is a difference of binomial tails (regularized incomplete beta
functions): nothing is enumerated, so Cheu et al.'s theorem-sized noise (N ~ 10¹⁰ bits) costs what N = 100 does.
Every loss is rounded up (with a round-off margin), counts only one law produces and the tails beyond ±40 sd go to
infinity or to the grid's pessimistic end, and the cells' masses are differences of upper bounds on the tails
P(loss > k v): the loss is stochastically dominated, in each direction and under composition (a sum of dominated
independent losses is dominated), and δ(ε) = E[(1 - e^(ε - loss))⁺] is non-decreasing in the loss, so every δ(ε)
the distribution gives is an upper bound (the hockey-stick divergence is attained on level sets of R: Balle,
Barthe, Gaboardi, "Privacy Amplification by Subsampling", NeurIPS 2018, Thm 1). The `pld` accountant uses it for
binomial counts too wide to enumerate (`curves.binomial_pld`).
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

from dpaudit.accounting.binomial import MAX_TRIALS
from dpaudit.accounting.binomial import _log_ratio as _count_log_ratio
from dpaudit.accounting.binomial_tails import upper_bounds
from dpaudit.validation import check_open_unit, check_positive, check_positive_int

__all__ = ["MAX_CELLS", "binomial_loss_pld", "default_interval", "loss_span", "smallest_interval", "windows_overlap"]

MAX_CELLS = 200_000  # cells per direction at most: the interval is widened beyond
_SIDE_SDS = 40.0  # counts beyond the mean ± this many sd: mass < 10^-340, put at the pessimistic end
_ROUND_OFF = 1e-9  # absolute margin added to every computed loss before it is rounded up to the grid
_WORK = 4_000_000  # cells x shift at most: every bisection step of a cell sums `shift` log-ratio terms
_TABLE = 4097  # counts at which the log ratio is tabulated for the search
_NEAR = 4  # counts either side of an interpolated crossing
_NEGLIGIBLE = 1e-200  # the cells above the last tail beyond this go to infinity: no subnormal masses in the pmf


def _check(trials: int, probability: float, shift: int) -> tuple[int, float, int]:
    n = check_positive_int(trials, "trials")
    p = check_open_unit(probability, "probability")
    s = check_positive_int(shift, "shift")
    if n > MAX_TRIALS:
        raise ValueError(f"trials={n} > 2^52: the counts are not exact in float64")
    if s > n:
        raise ValueError(f"shift={s} exceeds trials={n}: the two laws have disjoint supports (no privacy)")
    return n, p, s


def _window(trials: int, p: float) -> tuple[int, int]:
    """The counts of Bin(N, p) within ±40 sd of its mean (mass outside < 10^-340)."""
    sd = math.sqrt(trials * p * (1 - p))
    return max(0, math.floor(trials * p - _SIDE_SDS * sd)), min(trials, math.ceil(trials * p + _SIDE_SDS * sd))


def windows_overlap(trials: int, probability: float, shift: int) -> bool:
    """Whether X and X + s, X ~ Bin(N, p), share a count within ±40 sd of both laws' means. When they do not,
    each law's window lies where the other is below 10^-340 (every privacy loss infinite, delta 1 in both
    directions up to that mass), and the loss grid has no cells to build."""
    n, p, s = _check(trials, probability, shift)
    x_lo, x_hi = _window(n, p)
    return x_lo + s <= min(n, x_hi) and s <= x_hi


def loss_span(trials: int, probability: float, shift: int) -> float:
    """The largest |R(y)| over the counts of the ±40 sd window (the range of losses the grid covers)."""
    n, p, s = _check(trials, probability, shift)
    sd = math.sqrt(n * p * (1 - p))
    ends = np.array([max(s, math.floor(n * p - _SIDE_SDS * sd)), min(n, math.ceil(n * p + _SIDE_SDS * sd) + s)])
    return float(np.max(np.abs(_count_log_ratio(ends, n, p, s))))


def smallest_interval(trials: int, probability: float, shift: int) -> float:
    """The finest loss interval the grid is built on: 2 span / min(2·10⁵, 4·10⁶/shift) cells (the cells' count,
    and the work of the bisections, which sum `shift` terms per step, stay bounded)."""
    cells = min(MAX_CELLS, _WORK // shift)
    return 2 * loss_span(trials, probability, shift) / max(cells, 1)


def default_interval(trials: int, probability: float, shift: int) -> float:
    """min(10⁻⁵, μ/200), μ = s/sd the count's normal-limit Gaussian-DP parameter (each composition adds up to one
    interval to the losses, so thousands of composed labels stay within a few percent), widened to
    `smallest_interval` where the ±40 sd window would need more cells."""
    n, p, s = _check(trials, probability, shift)
    sd = math.sqrt(n * p * (1 - p))
    return max(min(1e-5, s / sd / 200), smallest_interval(n, p, s))


def _ok(y: np.ndarray, level: np.ndarray, trials: int, p: float, shift: int) -> np.ndarray:
    """Whether the computed log ratio at y, plus the round-off margin, is at most `level`: where it holds, every
    count up to y has a true loss at most `level` (the true log ratio is non-decreasing)."""
    return _count_log_ratio(y, trials, p, shift) + _ROUND_OFF <= level


def _bisect(a: np.ndarray, b: np.ndarray, level: np.ndarray, trials: int, p: float, shift: int) -> np.ndarray:
    """Vectorised bisection from a (where `_ok` holds, or lo - 1) towards b (taken as failing): the last ok count."""
    while True:
        open_ = b - a > 1
        if not open_.any():
            return a
        mid = np.where(open_, (a + b) // 2, b)  # closed entries evaluate a valid count, unused
        ok = _ok(mid, level, trials, p, shift)
        a = np.where(open_ & ok, mid, a)
        b = np.where(open_ & ~ok, mid, b)


def _largest_at_most(level: np.ndarray, lo: int, hi: int, trials: int, p: float, shift: int) -> np.ndarray:
    """For each level, a count y in [lo, hi] where `_ok` holds, the largest up to round-off (lo - 1 when `_ok` fails
    at lo). The log ratio is smooth and nearly linear in y: it is tabulated at `_TABLE` counts, each level's
    crossing is interpolated in its table interval [a, b], and a bisection runs from the last of a, guess - `_NEAR`,
    guess + `_NEAR` where `_ok` holds. Only `_ok` at the answer matters for soundness, the search for tightness.
    A large shift gets fewer table counts, so that the table sums at most `_WORK` terms."""
    ys = np.unique(np.linspace(lo, hi, min(_TABLE, max(2, _WORK // shift))).astype(np.int64))
    table = _count_log_ratio(ys, trials, p, shift) + _ROUND_OFF
    i = np.searchsorted(np.maximum.accumulate(table), level, side="right")  # ys[:i] are ok
    j = np.clip(i, 1, ys.size - 1)
    a, b = ys[j - 1], ys[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(np.nan_to_num((level - table[j - 1]) / (table[j] - table[j - 1])), 0.0, 1.0)
    guess = a + np.floor(frac * (b - a)).astype(np.int64)
    near_lo, near_hi = np.maximum(a, guess - _NEAR), np.minimum(b, guess + _NEAR)
    ok_lo, ok_hi = _ok(near_lo, level, trials, p, shift), _ok(near_hi, level, trials, p, shift)
    start = np.where(ok_hi, near_hi, np.where(ok_lo, near_lo, np.where(_ok(a, level, trials, p, shift), a, lo - 1)))
    stop = np.where(ok_hi, b, np.where(ok_lo, near_hi, near_lo))
    found = _bisect(start, stop, level, trials, p, shift)
    return np.where(i == 0, lo - 1, np.where(i >= ys.size, hi, found))


def _upper_tails(tails: np.ndarray, counts: np.ndarray, trials: int, p: float) -> np.ndarray:
    """Upper bounds on binomial tails computed by scipy (incomplete beta functions), raised by their error bound
    (`dpaudit.accounting.binomial_tails`), then made non-increasing along the grid (capped at 1)."""
    return np.maximum.accumulate(upper_bounds(tails, counts, trials, p)[::-1])[::-1]


def _one_direction(trials: int, p: float, shift: int, vdi: float, sign: int) -> tuple[dict[int, float], float]:
    """Pmf of the privacy loss on the grid vdi·Z and its infinity mass, for the upper law X + s against X
    (sign = +1: loss R(y) = log f(y - s)/f(y) at y = X + s) or X against X + s (sign = -1: loss -R(y) at
    y = X), built from upper bounds on its tails P(loss > k vdi) (`_upper_tails`), which stochastically
    dominate the true loss: every loss is rounded up to the grid, counts one side alone produces, the counts
    beyond the top cell and the cells whose tail is below `_NEGLIGIBLE` go to infinity, the lowest cell takes
    what is left."""
    x_lo, x_hi = _window(trials, p)
    if sign > 0:  # y = X + s, loss R(y) non-decreasing in y; y > N only under the upper law
        y_lo, y_hi = max(shift, x_lo + shift), min(trials, x_hi + shift)
        ends = np.array([y_lo, y_hi])
        k_lo, k_hi = np.ceil((_count_log_ratio(ends, trials, p, shift) + _ROUND_OFF) / vdi).astype(np.int64)
        grid = np.arange(k_lo, k_hi + 1)
        cut = _largest_at_most(grid * vdi, y_lo, y_hi, trials, p, shift)  # y <= cut[k] has loss <= k vdi
        x = cut - shift  # loss > k vdi only where X > x[k] (y > N included: cut <= N)
        tails = _upper_tails(stats.binom.sf(x, trials, p), x, trials, p)
    else:  # y = X, loss -R(y) non-increasing in y; y < s only under the upper law
        y_lo, y_hi = max(shift, x_lo), x_hi
        ends = np.array([y_hi, y_lo])
        k_lo, k_hi = np.ceil((-_count_log_ratio(ends, trials, p, shift) + _ROUND_OFF) / vdi).astype(np.int64)
        grid = np.arange(k_lo, k_hi + 1)
        # y > cut[k] (not R̂(y) + margin <= 2 margin - k vdi) has true loss -R(y) <= -R̂(y) + margin < k vdi, if
        # `_ok` fails at cut + 1 (so R(y) >= R(cut + 1) for y > cut): checked, the window's top taken where it holds
        level = 2 * _ROUND_OFF - grid * vdi
        cut = _largest_at_most(level, y_lo, y_hi, trials, p, shift)
        cut = np.where((cut < y_hi) & _ok(np.minimum(cut + 1, y_hi), level, trials, p, shift), y_hi, cut)
        tails = _upper_tails(stats.binom.cdf(cut, trials, p), cut, trials, p)  # loss > k vdi only where X <= cut[k]
    top = max(1, int(np.count_nonzero(tails > _NEGLIGIBLE)))  # cells above it (tails below 1e-200) go to infinity
    grid, tails = grid[:top], tails[:top]
    masses = np.concatenate([[1.0], tails[:-1]]) - tails  # the lowest cell takes 1 - P(loss > k_lo vdi)
    pmf = {int(k): float(m) for k, m in zip(grid, masses) if m > 0}
    return pmf, float(tails[-1])


def binomial_loss_pld(
    trials: int, probability: float, shift: int, value_discretization_interval: float | None = None
) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic privacy loss distribution of a count plus Bin(N, p) noise that one user moves by `shift`,
    both directions (the binomial is skewed for p != 1/2), for any N up to 2⁵² (module docstring).

    The interval is `value_discretization_interval` (default `default_interval`), widened to
    `smallest_interval` where it is finer. Raises for N > 2⁵² (counts not exact in float64), for a
    shift beyond N (disjoint supports) and for laws disjoint within ±40 sd (`windows_overlap`)."""
    n, p, s = _check(trials, probability, shift)
    if not windows_overlap(n, p, s):
        raise ValueError(
            f"shift={s} moves Bin({n}, {p:g}) beyond 40 sd of its mean: the two laws are disjoint up to 1e-340 "
            "(delta 1 at every epsilon), no loss grid to build"
        )
    v = (
        default_interval(n, p, s)
        if value_discretization_interval is None
        else max(
            check_positive(value_discretization_interval, "value_discretization_interval"), smallest_interval(n, p, s)
        )
    )
    remove, inf_remove = _one_direction(n, p, s, v, +1)
    add, inf_add = _one_direction(n, p, s, v, -1)
    return pld_lib.PrivacyLossDistribution(
        pld_pmf.create_pmf(remove, v, inf_remove, True), pld_pmf.create_pmf(add, v, inf_add, True)
    )
