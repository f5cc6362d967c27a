"""Building blocks for catalog entries: observables of an algorithm, claims from its declaration,
and the search for the input where a decision flips.

Targets are module-level frozen dataclasses (not closures) so that the auditor can ship them to a
process pool or a Dask cluster.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from dpaudit.audits.catalog import Claim

__all__ = ["Observe", "claims_from_privacy", "flip_point"]


@dataclasses.dataclass(frozen=True)
class Observe:
    """target(data, rng, size) = algorithm's own target for `observable`, optionally keeping `columns`.

    `algorithm.target(horizon, observable)` is the algorithm's audit hook (its actions, pull counts
    or a released statistic, one row per run); `columns` picks entries of the flattened row, e.g.
    the one release that contains the changed user (a post-processing, so any privacy loss it shows
    is the algorithm's).
    """

    algorithm: Any
    horizon: int | None
    observable: str
    columns: tuple[int, ...] | None = None

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.asarray(self.algorithm.target(self.horizon, self.observable)(data, rng, size))
        if self.columns is None:
            return out
        return out.reshape(size, -1)[:, list(self.columns)]


def _stated(guarantee: Any, label: str, expect: str) -> Claim | None:
    """A Claim from an algorithms.privacy.Guarantee with a finite (epsilon, delta); None otherwise."""
    eps = guarantee.epsilon
    if guarantee.notion not in ("pure", "approx") or eps is None or not math.isfinite(eps):
        return None
    return Claim(label, delta=guarantee.delta, accountant="stated", epsilon=eps, expect=expect,
                 source=guarantee.source)


def claims_from_privacy(privacy: Any, *, paper_expect: str = "consistent", corrected_expect: str = "consistent",
                        accounted: bool = False) -> tuple[Claim, ...]:
    """The paper's claim and (where declared) the corrected one from an algorithm's `privacy`.

    With `accounted`, also the claim the accountants give for the declared `DpEvent` (at the paper's
    delta, accountant "best"; every accountant's figure is listed in the report).
    """
    out = [c for c in (_stated(privacy.claim, "paper", paper_expect),
                       privacy.corrected and _stated(privacy.corrected, "corrected", corrected_expect)) if c]
    if accounted and privacy.event is not None:
        event = privacy.event
        out.append(Claim("accounted", delta=privacy.claim.delta, accountant="best", event=lambda: event,
                         expect=corrected_expect if privacy.corrected else paper_expect,
                         source="dpaudit.accounting of the declared DpEvent"))
    if not out:
        raise ValueError("the privacy declaration has no finite (epsilon, delta) claim")
    return tuple(out)


def flip_point(flipped: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest k in (lo, hi] with flipped(k) True, given flipped(lo) False and flipped(hi) True.

    Used on a deterministic decision (e.g. an elimination test whose noise cancels) to find two
    inputs one user apart on either side of the decision boundary.
    """
    if flipped(lo) or not flipped(hi):
        raise ValueError(f"no decision flip in ({lo}, {hi}]")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if flipped(mid):
            hi = mid
        else:
            lo = mid
    return hi
