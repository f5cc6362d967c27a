"""Named mechanisms with their parameters, for the CLI and for calibration.

`event_for(name, params)` builds the `DpEvent` of one release; each entry says which parameter
is its noise (calibrated by `calibrate_parameter`) and in which direction privacy improves.
Parameters are kept as given (k-ary randomized response by eps0 and k), and a ratio an event needs
(noise over sensitivity) is rounded towards less privacy, never to more: a ratio beyond the doubles
becomes a `NonPrivateDpEvent` (epsilon inf) rather than 0 or inf noise.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from fractions import Fraction

import dp_accounting
from dp_accounting import dp_event

from dpaudit.accounting import randomized_response
from dpaudit.accounting.events import (
    BinomialDpEvent,
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    KaryRandomizedResponseDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)
from dpaudit.validation import check_delta, check_epsilon, check_int_at_least, check_positive

__all__ = ["MECHANISMS", "NamedMechanism", "event_for", "rr_noise_parameter"]


@dataclasses.dataclass(frozen=True)
class NamedMechanism:
    """A mechanism by name: its parameters (name -> (default or None if required, help)), the
    parameter calibration searches (`tuned`) and whether larger values are more private."""

    name: str
    summary: str
    params: dict
    build: Callable[[dict], dp_accounting.DpEvent]
    tuned: str
    larger_is_private: bool


def rr_noise_parameter(local_epsilon: float, num_buckets: int) -> float:
    """dp-accounting's noise parameter p = k/(e^eps0 - 1 + k) of k-ary randomized response, rounded: for
    display only (it rounds to 1.0 for large k or small eps0); the "rr" mechanism is accounted from
    eps0 and k (`KaryRandomizedResponseDpEvent`)."""
    return randomized_response.noise_parameter(local_epsilon, num_buckets)


def _ratio_down(num: float, den: float) -> float:
    """The largest double <= num/den for positive doubles (the largest finite double when the
    quotient overflows, 0.0 when it is below the smallest positive double)."""
    q = num / den
    if math.isinf(q):
        return sys.float_info.max
    return math.nextafter(q, 0.0) if Fraction(q) > Fraction(num) / Fraction(den) else q


def _ratio_up(num: float, den: float) -> float:
    """The smallest double >= num/den for positive doubles (inf when the quotient overflows)."""
    q = num / den
    if math.isinf(q):
        return q
    return math.nextafter(q, math.inf) if Fraction(q) < Fraction(num) / Fraction(den) else q


def _noise_multiplier(p: dict, noise: str) -> float:
    """noise/sensitivity rounded down (less noise per unit of sensitivity: never more privacy)."""
    return _ratio_down(check_positive(p[noise], noise), check_positive(p["sensitivity"], "sensitivity"))


def _gaussian(p):
    nm = _noise_multiplier(p, "sigma")
    return dp_accounting.GaussianDpEvent(nm) if nm > 0 else dp_accounting.NonPrivateDpEvent()


def _laplace(p):
    nm = _noise_multiplier(p, "scale")
    return dp_accounting.LaplaceDpEvent(nm) if nm > 0 else dp_accounting.NonPrivateDpEvent()


def _dlaplace(p):
    # pure epsilon = noise_parameter * sensitivity with noise_parameter = 1/scale rounded up
    a = _ratio_up(1.0, check_positive(p["scale"], "scale"))
    sensitivity = check_int_at_least(p["sensitivity"], 1, "sensitivity")
    if math.isinf(a):
        return dp_accounting.NonPrivateDpEvent()
    return dp_event.DiscreteLaplaceDpEvent(noise_parameter=a, sensitivity=sensitivity)


def _dgaussian(p):
    return DiscreteGaussianDpEvent(sigma=p["sigma"], sensitivity=p["sensitivity"])


def _skellam(p):
    return SkellamDpEvent(variance=p["variance"], l1_sensitivity=p["l1"], l2_sensitivity=p["l2"])


def _rr(p):
    # eps0 and k as given: a noise parameter k/(e^eps0 - 1 + k) would round to 1.0 for large k
    return KaryRandomizedResponseDpEvent(
        local_epsilon=check_epsilon(p["epsilon0"], "epsilon0"),
        num_buckets=check_int_at_least(p["buckets"], 2, "buckets"),
    )


def _shuffle(p):
    return ShuffledDpEvent(
        local_epsilon=check_epsilon(p["epsilon0"], "epsilon0"), num_users=check_int_at_least(p["users"], 1, "users")
    )


def _binomial(p):
    # calibration searches real values; a fractional number of trials rounds up (more noise)
    trials = math.ceil(check_positive(p["trials"], "trials"))
    return BinomialDpEvent(
        trials=trials, probability=p["probability"], sensitivity=check_int_at_least(p["sensitivity"], 1, "sensitivity")
    )


def _epsdelta(p):
    return EpsilonDeltaDpEvent(
        epsilon=check_epsilon(p["epsilon0"], "epsilon0"), delta=check_delta(p["delta0"], "delta0")
    )


MECHANISMS: dict[str, NamedMechanism] = {
    m.name: m
    for m in (
        NamedMechanism(
            "gaussian",
            "Gaussian noise N(0, sigma^2) on a query with l2 sensitivity",
            {"sigma": (None, "noise standard deviation"), "sensitivity": (1.0, "l2 sensitivity")},
            _gaussian,
            "sigma",
            True,
        ),
        NamedMechanism(
            "laplace",
            "Laplace noise Lap(scale) on a query with l1 sensitivity",
            {"scale": (None, "Laplace scale b"), "sensitivity": (1.0, "l1 sensitivity")},
            _laplace,
            "scale",
            True,
        ),
        NamedMechanism(
            "discrete-laplace",
            "discrete Laplace noise, pmf ∝ exp(-|x|/scale), on an integer query",
            {"scale": (None, "scale lambda"), "sensitivity": (1, "integer l1 sensitivity")},
            _dlaplace,
            "scale",
            True,
        ),
        NamedMechanism(
            "discrete-gaussian",
            "discrete Gaussian noise N_Z(0, sigma^2) on an integer query",
            {"sigma": (None, "sigma parameter"), "sensitivity": (1.0, "l2 sensitivity")},
            _dgaussian,
            "sigma",
            True,
        ),
        NamedMechanism(
            "skellam",
            "Skellam noise with the given variance on an integer vector query",
            {"variance": (None, "Skellam variance"), "l1": (1.0, "l1 sensitivity"), "l2": (1.0, "l2 sensitivity")},
            _skellam,
            "variance",
            True,
        ),
        NamedMechanism(
            "binomial",
            "Binomial(trials, probability) noise on an integer count (Cheu et al.'s bit sum)",
            {
                "trials": (None, "number of Bernoulli noise bits"),
                "probability": (0.25, "bit probability p"),
                "sensitivity": (1, "integer shift of the count"),
            },
            _binomial,
            "trials",
            True,
        ),
        NamedMechanism(
            "rr",
            "k-ary randomized response with pure local epsilon epsilon0",
            {"epsilon0": (None, "pure epsilon of one response"), "buckets": (2, "number of buckets k")},
            _rr,
            "epsilon0",
            False,
        ),
        NamedMechanism(
            "shuffle",
            "n users each apply an epsilon0-DP local randomizer; outputs are shuffled",
            {"epsilon0": (None, "local epsilon"), "users": (None, "number of users n")},
            _shuffle,
            "epsilon0",
            False,
        ),
        NamedMechanism(
            "epsilon-delta",
            "a black box known to be (epsilon0, delta0)-DP",
            {"epsilon0": (None, "epsilon of one release"), "delta0": (0.0, "delta of one release")},
            _epsdelta,
            "epsilon0",
            False,
        ),
    )
}


def event_for(name: str, params: dict) -> dp_accounting.DpEvent:
    """The DpEvent of one release of mechanism `name` with `params` (defaults filled in)."""
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; choose one of {', '.join(MECHANISMS)}")
    mech = MECHANISMS[name]
    full = {}
    for pname, (default, _) in mech.params.items():
        value = params.get(pname, default)
        if value is None:
            raise ValueError(f"mechanism {name!r} needs the parameter {pname!r}")
        full[pname] = value
    return mech.build(full)
