"""Sound bounds on scipy's binomial tails and pmf, for any number of trials up to 2^52.

scipy computes P(X >= k) = I_p(k, N - k + 1), P(X <= k) and the pmf of X ~ Bin(N, p) (Boost's regularized incomplete
beta function and its derivative) with a relative error that grows with N: the incomplete beta's exponent, of size
~|z|√N (z = (k - Np)/sd the count's distance to the mean in sd), is rounded. Against 40-digit mpmath sums of the pmf
(tests/accounting/exact_binomial.py), wherever the value exceeds 10^-290, the error was at most 0.78 ulp·√N·(1 + |z|)
at N from 10^6 to 2^52 (p = 1/4, |z| <= 30, 30 random z per N), and at most 2.2 ulp·√N·(1 + |z|), 22 ulp, at every
count of N <= 3000 (p in {0.01, 0.25, 0.3, 0.5, 0.9}). The bound allowed, `RELATIVE`·√N·(1 + |z|) + `FLOOR`, is ten
times the first (and 3.6 times the second before `FLOOR`, 4096 ulp, is added); `ABSOLUTE` covers the subnormal range
below 10^-290. An upper bound raises a computed value by both, a lower bound lowers it, so a difference
P(S) - e^eps Q(S) built from an upper bound on P(S) and a lower bound on Q(S) is never below the exact one.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ABSOLUTE", "FLOOR", "RELATIVE", "lower_bounds", "relative_error", "upper_bounds"]

RELATIVE = 8 * 2.0**-52
FLOOR = 2.0**-40
ABSOLUTE = 1e-300


def relative_error(counts: np.ndarray, trials: int, p: float) -> np.ndarray:
    """The relative error allowed in scipy's tail or pmf of Bin(N, p) at `counts`: `RELATIVE`·√N·(1 + |z|) + `FLOOR`."""
    sd = math.sqrt(trials * p * (1 - p))
    z = np.abs(np.asarray(counts, dtype=float) - trials * p) / sd
    return RELATIVE * math.sqrt(trials) * (1 + z) + FLOOR


def upper_bounds(values: np.ndarray, counts: np.ndarray, trials: int, p: float) -> np.ndarray:
    """Upper bounds on the exact tails or pmf values that scipy computed as `values` at `counts`, capped at 1."""
    return np.minimum(1.0, values * (1 + relative_error(counts, trials, p)) + ABSOLUTE)


def lower_bounds(values: np.ndarray, counts: np.ndarray, trials: int, p: float) -> np.ndarray:
    """Lower bounds on the exact tails or pmf values that scipy computed as `values` at `counts`, at least 0."""
    return np.maximum(0.0, values * (1 - relative_error(counts, trials, p)) - ABSOLUTE)
