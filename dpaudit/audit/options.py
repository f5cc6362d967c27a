"""The auditor's options, validated, and what they imply for a run (`AuditOptions`, `Plan`).

Every value is checked before the target runs (ValueError naming the parameter); `plan_audit` then
derives the error levels of the bounds and the split sizes, and refuses a sample size at which not
even a perfectly distinguishing event could exceed the claim.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dp_accounting
import numpy as np

from dpaudit.audit.bounds import best_case_epsilon
from dpaudit.audit.describe import describe_target
from dpaudit.audit.executors import check_executor
from dpaudit.audit.families import check_families
from dpaudit.audit.ratio import best_case_log_ratio, ratio_applies
from dpaudit.limits import MAX_CHUNKS, MAX_SAMPLES, MIN_SAMPLES
from dpaudit.validation import (
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
)

__all__ = [
    "AUTO_EXTENSION",
    "FLOAT_CHECKS",
    "AuditOptions",
    "Plan",
    "TooFewSamplesError",
    "claimed_deltas",
    "plan_audit",
]

#: `selection_extension=None` (the default): this share, or 0 with `crossfit` or a user `score`.
AUTO_EXTENSION = 0.2

#: `float_check`: run the floating-point audit of scalar float outputs and report it ("report", the default),
#: also let it fail the audit ("gate"), or skip it ("off").
FLOAT_CHECKS = ("report", "gate", "off")


class TooFewSamplesError(ValueError):
    """`samples` cannot give a bound above the claim even with a perfectly distinguishing event; the message
    gives the least number that can."""


def _claim_curve(claim: Any, accountant: str) -> tuple[Any, Callable[[float], float], str]:
    """The claim as an object, its delta(epsilon) and its name.

    A DpEvent is composed once into a `dpaudit.accounting.Accountant`, so the event is prepared and
    validated once and every epsilon the curve test queries reuses that state; an accountant result
    with a `delta(epsilon)` method (Accountant, PureDp, RdpCurve, Zcdp, ...) or a callable is used as is.
    """
    if isinstance(claim, dp_accounting.DpEvent):
        from dpaudit.accounting import Accountant

        composed = Accountant(accountant).compose(claim)
        return composed, composed.delta, f"{claim!r} ({accountant})"
    if callable(getattr(claim, "delta", None)):
        return claim, claim.delta, repr(claim)
    if callable(claim):
        return claim, claim, getattr(claim, "__qualname__", repr(claim))
    raise ValueError(
        f"claim must be a dp_accounting.DpEvent, an object with a delta(epsilon) method or a callable "
        f"epsilon -> delta, got {claim!r}"
    )


def _claim_epsilon_of(claim: Any, claim_delta: float) -> float:
    if callable(getattr(claim, "epsilon", None)):
        return float(claim.epsilon(claim_delta))
    if isinstance(getattr(claim, "epsilon", None), (int, float)) and not callable(claim):
        return float(claim.epsilon)  # a pure-DP guarantee object holding its epsilon
    raise ValueError(
        "claim_epsilon is required (it can only be derived from a DpEvent claim or an accountant "
        "result with an epsilon(delta) method)"
    )


def claimed_deltas(delta_of: Callable[[float], float], epsilons: np.ndarray) -> np.ndarray:
    """delta_of at each epsilon, checked to lie in [0, 1] (NaN included in the check)."""
    claimed = np.empty(len(epsilons))
    for i, e in enumerate(epsilons):
        try:
            claimed[i] = float(delta_of(float(e)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"claim: the claimed curve failed at epsilon={float(e)!r} ({exc})") from None
        if not 0.0 <= claimed[i] <= 1.0:  # false for NaN too
            raise ValueError(
                f"claim: the claimed curve returned delta={float(claimed[i])!r} at epsilon={float(e)!r}; "
                "a delta must lie in [0, 1]"
            )
    return claimed


def _best_case(nobs: int, delta: float, level: float) -> float:
    """The largest bound an event can give with `nobs` estimation runs per side: two one-sided bounds at
    `level` each (`best_case_epsilon`), or at delta = 0 the thinned ratio test at 2 * level where it applies."""
    best = best_case_epsilon(nobs, delta, level)
    if ratio_applies(delta, nobs, level):
        best = max(best, best_case_log_ratio(nobs, 2 * level))
    return best


def _samples_needed(claim_epsilon: float, delta: float, level: float, fraction: float) -> int:
    """Smallest samples per side for which a perfect distinguisher could exceed claim_epsilon."""
    n = 1
    while _best_case(n, delta, level) <= claim_epsilon:
        n *= 2
        if n > MAX_SAMPLES:
            raise ValueError(
                f"claim_epsilon={claim_epsilon} cannot be exceeded by any audit of practical size "
                f"(over {MAX_SAMPLES} runs per side would be needed)"
            )
    lo, hi = n // 2, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _best_case(mid, delta, level) > claim_epsilon else (mid, hi)

    def fits(n: int) -> bool:  # the estimation split left by `plan_audit` (the selection split takes >= 4 runs)
        return n - max(4, round(fraction * n)) >= hi

    n = max(MIN_SAMPLES, math.ceil(hi / (1 - fraction)))
    while not fits(n):
        n += 1
    while n > MIN_SAMPLES and fits(n - 1):  # n - round(fraction * n) never decreases with n: the least n
        n -= 1
    return n


@dataclass(frozen=True)
class AuditOptions:
    """Everything `audit` takes besides the target and the inputs, validated (see `audit` for each).

    `AuditOptions.create(**keywords)` checks every value (ValueError naming the parameter) and
    derives the claim curve; `run_audit(target, d0, d1, options)` runs an audit with them.
    """

    claim_epsilon: float
    claim_delta: float = 0.0
    samples: int = 100_000
    confidence: float = 0.95
    seed: int = 0
    claim: Any = None
    claim_accountant: str = "best"
    score: Callable[[np.ndarray], Any] | None = None
    selection_fraction: float = 0.1
    float_bits: bool = False
    float_check: str = "report"
    crossfit: bool = False
    direction_share: float = 0.9
    events_per_direction: int = 3
    selection_extension: float | None = None
    families: tuple[str, ...] | None = None
    grid_size: int = 32
    curve_points: int = 64
    executor: Any = None
    workers: int | None = None
    chunk_size: int = 250_000
    checkpoint_dir: str | None = None
    progress: bool | None = None
    target_name: str | None = None
    time_budget: float | None = None
    #: (claim object, its delta(epsilon), its name): the claim prepared once (a DpEvent composed once).
    claim_parts: tuple[Any, Callable[[float], float], str] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def create(cls, claim_epsilon: float | None = None, claim_delta: float = 0.0, **options: Any) -> AuditOptions:
        """Validated options; `claim_epsilon` may be derived from `claim` (a DpEvent or accountant result)."""
        allowed = {f.name for f in dataclasses.fields(cls)} - {"claim_parts"}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise TypeError(f"audit() got unexpected keyword arguments: {', '.join(unknown)}")
        claim_delta = check_delta(claim_delta, "claim_delta")
        claim = options.get("claim")
        if claim is not None:
            options["claim_parts"] = _claim_curve(claim, options.get("claim_accountant", "best"))
            if claim_epsilon is None:
                claim_epsilon = _claim_epsilon_of(options["claim_parts"][0], claim_delta)
        elif claim_epsilon is None:
            raise ValueError("claim_epsilon is required (or pass claim=<DpEvent>)")
        return cls(claim_epsilon=claim_epsilon, claim_delta=claim_delta, **options)

    def _check(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)  # the checked, normalised value (frozen dataclass)

        put("claim_epsilon", check_epsilon(self.claim_epsilon, "claim_epsilon"))
        put("claim_delta", check_delta(self.claim_delta, "claim_delta"))
        put("confidence", check_open_unit(self.confidence, "confidence"))
        put("samples", check_int_at_least(self.samples, MIN_SAMPLES, "samples"))
        if self.samples > MAX_SAMPLES:
            raise ValueError(f"samples must be at most 2**50 runs per input, got {self.samples}")
        put("seed", check_int_at_least(self.seed, 0, "seed"))
        put("selection_fraction", check_open_unit(self.selection_fraction, "selection_fraction"))
        put("grid_size", check_int_at_least(self.grid_size, 2, "grid_size"))
        put("curve_points", check_int_at_least(self.curve_points, 2, "curve_points"))
        put("chunk_size", check_int_at_least(self.chunk_size, 1, "chunk_size"))
        if -(-self.samples // self.chunk_size) > MAX_CHUNKS:
            raise ValueError(
                f"chunk_size={self.chunk_size} splits samples={self.samples} into more than {MAX_CHUNKS} "
                f"chunks; use chunk_size >= {-(-self.samples // MAX_CHUNKS)}"
            )
        if self.workers is not None:
            put("workers", check_int_at_least(self.workers, 1, "workers"))
        if self.score is not None and not callable(self.score):
            raise ValueError(f"score must be a function of a batch of outputs, got {self.score!r}")
        put("float_bits", check_bool(self.float_bits, "float_bits"))
        put("float_check", check_choice(self.float_check, FLOAT_CHECKS, "float_check"))
        if self.time_budget is not None:
            put("time_budget", check_positive(self.time_budget, "time_budget"))
        put("crossfit", check_bool(self.crossfit, "crossfit"))
        put("families", check_families(self.families))
        if self.families is not None and self.score is not None:
            raise ValueError("families restricts the built-in score families; it cannot be combined with score=...")
        if (
            isinstance(self.direction_share, bool)
            or not isinstance(self.direction_share, (int, float))
            or not 0.5 <= self.direction_share < 1.0
        ):
            raise ValueError(f"direction_share must be a number in [0.5, 1), got {self.direction_share!r}")
        put("direction_share", float(self.direction_share))
        put("events_per_direction", check_int_at_least(self.events_per_direction, 1, "events_per_direction"))
        if self.selection_extension is None:
            auto = self.crossfit is False and self.score is None and 1.0 - self.selection_fraction > AUTO_EXTENSION
            put("selection_extension", AUTO_EXTENSION if auto else 0.0)
        if (
            isinstance(self.selection_extension, bool)
            or not isinstance(self.selection_extension, (int, float))
            or not 0.0 <= self.selection_extension < 1.0 - self.selection_fraction
        ):
            raise ValueError(
                f"selection_extension must be a number in [0, 1 - selection_fraction) = "
                f"[0, {1.0 - self.selection_fraction:g}), got {self.selection_extension!r}"
            )
        put("selection_extension", float(self.selection_extension))
        if self.selection_extension > 0 and self.crossfit:
            raise ValueError(
                "selection_extension > 0 cannot be combined with crossfit=True (the folds are fixed "
                "before any run is drawn)"
            )
        if self.crossfit and self.claim is not None:
            raise ValueError(
                "crossfit=True tests the point bound only; a claimed curve (claim=...) needs crossfit=False"
            )
        if self.progress is not None and not isinstance(self.progress, bool):
            raise ValueError(f"progress must be True, False or None, got {self.progress!r}")
        if self.checkpoint_dir is not None:
            if not isinstance(self.checkpoint_dir, (str, os.PathLike)):
                raise ValueError(f"checkpoint_dir must be a path, got {self.checkpoint_dir!r}")
            put("checkpoint_dir", os.fspath(self.checkpoint_dir))
        if self.target_name is not None:
            describe_target(None, self.target_name)
        check_executor(self.executor)
        if self.claim is not None and self.claim_parts is None:
            put("claim_parts", _claim_curve(self.claim, self.claim_accountant))


@dataclass(frozen=True)
class Plan:
    """What the validated options imply: error levels, split sizes and the claimed curve."""

    alpha: float
    alpha_point: float
    level_eps: float  # per proportion, for epsilon_lower: two directions x two proportions
    level_mu: float
    n_sel: int
    n_est: int
    delta_of: Callable[[float], float] | None  # the claimed curve, when one is tested
    claim_name: str  # its name ("" without one)


def plan_audit(target: Any, o: AuditOptions) -> Plan:
    """Check what the options cannot check alone (target, sample size, the claimed curve); no runs yet."""
    if not callable(target):
        raise TypeError(f"target must be callable as target(data, rng, size), got {target!r}")
    alpha = 1.0 - o.confidence
    alpha_point = alpha / 2 if o.claim is not None else alpha
    level_eps = alpha_point / 4
    n_sel = max(4, round(o.selection_fraction * o.samples))
    n_est = o.samples - n_sel
    if n_est < 1 or _best_case(n_est, o.claim_delta, level_eps) <= o.claim_epsilon:
        need = _samples_needed(o.claim_epsilon, o.claim_delta, level_eps, o.selection_fraction)
        raise TooFewSamplesError(
            f"samples={o.samples} is too few: even a perfectly distinguishing event could not give an epsilon "
            f"lower bound above claim_epsilon={o.claim_epsilon} at confidence={o.confidence}; use samples >= {need}"
        )
    delta_of, claim_name = None, ""
    if o.claim is not None and o.claim_parts is not None:  # claim_parts is set whenever claim is
        _, delta_of, claim_name = o.claim_parts
        claimed_deltas(delta_of, np.array([o.claim_epsilon]))  # a broken curve fails before any run
    return Plan(alpha, alpha_point, level_eps, alpha / 4, n_sel, n_est, delta_of, claim_name)
