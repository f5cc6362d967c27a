"""Every accountant at extreme inputs against exact values: never optimistic.

The sweep: delta in {0, 1e-300, 1e-12}; k in {1, 10, 1e3, 1e4, 1e6, 1e8}; pure eps0 in
{1e-4, 0.1, 1, 10, 50}; Gaussian sigma in {1e-300, 1e-3, 1, 1e3, 1e300}. Exact references:

- k-fold eps0-DP (an `EpsilonDeltaDpEvent(eps0)` box, and binary randomized response, whose
  k-fold composition attains it): delta(eps) = sum_{i: (k-2i) eps0 > eps} C(k,i) p^(k-i) q^i
  (1 - e^(eps - (k-2i) eps0)), p = e^eps0/(1+e^eps0) (Kairouz, Oh, Viswanath, "The Composition
  Theorem for Differential Privacy", ICML 2015, Thm 3.3); at delta = 0 the answer is k eps0.
- k Gaussians of noise multiplier sigma: one Gaussian of mu = sqrt(k)/sigma, delta(eps) =
  Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle, Wang, ICML 2018, Thm 8), in mpmath.
- one Laplace release of pure eps0: delta(eps) = 1 - e^((eps - eps0)/2) for eps < eps0.

An answer eps_hat is optimistic when the exact delta at eps_hat (1 + 1e-9) exceeds delta. The
references compute a *lower* bound on the exact delta (a partial sum of the positive terms, each
anchored in mpmath and rounded down), so a check that fails proves an optimistic answer. Answers
may be loose (inf, or an UnsupportedEventError refusal counted apart): that is allowed. The
deterministic sweep has no statistical false-failure rate.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting as dpa
import mpmath
import numpy as np
import pytest

from dpaudit import accounting as A
from dpaudit.accounting.leaves import rr_epsilon

DELTAS = (0.0, 1e-300, 1e-12)
COUNTS = (1, 10, 1000, 10**4, 10**6, 10**8)
EPS0 = (1e-4, 0.1, 1.0, 10.0, 50.0)
SIGMAS = (1e-300, 1e-3, 1.0, 1e3, 1e300)
RTOL = 1e-9
# PLD at a coarse discretisation (still pessimistic) keeps the sweep fast; the default
# discretisation goes through the same code.
PLD_VDI = 1e-2
_WINDOW = 20_000


def kov_log_delta_lower(eps0: float, k: int, epsilon: float) -> float:
    """A lower bound on log delta(eps) of k-fold eps0-DP (KOV Thm 3.3): the sum of the terms of a
    window of i (up to 2 * `_WINDOW` of them around the largest), each w_i anchored at one
    index by mpmath's log-gamma and carried by exact ratio recurrences, rounded down."""
    mpmath.mp.dps = 50
    e0 = mpmath.mpf(eps0)
    log_p = -mpmath.log1p(mpmath.exp(-e0))
    log_q = -mpmath.log1p(mpmath.exp(e0))
    m = None  # largest i with (k - 2i) eps0 > eps
    i = math.ceil((k - mpmath.mpf(epsilon) / e0) / 2) - 1
    for cand in (i + 1, i, i - 1, i - 2):
        if 0 <= cand <= k and (k - 2 * cand) * e0 > epsilon:
            m = cand
            break
    if m is None:
        return -math.inf
    mode = math.floor((k + 1) * float(mpmath.exp(log_q)))
    sd = math.sqrt(k * float(mpmath.exp(log_p + log_q)))
    top = min(m, mode + int(8 * sd) + 1)
    lo = max(0, top - _WINDOW)
    anchor = mpmath.loggamma(k + 1) - mpmath.loggamma(top + 1) - mpmath.loggamma(k - top + 1) + (k - top) * log_p + top * log_q
    idx = np.arange(lo, top + 1, dtype=float)
    # log w_{i-1} - log w_i = log(i / (k - i + 1)) + log p - log q, summed downwards from `top`
    step = np.log(idx[1:] / (k - idx[1:] + 1)) + float(log_p - log_q)
    rel = np.concatenate([np.cumsum(step[::-1])[::-1], [0.0]])
    loss = (k - 2 * idx) * eps0
    keep = loss > epsilon
    logs = rel[keep] + np.log(-np.expm1(epsilon - loss[keep]))
    if logs.size == 0:
        return -math.inf
    peak = float(logs.max())
    total = peak + math.log(float(np.sum(np.exp(logs - peak))))
    slack = 1e-12 * (abs(total) + float(np.abs(rel).max()) + 1.0)
    return float(anchor) + total - slack


def gaussian_delta_exact(mu: float, epsilon: float) -> mpmath.mpf:
    """Balle-Wang delta in mpmath; 0 where Phi(-eps/mu + mu/2) < Phi(-1000) < 1e-200000, below
    every delta of the sweep (there, no answer can be optimistic)."""
    mpmath.mp.dps = 60
    mu, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
    if -e / mu + mu / 2 < -1000:
        return mpmath.mpf(0)
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def laplace_delta_exact(eps0: float, epsilon: float) -> float:
    return 0.0 if epsilon >= eps0 else -math.expm1((epsilon - eps0) / 2)


def _accountants(event, leaf):
    """The accountants that support the leaf (one that finds the count too costly refuses)."""
    for name in A.supporting_accountants(leaf):
        if name == "pld":
            yield name, lambda d: A.Accountant("pld", value_discretization_interval=PLD_VDI).compose(event).epsilon(d)
        else:
            yield name, lambda d, n=name: A.epsilon(event, d, n)


def _answers(event, leaf, tally):
    """(accountant, delta, epsilon) for every accountant supporting `leaf`; refusals are tallied."""
    for (name, fn), delta in itertools.product(list(_accountants(event, leaf)), DELTAS):
        try:
            eps = fn(delta)
        except A.UnsupportedEventError:
            tally["refused"] += 1
            continue
        tally["checked"] += 1
        yield name, delta, eps


def _pure_event(kind: str, eps0: float):
    if kind == "box":
        return A.EpsilonDeltaDpEvent(eps0), eps0
    p = 2.0 / (math.exp(eps0) + 1.0)  # binary RR with pure epsilon log(1 + 2(1-p)/p) = eps0
    event = dpa.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)
    return event, rr_epsilon(p, 2)


@pytest.mark.parametrize("kind", ["box", "rr"])
@pytest.mark.parametrize("k", COUNTS)
def test_pure_composition_is_never_optimistic(kind, k):
    tally = {"checked": 0, "refused": 0}
    for eps0 in EPS0:
        leaf, e0 = _pure_event(kind, eps0)
        for name, delta, eps in _answers(dpa.SelfComposedDpEvent(leaf, k), leaf, tally):
            where = (kind, eps0, k, name, delta, eps)
            assert eps >= 0 and not math.isnan(eps), where
            if math.isinf(eps):
                continue
            if delta == 0.0:
                assert eps >= k * e0 * (1 - RTOL), where
            else:
                assert kov_log_delta_lower(e0, k, eps * (1 + RTOL)) <= math.log(delta), where
    assert tally["checked"] > 0


@pytest.mark.parametrize("k", COUNTS)
def test_gaussian_composition_is_never_optimistic(k):
    tally = {"checked": 0, "refused": 0}
    for sigma in SIGMAS:
        mu = math.sqrt(k) / sigma
        leaf = dpa.GaussianDpEvent(sigma)
        for name, delta, eps in _answers(dpa.SelfComposedDpEvent(leaf, k), leaf, tally):
            where = (sigma, k, name, delta, eps)
            assert eps >= 0 and not math.isnan(eps), where
            if math.isinf(eps):
                continue
            assert delta > 0, where  # the Gaussian mechanism is not pure DP
            assert gaussian_delta_exact(mu, eps * (1 + RTOL)) <= delta, where
    assert tally["checked"] > 0


def test_laplace_release_is_never_optimistic():
    tally = {"checked": 0, "refused": 0}
    for eps0 in EPS0:
        leaf = dpa.LaplaceDpEvent(1.0 / eps0)
        for name, delta, eps in _answers(leaf, leaf, tally):
            where = (eps0, name, delta, eps)
            assert 0 <= eps <= math.inf, where
            if math.isfinite(eps):
                assert laplace_delta_exact(1.0 / (1.0 / eps0), eps * (1 + RTOL)) <= delta * (1 + RTOL), where
    assert tally["checked"] > 0


@pytest.mark.parametrize("eps0,k", [(0.1, 10), (1.0, 300), (0.01, 1000)])
def test_the_reference_lower_bound_matches_mpmath_summation(eps0, k):
    """The window reference against the full sum in mpmath (small k)."""
    mpmath.mp.dps = 50
    e0 = mpmath.mpf(eps0)
    p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
    for epsilon in (0.0, 0.3 * k * eps0, 0.9 * k * eps0):
        exact = mpmath.fsum(
            mpmath.binomial(k, i) * p ** (k - i) * (1 - p) ** i * (1 - mpmath.exp(epsilon - (k - 2 * i) * e0))
            for i in range(k + 1) if (k - 2 * i) * e0 > epsilon
        )
        lower = kov_log_delta_lower(eps0, k, epsilon)
        assert lower <= float(mpmath.log(exact)) <= lower + 1e-9


def test_reported_bug_pure_events_at_delta_zero():
    """Was 426.59 (and 213 at k = 3000): the optimal-composition profile underflowed to 0."""
    for leaf, k in ((dpa.LaplaceDpEvent(10.0), 10_000), (dpa.LaplaceDpEvent(10.0), 3000), (A.EpsilonDeltaDpEvent(0.1), 10_000)):
        event = dpa.SelfComposedDpEvent(leaf, k)
        assert A.epsilon(event, 0.0) == pytest.approx(0.1 * k, rel=1e-12)
        assert A.epsilon(event, 0.0, "approx") == pytest.approx(0.1 * k, rel=1e-12)
