"""Events the papers release that dp-accounting's `DpEvent` tree lacks.

They subclass `dp_accounting.DpEvent`, so they nest inside its `ComposedDpEvent`,
`SelfComposedDpEvent` and the rest; dpaudit's accountants know how to account for them.
Every event validates its parameters on construction (ValueError naming the parameter).
"""

from __future__ import annotations

from collections.abc import Sequence

import attr
import dp_accounting

from dpaudit.accounting.randomized_response import noise_parameter
from dpaudit.validation import check_delta, check_epsilon, check_int_at_least, check_open_unit, check_positive

__all__ = [
    "BinomialDpEvent",
    "DiscreteGaussianDpEvent",
    "EpsilonDeltaDpEvent",
    "KaryRandomizedResponseDpEvent",
    "ParallelComposedDpEvent",
    "ShuffledDpEvent",
    "SkellamDpEvent",
]


def _local_epsilon(value: float) -> float:
    return check_epsilon(value, "local_epsilon")


def _bucket_count(value: int) -> int:
    return check_int_at_least(value, 2, "num_buckets")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class KaryRandomizedResponseDpEvent(dp_accounting.DpEvent):
    """k-ary randomized response with pure local epsilon eps0: the true bucket w.p.
    e^eps0/(e^eps0 + k - 1), each other bucket w.p. 1/(e^eps0 + k - 1); exactly eps0-DP (replace-one).

    Warner 1965; Kairouz, Oh, Viswanath, "Extremal Mechanisms for Local Differential Privacy"
    (NeurIPS 2014). The release dp-accounting calls `RandomizedResponseDpEvent(p, k)` with
    p = k/(e^eps0 - 1 + k), kept here by eps0 and k (an integer, exact at any size): p rounds to 1.0
    for large k or small eps0, eps0 does not (`dpaudit.accounting.randomized_response`).
    `local_epsilon` (eps0) in (0, inf) and `num_buckets` (k) an integer >= 2 (ValueError otherwise,
    TypeError for a non-number or a non-integer k).

    Examples
    --------
    >>> import dpaudit
    >>> from dpaudit.accounting import KaryRandomizedResponseDpEvent
    >>> round(dpaudit.epsilon(KaryRandomizedResponseDpEvent(local_epsilon=1.0, num_buckets=4), delta=0.0), 6)
    1.0
    """

    local_epsilon: float = attr.ib(converter=_local_epsilon)
    num_buckets: int = attr.ib(converter=_bucket_count)

    @property
    def noise_parameter(self) -> float:
        """dp-accounting's p = k/(e^eps0 - 1 + k), rounded (display only; never read by dpaudit)."""
        return noise_parameter(self.local_epsilon, self.num_buckets)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SkellamDpEvent(dp_accounting.DpEvent):
    """Integer vector sum plus Skellam noise Sk(mu, mu) per coordinate, variance = 2*mu.

    RDP at order a: a*l2^2/(2*var) + min(((2a-1)*l2^2 + 6*l1)/(4*var^2), 3*l1/(2*var)).
    Agarwal, Kairouz, Liu, "The Skellam Mechanism for Differentially Private Federated
    Learning" (NeurIPS 2021), Theorem 3.5; Chowdhury & Zhou (ICLR 2023)'s Dist-RDP-SE (its Theorem 2).
    `variance`, `l1_sensitivity` and `l2_sensitivity` must be positive and finite (ValueError otherwise,
    TypeError for a non-number).
    """

    variance: float
    l1_sensitivity: float
    l2_sensitivity: float

    def __attrs_post_init__(self) -> None:
        check_positive(self.variance, "variance")
        check_positive(self.l1_sensitivity, "l1_sensitivity")
        check_positive(self.l2_sensitivity, "l2_sensitivity")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteGaussianDpEvent(dp_accounting.DpEvent):
    """Integer value plus discrete Gaussian noise N_Z(0, sigma^2): pmf ∝ exp(-x^2/(2 sigma^2)).

    rho-zCDP with rho = sensitivity^2 / (2 sigma^2) (Canonne, Kamath, Steinke, "The Discrete
    Gaussian for Differential Privacy", NeurIPS 2020, Theorem 4), and an exact (eps, delta)
    curve by summation over the integers (their Theorem 7). `sigma` and `sensitivity` must be positive
    and finite (ValueError otherwise, TypeError for a non-number).

    Examples
    --------
    >>> from dpaudit.accounting import DiscreteGaussianDpEvent, zcdp_guarantee
    >>> round(zcdp_guarantee(DiscreteGaussianDpEvent(sigma=5.0, sensitivity=1.0)).rho, 6)  # 1 / (2 * 25)
    0.02
    """

    sigma: float
    sensitivity: float

    def __attrs_post_init__(self) -> None:
        check_positive(self.sigma, "sigma")
        check_positive(self.sensitivity, "sensitivity")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A black box known only to be (epsilon, delta)-DP; delta = 0 means pure epsilon-DP.

    (epsilon, delta)-DP as defined by Dwork, Roth, "The Algorithmic Foundations of Differential Privacy"
    (FnT TCS 2014), Def. 2.4. The `approx` accountant composes k of them by the best of basic composition,
    (k epsilon, k delta) (their Thm. 3.16), and the optimal composition of Kairouz, Oh, Viswanath, "The
    Composition Theorem for Differential Privacy" (ICML 2015), Thm. 3.3. `epsilon` in (0, inf) and `delta`
    in [0, 1) (ValueError otherwise, TypeError for a non-number).
    """

    epsilon: float
    delta: float = 0.0

    def __attrs_post_init__(self) -> None:
        check_epsilon(self.epsilon, "epsilon")
        check_delta(self.delta, "delta")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffledDpEvent(dp_accounting.DpEvent):
    """Each of `num_users` users applies an (`local_epsilon`, `local_delta`)-DP local randomizer
    (local_delta = 0: pure); outputs shuffled.

    The central guarantee comes from amplification by shuffling (Feldman, McMillan, Talwar,
    "Hiding Among the Clones", FOCS 2021, Theorem 3.1 and its numerical Section 4.3); a local
    delta0 > 0 adds (e^eps + 1)(1 + e^-eps0/2) n delta0 to the central delta at eps (their
    Theorem 3.8), which the accountants fold in (`dpaudit.accounting.shuffle.shuffled_delta`).
    `local_epsilon` in (0, inf), `num_users` >= 1 and `local_delta` in [0, 1) (ValueError otherwise,
    TypeError for a non-number).
    """

    local_epsilon: float
    num_users: int
    local_delta: float = attr.ib(default=0.0, kw_only=True)

    def __attrs_post_init__(self) -> None:
        check_epsilon(self.local_epsilon, "local_epsilon")
        check_int_at_least(self.num_users, 1, "num_users")
        check_delta(self.local_delta, "local_delta")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BinomialDpEvent(dp_accounting.DpEvent):
    """Integer count plus Binomial(trials, probability) noise; one user moves the count by at most
    `sensitivity` (an integer). The bit-sum of Cheu et al.'s shuffled vector summation (each of n
    users sends b Bernoulli(p) bits per label: trials = n*b) seen by the analyzer, per label.

    Not pure DP (a count beyond `trials` reveals the shift). The `pld` accountant computes its
    privacy loss distribution in both directions (the binomial is skewed for p != 1/2) when the
    outcomes can be enumerated, on a grid of losses otherwise (`binomial_loss`, up to 2^52 trials); `approx` uses
    its exact (eps, delta) profile from binomial tails
    (`dpaudit.accounting.binomial`) for any number of trials: with X ~ Bin(trials, probability) and s the
    sensitivity, delta(eps) = max(P(X >= t - s) - e^eps P(X >= t), P(X <= u) - e^eps P(X <= u - s)) at the
    likelihood-ratio thresholds t, u (Cheu, Smith, Ullman, Zeber, Zhilyaev, "Distributed Differential
    Privacy via Shuffling", EUROCRYPT 2019, for the mechanism; the divergence as in Balle, Barthe,
    Gaboardi, NeurIPS 2018). `trials` >= 1 and `sensitivity` >= 1 integers, `probability` in (0, 1)
    (ValueError otherwise, TypeError for a non-number).
    """

    trials: int
    probability: float
    sensitivity: int

    def __attrs_post_init__(self) -> None:
        check_int_at_least(self.trials, 1, "trials")
        check_open_unit(self.probability, "probability")
        check_int_at_least(self.sensitivity, 1, "sensitivity")


def _tuple_of_events(events: Sequence[dp_accounting.DpEvent]) -> tuple:
    events = tuple(events)
    if not events:
        raise ValueError("events must hold at least one DpEvent, got an empty sequence")
    for e in events:
        if not isinstance(e, dp_accounting.DpEvent):
            raise TypeError(f"events must hold DpEvent objects, got {e!r}")
    return events


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ParallelComposedDpEvent(dp_accounting.DpEvent):
    """Events applied to disjoint sets of users: one user is in at most one of them.

    Parallel composition (McSherry, "Privacy Integrated Queries", SIGMOD 2009, Thm. 4): the guarantee is
    the worst of the events' guarantees, for every notion (pure, approximate, RDP, zCDP, PLD). `events`
    must be a non-empty sequence of `DpEvent`s (ValueError when empty, TypeError for another object).

    Examples
    --------
    >>> import dp_accounting, dpaudit
    >>> from dpaudit.accounting import ParallelComposedDpEvent
    >>> halves = ParallelComposedDpEvent([dp_accounting.LaplaceDpEvent(1.0), dp_accounting.LaplaceDpEvent(0.5)])
    >>> dpaudit.epsilon(halves, delta=0.0)  # the worst branch: Laplace of scale 1/2 is 2-DP
    2.0
    """

    events: tuple = attr.ib(converter=_tuple_of_events)
