"""`assert_dp`: fail a test when the auditor's lower bound on epsilon exceeds the claim."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpaudit.validation import check_delta, check_epsilon

__all__ = ["DEFAULT_SAMPLES", "assert_dp"]

DEFAULT_SAMPLES = 20_000


def assert_dp(
    target: Callable[..., Any],
    d0: Any,
    d1: Any,
    epsilon: float,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    **audit_options: Any,
) -> Any:
    """Audit `target` on the neighbouring inputs d0, d1 and assert the claim (epsilon, delta) holds.

    `target(data, rng, size)` returns `size` independent outputs (first axis), as for
    `dpaudit.audit.audit`, which does the work (`audit_options` are passed on). Raises
    AssertionError with the numbers when the lower bound on epsilon, valid with probability
    `confidence`, exceeds `epsilon`: a correct mechanism fails with probability at most
    1 - confidence. Returns the audit result otherwise.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    from dpaudit.audit import audit

    result = audit(
        target,
        d0,
        d1,
        claim_epsilon=epsilon,
        claim_delta=delta,
        samples=samples,
        confidence=confidence,
        seed=seed,
        **audit_options,
    )
    fp = result.floating_point
    if result.verdict != "violation" and result.gate_verdict == "violation" and fp is not None:
        raise AssertionError(
            f"differential-privacy claim violated by the floating-point implementation: claimed epsilon={epsilon:g} "
            f"at delta={delta:g}, but the audit with bit features gives epsilon >= {fp.epsilon_lower:.4g} "
            f"(float_check='gate'; both verdicts hold together with {100 * confidence:g}% confidence)"
        )
    if result.verdict == "violation":
        raise AssertionError(
            f"differential-privacy claim violated: claimed epsilon={epsilon:g} at delta={delta:g}, but the audit "
            f"gives epsilon >= {result.epsilon_lower:.4g} with {100 * confidence:g}% confidence "
            f"({result.epsilon_lower / epsilon:.3g}x the claim; samples={samples} per input, seed={seed})"
        )
    return result
