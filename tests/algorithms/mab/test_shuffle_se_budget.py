"""Shuffle-SE's whole-run budget (Chowdhury & Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR
2023, Thm 3 with `mechanisms.ShuffleSum`'s unary bits) is the exact pure ε of the server's count of ones: each
release's log f(0)/f(g) (`shuffle_view.shuffle_count_epsilon`), parallel over the batches, basic composition over
a returning user's batches. Checked against an independent computation of the count's law (S by convolving scipy's
Pólya pmfs, C by its binomial flips) and against the analytic lower bracket. Exact computations: no false failures."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.shuffle_view import (
    polya_difference_log_pmf,
    shuffle_count_epsilon,
    shuffle_count_lower_epsilon,
)
from dpaudit.budgets import algorithm_budget


def _sum_pmf(proto, encodings: tuple[int, ...]) -> np.ndarray:
    """pmf of S = Σ_i ((x̂_i + η_i) mod m), η_i = Pólya(1/n, θ) - Pólya(1/n, θ) (scipy's negative binomial, window
    past which the mass is below 1e-300), by convolution."""
    n, m, theta = proto.params.n, proto.params.m, proto.theta
    width = math.ceil(700.0 / -math.log(theta))
    a = stats.nbinom.pmf(np.arange(width + 1), 1.0 / n, 1 - theta)
    eta = np.convolve(a, a[::-1])
    share = np.zeros(m)
    np.add.at(share, np.mod(np.arange(eta.size) - width, m), eta)
    out = np.array([1.0])
    for x in encodings:
        out = np.convolve(out, np.roll(share, x))
    return out


def _count_pmf(proto, s_pmf: np.ndarray, flips: int = 10) -> np.ndarray:
    """pmf of the server's count C = S - Bin(S, f) + Bin(n d - S, f), each flip count cut at `flips` (the rest,
    below (n d f)^11/11! < 1e-25, is dropped)."""
    kd, f = s_pmf.size - 1, proto.flip
    s = np.arange(kd + 1)
    j = np.arange(flips + 1)[None, :]
    down, up = stats.binom.pmf(j, s[:, None], f), stats.binom.pmf(j, (kd - s)[:, None], f)
    out = np.zeros(kd + 1)
    for a in range(flips + 1):
        for b in range(flips + 1):
            c = s - a + b
            ok = (c >= 0) & (c <= kd)
            np.add.at(out, c[ok], (s_pmf * down[:, a] * up[:, b])[ok])
    return out


@pytest.mark.parametrize("base, horizon, users, p", [(4, 40, 16, None), (4, 40, 4, None), (2, 200, 8, 0.1)])
def test_the_count_of_one_pair_lies_in_the_bracket(base, horizon, users, p):
    """Every reward 0 against user 1's reward 1: the count's exact pure ε over the counts both laws put >= 1e-15 on
    (relative error < 1e-9 there) lies between `shuffle_count_lower_epsilon` and the budget's bound, attained at
    C = 0; a bound with the sensitivity off by one (log f(0)/f(g - 1)) falls below it (the check has teeth)."""
    proto = BatchSE("shuffle", 1.0, base=base, p=p).secagg(users, horizon)
    n, g = proto.params.n, proto.params.g
    p0, pg = _count_pmf(proto, _sum_pmf(proto, (0,) * n)), _count_pmf(proto, _sum_pmf(proto, (g,) + (0,) * (n - 1)))
    ok = np.minimum(p0, pg) >= 1e-15
    ratio = np.abs(np.log(p0[ok]) - np.log(pg[ok]))
    exact = float(ratio.max())
    assert np.flatnonzero(ok)[ratio.argmax()] == 0
    lower, upper = shuffle_count_lower_epsilon(proto), shuffle_count_epsilon(proto)
    assert lower <= exact * (1 + 1e-9) and exact <= upper
    assert upper - lower <= 5e-4 * upper
    r = 1.0 / n
    off_by_one = polya_difference_log_pmf(0, r, proto.theta)[1] - polya_difference_log_pmf(g - 1, r, proto.theta)[0]
    assert off_by_one < exact - 0.3


def test_run_budget_is_the_largest_release_and_returning_users_add_up():
    algo = BatchSE("shuffle", 1.0, base=4)
    releases = [shuffle_count_epsilon(algo.secagg(4**b, 40)) for b in algo._batches(40)]
    assert algo.privacy(40).corrected.epsilon == pytest.approx(max(releases), rel=1e-12)
    returning = BatchSE("shuffle", 1.0, base=4, returning=3)  # each batch at eps/3 (App. I), three batches
    per_batch = max(shuffle_count_epsilon(returning.secagg(4**b, 40)) for b in returning._batches(40))
    assert returning.privacy(40).corrected.epsilon == pytest.approx(3 * per_batch, rel=1e-12)


def test_budget_at_ten_thousand_users():
    """`dpaudit budget shuffle-se --horizon 10000`: 13.3386 (was the unamplified bits' 9.6e6), the run's exact ε
    to 1e-7 (the largest release's lower bracket; the run's ε is the worst release's)."""
    out = algorithm_budget("shuffle-se", 10_000)
    assert out["corrected"]["epsilon"] == pytest.approx(13.338621, abs=1e-6)
    assert out["best"]["epsilon"] == pytest.approx(out["corrected"]["epsilon"], rel=1e-12)
    algo = BatchSE("shuffle", 1.0, p=0.1)  # the registered default: the experiments' p = 0.1
    protos = [algo.secagg(2**b, 10_000) for b in algo._batches(10_000)]
    lower = max(shuffle_count_lower_epsilon(proto) for proto in protos)
    assert 0 <= out["corrected"]["epsilon"] - lower <= 1e-7
