"""diffprivlib mechanisms as audit targets, with the claim read from the mechanism's constructor arguments.

    from dpaudit.adapters import diffprivlib_laplace, audit_target
    target = diffprivlib_laplace(epsilon=1.0)                # Laplace(epsilon=1.0, sensitivity=1.0)
    audit_target(target, samples=100_000, float_bits=True)   # Mironov's low-order-bit leak: a violation

diffprivlib is imported on first use (`pip install 'dpaudit[diffprivlib]'`).  It has no privacy map: the claim
is the (epsilon, delta) the mechanism was built with (PureDp when delta = 0).

Batching.  diffprivlib's `randomise` draws one value per call and no mechanism has a vectorised path (each
draws its uniforms one at a time from `random_state`), so a target builds the mechanism once per call and maps
`randomise` over the runs (`map`, no Python loop body).  The mechanism's `random_state` is a
`numpy.random.RandomState` over the target's `rng`'s own bit generator: runs are a function of `rng`, so an
audit is reproducible from its seed.  Left to itself (random_state=None) diffprivlib draws from
`secrets.SystemRandom`, whose `random()` has the same 53-bit resolution as `RandomState.random()`, so the law
audited is the one deployed.
"""

from __future__ import annotations

import inspect
from itertools import repeat, starmap
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import ApproxDp, PureDp
from dpaudit.adapters.target import Guarantee, LibraryTarget, distribution_version, point_claim, require
from dpaudit.validation import check_bool, check_choice, check_int_at_least, check_positive

__all__ = [
    "diffprivlib_exponential",
    "diffprivlib_gaussian",
    "diffprivlib_geometric",
    "diffprivlib_laplace",
    "diffprivlib_mechanism",
    "diffprivlib_snapping",
]


def _mechanisms() -> Any:
    return require("diffprivlib.mechanisms", "diffprivlib")


def constructor_arguments(mechanism: Any) -> dict[str, Any]:
    """The keyword arguments that rebuild `mechanism` (all but random_state): diffprivlib keeps each
    constructor argument as the attribute of the same name (its `__repr__` reads them back the same way)."""
    names = [n for n in inspect.getfullargspec(type(mechanism)).kwonlyargs if n != "random_state"]
    missing = [n for n in names if not hasattr(mechanism, n)]
    if missing:
        raise TypeError(f"mechanism: {type(mechanism).__name__} does not keep its arguments {missing} as attributes")
    return {n: getattr(mechanism, n) for n in names}


def claim_of(mechanism: Any) -> Guarantee:
    """The (epsilon, delta) `mechanism` was built with: PureDp(epsilon) when delta = 0, else ApproxDp."""
    epsilon, delta = float(mechanism.epsilon), float(getattr(mechanism, "delta", 0.0))
    return PureDp(epsilon) if delta == 0.0 else ApproxDp(epsilon, delta)


def _real_list(data: Any) -> list[float]:
    return [float(v) for v in np.asarray(data, dtype=float).ravel()]


class _Randomise:
    """`size` runs of `cls(**arguments)` on `data`: `randomise(data)`, or, with `data_argument`, `data` passed
    as that constructor argument (a list of reals, e.g. the exponential mechanism's utilities) and
    `randomise()`."""

    def __init__(self, cls: type, arguments: dict[str, Any], data_argument: str | None):
        self.cls, self.arguments, self.data_argument = cls, arguments, data_argument

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        state = np.random.RandomState(rng.bit_generator)  # draws advance rng itself
        if self.data_argument is None:
            randomise = self.cls(**self.arguments, random_state=state).randomise
            out = list(map(randomise, repeat(data, size)))
        else:
            arguments = {**self.arguments, self.data_argument: _real_list(data)}
            randomise = self.cls(**arguments, random_state=state).randomise
            out = list(starmap(randomise, repeat((), size)))
        return np.asarray(out) if out else np.empty(0)


def diffprivlib_mechanism(
    mechanism: Any, neighbours: tuple[Any, Any], data_argument: str | None = None, name: str | None = None
) -> LibraryTarget:
    """Any diffprivlib `mechanism` as a target: claim `claim_of(mechanism)`; a run on `data` is
    `mechanism.randomise(data)`, or with `data_argument` (e.g. "utility") the mechanism rebuilt with `data` as
    that argument and `randomise()`.  `neighbours`: the pair (d0, d1) to audit (within its sensitivity)."""
    base = require("diffprivlib.mechanisms.base", "diffprivlib")
    if not isinstance(mechanism, base.DPMechanism):
        raise TypeError(f"mechanism must be a diffprivlib DPMechanism, got {type(mechanism).__name__}")
    if not (isinstance(neighbours, tuple) and len(neighbours) == 2):
        raise TypeError(f"neighbours must be a pair (d0, d1), got {neighbours!r}")
    arguments = constructor_arguments(mechanism)
    if data_argument is not None and data_argument not in arguments:
        raise ValueError(f"data_argument must be one of {sorted(arguments)}, got {data_argument!r}")
    claim = claim_of(mechanism)
    epsilon, delta = point_claim(claim, None)
    shown = {k: v for k, v in arguments.items() if k != data_argument}
    label = name or f"{type(mechanism).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"
    return LibraryTarget(
        name=label,
        library="diffprivlib",
        version=distribution_version("diffprivlib"),
        claim=claim,
        claim_epsilon=epsilon,
        claim_delta=delta,
        neighbours=neighbours,
        reproducible=True,
        sampler=_Randomise(type(mechanism), arguments, data_argument),
    )


def diffprivlib_laplace(epsilon: float, sensitivity: float = 1.0, delta: float = 0.0) -> LibraryTarget:
    """diffprivlib's `Laplace(epsilon, delta, sensitivity)`: x - b (log(1-U1) cos(pi U2) + log(1-U3) cos(pi U4))
    with b = sensitivity/(epsilon - log(1 - delta)) (Holohan, Braghin, "Secure Random Sampling in
    Differential Privacy", ESORICS 2021), claimed (epsilon, delta)-DP.  Its float output leaks the input through
    its low-order bits (Mironov, "On Significance of the Least Significant Bits for Differential Privacy",
    CCS 2012): audit with float_bits=True.  Neighbours (0, sensitivity)."""
    mech = _mechanisms().Laplace(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    return diffprivlib_mechanism(mech, (0.0, float(mech.sensitivity)))


def diffprivlib_gaussian(
    epsilon: float, delta: float, sensitivity: float = 1.0, variant: str = "analytic"
) -> LibraryTarget:
    """diffprivlib's Gaussian mechanisms, claimed (epsilon, delta)-DP: `variant` "classic" (`Gaussian`, sigma =
    sqrt(2 log(1.25/delta)) sensitivity/epsilon, epsilon <= 1; Dwork, Roth, "The Algorithmic Foundations of
    Differential Privacy", 2014, Thm A.1), "analytic" (`GaussianAnalytic`, the smallest sigma of Balle, Wang,
    "Improving the Gaussian Mechanism", ICML 2018, Thm 8) or "discrete" (`GaussianDiscrete` on integers;
    Canonne, Kamath, Steinke, NeurIPS 2020).  Neighbours (0, sensitivity)."""
    classes = {"classic": "Gaussian", "analytic": "GaussianAnalytic", "discrete": "GaussianDiscrete"}
    variant = check_choice(variant, tuple(classes), "variant")
    if variant == "discrete":
        sensitivity = check_int_at_least(sensitivity, 1, "sensitivity")
    mech = getattr(_mechanisms(), classes[variant])(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    d1 = int(mech.sensitivity) if variant == "discrete" else float(mech.sensitivity)
    return diffprivlib_mechanism(mech, (0 if variant == "discrete" else 0.0, d1))


def diffprivlib_geometric(epsilon: float, sensitivity: int = 1) -> LibraryTarget:
    """diffprivlib's `Geometric(epsilon, sensitivity)` on integers: x + two-sided geometric noise with
    P(k) proportional to exp(-epsilon |k|/sensitivity) (Ghosh, Roughgarden, Sundararajan, STOC 2009), claimed
    epsilon-DP, reached by the neighbours (0, sensitivity)."""
    sensitivity = check_int_at_least(sensitivity, 1, "sensitivity")
    mech = _mechanisms().Geometric(epsilon=epsilon, sensitivity=sensitivity)
    return diffprivlib_mechanism(mech, (0, sensitivity))


def diffprivlib_exponential(
    epsilon: float, sensitivity: float = 1.0, candidates: int = 10, permute_and_flip: bool = False
) -> LibraryTarget:
    """diffprivlib's exponential mechanism `Exponential` (P(i) proportional to exp(epsilon u_i/(2 sensitivity)),
    McSherry, Talwar, "Mechanism Design via Differential Privacy", FOCS 2007, Thm 6) or, with
    `permute_and_flip`, `PermuteAndFlip` (McKenna, Sheldon, NeurIPS 2020), claimed epsilon-DP; a run on a
    utility vector `data` reports an index.

    Neighbours: utilities (s, 0, ..., 0) and (0, s, ..., s), s = sensitivity, over `candidates` entries.  For
    the exponential mechanism the loss of index 0 is epsilon/2 + log((1 + (k-1) e^(epsilon/2)) /
    (e^(epsilon/2) + k - 1)) with k = candidates: epsilon/2 at k = 2, growing to epsilon (0.90 epsilon at
    epsilon = 1, k = 10)."""
    s = check_positive(sensitivity, "sensitivity")
    k = check_int_at_least(candidates, 2, "candidates")
    cls = "PermuteAndFlip" if check_bool(permute_and_flip, "permute_and_flip") else "Exponential"
    d0, d1 = (s,) + (0.0,) * (k - 1), (0.0,) + (s,) * (k - 1)
    mech = getattr(_mechanisms(), cls)(epsilon=epsilon, sensitivity=s, utility=list(d0))
    return diffprivlib_mechanism(mech, (d0, d1), data_argument="utility")


def diffprivlib_snapping(epsilon: float, lower: float, upper: float, sensitivity: float = 1.0) -> LibraryTarget:
    """diffprivlib's `Snapping(epsilon, sensitivity, lower, upper)`: Mironov's snapping mechanism (CCS 2012,
    Sect. 5.2): clamp to [lower, upper], add Laplace noise from a uniform float of full precision, round to
    the nearest multiple of the power of two Lambda >= the noise scale, clamp again; claimed epsilon-DP
    (diffprivlib runs it at the smaller effective epsilon of Mironov's Sect. 5.2, as the
    float arithmetic requires).  Neighbours: 0 clipped to
    [lower, upper] and that value + sensitivity (- sensitivity when it would leave the interval)."""
    mech = _mechanisms().Snapping(epsilon=epsilon, sensitivity=sensitivity, lower=lower, upper=upper)
    d0 = float(min(max(0.0, mech.lower), mech.upper))
    d1 = d0 + mech.sensitivity if d0 + mech.sensitivity <= mech.upper else d0 - mech.sensitivity
    if not mech.lower <= d1 <= mech.upper:
        raise ValueError(
            f"sensitivity: {mech.sensitivity!r} exceeds the width of [lower, upper] = [{lower!r}, {upper!r}]"
        )
    return diffprivlib_mechanism(mech, (d0, float(d1)))
