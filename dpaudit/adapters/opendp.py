"""OpenDP measurements as audit targets, with the claim read from the measurement's own privacy map.

    from dpaudit.adapters import opendp_laplace, audit_target
    target = opendp_laplace(scale=1.0)            # claim_epsilon = make_laplace(...).map(1.0) = 1.0
    audit_target(target, samples=100_000, float_bits=True)

OpenDP is imported on first use (`pip install 'dpaudit[opendp]'`), and its "contrib" feature is enabled then,
as OpenDP requires before its contributed measurements can be built.  OpenDP draws its noise from the
operating system's entropy and cannot be seeded: the `rng` argument of a target is not used, so an audit's
bound stays valid but its runs are not bit-reproducible (`LibraryTarget.reproducible` is False).

Batching.  One call into OpenDP per run costs far more than the noise itself, so a target draws a chunk of
runs per call: the additive-noise builders through the same noise measurement on a vector domain, any other
measurement through OpenDP's composition of `chunk` copies of itself.  Both give independent runs of
exactly the scalar measurement: a vector-domain Laplace or Gaussian adds to each coordinate its own
independent draw from the same sampler, with the same scale and granularity, as on the atom domain (OpenDP's
`make_laplace` / `make_gaussian` docs), and a non-interactive composition runs each copy with fresh
randomness.  The claim is read from the scalar measurement's map, never from the batch.

A target pickles as the JSON of its batch's measurement (`opendp.serialize`), so the auditor's process pool
can run it; a measurement OpenDP cannot serialize keeps the audit in one process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import ApproxDp, PureDp, Zcdp
from dpaudit.adapters.target import Guarantee, LibraryTarget, distribution_version, point_claim, require
from dpaudit.validation import check_choice, check_int_at_least, check_positive

__all__ = [
    "opendp_discrete_gaussian",
    "opendp_discrete_laplace",
    "opendp_gaussian",
    "opendp_laplace",
    "opendp_measurement",
    "opendp_noisy_max",
]

#: Runs per call into OpenDP: a vector of this length, or a composition of this many copies.
VECTOR_CHUNK = 65_536
COMPOSITION_CHUNK = 1_024

#: The output measures whose map `claim_of` reads, and what it reads them as.
MEASURES = ("MaxDivergence", "Approximate<MaxDivergence>", "ZeroConcentratedDivergence")


def _opendp() -> Any:
    dp = require("opendp.prelude", "opendp")
    dp.enable_features("contrib")
    return dp


def claim_of(measurement: Any, d_in: Any) -> Guarantee:
    """The guarantee `measurement.map(d_in)` states: PureDp for MaxDivergence, ApproxDp for
    Approximate<MaxDivergence>, Zcdp for ZeroConcentratedDivergence (rho = the map's value)."""
    measure = str(measurement.output_measure.type)
    if measure not in MEASURES:
        raise ValueError(f"measurement: output measure {measure} is not one of {', '.join(MEASURES)}")
    d_out = measurement.map(d_in)
    if measure == "MaxDivergence":
        return PureDp(float(d_out))
    if measure == "ZeroConcentratedDivergence":
        return Zcdp(rho=float(d_out))
    epsilon, delta = d_out
    return ApproxDp(float(epsilon), float(delta))


def _caster(carrier: str) -> Callable[[Any], Any]:
    """The conversion of a target's `data` to the Python value OpenDP accepts for `carrier` (e.g. "f64",
    "i32", "Vec<f64>"): numpy scalars and arrays become floats, ints and lists of them."""
    vector = carrier.startswith("Vec<")
    inner = carrier[4:-1] if vector else carrier
    scalar: Callable[[Any], Any] = float if inner.startswith("f") else int if inner[:1] in ("i", "u") else _same
    if not vector:
        return scalar
    return _FloatList() if scalar is float else _IntList() if scalar is int else _same


def _same(x: Any) -> Any:
    return x


class _FloatList:
    def __call__(self, x: Any) -> list[float]:
        return [float(v) for v in np.asarray(x).ravel()]


class _IntList:
    def __call__(self, x: Any) -> list[int]:
        return [int(v) for v in np.asarray(x).ravel()]


class _Runner:
    """Draws `size` runs of a measurement on `data`, `chunk` runs per call into OpenDP.

    kind "vector": `batch` is the noise measurement on a vector domain, called on `chunk` copies of `data`;
    kind "composition": `batch` is the measurement itself, composed `chunk` times once, on first use.
    Pickles as `opendp.serialize(batch)` (the composition is rebuilt where it is unpickled).
    """

    def __init__(self, batch: Any, kind: str, chunk: int):
        self.batch, self.kind, self.chunk = batch, kind, chunk
        carrier = str(batch.input_domain.carrier_type)  # a run's data: the vector's element, or the whole input
        self.cast = _caster(carrier[4:-1] if kind == "vector" else carrier)
        self._composed: Any = None

    def __getstate__(self) -> dict[str, Any]:
        dp = _opendp()
        return {"json": dp.serialize(self.batch), "kind": self.kind, "chunk": self.chunk}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(_opendp().deserialize(state["json"]), state["kind"], state["chunk"])  # type: ignore[misc]

    def _call(self, x: Any, n: int) -> list[Any]:
        if self.kind == "vector":
            return list(self.batch([x] * n))
        if self._composed is None:
            self._composed = _opendp().c.make_composition([self.batch] * self.chunk)
        return list(self._composed(x))[:n]

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        x = self.cast(data)
        out: list[Any] = []
        for start in range(0, size, self.chunk):
            out.extend(self._call(x, min(self.chunk, size - start)))
        return np.asarray(out) if out else np.empty(0)


def _target(
    name: str, scalar: Any, d_in: Any, neighbours: tuple[Any, Any], delta: float | None, runner: _Runner
) -> LibraryTarget:
    claim = claim_of(scalar, d_in)
    epsilon, claim_delta = point_claim(claim, delta)
    return LibraryTarget(
        name=name,
        library="opendp",
        version=distribution_version("opendp"),
        claim=claim,
        claim_epsilon=epsilon,
        claim_delta=claim_delta,
        neighbours=neighbours,
        reproducible=False,
        sampler=runner,
    )


def opendp_measurement(
    measurement: Any,
    d_in: Any,
    neighbours: tuple[Any, Any],
    delta: float | None = None,
    name: str | None = None,
    chunk: int = COMPOSITION_CHUNK,
) -> LibraryTarget:
    """Any OpenDP `measurement` as a target: its claim is `measurement.map(d_in)` (`claim_of`; `delta` states
    a zCDP claim as (epsilon, delta)), its runs come `chunk` at a time from OpenDP's composition of `chunk`
    copies of it (independent runs: each copy draws fresh noise).  `neighbours`: the pair (d0, d1) to
    audit, at distance at most `d_in` in the measurement's input metric."""
    dp = _opendp()
    if not isinstance(measurement, dp.Measurement):
        raise TypeError(f"measurement must be an opendp Measurement, got {type(measurement).__name__}")
    if not (isinstance(neighbours, tuple) and len(neighbours) == 2):
        raise TypeError(f"neighbours must be a pair (d0, d1), got {neighbours!r}")
    chunk = check_int_at_least(chunk, 1, "chunk")
    label = name or f"{measurement.input_domain} -> {measurement.output_measure} (d_in={d_in!r})"
    return _target(label, measurement, d_in, neighbours, delta, _Runner(measurement, "composition", chunk))


def _additive(
    make: str, scale: float, sensitivity: float, integer: bool, delta: float | None, chunk: int
) -> LibraryTarget:
    """The `make` noise (make_laplace or make_gaussian) on one number, batched on a vector domain."""
    dp = _opendp()
    scale = check_positive(scale, "scale")
    chunk = check_int_at_least(chunk, 1, "chunk")
    if integer:
        d_in: float | int = check_int_at_least(sensitivity, 1, "sensitivity")
        atom, absolute = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    else:
        d_in = check_positive(sensitivity, "sensitivity")
        atom, absolute = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    builder = getattr(dp.m, make)
    scalar = builder(atom, absolute, scale=scale)
    vector_metric = (dp.l1_distance if make == "make_laplace" else dp.l2_distance)(T=int if integer else float)
    vector = builder(dp.vector_domain(atom), vector_metric, scale=scale)
    kind = "integer" if integer else "float"
    zero = 0 if integer else 0.0
    return _target(
        f"{make}(scale={scale!r}, {kind}), sensitivity {d_in!r}",
        scalar,
        d_in,
        (zero, d_in),
        delta,
        _Runner(vector, "vector", chunk),
    )


def opendp_laplace(scale: float, sensitivity: float = 1.0, chunk: int = VECTOR_CHUNK) -> LibraryTarget:
    """OpenDP's float Laplace `make_laplace(atom_domain(T=float, nan=False), absolute_distance(T=float), scale)`:
    x + Laplace noise of scale `scale` on OpenDP's discretized grid; claim epsilon = map(sensitivity)
    = sensitivity/scale (Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity", TCC 2006).
    Neighbours (0, sensitivity), where the loss sensitivity/scale is reached."""
    return _additive("make_laplace", scale, sensitivity, False, None, chunk)


def opendp_discrete_laplace(scale: float, sensitivity: int = 1, chunk: int = VECTOR_CHUNK) -> LibraryTarget:
    """OpenDP's `make_laplace` on integers: the discrete Laplace (two-sided geometric) with
    P(k) proportional to exp(-|k|/scale) (Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing
    Privacy Mechanisms", STOC 2009; sampler of Canonne, Kamath, Steinke, NeurIPS 2020); claim epsilon =
    map(sensitivity) = sensitivity/scale, reached by the neighbours (0, sensitivity)."""
    return _additive("make_laplace", scale, sensitivity, True, None, chunk)


def opendp_gaussian(
    scale: float, sensitivity: float = 1.0, delta: float = 1e-6, chunk: int = VECTOR_CHUNK
) -> LibraryTarget:
    """OpenDP's float Gaussian `make_gaussian` (zCDP): claim rho = map(sensitivity) = sensitivity^2/(2 scale^2)
    (Bun, Steinke, "Concentrated Differential Privacy", TCC 2016, Prop. 1.6), stated at `delta` as
    epsilon by `point_claim` (equal to OpenDP's own make_fix_delta(make_zCDP_to_approxDP(...), delta)).
    Neighbours (0, sensitivity): every pair at that distance has the same privacy-loss distribution."""
    return _additive("make_gaussian", scale, sensitivity, False, delta, chunk)


def opendp_discrete_gaussian(
    scale: float, sensitivity: int = 1, delta: float = 1e-6, chunk: int = VECTOR_CHUNK
) -> LibraryTarget:
    """OpenDP's `make_gaussian` on integers: the discrete Gaussian of Canonne, Kamath, Steinke ("The Discrete
    Gaussian for Differential Privacy", NeurIPS 2020), rho = sensitivity^2/(2 scale^2) (their Thm 4), stated
    at `delta` by `point_claim`; neighbours (0, sensitivity)."""
    return _additive("make_gaussian", scale, sensitivity, True, delta, chunk)


def opendp_noisy_max(
    scale: float,
    sensitivity: float = 1.0,
    candidates: int = 10,
    measure: str = "max_divergence",
    delta: float | None = None,
    chunk: int = COMPOSITION_CHUNK,
) -> LibraryTarget:
    """OpenDP's report noisy max `make_noisy_max` on a vector of float scores (L-inf distance, not monotonic):
    with `measure` "max_divergence", exponential noise of scale `scale` (report noisy max with exponential
    noise = permute-and-flip, McKenna, Sheldon, "Permute-and-Flip", NeurIPS 2020), claim epsilon =
    map(sensitivity) = 2 sensitivity/scale; with "zero_concentrated_divergence", Gumbel noise (the exponential
    mechanism, McSherry, Talwar, FOCS 2007), claim rho = map(sensitivity), stated at `delta` (default 1e-6).

    Neighbours: scores (s, 0, ..., 0) and (0, s, ..., s) with s = sensitivity over `candidates` entries, each
    entry moved by s in opposite directions; the loss of reporting index 0 grows to the claim with the
    number of candidates (exponential noise, scale = s: 1.49 of 2 at 2 candidates, 1.89 at 5, 1.99 at 10).
    Runs: compositions of `chunk` copies (one index per copy)."""
    dp = _opendp()
    scale = check_positive(scale, "scale")
    s = check_positive(sensitivity, "sensitivity")
    k = check_int_at_least(candidates, 2, "candidates")
    measure = check_choice(measure, ("max_divergence", "zero_concentrated_divergence"), "measure")
    if measure == "zero_concentrated_divergence" and delta is None:
        delta = 1e-6
    output_measure = getattr(dp, measure)()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    meas = dp.m.make_noisy_max(*space, output_measure, scale=scale)
    neighbours = ((s,) + (0.0,) * (k - 1), (0.0,) + (s,) * (k - 1))
    name = f"make_noisy_max({measure}, scale={scale!r}), {k} candidates, sensitivity {s!r}"
    return opendp_measurement(meas, s, neighbours, delta=delta, name=name, chunk=chunk)
