"""Shuffle-SE's budget as the server sees it (Chowdhury & Zhou, "Distributed Differential Privacy in Multi-Armed
Bandits", ICLR 2023, Thm 3 with `mechanisms.ShuffleSum`'s unary bits): the pure ε of the count of ones,
log f(0)/f(g) (`shuffle_count_epsilon`), against independent computations: the catalog's enumeration of every
input (`dpaudit.audits.mab.exact_views`), a brute-force maximum of the changed user's likelihood ratio over its
whole message space, and mpmath's high-precision Pólya sums."""

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpaudit import accounting
from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.shuffle_view import (
    polya_difference_log_pmf,
    shuffle_count_epsilon,
    shuffle_count_event,
    shuffle_sum_enumerated_epsilon,
    shuffle_sum_lower_epsilon,
)
from dpaudit.audits.mab import exact_views

ALGO = BatchSE("shuffle", 1.0, base=4)


@pytest.mark.parametrize("users", [4, 16])
def test_equals_the_catalogs_enumeration_of_every_input(users):
    """Horizon 40, base 4 (the catalog's shuffle-se.server-count): every multiset of the other users' encodings
    enumerated, the pure ε of S maximised (3.87 for batch 2); ours brackets it to 10⁻⁵ (the fold's terms)."""
    proto = ALGO.secagg(users, 40)
    enumerated = exact_views.shuffle_count_epsilon(proto)  # rounded up by its own 2e-9 relative margin
    assert enumerated == shuffle_sum_enumerated_epsilon(proto)  # the catalog's name for the same enumeration
    upper, lower = shuffle_count_epsilon(proto), shuffle_sum_lower_epsilon(proto)
    assert lower <= enumerated <= upper * (1 + 1e-8)
    assert upper - lower <= 1e-5
    assert upper == pytest.approx({4: 1.8451, 16: 3.8725}[users], abs=1e-4)


def _folded_log_laws(proto) -> np.ndarray:
    """log P((x + η) mod m = t) for x = 0..g, t = 0..m-1 (η = Pólya(1/n, θ) - Pólya(1/n, θ), convolved in floating
    point on a window past which the mass is below 1e-300; -inf where it underflows)."""
    n, g, m, theta = proto.params.n, proto.params.g, proto.params.m, proto.theta
    width = math.ceil(700.0 / -math.log(theta))
    a = stats.nbinom.pmf(np.arange(width + 1), 1.0 / n, 1 - theta)
    f = np.convolve(a, a[::-1])
    folded = np.zeros(m)
    np.add.at(folded, np.mod(np.arange(f.size) - width, m), f)
    with np.errstate(divide="ignore"):
        return np.log(np.array([np.roll(folded, x) for x in range(g + 1)]))


@pytest.mark.parametrize("users, horizon", [(64, 1000), (256, 1000), (64, 20000)])
def test_no_message_has_a_worse_ratio_than_the_pair_0_g_at_zero(users, horizon):
    """Brute force over the changed user's whole message space Z_m and every pair of encodings: the largest
    |log u_a(t)/u_b(t)| (where both are representable) is the bound, to 10⁻⁶ (log-convexity of f, checked)."""
    proto = ALGO.secagg(users, horizon)
    logs = _folded_log_laws(proto)
    ok = np.all(np.isfinite(logs), axis=0)
    worst = max(
        float(np.max(np.abs(logs[a, ok] - logs[b, ok])))
        for a in range(logs.shape[0])
        for b in range(a + 1, logs.shape[0])
    )
    bound = shuffle_count_epsilon(proto)
    assert worst <= bound and worst == pytest.approx(bound, abs=1e-6)


def test_against_mpmath_polya_sums_at_a_large_batch():
    """n = 4096 (batch 6 at base 4, T = 20000): log f(0), log f(g) in 50-digit arithmetic, terms to 10⁻³⁰."""
    proto = ALGO.secagg(4096, 20000)
    g = proto.params.g

    def log_f(k: int) -> float:
        with mpmath.workdps(50):
            return _log_f(k, mpmath.mpf(1) / 4096, mpmath.mpf(proto.theta))

    def _log_f(k, r, theta):
        def p(j):
            return (
                mpmath.exp(mpmath.loggamma(j + r) - mpmath.loggamma(r) - mpmath.loggamma(j + 1))
                * theta**j
                * (1 - theta) ** r
            )

        total, j = mpmath.mpf(0), 0
        while True:
            term = p(j + k) * p(j)
            total += term
            if term < total * mpmath.mpf(10) ** -30:
                return float(mpmath.log(total))
            j += 1

    for k in (0, g):
        lo, hi = polya_difference_log_pmf(k, 1.0 / 4096, proto.theta)
        assert lo <= log_f(k) <= hi
    assert shuffle_count_epsilon(proto) == pytest.approx(log_f(0) - log_f(g), abs=1e-7)


def test_run_budget_is_the_worst_release():
    """Each user is in one (batch, arm) release: parallel composition, the run's ε is the largest release's."""
    protos = [ALGO.secagg(4**b, 20000) for b in ALGO._batches(20000)]
    values = [shuffle_count_epsilon(p) for p in protos]
    event = ParallelComposedDpEvent([shuffle_count_event(p) for p in protos])
    assert accounting.epsilon(event, 0.0) == pytest.approx(max(values), rel=1e-12)
    assert values == sorted(values)  # log f(0)/f(g) grows like ε' + log(n g) with the batch
