"""Mechanism objects that know their privacy: sample noise, release, and describe as a DpEvent.

An additive mechanism M(v) = v + Z (Z from one of the samplers) is described, for a query of
a given sensitivity, by the `DpEvent` that dpaudit's accountants and dp-accounting compose.
Nothing here computes a guarantee except the closed-form pure epsilon of the pure mechanisms,
which the tests check against the exact privacy loss computed from the pmf/density.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import attr
import dp_accounting
import numpy as np
from dp_accounting import dp_event

from dpaudit.accounting.events import DiscreteGaussianDpEvent, KaryRandomizedResponseDpEvent, SkellamDpEvent
from dpaudit.mechanisms import discrete, samplers
from dpaudit.mechanisms.discrete import Size, exact_rational
from dpaudit.validation import check_epsilon, check_int_at_least, check_positive

__all__ = [
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "RandomizedResponseMechanism",
    "SkellamMechanism",
]


def _int_values(values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"values must be integers for a discrete mechanism, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _float_values(values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"values must be real numbers, got dtype {arr.dtype}")
    return arr.astype(float)


def _sensitivity_int(sensitivity: Any) -> int:
    return check_int_at_least(sensitivity, 1, "sensitivity")


@attr.s(frozen=True, slots=True)
class LaplaceMechanism:
    """v + Lap(scale): pure (sensitivity/scale)-DP for an l1-sensitivity query (Dwork et al. 2006)."""

    scale: float = attr.ib(converter=lambda s: check_positive(s, "scale"))

    @classmethod
    def for_epsilon(cls, epsilon: float, sensitivity: float = 1.0) -> LaplaceMechanism:
        """The mechanism with scale = sensitivity / epsilon (epsilon-DP at that sensitivity)."""
        return cls(check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon))

    def sample(self, rng: np.random.Generator, size: Size | None = None) -> np.ndarray:
        """Lap(scale) noise of shape `size`."""
        return samplers.laplace(rng, self.scale, size)

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """values + noise of the same shape (leading axis: the batch of runs)."""
        arr = _float_values(values)
        return arr + self.sample(rng, arr.shape)

    def event(self, sensitivity: float = 1.0) -> dp_accounting.LaplaceDpEvent:
        """LaplaceDpEvent(scale / sensitivity)."""
        return dp_accounting.LaplaceDpEvent(self.scale / check_positive(sensitivity, "sensitivity"))

    def pure_epsilon(self, sensitivity: float = 1.0) -> float:
        """epsilon = sensitivity / scale."""
        return check_positive(sensitivity, "sensitivity") / self.scale


@attr.s(frozen=True, slots=True)
class GaussianMechanism:
    """v + N(0, sigma^2): event GaussianDpEvent(sigma / l2-sensitivity) (exact curve: Balle-Wang 2018)."""

    sigma: float = attr.ib(converter=lambda s: check_positive(s, "sigma"))

    def sample(self, rng: np.random.Generator, size: Size | None = None) -> np.ndarray:
        """N(0, sigma^2) noise of shape `size`."""
        return samplers.gaussian(rng, self.sigma, size)

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """values + noise of the same shape (leading axis: the batch of runs)."""
        arr = _float_values(values)
        return arr + self.sample(rng, arr.shape)

    def event(self, sensitivity: float = 1.0) -> dp_accounting.GaussianDpEvent:
        """GaussianDpEvent(sigma / sensitivity), sensitivity the l2-sensitivity."""
        return dp_accounting.GaussianDpEvent(self.sigma / check_positive(sensitivity, "sensitivity"))


@attr.s(frozen=True, slots=True)
class DiscreteLaplaceMechanism:
    """v + DLap(scale) on integers: pure (sensitivity/scale)-DP, tight for a shift of exactly
    `sensitivity` (Chowdhury & Zhou (ICLR 2023), Fact 3 / Thm 1: DLap(g/eps) at sensitivity g is eps-DP).

    `scale` is kept as an exact rational (int, Fraction, or a float's exact binary value).
    """

    scale: Fraction = attr.ib(converter=lambda s: exact_rational(s, "scale"))

    @classmethod
    def for_epsilon(cls, epsilon: Any, sensitivity: int = 1) -> DiscreteLaplaceMechanism:
        """scale = sensitivity / epsilon, exactly (epsilon taken at its exact rational value)."""
        return cls(_sensitivity_int(sensitivity) / exact_rational(epsilon, "epsilon"))

    def sample(self, rng: np.random.Generator, size: Size | None = None) -> np.ndarray:
        """DLap(scale) noise of shape `size`, exact (`discrete.discrete_laplace`)."""
        return discrete.discrete_laplace(rng, self.scale, size)

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """values (integers) + noise of the same shape (leading axis: the batch of runs)."""
        arr = _int_values(values)
        return arr + self.sample(rng, arr.shape)

    def event(self, sensitivity: int = 1) -> dp_event.DiscreteLaplaceDpEvent:
        """DiscreteLaplaceDpEvent(1 / scale, sensitivity) for an integer sensitivity >= 1."""
        return dp_event.DiscreteLaplaceDpEvent(
            noise_parameter=float(1 / self.scale), sensitivity=_sensitivity_int(sensitivity)
        )

    def pure_epsilon(self, sensitivity: int = 1) -> float:
        """epsilon = sensitivity / scale."""
        return float(_sensitivity_int(sensitivity) / self.scale)


@attr.s(frozen=True, slots=True)
class DiscreteGaussianMechanism:
    """v + N_Z(0, sigma^2) on integers: (sensitivity^2 / (2 sigma^2))-zCDP (Canonne, Kamath,
    Steinke 2020, Theorem 4); the event also carries their exact (eps, delta) curve (Thm 7)."""

    sigma: Fraction = attr.ib(converter=lambda s: exact_rational(s, "sigma"))

    def sample(self, rng: np.random.Generator, size: Size | None = None) -> np.ndarray:
        """N_Z(0, sigma^2) noise of shape `size`, exact (`discrete.discrete_gaussian`)."""
        return discrete.discrete_gaussian(rng, self.sigma, size)

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """values (integers) + noise of the same shape (leading axis: the batch of runs)."""
        arr = _int_values(values)
        return arr + self.sample(rng, arr.shape)

    def event(self, sensitivity: int = 1) -> DiscreteGaussianDpEvent:
        """DiscreteGaussianDpEvent(sigma, sensitivity) for an integer sensitivity >= 1."""
        return DiscreteGaussianDpEvent(float(self.sigma), float(_sensitivity_int(sensitivity)))

    def rho(self, sensitivity: int = 1) -> float:
        """zCDP rho = sensitivity^2 / (2 sigma^2)."""
        return float(Fraction(_sensitivity_int(sensitivity)) ** 2 / (2 * self.sigma**2))


@attr.s(frozen=True, slots=True)
class SkellamMechanism:
    """v + Sk(0, variance) on integers: RDP of Agarwal, Kairouz, Liu 2021, Thm 3.5 (Chowdhury & Zhou's (ICLR 2023)
    Lemma 3): eps(a) = a D2^2/(2 var) + min(((2a-1) D2^2 + 6 D1)/(4 var^2), 3 D1/(2 var))."""

    variance: float = attr.ib(converter=lambda v: check_positive(v, "variance"))

    def sample(self, rng: np.random.Generator, size: Size | None = None) -> np.ndarray:
        """Sk(0, variance) noise of shape `size`."""
        return samplers.skellam(rng, self.variance, size)

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """values (integers) + noise of the same shape (leading axis: the batch of runs)."""
        arr = _int_values(values)
        return arr + self.sample(rng, arr.shape)

    def event(self, l1_sensitivity: float = 1.0, l2_sensitivity: float | None = None) -> SkellamDpEvent:
        """SkellamDpEvent(variance, l1, l2); the l2-sensitivity defaults to the l1-sensitivity."""
        l1 = check_positive(l1_sensitivity, "l1_sensitivity")
        l2 = l1 if l2_sensitivity is None else check_positive(l2_sensitivity, "l2_sensitivity")
        return SkellamDpEvent(self.variance, l1, l2)


@attr.s(frozen=True, slots=True)
class RandomizedResponseMechanism:
    """k-ary randomized response: keep the value w.p. e^eps / (e^eps + k - 1), else a uniform
    other value; eps-LDP. k = 2 is Warner's binary randomized response.

    As dp-accounting's RandomizedResponseDpEvent (output a uniform bucket w.p. p, else the
    input): p = k / (e^eps + k - 1); the event keeps eps and k (`KaryRandomizedResponseDpEvent`),
    since p rounds to 1.0 for large k or small eps.
    """

    epsilon: float = attr.ib(converter=lambda e: check_epsilon(e))
    k: int = attr.ib(default=2, converter=lambda k: check_int_at_least(k, 2, "k"))

    def release(self, rng: np.random.Generator, values: Any) -> np.ndarray:
        """Each of `values` through k-ary randomized response (binary for k = 2)."""
        if self.k == 2:
            return samplers.randomized_response(rng, values, self.epsilon)
        return samplers.k_randomized_response(rng, values, self.k, self.epsilon)

    def event(self) -> KaryRandomizedResponseDpEvent:
        """KaryRandomizedResponseDpEvent(epsilon, k)."""
        return KaryRandomizedResponseDpEvent(local_epsilon=self.epsilon, num_buckets=self.k)

    def pure_epsilon(self) -> float:
        """epsilon: k-ary randomized response is epsilon-LDP."""
        return self.epsilon
