"""Sequential auditing: stop as soon as a violation is certain, spend more runs only when it is close.

    from dpaudit.audit.sequential import audit_sequential
    seq = audit_sequential(target, d0, d1, claim_epsilon=1.0, stages=(10**4, 10**5, 10**6), seed=0)
    seq.epsilon_lower, seq.verdict, seq.stopped_at, seq.samples_used

Stage k runs an ordinary audit with `stages[k]` fresh runs per side (its own seed) at error level
a_k = (1 - confidence) * 2^k / (2^K - 1), k = 0..K-1 (an alpha-spending schedule: the last, largest
stage gets about half of the error budget).  The reported bound is the largest stage bound; by the union
bound it is below the true epsilon with probability >= confidence whatever the stopping rule, because
sum_k a_k = 1 - confidence and each stage's bound is valid at its own level; so is each stage's verdict,
which also counts the claimed-curve test of a `claim=` option.  Stopping rule: stop at the first stage
whose verdict is "violation" (its bound exceeds the claim, or the claimed curve is refuted), or
whose best point estimate is below `close` * claim (the claim is not close to being exceeded: more
runs would not change the verdict in expectation); otherwise go on to the next stage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpaudit.audit.auditor import audit
from dpaudit.audit.result import AuditResult
from dpaudit.validation import check_int_at_least, check_open_unit

__all__ = ["SequentialAudit", "audit_sequential"]

#: Seeds of stage k are seed + k * this (disjoint runs per stage).
_STAGE_SEED_STEP = 7_919


@dataclass(frozen=True)
class SequentialAudit:
    """Every stage run, the combined bound and verdict, and where it stopped."""

    epsilon_lower: float
    verdict: str
    stopped_at: int
    samples_used: int
    stages: tuple[AuditResult, ...]
    levels: tuple[float, ...]


def spending(alpha: float, stages: int) -> tuple[float, ...]:
    """a_k = alpha 2^k / (2^K - 1), k = 0..K-1: sums to alpha."""
    total = 2**stages - 1
    return tuple(alpha * 2**k / total for k in range(stages))


def audit_sequential(
    target: Callable,
    d0: Any,
    d1: Any,
    claim_epsilon: float,
    stages: Sequence[int] = (10_000, 100_000, 1_000_000),
    confidence: float = 0.95,
    seed: int = 0,
    close: float = 0.5,
    **options: Any,
) -> SequentialAudit:
    """Audit in stages of growing size with an alpha-spending schedule (see the module docstring)."""
    sizes = [check_int_at_least(n, 10, "stages") for n in stages]
    if not sizes:
        raise ValueError("stages must hold at least one sample size")
    confidence = check_open_unit(confidence, "confidence")
    if not 0.0 <= close <= 1.0:
        raise ValueError(f"close must lie in [0, 1], got {close!r}")
    seed = check_int_at_least(seed, 0, "seed")
    levels = spending(1.0 - confidence, len(sizes))
    done: list[AuditResult] = []
    for k, (n, level) in enumerate(zip(sizes, levels)):
        try:
            r = audit(
                target,
                d0,
                d1,
                claim_epsilon=claim_epsilon,
                samples=n,
                confidence=1.0 - level,
                seed=seed + _STAGE_SEED_STEP * k,
                **options,
            )
        except ValueError as exc:
            if "too few" in str(exc) and k < len(sizes) - 1:
                continue  # no event could exceed the claim with so few runs: skip the stage (spends nothing)
            raise
        done.append(r)
        point = max(d.epsilon_point for d in r.directions)
        if r.verdict == "violation" or point < close * claim_epsilon:
            break  # a stage's verdict counts its claimed-curve test too (`claim=`), at that stage's level
    best = max(r.epsilon_lower for r in done)
    return SequentialAudit(
        epsilon_lower=best,
        verdict="violation" if any(r.verdict == "violation" for r in done) else "consistent",
        stopped_at=k,
        samples_used=sum(r.samples for r in done),
        stages=tuple(done),
        levels=levels,
    )
