"""The one search the accountants use: bisection that returns the end it has checked.

Every accountant inverts a monotone profile (epsilon at delta from delta(epsilon), and so on).
`smallest_accepted` keeps a bracket [rejected, accepted] and returns the accepted end: the
answer was evaluated and passed the test, so it is valid whatever the tolerance, and a test
that is not quite monotone (round-off) can only make the answer loose, never optimistic.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["first_accepted_doubling", "largest_accepted_count", "smallest_accepted", "smallest_accepted_int"]


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


def smallest_accepted_int(accept: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest integer n in [lo, hi] that `accept`s, for `accept` false then true on the
    range; hi + 1 when none does (bisection, ~log2(hi - lo) calls)."""
    if not (lo <= hi + 1):
        raise ValueError(f"need lo <= hi + 1, got lo={lo!r}, hi={hi!r}")
    hi += 1  # invariant: the answer lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if accept(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def largest_accepted_count(accept: Callable[[int], bool], max_count: int) -> int:
    """The largest k in [1, max_count] that `accept`s, for `accept` true then false; 0 when
    `accept(1)` fails. Doubling first, so no count beyond twice the answer is evaluated (a large
    count can be slow for an accountant); every k returned was evaluated and accepted."""
    if not accept(1):
        return 0
    refused = int(first_accepted_doubling(lambda x: x > max_count or not accept(int(x)), 2.0, 2.0 * max_count))
    accepted = refused // 2  # evaluated and accepted (or 1)
    if refused > max_count and accept(max_count):
        return max_count
    return smallest_accepted_int(lambda k: not accept(k), accepted + 1, min(refused, max_count) - 1) - 1
