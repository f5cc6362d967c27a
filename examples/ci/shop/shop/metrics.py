"""Private statistics of the shop's visit log: one row per customer, 1 if they bought something.

Every function takes the log, a numpy Generator and `size`, and returns `size` independent releases
(one row each), the shape `dpaudit.audit.audit` samples.
"""

from __future__ import annotations

import numpy as np


def buyers_count(log: np.ndarray, rng: np.random.Generator, size: int, epsilon: float = 1.0) -> np.ndarray:
    """The number of buyers plus Laplace noise of scale 1/epsilon: epsilon-DP, as one customer changes
    the count by at most 1 (Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in
    Private Data Analysis", TCC 2006)."""
    return np.sum(log) + rng.laplace(0.0, 1.0 / epsilon, size)


def buyers_count_per_hundred(log: np.ndarray, rng: np.random.Generator, size: int, epsilon: float = 1.0) -> np.ndarray:
    """A buggy twin: the noise is scaled for the rate per hundred customers but added to the count, so
    with 10 customers it is 10x too small for the claimed epsilon (the audit must catch this)."""
    return np.sum(log) + rng.laplace(0.0, len(log) / (100 * epsilon), size)


def mean_basket(baskets: np.ndarray, rng: np.random.Generator, size: int, sigma: float = 2.0) -> np.ndarray:
    """The sum of basket values (each clipped to [0, 1]) plus N(0, sigma^2): the Gaussian mechanism,
    (epsilon, delta)-DP with the epsilon its privacy-loss distribution gives (Balle, Wang, "Improving the
    Gaussian Mechanism for Differential Privacy", ICML 2018)."""
    return np.clip(baskets, 0.0, 1.0).sum() + rng.normal(0.0, sigma, size)
