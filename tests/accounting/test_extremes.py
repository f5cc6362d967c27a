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

Every named mechanism of `dpaudit budget` / `dpaudit calibrate` (`named.MECHANISMS`), built by
`named.event_for` and answered by `budgets.accountant_rows` as the CLI does, at delta in
{0, 1e-300, 1e-12, 0.999999} and extreme parameters: eps0 from 1e-17 to 700, k from 2 to 1e20,
counts to 1e18, users to 1e30, sigma and scales from 1e-300 to 1e300 (noise/sensitivity beyond the
doubles both ways), variances 1e-300 to 1e300, trials to 1e18, probabilities 1e-300 and 1 - 1e-16,
delta0 from 1e-300 to 1 - 1e-16. References (`exact_privacy`): the closed forms above, k-RR's
(e^eps0 - e^eps)/(e^eps0 + k - 1), the discrete Laplace and discrete Gaussian profiles, Skellam and
binomial sums, shuffled binary RR, and post-processings into binary RR for compositions.

An answer eps_hat is optimistic when the exact delta at eps_hat (1 + 1e-9) exceeds delta. The
references compute a *lower* bound on the exact delta (a partial sum of the positive terms, each
anchored in mpmath and rounded down), so a check that fails proves an optimistic answer. Answers
may be loose (inf, or an UnsupportedEventError refusal counted apart): that is allowed, except that
the accountants exact for a release (pure at delta = 0, the Gaussian PLD, one (eps0, delta0) box
under approx, one shuffled user) must be within a tolerance of it. The deterministic sweep has no
statistical false-failure rate.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import math
import sys
from collections.abc import Callable

import dp_accounting as dpa
import exact_privacy as X
import mpmath
import numpy as np
import pytest

from dpaudit import accounting as A
from dpaudit.accounting.leaves import rr_epsilon
from dpaudit.accounting.named import MECHANISMS, event_for
from dpaudit.budgets import accountant_rows

kov_log_delta_lower = X.kov_log_delta_lower

DELTAS = (0.0, 1e-300, 1e-12)
COUNTS = (1, 10, 1000, 10**4, 10**6, 10**8)
EPS0 = (1e-4, 0.1, 1.0, 10.0, 50.0)
SIGMAS = (1e-300, 1e-3, 1.0, 1e3, 1e300)
RTOL = 1e-9
# PLD at a coarse discretisation (still pessimistic) keeps the sweep fast; the default
# discretisation goes through the same code.
PLD_VDI = 1e-2


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
            for i in range(k + 1)
            if (k - 2 * i) * e0 > epsilon
        )
        lower = kov_log_delta_lower(eps0, k, epsilon)
        assert lower <= float(mpmath.log(exact)) <= lower + 1e-9


def test_reported_bug_pure_events_at_delta_zero():
    """Was 426.59 (and 213 at k = 3000): the optimal-composition profile underflowed to 0."""
    for leaf, k in (
        (dpa.LaplaceDpEvent(10.0), 10_000),
        (dpa.LaplaceDpEvent(10.0), 3000),
        (A.EpsilonDeltaDpEvent(0.1), 10_000),
    ):
        event = dpa.SelfComposedDpEvent(leaf, k)
        assert A.epsilon(event, 0.0) == pytest.approx(0.1 * k, rel=1e-12)
        assert A.epsilon(event, 0.0, "approx") == pytest.approx(0.1 * k, rel=1e-12)


# ---- the named mechanisms of `dpaudit budget` and `dpaudit calibrate`, through the functions they
# call (`named.event_for`, `budgets.accountant_rows`), at extreme parameters

NAMED_DELTAS = (0.0, 1e-300, 1e-12, 0.999999)


@dataclasses.dataclass(frozen=True)
class Point:
    """A named mechanism with `params`, released `count` times, and its exact privacy: `pure` the
    exact epsilon at delta = 0 (inf when it is not pure DP), `log_delta(eps)` a lower bound on log
    delta(eps) (`exact_privacy`), `exact_at_zero` the accountants exact at delta = 0 (at most `pure`
    (1 + RTOL)), `tight` {accountant: relative tolerance} for those exact at delta > 0."""

    mechanism: str
    params: dict
    count: int
    pure: float
    log_delta: Callable[[float], float]
    exact_at_zero: tuple = ()
    tight: dict = dataclasses.field(default_factory=dict)


def _float(x: mpmath.mpf) -> float:
    return float(x) if x < mpmath.mpf(sys.float_info.max) else math.inf


def _kov(eps_prime: float, count: int) -> Callable[[float], float]:
    """The k-fold binary-RR reference for a post-processing into binary RR of parameter eps'."""
    return (
        functools.partial(X.kov_log_delta_lower, eps_prime, count)
        if count > 1
        else functools.partial(X.pure_log_delta, eps_prime)
    )


def _gaussian_points() -> list[Point]:
    out = []
    for sigma, sens in (
        (1e-300, 1.0),
        (1e-3, 1.0),
        (1.0, 1.0),
        (1e3, 1.0),
        (1e300, 1.0),
        (1e300, 1e300),
        (1e-300, 1e300),
        (1e300, 1e-300),
    ):
        for count in (1, 10**6, 10**18) if (sigma, sens) == (1.0, 1.0) else (1, 10**18):
            mu = mpmath.sqrt(count) * mpmath.mpf(sens) / mpmath.mpf(sigma)
            tight = ({"pld": 1e-6} | ({"approx": 1e-6} if count == 1 else {})) if 1e-3 <= mu <= 1e3 else {}
            out.append(
                Point(
                    "gaussian",
                    {"sigma": sigma, "sensitivity": sens},
                    count,
                    math.inf,
                    functools.partial(X.gaussian_log_delta, mu),
                    tight=tight,
                )
            )
    return out


def _laplace_points() -> list[Point]:
    out = []
    for scale, sens in (
        (1e-300, 1.0),
        (1e-17, 1.0),
        (1e-3, 1.0),
        (1.0, 1.0),
        (1e17, 1.0),
        (1e300, 1.0),
        (1e-300, 1e300),
    ):
        eps0 = mpmath.mpf(sens) / mpmath.mpf(scale)
        for count in (1, 10**6, 10**18):
            ref = (
                functools.partial(X.laplace_log_delta, eps0)
                if count == 1
                else _kov(X.laplace_threshold_epsilon(eps0), count)
            )
            out.append(
                Point(
                    "laplace",
                    {"scale": scale, "sensitivity": sens},
                    count,
                    _float(count * eps0),
                    ref,
                    exact_at_zero=("pure", "approx"),
                )
            )
    return out


def _discrete_laplace_points() -> list[Point]:
    out = []
    for scale in (1e-300, 1e-3, 1.0, 1e17, 1e300):
        a = 1 / mpmath.mpf(scale)
        for sens in (1, 999):
            for count in (1, 10**6, 10**18) if scale == 1.0 else (1, 10**18):
                ref = (
                    functools.partial(X.discrete_laplace_log_delta, a, sens)
                    if count == 1
                    else _kov(X.discrete_laplace_threshold_epsilon(a, sens), count)
                )
                out.append(
                    Point(
                        "discrete-laplace",
                        {"scale": scale, "sensitivity": sens},
                        count,
                        _float(count * a * sens),
                        ref,
                        exact_at_zero=("pure", "approx"),
                    )
                )
    return out


def _discrete_gaussian_points() -> list[Point]:
    out = []
    for sigma in (1e-300, 0.1, 1.0, 1e3, 1e300):
        log_n = X.discrete_gaussian_log_norm(sigma)
        for sens in (1, 11):
            threshold = X.symmetric_threshold_epsilon(
                lambda x, sigma=sigma, log_n=log_n: -(mpmath.mpf(x) ** 2) / (2 * mpmath.mpf(sigma) ** 2) - log_n,
                sens,
                narrow=sigma < 1,
            )
            for count in (1, 10**6, 10**18) if sigma > 1 else (1, 10**18):  # PLDs of 1e6 narrow ones take seconds
                ref = (
                    functools.partial(X.discrete_gaussian_log_delta, sigma, sens)
                    if count == 1
                    else _kov(threshold, count)
                )
                out.append(
                    Point("discrete-gaussian", {"sigma": sigma, "sensitivity": float(sens)}, count, math.inf, ref)
                )
    return out


def _skellam_points() -> list[Point]:
    """A vector shift (D, 0, ...) with D = min(l1, l2) meets both sensitivities; the sum of `count`
    releases of one query is Skellam noise of variance count * var shifted by count * D."""
    out = []
    for variance in (1e-300, 1.0, 100.0, 1e4, 1e300):
        for l1, l2 in ((1.0, 1.0), (10.0, 3.0)):
            shift = int(min(l1, l2))
            for count in (1, 1000, 10**18):
                ref = functools.partial(X.skellam_log_delta, count * mpmath.mpf(variance), count * shift)
                out.append(Point("skellam", {"variance": variance, "l1": l1, "l2": l2}, count, math.inf, ref))
    return out


def _binomial_points() -> list[Point]:
    """The sum of `count` releases of one count is the count plus Bin(count N, p), shifted by count s."""
    out = []
    for trials, p in (
        (1, 0.5),
        (100, 0.25),
        (10**6, 0.5),
        (10**15, 0.25),
        (10**18, 0.25),
        (100, 1e-300),
        (10**6, 1 - 1e-16),
    ):
        for sens in (1, 10):
            for count in (1, 1000) if trials in (1, 10**15) else (1,):  # 1000 PLDs of 100 trials take seconds
                n = count * trials
                ref = (
                    functools.partial(X.binomial_log_delta, n, p, count * sens)
                    if n <= 10**7
                    else functools.partial(X.unimodal_log_delta, X.binomial_log_mode_mass(n, p))
                )
                out.append(
                    Point(
                        "binomial",
                        {"trials": float(trials), "probability": p, "sensitivity": sens},
                        count,
                        math.inf,
                        ref,
                    )
                )
    return out


def _rr_points() -> list[Point]:
    out = []
    for eps0, k in itertools.product((1e-17, 1e-8, 0.01, 1.0, 10.0, 700.0), (2, 3, 10**6, 93 * 10**11, 10**17, 10**20)):
        out.append(
            Point(
                "rr",
                {"epsilon0": eps0, "buckets": k},
                1,
                eps0,
                functools.partial(X.rr_log_delta, eps0, k),
                exact_at_zero=("pure", "approx"),
            )
        )
    for eps0, k, count in itertools.product((1e-17, 1.0, 700.0), (2, 10**20), (10**6, 10**18)):
        out.append(
            Point(
                "rr",
                {"epsilon0": eps0, "buckets": k},
                count,
                _float(count * mpmath.mpf(eps0)),
                _kov(X.rr_binary_epsilon(eps0, k), count),
                exact_at_zero=("pure", "approx"),
            )
        )
    return out


def _shuffle_points() -> list[Point]:
    """Shuffled binary RR bounds every shuffled eps0-DP randomizer below; `count` releases are at
    least as revealing as one. At delta = 0 it is exactly count eps0 (all n report 1)."""
    out = []
    for eps0, users in itertools.product((1e-17, 0.1, 1.0, 10.0, 700.0), (1, 2, 1000, 10**6, 10**30)):
        if users == 10**6 and eps0 not in (0.1, 1.0):  # the numerical bound over 1e6 users takes 0.6 s
            continue
        for count in (1, 1000) if users in (1, 1000) and eps0 in (1e-17, 1.0, 700.0) else (1,):
            ref = functools.partial(X.shuffled_rr_log_delta, eps0, users) if users <= 10**6 else (lambda e: -math.inf)
            tight = {"shuffle": 1e-3} if users == 1 and count == 1 else {}
            out.append(
                Point(
                    "shuffle",
                    {"epsilon0": eps0, "users": users},
                    count,
                    _float(count * mpmath.mpf(eps0)),
                    ref,
                    exact_at_zero=("shuffle",) if count == 1 else (),
                    tight=tight,
                )
            )
    return out


def _epsilon_delta_points() -> list[Point]:
    out = []
    for eps0, delta0, count in itertools.product(
        (1e-17, 1.0, 700.0), (0.0, 1e-300, 1e-12, 0.5, 1 - 1e-16), (1, 10**18)
    ):
        pure = _float(count * mpmath.mpf(eps0)) if delta0 == 0 else math.inf
        out.append(
            Point(
                "epsilon-delta",
                {"epsilon0": eps0, "delta0": delta0},
                count,
                pure,
                functools.partial(X.epsilon_delta_log_delta, eps0, delta0, count),
                exact_at_zero=("pure", "approx") if delta0 == 0 else (),
                tight={"approx": 1e-6} if count == 1 else {},
            )
        )
    return out


POINTS = {
    "gaussian": _gaussian_points,
    "laplace": _laplace_points,
    "discrete-laplace": _discrete_laplace_points,
    "discrete-gaussian": _discrete_gaussian_points,
    "skellam": _skellam_points,
    "binomial": _binomial_points,
    "rr": _rr_points,
    "shuffle": _shuffle_points,
    "epsilon-delta": _epsilon_delta_points,
}


def _check(point: Point, accountant: str, delta: float, eps: float) -> None:
    where = (point.mechanism, point.params, point.count, accountant, delta, eps)
    assert eps >= 0 and not math.isnan(eps), where
    if delta == 0.0:
        assert eps >= point.pure * (1 - RTOL), where
        if accountant in point.exact_at_zero:
            assert eps <= point.pure * (1 + RTOL) + 1e-300, where
        return
    if math.isinf(eps):
        assert accountant not in point.tight or point.log_delta(sys.float_info.max) > math.log(delta), where
        return
    assert point.log_delta(min(eps * (1 + RTOL), sys.float_info.max)) <= math.log(delta) + 1e-9, where
    if accountant in point.tight and eps > 1e-6:  # exact: at eps / (1 + tol) the exact delta exceeds delta
        assert point.log_delta(eps / (1 + point.tight[accountant])) > math.log(delta), where


def _sweep(point: Point, tally: collections.Counter) -> None:
    """Every accountant's epsilon at every delta, as `dpaudit budget` computes them: a number is
    checked, a refusal (an accountant that does not support the release or finds it too costly, or
    a ValueError naming a parameter when the event is built) counted. Nothing else may raise."""
    try:
        event = dpa.SelfComposedDpEvent(event_for(point.mechanism, point.params), point.count)
    except ValueError as exc:
        assert any(name in str(exc) for name in point.params), (point, exc)  # noqa: PT017  (a refusal may happen)
        tally["refused"] += len(NAMED_DELTAS)
        return
    for delta in NAMED_DELTAS:
        rows = accountant_rows(event, delta, None)
        for row in rows:
            if not row["supported"]:
                tally["refused"] += 1
                continue
            _check(point, row["accountant"], delta, row["epsilon"])
            tally["checked"] += 1


def test_the_sweep_covers_every_named_mechanism():
    assert set(POINTS) == set(MECHANISMS)


@pytest.mark.parametrize("mechanism", sorted(POINTS))
def test_named_mechanisms_are_never_optimistic(mechanism):
    tally: collections.Counter = collections.Counter()
    for point in POINTS[mechanism]():
        _sweep(point, tally)
    assert tally["checked"] > 0


# ---- k-ary randomized response is accounted from eps0 and k, never through a rounded noise parameter


def test_reported_rr_commands_give_epsilon0():
    """`dpaudit budget rr` read 0 at k = 1e17 (p = k/(e^eps0 - 1 + k) rounded to 1.0) and 0.00925 for
    eps0 = 0.01 at k = 9.3e12; `dpaudit calibrate rr` at k = 1e20 recommended eps0 = 9.01."""
    from dpaudit.accounting.calibration import calibrate_parameter

    for eps0, k in ((1.0, 10**17), (0.01, 93 * 10**11), (1e-17, 10**20)):
        event = event_for("rr", {"epsilon0": eps0, "buckets": k})
        for name in ("pure", "approx"):
            assert A.epsilon(event, 0.0, name) == eps0
    for name in ("pure", "approx"):
        found = calibrate_parameter("rr", 1.0, 0.0, params={"buckets": 10**20}, accountant=name)
        assert 0.999 <= found <= 1.0


@pytest.mark.parametrize(
    "p,k",
    [
        (1.0, 2),
        (1.0, 10**17),
        (10**17 / (math.expm1(1.0) + 10**17), 10**17),
        (93e11 / (math.expm1(0.01) + 93e11), 93 * 10**11),
        (2 / (math.exp(1e-8) + 1), 2),
    ],
)
def test_a_noise_parameter_that_lost_epsilon0_is_refused(p, k):
    event = dpa.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k)
    for name in ("pure", "approx", "rdp", "zcdp", "pld"):
        with pytest.raises(ValueError, match=r"cannot be represented.*KaryRandomizedResponseDpEvent"):
            A.epsilon(event, 1e-6, name)


@pytest.mark.parametrize(
    "p,k", [(0.5, 2), (0.4, 3), (0.9, 10), (1e-300, 10**20), (0.999, 2), (2 / (math.exp(1e-4) + 1), 2)]
)
def test_a_representable_noise_parameter_gives_at_least_its_epsilon0(p, k):
    with mpmath.workdps(60):
        exact = mpmath.log1p(k * (1 - mpmath.mpf(p)) / mpmath.mpf(p))
    got = A.epsilon(dpa.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k), 0.0, "pure")
    assert exact <= got <= exact * (1 + 1e-9)  # one ulp of p moves eps0 by less than 1e-9 here


def test_kary_rr_event_validates_and_keeps_its_parameters():
    event = A.KaryRandomizedResponseDpEvent(local_epsilon=1e-17, num_buckets=1e20)
    assert event.num_buckets == 10**20 and isinstance(event.num_buckets, int) and event.noise_parameter == 1.0
    for bad in (
        dict(local_epsilon=0.0, num_buckets=2),
        dict(local_epsilon=1.0, num_buckets=1),
        dict(local_epsilon=math.inf, num_buckets=2),
    ):
        with pytest.raises(ValueError, match=r"local_epsilon|num_buckets"):
            A.KaryRandomizedResponseDpEvent(**bad)
    with pytest.raises(TypeError, match="num_buckets"):
        A.KaryRandomizedResponseDpEvent(local_epsilon=1.0, num_buckets=2.5)
    assert A.PrivacyAccountant("pure", dpa.NeighboringRelation.REPLACE_ONE).compose(event).get_epsilon(0.0) == 1e-17


def _rdp_exact(orders, divergence) -> list:
    with mpmath.workdps(700):  # a divergence of 1e-600 is resolved
        return [divergence(mpmath.mpf(a)) for a in orders]


@pytest.mark.parametrize("eps0", [1e-300, 1e-17, 1e-8, 0.5, 1.0, 10.0, 700.0])
@pytest.mark.parametrize("k", [2, 3, 10**6, 10**20])
def test_rr_rdp_is_the_exact_divergence_rounded_up(eps0, k):
    """D_a = log((e^(a eps0) + e^((1-a) eps0) + k - 2)/(e^eps0 + k - 1))/(a - 1) (Mironov, CSF 2017, Def. 3)."""
    from dpaudit.accounting import randomized_response

    orders = np.array([1.0001, 1.5, 2.0, 64.0, 3 * 2.0**19])
    e = mpmath.mpf(eps0)
    exact = _rdp_exact(
        orders,
        lambda a: mpmath.log((mpmath.exp(a * e) + mpmath.exp((1 - a) * e) + k - 2) / (mpmath.exp(e) + k - 1)) / (a - 1),
    )
    for got, ref in zip(randomized_response.rdp(eps0, k, orders), exact):
        assert got >= ref and (ref < 1e-300 or got <= ref * (1 + 1e-9))


@pytest.mark.parametrize("eps0", [1e-300, 1e-17, 1e-8, 0.5, 1.0, 10.0, 700.0])
def test_laplace_rdp_is_the_exact_divergence_rounded_up(eps0):
    """Mironov, CSF 2017, Prop. 6; dp-accounting's form cancels to 0 at eps0 = 1e-17."""
    from dpaudit.accounting.curves import laplace_rdp

    orders = np.array([1.0001, 1.5, 2.0, 64.0, 3 * 2.0**19])
    e = mpmath.mpf(eps0)
    exact = _rdp_exact(
        orders,
        lambda a: (
            mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)) / (a - 1)
        ),
    )
    for got, ref in zip(laplace_rdp(eps0, orders), exact):
        assert got >= ref and (ref < 1e-300 or got <= ref * (1 + 1e-9))


@pytest.mark.parametrize(
    "sigma,sensitivity,expected", [(1e-300, 1e300, "NonPrivateDpEvent"), (1e300, 1e-300, "GaussianDpEvent")]
)
def test_a_noise_ratio_beyond_the_doubles_rounds_towards_less_privacy(sigma, sensitivity, expected):
    """sigma/sensitivity underflowing to 0 (refused as no noise) or overflowing to inf (no release at
    all) is neither: the ratio is rounded down, and below the smallest double no guarantee is stated."""
    event = event_for("gaussian", {"sigma": sigma, "sensitivity": sensitivity})
    assert type(event).__name__ == expected
    if expected == "GaussianDpEvent":
        assert event.noise_multiplier == sys.float_info.max
