"""Noise sources: where an algorithm's Laplace and discrete Laplace noise comes from.

An algorithm that takes `noise_source=` (DP-SE, `dpaudit.algorithms.mab.elimination.DPSE`; Dist-DP-SE,
`dpaudit.algorithms.mab.batch_se.BatchSE`) adds its noise through the source's two methods, each returning
`values` plus one independent draw per entry, computed the way the source computes it:

    laplace(rng, values, scale)           values + Lap(scale), float64: density exp(-|x|/scale) / (2 scale)
    discrete_laplace(rng, values, scale)  values + DLap(scale), int64: P(k) = tanh(1/(2 scale)) exp(-|k|/scale)

The source adds the noise itself, so that a float release is the source's own float arithmetic (rounding
included), which is what a floating-point audit of the release must see (Mironov, "On Significance of the
Least Significant Bits for Differential Privacy", CCS 2012).  Sources also say their `name` and whether their
draws are a function of `rng` (`reproducible`).

`DPAUDIT_NOISE` (the default everywhere) is dpaudit's own samplers: `dpaudit.mechanisms.samplers.laplace`
(numpy's float64 Laplace) and the exact `dpaudit.mechanisms.discrete.discrete_laplace`; the releases are the
ones the algorithms drew before sources existed, bit for bit.  The sources backed by the DP libraries
(OpenDP, diffprivlib) are in `dpaudit.adapters.noise`; they implement this protocol structurally.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from dpaudit.mechanisms import discrete, samplers

__all__ = ["DPAUDIT_NOISE", "DpauditNoise", "NoiseSource", "check_noise_source"]


@runtime_checkable
class NoiseSource(Protocol):
    """What an algorithm draws its noise from (module docstring): `values` plus independent noise per entry."""

    name: ClassVar[str]
    reproducible: ClassVar[bool]

    def laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + Lap(scale), float64, the shape of `values`."""
        ...

    def discrete_laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + DLap(scale), int64, the shape of `values`."""
        ...


@dataclasses.dataclass(frozen=True)
class DpauditNoise:
    """dpaudit's own samplers: numpy's float64 Laplace (`samplers.laplace`), the exact discrete Laplace
    (`discrete.discrete_laplace`, exact at the rational value of `scale`); reproducible from `rng`."""

    name: ClassVar[str] = "dpaudit"
    reproducible: ClassVar[bool] = True

    def laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + Lap(scale), float64, the shape of `values` (`samplers.laplace`)."""
        v = np.asarray(values, dtype=float)
        return v + samplers.laplace(rng, scale, v.shape)

    def discrete_laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + DLap(scale), int64, the shape of `values` (`discrete.discrete_laplace`)."""
        v = np.asarray(values, dtype=np.int64)
        return v + discrete.discrete_laplace(rng, scale, v.shape)


DPAUDIT_NOISE = DpauditNoise()
"""The default noise source of every algorithm that takes one."""


def check_noise_source(value: Any, name: str = "noise_source") -> NoiseSource:
    """`value` if it has the `NoiseSource` methods and attributes, else TypeError naming `name`."""
    if isinstance(value, type) or not isinstance(value, NoiseSource):
        raise TypeError(
            f"{name} must be a noise source (laplace, discrete_laplace, name, reproducible; "
            f"dpaudit.mechanisms.noise_source), got {value!r}"
        )
    return value
