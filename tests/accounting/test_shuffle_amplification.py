"""Amplification by shuffling (FMT 2021): numerical bound against exact enumeration, closed form."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit import accounting as A
from dpaudit.accounting import shuffle


def _exact_delta(eps0, n, eps):
    """E_C[hockey stick of (A+D, A+1-D)] by full enumeration of C ~ Bin(n-1, e^-eps0)."""
    a = math.exp(eps0) / (1 + math.exp(eps0))
    total = 0.0
    for c in range(n):
        b = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        p = np.zeros(c + 2)
        q = np.zeros(c + 2)
        p[: c + 1] += a * b
        p[1:] += (1 - a) * b
        q[: c + 1] += (1 - a) * b
        q[1:] += a * b
        total += stats.binom.pmf(c, n - 1, math.exp(-eps0)) * np.maximum(p - math.exp(eps) * q, 0).sum()
    return total


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 50, 0.3), (2.0, 200, 0.5), (0.5, 100, 0.1), (3.0, 300, 1.0)])
def test_numerical_delta_matches_enumeration(eps0, n, eps):
    exact = _exact_delta(eps0, n, eps)
    got = shuffle.numerical_delta(eps0, n, eps)
    assert exact <= got <= exact + 1e-12


def test_grouped_windows_are_upper_bounds(monkeypatch):
    # c is grouped into intervals valued at their left end; ungrouped (one c per interval) is exact
    eps0, n = 1.0, 200_000
    grouped = shuffle._Numerical(eps0, n)
    assert len(grouped.cs) < grouped.cs[-1] - grouped.cs[0]
    monkeypatch.setattr(shuffle, "_INTERVALS", 10**6)
    fine = shuffle._Numerical(eps0, n)
    for eps in (0.005, 0.01, 0.02):
        assert fine.delta(eps) <= grouped.delta(eps) <= fine.delta(eps) * 1.05 + 1e-12
    # monotone in eps and in n
    assert grouped.delta(0.02) <= grouped.delta(0.01)
    assert shuffle.numerical_delta(eps0, 2 * n, 0.01) <= shuffle.numerical_delta(eps0, n, 0.01) + 1e-12


def test_closed_form_formula_and_numerical_is_tighter():
    eps0, n, delta = 1.0, 10_000, 1e-6
    e0 = math.exp(eps0)
    expected = math.log(1 + (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta)) / math.sqrt(n) + 8 * e0 / n))
    assert shuffle.closed_form_epsilon(eps0, n, delta) == pytest.approx(expected)
    num = shuffle.numerical_epsilon(eps0, n, delta)
    assert num < expected
    assert shuffle.numerical_delta(eps0, n, num) <= delta
    assert A.epsilon(A.ShuffledDpEvent(local_epsilon=eps0, num_users=n), delta, "shuffle") == pytest.approx(num)


def test_closed_form_outside_its_regime_is_refused_and_eps0_is_the_cap():
    with pytest.raises(ValueError, match="local_epsilon"):
        shuffle.closed_form_epsilon(5.0, 100, 1e-6)
    e = A.ShuffledDpEvent(local_epsilon=5.0, num_users=100)
    assert A.epsilon(e, 1e-6, "shuffle") <= 5.0
    assert A.delta(e, 5.0, "shuffle") == 0.0


def test_million_users_is_answered():
    # Its speed (target 0.1 s) is measured in benchmarks/accounting.py, not asserted here.
    shuffle.numerical_epsilon.cache_clear()
    e = A.epsilon(A.ShuffledDpEvent(local_epsilon=1.0, num_users=10**6), 1e-6, "shuffle")
    assert 0 < e < 0.01


def test_half_binomial_cdf_matches_scipy():
    c = np.repeat(np.arange(0, 40), 44)
    t = np.tile(np.arange(-2, 42), 40)
    np.testing.assert_allclose(shuffle._half_binomial_cdf(t, c), stats.binom.cdf(t, c, 0.5), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n", [1, 1000, 10**6])
def test_accounting_a_shuffled_event_raises_no_warning(n):
    # scipy's bdtr used to be reached through its deprecated float-n loop (a DeprecationWarning per
    # call, tens of thousands per accounting) whenever n was not a C long
    import warnings

    shuffle.numerical_epsilon.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for event in (
            A.ShuffledDpEvent(local_epsilon=1.0, num_users=n),
            A.ShuffledDpEvent(local_epsilon=1.0, num_users=n, local_delta=1e-12),
        ):
            for acc in ("shuffle", "approx", "best"):
                assert A.epsilon(event, 1e-6, acc) <= 1.0
                assert 0.0 <= A.delta(event, 0.5, acc) <= 1.0
            assert A.epsilon(dp_accounting.SelfComposedDpEvent(event, 3), 1e-5, "best") <= 3.0


# ---------------------------------------------------------------- (eps0, delta0)-LDP randomizers


def _term(eps, eps0, delta0, n):
    """FMT 2021 Thm 3.8: (e^eps + 1)(1 + e^-eps0/2) n delta0."""
    return (math.exp(eps) + 1) * (1 + math.exp(-eps0) / 2) * n * delta0


def test_local_delta_is_validated_and_keyword_only():
    with pytest.raises(ValueError, match="local_delta"):
        A.ShuffledDpEvent(local_epsilon=1.0, num_users=10, local_delta=1.0)
    with pytest.raises(ValueError, match="local_delta"):
        A.ShuffledDpEvent(local_epsilon=1.0, num_users=10, local_delta=-1e-9)
    with pytest.raises(ValueError, match="local_delta"):
        A.ShuffledDpEvent(local_epsilon=1.0, num_users=10, local_delta=float("nan"))
    with pytest.raises(TypeError):
        A.ShuffledDpEvent(1.0, 10, 1e-9)
    assert A.ShuffledDpEvent(local_epsilon=1.0, num_users=10).local_delta == 0.0


@pytest.mark.parametrize("eps0, n, delta0", [(1.0, 10**5, 1e-12), (2.0, 5000, 1e-11), (0.5, 10**6, 1e-13)])
def test_local_delta_term_is_folded_in_and_never_optimistic(eps0, n, delta0):
    event = A.ShuffledDpEvent(local_epsilon=eps0, num_users=n, local_delta=delta0)
    for eps in (0.02, 0.1, 0.3, eps0 / 2):
        unamplified = delta0 + (1 - delta0) * max(0.0, (math.exp(eps0) - math.exp(eps)) / (1 + math.exp(eps0)))
        # any eps' <= eps may serve; the numerical delta only falls with eps', the term only rises
        floor = min(unamplified, shuffle.numerical_delta(eps0, n, eps) + _term(0.0, eps0, delta0, n))
        for acc in ("shuffle", "approx"):
            got = A.delta(event, eps, acc)
            assert got >= floor * (1 - 1e-9), (acc, eps)
            # Thm 3.8 at eps' = eps itself is one valid choice: the answer is never worse
            assert got <= min(unamplified, shuffle.numerical_delta(eps0, n, eps) + _term(eps, eps0, delta0, n)) + 1e-15
    # the same release described as pure eps0-LDP (the old description) under-counts delta
    pure = A.ShuffledDpEvent(local_epsilon=eps0, num_users=n)
    assert A.delta(event, 0.1, "shuffle") > A.delta(pure, 0.1, "shuffle") + _term(0.0, eps0, delta0, n) * 0.99


@pytest.mark.parametrize("eps0, n, delta0", [(1.0, 10**5, 1e-12), (2.0, 5000, 1e-11)])
def test_epsilon_and_delta_are_consistent_with_local_delta(eps0, n, delta0):
    for eps in (0.01, 0.05, 0.2, 0.9 * eps0):
        d = shuffle.shuffled_delta(eps0, n, eps, delta0)
        back = shuffle.shuffled_epsilon(eps0, n, d, delta0)
        assert back <= eps * (1 + 1e-5)
        assert shuffle.shuffled_delta(eps0, n, back, delta0) <= d * (1 + 1e-12)
    for delta in (1e-6, 1e-5, 1e-3):
        e = A.epsilon(A.ShuffledDpEvent(local_epsilon=eps0, num_users=n, local_delta=delta0), delta, "shuffle")
        assert shuffle.shuffled_delta(eps0, n, e, delta0) <= delta
        assert e <= eps0


def test_local_delta_zero_is_the_pure_bound_and_too_small_delta_is_refused():
    for eps in (0.05, 0.3):
        assert shuffle.shuffled_delta(1.0, 1000, eps, 0.0) == pytest.approx(
            shuffle.numerical_delta(1.0, 1000, eps), rel=1e-12
        )
    event = A.ShuffledDpEvent(local_epsilon=1.0, num_users=1000, local_delta=1e-6)
    for acc in ("shuffle", "best"):
        with pytest.raises(ValueError, match="local_delta"):
            A.epsilon(event, 5e-7, acc)
    with pytest.raises(ValueError, match="local_delta"):
        A.epsilon(dp_accounting.SelfComposedDpEvent(event, 3), 2e-6, "shuffle")
    # delta above delta0 but below the Thm 3.8 term: no amplification, the un-amplified bound remains
    e = A.epsilon(event, 2e-6, "shuffle")
    assert e == pytest.approx(1.0, abs=1e-5) and e <= 1.0
    assert A.delta(event, 1.0, "shuffle") == pytest.approx(1e-6)
    assert A.epsilon(event, 1e-6, "shuffle") == 1.0  # exactly the local (eps0, delta0) guarantee
