"""Noise sources backed by the DP libraries, for the algorithms that take `noise_source=`.

    from dpaudit.adapters import OpenDPNoise
    from dpaudit.algorithms.mab.elimination import DPSE
    DPSE(epsilon=1.0, noise_source=OpenDPNoise())      # DP-SE with OpenDP's Laplace on every epoch sum

Each source has the two methods of `dpaudit.mechanisms.noise_source.NoiseSource` (it implements the protocol
structurally: the core does not import the mechanisms layer): `laplace(rng, values, scale)` returns
values + Lap(scale) and `discrete_laplace(rng, values, scale)` values + DLap(scale), one independent draw per
entry, each computed by the library's own mechanism on the value itself, so that a float release carries the
library's float arithmetic (what a floating-point audit must see).  The libraries are imported on first use
(`pip install 'dpaudit[opendp]'`, `pip install 'dpaudit[diffprivlib]'`).

- `OpenDPNoise`: OpenDP's `make_laplace` on a vector domain, called once per `chunk` values (each coordinate
  gets its own independent draw of the scalar measurement, OpenDP's `make_laplace` docs).  The float Laplace
  rounds the value to OpenDP's grid of spacing 2^k and adds discrete Laplace noise on it; on integers it is
  the discrete Laplace (sampler of Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
  Privacy", NeurIPS 2020).  OpenDP draws from the operating system's entropy and cannot be seeded: `rng` is
  not used, runs are NOT reproducible from a seed (`reproducible` is False).  An audit stays valid: it needs
  independent runs, which fresh entropy gives; only its bits cannot be replayed.
- `DiffprivlibNoise`: diffprivlib's `Laplace(epsilon=1, sensitivity=scale)` (scale = sensitivity/epsilon
  exactly) and `Geometric(epsilon=1/scale, sensitivity=1)` (its two-sided geometric at the float 1/scale),
  `randomise` mapped over the values (diffprivlib draws one value per call).  Their `random_state` is a
  `numpy.random.RandomState` over `rng`'s bit generator (as in `dpaudit.adapters.diffprivlib`), so runs are
  reproducible from the seed; deployed with random_state=None diffprivlib draws the same 53-bit uniforms from
  `secrets.SystemRandom`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters.target import require
from dpaudit.validation import check_int_at_least, check_positive

__all__ = ["DiffprivlibNoise", "OpenDPNoise"]

#: Values per call into OpenDP (one vector-domain measurement call).
OPENDP_CHUNK = 65_536


def _flat(values: Any, dtype: type) -> tuple[np.ndarray, tuple[int, ...]]:
    v: np.ndarray = np.asarray(values, dtype=dtype)
    return v.ravel(), v.shape


@functools.cache
def _opendp_laplace(scale: float, integer: bool) -> Any:
    """OpenDP's `make_laplace` of `scale` on a vector of floats (NaN excluded) or of 64-bit integers."""
    dp = require("opendp.prelude", "opendp")
    dp.enable_features("contrib")
    kind: Any = "i64" if integer else float
    atom = dp.atom_domain(T=kind) if integer else dp.atom_domain(T=kind, nan=False)
    return dp.m.make_laplace(dp.vector_domain(atom), dp.l1_distance(T=kind), scale=scale)


@dataclasses.dataclass(frozen=True)
class OpenDPNoise:
    """OpenDP's Laplace and discrete Laplace (`make_laplace`), `chunk` values per call; not reproducible
    (OpenDP draws from the operating system's entropy, `rng` is not used: module docstring)."""

    chunk: int = OPENDP_CHUNK
    name: ClassVar[str] = "opendp"
    reproducible: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_int_at_least(self.chunk, 1, "chunk")

    def _run(self, values: Any, scale: Any, integer: bool) -> np.ndarray:
        meas = _opendp_laplace(check_positive(scale, "scale"), integer)
        dtype: type = np.int64 if integer else float
        flat, shape = _flat(values, dtype)
        out: np.ndarray = np.empty(flat.size, dtype=dtype)
        for start in range(0, flat.size, self.chunk):
            stop = min(start + self.chunk, flat.size)
            out[start:stop] = meas(flat[start:stop].tolist())
        return out.reshape(shape)

    def laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + Lap(scale) by OpenDP's float `make_laplace` (the value rounded to its 2^k grid)."""
        return self._run(values, scale, integer=False)

    def discrete_laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + DLap(scale) by OpenDP's `make_laplace` on 64-bit integers."""
        return self._run(values, scale, integer=True)


@dataclasses.dataclass(frozen=True)
class DiffprivlibNoise:
    """diffprivlib's `Laplace` and `Geometric`, `randomise` on each value, drawing from `rng` (module docstring)."""

    name: ClassVar[str] = "diffprivlib"
    reproducible: ClassVar[bool] = True

    def _run(self, values: Any, mechanism: Any, dtype: type) -> np.ndarray:
        flat, shape = _flat(values, dtype)
        out: np.ndarray = np.fromiter(map(mechanism.randomise, flat.tolist()), dtype=dtype, count=flat.size)
        return out.reshape(shape)

    def laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + Lap(scale) by diffprivlib's `Laplace(epsilon=1, sensitivity=scale)`: value - scale times a
        standard Laplace from four uniforms (Holohan, Braghin, "Secure Random Sampling in Differential
        Privacy", ESORICS 2021)."""
        mechanisms = require("diffprivlib.mechanisms", "diffprivlib")
        state = np.random.RandomState(rng.bit_generator)  # draws advance rng itself
        mech = mechanisms.Laplace(epsilon=1.0, sensitivity=check_positive(scale, "scale"), random_state=state)
        return self._run(values, mech, float)

    def discrete_laplace(self, rng: np.random.Generator, values: Any, scale: Any) -> np.ndarray:
        """values + DLap(scale) by diffprivlib's `Geometric(epsilon=1/scale, sensitivity=1)`: P(k) proportional
        to exp(-|k| epsilon) (Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing Privacy
        Mechanisms", STOC 2009), by inversion of one uniform in float64."""
        mechanisms = require("diffprivlib.mechanisms", "diffprivlib")
        state = np.random.RandomState(rng.bit_generator)
        mech = mechanisms.Geometric(epsilon=1.0 / check_positive(scale, "scale"), sensitivity=1, random_state=state)
        return self._run(values, mech, np.int64)
