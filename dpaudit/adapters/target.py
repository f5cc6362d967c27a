"""`LibraryTarget`: a DP library's mechanism as an audit target, with the guarantee the library states for it.

A target is called as `target(data, rng, size)` and returns `size` runs (first axis) of the mechanism on
`data`, which is what `dpaudit.audit.audit` draws from; `audit_target` audits it on its own neighbouring pair
against its own claim.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import ApproxDp, PureDp, Zcdp
from dpaudit.audit.auditor import audit
from dpaudit.validation import check_int_at_least

__all__ = ["LibraryTarget", "audit_target", "require"]

#: What a library states about a mechanism: pure epsilon-DP, (epsilon, delta)-DP or rho-zCDP.
Guarantee = PureDp | ApproxDp | Zcdp


def require(module: str, extra: str) -> ModuleType:
    """Import `module` (an optional dependency), or raise ImportError saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{module} could not be imported ({exc}): pip install 'dpaudit[{extra}]'") from exc


def distribution_version(name: str) -> str:
    """The installed version of the distribution `name` (its metadata, not a module attribute)."""
    return importlib.metadata.version(name)


def point_claim(claim: Guarantee, delta: float | None) -> tuple[float, float]:
    """`claim` as one (epsilon, delta) point.

    Pure epsilon-DP and (epsilon, delta)-DP are their own point (`delta` must be None: the library states
    its delta).  rho-zCDP is stated at `delta` (required) by Canonne, Kamath, Steinke, "The Discrete Gaussian
    for Differential Privacy", NeurIPS 2020, Prop. 12 / Cor. 13: epsilon = inf over alpha > 1 of
    alpha*rho + log(1 - 1/alpha) - log(delta*alpha)/(alpha - 1), valid for every rho-zCDP mechanism
    (`dpaudit.accounting.Zcdp.epsilon`), never smaller than the exact value.
    """
    if isinstance(claim, Zcdp):
        if delta is None:
            raise ValueError("delta: a zCDP claim needs the delta at which to state its epsilon")
        return claim.epsilon(delta), float(delta)
    if delta is not None:
        raise ValueError(f"delta: the library states {claim!r} itself; give delta only for a zCDP claim")
    if isinstance(claim, PureDp):
        return claim.epsilon, 0.0
    return claim.epsilon, claim.delta


@dataclasses.dataclass(frozen=True, eq=False)
class LibraryTarget:
    """A library mechanism as an audit target: `target(data, rng, size)` returns `size` runs on `data`.

    - `claim`: the guarantee the library states (read from its privacy map, or its constructor's arguments);
      `claim_epsilon`, `claim_delta`: that guarantee as one point (`point_claim`); `claim_rho` for zCDP.
    - `neighbours`: a neighbouring pair (d0, d1) at the mechanism's sensitivity, chosen where its loss is
      largest (each builder's docstring says how close to the claim).
    - `reproducible`: whether the runs are a function of `rng` (False when the library draws from the
      operating system's entropy: the audit's bound stays valid, its runs are not bit-reproducible).
    - `sampler(data, rng, size)`: the batched calls to the library (not part of the description).
    """

    name: str
    library: str
    version: str
    claim: Guarantee
    claim_epsilon: float
    claim_delta: float
    neighbours: tuple[Any, Any]
    reproducible: bool
    sampler: Callable[[Any, np.random.Generator, int], np.ndarray] = dataclasses.field(repr=False)

    @property
    def claim_rho(self) -> float | None:
        """rho of a zCDP claim, else None."""
        return self.claim.rho if isinstance(self.claim, Zcdp) else None

    @property
    def label(self) -> str:
        """'library version: name', the name audits and reports give the target."""
        return f"{self.library} {self.version}: {self.name}"

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return self.sampler(data, rng, check_int_at_least(size, 0, "size"))


def audit_target(target: LibraryTarget, samples: int = 100_000, seed: int = 0, **options: Any) -> Any:
    """`dpaudit.audit.audit` of `target` on its `neighbours` against its point claim
    (`claim_epsilon` at `claim_delta`); `options` are the auditor's keyword options (`float_bits`, ...)."""
    if not isinstance(target, LibraryTarget):
        raise TypeError(f"target must be a LibraryTarget, got {type(target).__name__}")
    options.setdefault("target_name", target.label)
    d0, d1 = target.neighbours
    return audit(
        target,
        d0,
        d1,
        claim_epsilon=target.claim_epsilon,
        claim_delta=target.claim_delta,
        samples=samples,
        seed=seed,
        **options,
    )
