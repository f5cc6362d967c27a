"""python-dp (`pydp`, Google's differential-privacy library) mechanisms as audit targets, with the claim read from
the mechanism's own attributes.

    from dpaudit.adapters import audit_target, pydp_laplace
    audit_target(pydp_laplace(epsilon=1.0), samples=100_000, float_bits=True)

python-dp is imported on first use (`pip install 'dpaudit[pydp]'`).  It has no privacy map: the claim is the
epsilon (and delta) the mechanism keeps, `mechanism.epsilon` / `mechanism.delta`, which are the arguments it was
built with.

Google's library draws its noise on a grid: `LaplaceMechanism` samples a discrete Laplace (two-sided geometric)
on multiples of a power of two g (about the noise scale times 2^-40) and rounds the input to that grid before
adding it (Google, "Secure Noise Generation", differential-privacy repository documentation, 2020, the fix of
the attack of Jin, McMurtry, Rubinstein, Ohrimenko, "Are We There Yet? Timing and Floating-Point Attacks on
Differential Privacy Systems", IEEE S&P 2022): its outputs are multiples of g whatever the input.  The same
documentation describes `GaussianMechanism` as sampled the same way (a binomial approximation of the Gaussian),
but measured on python-dp 1.1.5 its outputs are x + noise on no common grid (multiples of 2^-53 or 2^-54
depending on x), and the floating-point audit finds the input in their low-order bits.

Batching.  `add_noise` takes one value per call (no vector overload), so a target builds the mechanism once per
call and maps `add_noise` over the runs (`map`, no Python loop body): about 10^5 runs per second.  The library
draws from its own generator seeded by the operating system, never from `rng`: runs are not reproducible from
the audit's seed (`reproducible=False`); the audit stays valid, its runs being independent.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import ApproxDp, PureDp
from dpaudit.adapters.target import Guarantee, LibraryTarget, distribution_version, point_claim, require
from dpaudit.validation import check_bool, check_open_unit, check_positive

__all__ = ["pydp_gaussian", "pydp_laplace"]

DISTRIBUTION = "python-dp"


def _mechanisms() -> Any:
    return require("pydp.algorithms.numerical_mechanisms", "pydp")


def claim_of(mechanism: Any) -> Guarantee:
    """The epsilon (and delta, for the Gaussian) `mechanism` keeps: PureDp when it has no delta, else ApproxDp."""
    epsilon, delta = float(mechanism.epsilon), float(getattr(mechanism, "delta", 0.0))
    return PureDp(epsilon) if delta == 0.0 else ApproxDp(epsilon, delta)


class _AddNoise:
    """`size` runs of `add_noise(data)` of the mechanism `cls(**arguments)` (rebuilt per call: pydp's objects do not
    pickle), with `data` as an int when `integer` (the library's integer overload), else a float."""

    def __init__(self, cls_name: str, arguments: dict[str, float], integer: bool):
        self.cls_name, self.arguments, self.integer = cls_name, arguments, integer

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        add_noise = getattr(_mechanisms(), self.cls_name)(**self.arguments).add_noise
        value = int(data) if self.integer else float(data)
        return np.fromiter(map(add_noise, repeat(value, size)), dtype=np.int64 if self.integer else float, count=size)


def _target(cls_name: str, arguments: dict[str, float], sensitivity: float, integer: bool, name: str) -> LibraryTarget:
    mechanism = getattr(_mechanisms(), cls_name)(**arguments)
    claim = claim_of(mechanism)
    epsilon, delta = point_claim(claim, None)
    neighbours: tuple[Any, Any] = (0, int(sensitivity)) if integer else (0.0, float(sensitivity))
    return LibraryTarget(
        name=name,
        library="pydp",
        version=distribution_version(DISTRIBUTION),
        claim=claim,
        claim_epsilon=epsilon,
        claim_delta=delta,
        neighbours=neighbours,
        reproducible=False,
        sampler=_AddNoise(cls_name, arguments, integer),
    )


def pydp_laplace(epsilon: float, sensitivity: float = 1.0, integer: bool = False) -> LibraryTarget:
    """python-dp's `LaplaceMechanism(epsilon, sensitivity).add_noise(x)`: x plus Laplace noise of scale
    b = sensitivity/epsilon (`diversity`) on the library's power-of-two grid, claimed epsilon-DP (Dwork, McSherry,
    Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis", TCC 2006).  With `integer` the
    library's integer overload (x and the output integers: the discrete Laplace, loss epsilon at every output
    when sensitivity is an integer).  Neighbours (0, sensitivity)."""
    s = check_positive(sensitivity, "sensitivity")
    if check_bool(integer, "integer") and s != int(s):
        raise ValueError(f"sensitivity must be an integer for the integer overload, got {sensitivity!r}")
    arguments = {"epsilon": check_positive(epsilon, "epsilon"), "sensitivity": s}
    kind = "int" if integer else "float"
    return _target(
        "LaplaceMechanism",
        arguments,
        s,
        integer,
        f"LaplaceMechanism(epsilon={epsilon!r}, sensitivity={s!r}).add_noise({kind})",
    )


def pydp_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0) -> LibraryTarget:
    """python-dp's `GaussianMechanism(epsilon, delta, sensitivity).add_noise(x)` (`sensitivity` is the L2
    sensitivity): x plus Gaussian noise of the smallest sigma for which the Gaussian is (epsilon, delta)-DP
    (Balle, Wang, "Improving the Gaussian Mechanism of Differential Privacy", ICML 2018, Thm 8); claimed
    (epsilon, delta)-DP, which its floating-point outputs do not keep (module docstring).  Neighbours (0,
    sensitivity)."""
    s = check_positive(sensitivity, "sensitivity")
    arguments = {
        "epsilon": check_positive(epsilon, "epsilon"),
        "delta": check_open_unit(delta, "delta"),
        "sensitivity": s,
    }
    return _target(
        "GaussianMechanism",
        arguments,
        s,
        False,
        f"GaussianMechanism(epsilon={epsilon!r}, delta={delta!r}, sensitivity={s!r}).add_noise(float)",
    )
