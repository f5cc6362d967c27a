"""Facts about single releases (leaves of an event tree) that several accountants share.

Validation of dp-accounting's own leaf events (their classes do not validate), and the pure
epsilon of the leaves that are pure-DP.
"""

from __future__ import annotations

import math

import dp_accounting
from dp_accounting import dp_event

from dpaudit.accounting.events import EpsilonDeltaDpEvent, KaryRandomizedResponseDpEvent
from dpaudit.accounting.randomized_response import epsilon_of_noise_parameter
from dpaudit.validation import check_int_at_least, check_nonnegative, check_positive, check_probability

__all__ = ["TINY", "nonprivate", "pure_epsilon", "rr_epsilon", "rr_parameters", "trivially_private", "validate_leaf"]


def validate_leaf(leaf: dp_accounting.DpEvent) -> None:
    """Raise ValueError naming the parameter when a leaf's parameters are out of range.

    dpaudit's own events validate on construction; dp-accounting's do not, so a Gaussian or
    Laplace event with noise <= 0 (which dp-accounting would account as non-private, inf) is
    refused here as bad input.
    """
    if isinstance(leaf, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)):
        check_positive(leaf.noise_multiplier, f"{type(leaf).__name__}.noise_multiplier")
    elif isinstance(leaf, dp_event.DiscreteLaplaceDpEvent):
        check_positive(leaf.noise_parameter, "DiscreteLaplaceDpEvent.noise_parameter")
        check_int_at_least(leaf.sensitivity, 1, "DiscreteLaplaceDpEvent.sensitivity")
    elif isinstance(leaf, dp_accounting.RandomizedResponseDpEvent):
        p = check_probability(leaf.noise_parameter, "RandomizedResponseDpEvent.noise_parameter")
        if p == 0.0:
            raise ValueError("RandomizedResponseDpEvent.noise_parameter must lie in (0, 1], got 0 (no noise)")
        check_int_at_least(leaf.num_buckets, 1, "RandomizedResponseDpEvent.num_buckets")
        rr_epsilon(p, leaf.num_buckets)  # ValueError when p has lost epsilon0 (rounded near 1.0)
    elif isinstance(leaf, dp_accounting.ZCDpEvent):
        check_nonnegative(leaf.rho, "ZCDpEvent.rho")
        check_nonnegative(leaf.xi, "ZCDpEvent.xi")
    elif isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
        check_probability(leaf.sampling_probability, "PoissonSampledDpEvent.sampling_probability")
    inner = getattr(leaf, "event", None)  # sampled / repeated events wrap one inner event
    if isinstance(inner, dp_accounting.DpEvent):
        validate_leaf(inner)
    # dpaudit's events (Skellam, DiscreteGaussian, EpsilonDelta, Shuffled) validate themselves.


def rr_epsilon(noise_parameter: float, num_buckets: int) -> float:
    """Pure epsilon of k-ary randomized response given by dp-accounting's noise parameter p,
    replace-one: log(1 + k(1-p)/p), rounded up over the reals within one ulp of p.

    With probability 1-p the true bucket, else a uniform one: the likelihood ratio is at most
    (1 - p + p/k)/(p/k) (Warner 1965; the k-RR of Kairouz, Oh, Viswanath 2014). ValueError when p
    cannot carry epsilon (p = 1.0, or k(1-p)/p has lost precision:
    `randomized_response.epsilon_of_noise_parameter`); `KaryRandomizedResponseDpEvent` keeps it.
    """
    return epsilon_of_noise_parameter(noise_parameter, num_buckets)


def rr_parameters(leaf: dp_accounting.DpEvent) -> tuple[float, int] | None:
    """(eps0, k) of a k-ary randomized response leaf with k >= 2 and eps0 > 0, else None: eps0 as
    given by `KaryRandomizedResponseDpEvent`, or from the noise parameter of dp-accounting's
    `RandomizedResponseDpEvent` (`rr_epsilon`)."""
    if isinstance(leaf, KaryRandomizedResponseDpEvent):
        return leaf.local_epsilon, leaf.num_buckets
    if isinstance(leaf, dp_accounting.RandomizedResponseDpEvent) and int(leaf.num_buckets) >= 2:
        eps0 = rr_epsilon(leaf.noise_parameter, leaf.num_buckets)
        return (eps0, int(leaf.num_buckets)) if eps0 > 0 else None
    return None


def pure_epsilon(leaf: dp_accounting.DpEvent) -> float | None:
    """Pure epsilon of a leaf, inf for a non-private one, None when the leaf is not pure DP.

    Laplace: 1/noise_multiplier (noise scale over l1 sensitivity; Dwork et al. 2006).
    Discrete Laplace pmf ∝ exp(-a|x|) with sensitivity D: a*D (Ghosh, Roughgarden, Sundararajan 2009).
    k-ary randomized response: its eps0 (`KaryRandomizedResponseDpEvent`), or `rr_epsilon` of dp-accounting's
    noise parameter. EpsilonDeltaDpEvent with delta = 0: its epsilon.
    """
    if isinstance(leaf, dp_accounting.NonPrivateDpEvent):
        return math.inf
    if isinstance(leaf, dp_accounting.LaplaceDpEvent):
        return 1.0 / leaf.noise_multiplier
    if isinstance(leaf, dp_event.DiscreteLaplaceDpEvent):
        return float(leaf.noise_parameter) * int(leaf.sensitivity)
    if isinstance(leaf, KaryRandomizedResponseDpEvent):
        return float(leaf.local_epsilon)
    if isinstance(leaf, dp_accounting.RandomizedResponseDpEvent):
        return rr_epsilon(leaf.noise_parameter, leaf.num_buckets)
    if isinstance(leaf, EpsilonDeltaDpEvent) and leaf.delta == 0.0:
        return float(leaf.epsilon)
    return None


def nonprivate(leaf: dp_accounting.DpEvent) -> bool:
    """A `NonPrivateDpEvent`: no guarantee at all."""
    return isinstance(leaf, dp_accounting.NonPrivateDpEvent)


TINY = math.ulp(0.0)  # the smallest positive double: what a positive quantity that underflowed is raised to


def trivially_private(leaf: dp_accounting.DpEvent) -> bool:
    """The release does not depend on the data (every divergence is exactly 0)."""
    if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
        return leaf.sampling_probability == 0.0 or trivially_private(leaf.event)
    if isinstance(leaf, dp_accounting.ZCDpEvent):
        return leaf.rho == 0.0 and leaf.xi == 0.0
    return pure_epsilon(leaf) == 0.0
