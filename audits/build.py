"""Building blocks for catalog entries: observables of an algorithm, claims from its declaration,
and the search for the input where a decision flips.

Targets are module-level frozen dataclasses (not closures) so that the auditor can ship them to a
process pool or a Dask cluster.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import dp_accounting
import numpy as np

from dpaudit.entries import Claim, LazyClaims
from dpaudit.mechanisms.discrete import bisect_last_true

__all__ = [
    "APPROX_DELTA",
    "VIEW_ACCOUNTANT",
    "Observe",
    "ObserveLinear",
    "Releases",
    "claims_from_privacy",
    "flip_point",
    "gaussian_mu",
    "lazy_claims",
]

APPROX_DELTA = 1e-5
"""delta at which RDP and zCDP claims are turned into (epsilon, delta) claims for the auditor."""


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
    fill: float | None = None

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.asarray(self.algorithm.target(self.horizon, self.observable)(data, rng, size))
        if self.columns is not None:
            out = out.reshape(size, -1)[:, list(self.columns)]
        if self.fill is not None:  # "not released" (NaN) becomes a value of its own
            out = np.nan_to_num(np.asarray(out, dtype=float), nan=self.fill)
        return out


@dataclasses.dataclass(frozen=True)
class ObserveLinear:
    """target(data, rng, size) = a linear contextual algorithm's `target(observable)`, keeping `columns`.

    For the LinUCB family, whose audit hook takes the observable only (the horizon is the table's).
    """

    algorithm: Any
    observable: str
    columns: tuple[int, ...] | None = None

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.asarray(self.algorithm.target(self.observable)(data, rng, size)).reshape(size, -1)
        return out if self.columns is None else out[:, list(self.columns)]


@dataclasses.dataclass(frozen=True)
class Releases:
    """target(data, rng, size) = release(rng, stream, epsilon, **options) on `size` copies of one stream.

    For an algorithm's white-box release function of one arm's observation stream (e.g.
    `lazy_array_releases`, `hybrid_arm_releases`): `data` is the stream (N,), the same in every run;
    `columns` keeps some releases.
    """

    release: Callable[..., np.ndarray]
    epsilon: float
    options: tuple[tuple[str, Any], ...] = ()
    columns: tuple[int, ...] | None = None

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        stream = np.broadcast_to(np.asarray(data, dtype=float), (size, np.size(data)))
        out = self.release(rng, stream, self.epsilon, **dict(self.options))
        return out if self.columns is None else out[:, list(self.columns)]


def _stated(guarantee: Any, label: str, expect: str) -> Claim | None:
    """A Claim from an algorithms.privacy.Guarantee with a finite (epsilon, delta); None otherwise."""
    eps = guarantee.epsilon
    if guarantee.notion not in ("pure", "approx") or eps is None or not math.isfinite(eps):
        return None
    return Claim(label, delta=guarantee.delta, accountant="stated", epsilon=eps, expect=expect, source=guarantee.source)


def _converted(guarantee: Any, event: Any, expect: str) -> Claim | None:
    """The paper's RDP or zCDP claim as (epsilon, APPROX_DELTA) by the matching accountant."""
    if guarantee.notion == "rdp" and event is not None:
        # the declared event's RDP curve is the paper's formula (e.g. Chowdhury & Zhou 2023, Thm 2 for Skellam)
        return Claim(
            "paper", delta=APPROX_DELTA, accountant="rdp", event=lambda: event, expect=expect, source=guarantee.source
        )
    if guarantee.notion == "zcdp" and guarantee.rho:
        zcdp = dp_accounting.dp_event.ZCDpEvent(rho=guarantee.rho)
        return Claim(
            "paper",
            delta=APPROX_DELTA,
            accountant="zcdp",
            event=lambda: zcdp,
            expect=expect,
            source=f"rho = {guarantee.rho:.4g}; {guarantee.source}",
        )
    return None


def claims_from_privacy(
    privacy: Any,
    *,
    paper_expect: str = "consistent",
    corrected_expect: str = "consistent",
    accounted: bool = True,
    paper_label: str = "paper",
) -> tuple[Claim, ...]:
    """The paper's claim and (where declared) the corrected one from an algorithm's `privacy`.

    Pure and (epsilon, delta) claims are taken as stated; RDP and zCDP claims become (epsilon, 1e-5)
    claims through the matching accountant. With `accounted`, also the claim the accountants give for
    the declared `DpEvent` (at the paper's delta, or 1e-5 for RDP/zCDP claims; accountant "best",
    every accountant's figure is listed in the report).
    """
    paper = _stated(privacy.claim, paper_label, paper_expect) or _converted(privacy.claim, privacy.event, paper_expect)
    corrected = privacy.corrected and _stated(privacy.corrected, "corrected", corrected_expect)
    out = [c for c in (paper, corrected) if c]
    event = privacy.event
    if accounted and paper is not None and event is not None and not isinstance(event, dp_accounting.NonPrivateDpEvent):
        # accountants give valid upper bounds for what the implementation declares it releases
        # at the corrected delta where that is larger (e.g. two (eps, delta) releases composed: 2 delta)
        delta = max(paper.delta, corrected.delta if corrected else 0.0)
        out.append(
            Claim(
                "accounted",
                delta=delta,
                accountant="best",
                event=lambda: event,
                source="dpaudit.accounting of the declared DpEvent",
            )
        )
    if not out:
        raise ValueError("the privacy declaration has no finite (epsilon, delta) claim")
    return tuple(out)


def lazy_claims(
    privacy: Callable[[], Any],
    *,
    paper_expect: str = "consistent",
    paper_label: str = "paper",
    extra: tuple[Claim, ...] = (),
) -> LazyClaims:
    """`claims_from_privacy(privacy(), ...)` built when the entry is first audited or listed in full.

    `privacy` is a zero-argument callable returning the algorithm's declaration (e.g.
    `functools.partial(algorithm.privacy, horizon)`): declarations may account exactly (seconds),
    which importing the catalog must not pay for. `extra` claims (e.g. the exact ε of the audited
    view, `VIEW_ACCOUNTANT`) are appended.
    """
    return LazyClaims(
        lambda: claims_from_privacy(privacy(), paper_expect=paper_expect, paper_label=paper_label) + tuple(extra),
        expect=paper_expect,
    )


VIEW_ACCOUNTANT = "exact-view"
"""The `accountant` of a claim that is the exact ε of the audited view over all neighbouring inputs
(derived in the entry's module): no smaller upper bound holds for what the auditor sees."""


def flip_point(flipped: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest k in (lo, hi] with flipped(k) True, given flipped(lo) False and flipped(hi) True.

    Used on a deterministic decision (e.g. an elimination test whose noise cancels) to find two
    inputs one user apart on either side of the decision boundary.
    """
    if flipped(lo) or not flipped(hi):
        raise ValueError(f"no decision flip in ({lo}, {hi}]")
    return bisect_last_true(lambda k: not flipped(k), lo, hi) + 1


def gaussian_mu(event: Any) -> float:
    """Gaussian-DP μ of a dp-accounting event built from Gaussian mechanisms.

    GaussianDpEvent(σ/Δ): μ = 1/noise_multiplier; k-fold and heterogeneous composition: μ² adds
    (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Cor. 3.3). Any other event
    raises ValueError naming it (its trade-off curve is not a Gaussian one).
    """
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return math.inf if event.noise_multiplier == 0 else 1.0 / event.noise_multiplier
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return math.sqrt(event.count) * gaussian_mu(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return math.sqrt(math.fsum(gaussian_mu(e) ** 2 for e in event.events))
    raise ValueError(f"event must be composed of GaussianDpEvents to have a Gaussian-DP mu, got {type(event).__name__}")
