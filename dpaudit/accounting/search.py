"""The one search the accountants use: bisection that returns the end it has checked.

Every accountant inverts a monotone profile (epsilon at delta from delta(epsilon), and so on).
`smallest_accepted` keeps a bracket [rejected, accepted] and returns the accepted end: the
answer was evaluated and passed the test, so it is valid whatever the tolerance, and a test
that is not quite monotone (round-off) can only make the answer loose, never optimistic.
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["smallest_accepted", "first_accepted_doubling"]


def smallest_accepted(
    accept: Callable[[float], bool], lo: float, hi: float, *, rtol: float, atol: float = 0.0
) -> float:
    """The accepted end of a bisection of [lo, hi], where `accept(hi)` is known to hold and
    `accept(lo)` not to: stops when hi - lo <= rtol * hi + atol (at most 2100 steps)."""
    if not (lo <= hi):
        raise ValueError(f"need lo <= hi, got lo={lo!r}, hi={hi!r}")
    for _ in range(2100):  # halving a double interval to one ulp takes at most ~2100 steps
        if hi - lo <= rtol * abs(hi) + atol:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if accept(mid):
            hi = mid
        else:
            lo = mid
    return hi


def first_accepted_doubling(accept: Callable[[float], bool], start: float, limit: float) -> float:
    """The first of start, 2 start, 4 start, ... (up to `limit`) that `accept`s; inf if none."""
    x = float(start)
    while x <= limit:
        if accept(x):
            return x
        x *= 2.0
    return math.inf
