"""An exact lower confidence bound on the ratio p0 / p1 of two binomial proportions, by Poisson thinning.

For pure DP (delta = 0) an event's bound is log(p0 / p1).  Bounding p0 from below and p1 from above
(`dpaudit.audit.bounds`) spends the error level on two bounds, each at half of it; a test of the ratio
itself spends it once.  For two Poisson counts the conditional test is exact: given their sum K, the first
is Binomial(K, pi) with pi = lambda0 / (lambda0 + lambda1) (Przyborowski and Wilenski, "Homogeneity of results
in testing samples from Poisson series", Biometrika 1940; Lehmann and Romano, "Testing Statistical
Hypotheses", 3rd ed., Springer 2005, Sec. 4.6), so a Clopper-Pearson lower bound pi_L on pi bounds

    lambda0 / lambda1 >= pi_L / (1 - pi_L).

Binomial counts are made Poisson by thinning: of the n runs of each input only N ~ Poisson(m) are kept,
N drawn independently of the runs (`thin`).  The first N runs of an endless sequence of them hold
Poisson(m p) events, independently for the two inputs (a Poisson number of independent Bernoulli(p)
trials; Mitzenmacher and Upfal, "Probability and Computing", 2nd ed., Cambridge 2017, Sec. 5.4), and the
n runs drawn are that sequence's start.  When N <= n on both sides the kept counts are those Poisson
counts; otherwise no bound is given (0), which cannot fail.  So the bound fails with probability at most
the test's level.  A draw exceeds the runs with probability at most `TAIL` on each side: m is set by the
Chernoff bound

    P(Poisson(m) > n) <= exp(-(n + 1) log((n + 1) / m) + (n + 1) - m)        (m < n + 1).

The thinning costs the n - m runs dropped: 0.18% at 10^7 runs per side, 1.8% at 10^5, 5.5% at 10^4.
Where that, or an event of most runs (Poisson counts vary more than binomial ones), makes the two
one-sided bounds the better choice, the selection split says so (`dpaudit.audit.selection`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.audit.bounds import cp_lower, cp_upper

__all__ = [
    "MAX_NOBS",
    "TAIL",
    "Thinned",
    "best_case_log_ratio",
    "log_ratio_from_counts",
    "log_ratio_lower",
    "ratio_applies",
    "thin",
    "thinning_mean",
]

#: The largest probability that a side's thinning draw exceeds its runs (the event then gives no bound).
TAIL = 1e-7
#: numpy's hypergeometric sampler takes populations below 10^9 (`thin`).
MAX_NOBS = 10**9 - 1
_BISECT_STEPS = 200


@dataclass(frozen=True)
class Thinned:
    """The runs kept of each input (`nobs_*`, Poisson draws) and the events among them (`count_*`)."""

    nobs_first: int
    count_first: int
    nobs_second: int
    count_second: int


def thinning_mean(nobs: int, tail: float = TAIL) -> float:
    """The largest m (to bisection accuracy, rounded down) with the Chernoff bound on P(Poisson(m) > nobs) <= tail.

    g(m) = (n + 1) log((n + 1) / m) - (n + 1) + m decreases from infinity at m -> 0 to 0 at m = n + 1,
    and P(Poisson(m) > n) <= exp(-g(m)); the root of g(m) = log(1 / tail) is found by bisection, keeping
    the end where g >= log(1 / tail).
    """
    if isinstance(nobs, bool) or not isinstance(nobs, (int, np.integer)) or not 1 <= nobs <= MAX_NOBS:
        raise ValueError(f"nobs must be an integer in [1, {MAX_NOBS}], got {nobs!r}")
    if not (isinstance(tail, (int, float)) and 0.0 < tail < 1.0):
        raise ValueError(f"tail must lie in (0, 1), got {tail!r}")
    n1 = float(nobs) + 1.0
    target = -math.log(tail)

    def g(m: float) -> float:
        return n1 * math.log(n1 / m) - n1 + m

    lo, hi = 0.0, n1
    for _ in range(_BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if g(mid) >= target:
            lo = mid
        else:
            hi = mid
    return lo


def thin(count_first: int, count_second: int, nobs: int, mean: float, rng: np.random.Generator) -> Thinned | None:
    """Keep N ~ Poisson(`mean`) of the `nobs` runs of each input; None when a draw exceeds `nobs`.

    The events among N runs picked at random from n, k of them events, are hypergeometric: the same law
    as among the first N of n exchangeable runs."""
    kept = rng.poisson(mean, size=2)
    if int(kept.max()) > nobs:
        return None
    out = []
    for k, size in zip((count_first, count_second), kept):
        size = int(size)
        out += [size, int(rng.hypergeometric(k, nobs - k, size)) if size > 0 and k > 0 else 0]
    return Thinned(*out)


def log_ratio_from_counts(count_first, count_second, level: float) -> np.ndarray:
    """log(pi_L / (1 - pi_L)), pi_L the one-sided Clopper-Pearson lower bound at `level` on the first count's
    share of the two Poisson counts; -inf where the first is 0.  Counts broadcast (a 0-d array for scalars).

    1 - pi_L is the Clopper-Pearson upper bound on the second's share (the same root), which keeps its digits
    when pi_L is near 1; both ends are computed on their safe sides (`dpaudit.audit.bounds`)."""
    k0, k1 = np.broadcast_arrays(np.asarray(count_first, dtype=float), np.asarray(count_second, dtype=float))
    total = np.maximum(k0 + k1, 1.0)
    upper = cp_upper(k1, total, level)  # >= the exact 1 - pi_L
    low = cp_lower(k0, total, level)  # <= the exact pi_L
    with np.errstate(divide="ignore"):
        out = np.where(upper <= 0.5, np.log1p(-upper) - np.log(upper), np.log(low) - np.log1p(-low))
    return np.where(k0 > 0, out, -np.inf)


def ratio_applies(delta: float, nobs: int, level: float) -> bool:
    """Whether an event's bound may use the test, with `level` the per-proportion level of the two one-sided
    bounds it replaces (the test runs at 2 * level): pure DP only, numpy's hypergeometric, levels up to 1/2."""
    return delta == 0.0 and nobs <= MAX_NOBS and 2 * level <= 0.5


def best_case_log_ratio(nobs: int, level: float) -> float:
    """The largest bound the test can give with `nobs` runs per side: all kept runs of the first input in the
    event (at most `nobs`), none of the second; log(pi_L / (1 - pi_L)) with pi_L = level^(1/nobs)."""
    if isinstance(nobs, bool) or not isinstance(nobs, (int, np.integer)) or nobs < 1:
        raise ValueError(f"nobs must be a positive integer, got {nobs!r}")
    return float(log_ratio_from_counts(nobs, 0, level))


def log_ratio_lower(
    count_first: int, count_second: int, nobs: int, level: float, rng: np.random.Generator
) -> tuple[float, Thinned | None]:
    """A lower bound on log(p0 / p1) that holds with probability >= 1 - `level`, from k0 ~ Bin(n, p0) and
    k1 ~ Bin(n, p1) independent (`nobs` = n): thinned (`thin`), then the conditional test of the Poisson
    counts (`log_ratio_from_counts`).  -inf (no bound) when a thinning draw exceeds the runs.  Also
    returns the thinned counts."""
    if not (isinstance(level, (int, float)) and 0.0 < level <= 0.5):
        raise ValueError(f"level must lie in (0, 0.5], got {level!r}")
    mean = thinning_mean(nobs)
    for name, k in (("count_first", count_first), ("count_second", count_second)):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= nobs:
            raise ValueError(f"{name} must be an integer in [0, nobs={nobs}], got {k!r}")
    kept = thin(count_first, count_second, nobs, mean, rng)
    if kept is None:
        return -math.inf, None
    return float(log_ratio_from_counts(kept.count_first, kept.count_second, level)), kept
