"""Time-boxed audits: keep drawing runs until a time budget is spent, with a bound valid whenever they stop.

    r = dpaudit.audit(target, d0, d1, claim_epsilon=1.0, samples=100_000, time_budget=60.0)
    r.epsilon_lower, r.time_box.samples_drawn, r.time_box.stopped

Stage k = 0, 1, 2, ... is an ordinary audit (`dpaudit.audit`) of samples * 2^k fresh runs per input, on a
seed stream of its own, at error level

    a_k = alpha / ((k + 1)(k + 2)),    alpha = 1 - confidence,    sum over k >= 0 of a_k = alpha.

By the union bound every stage's bounds hold together with probability >= confidence, over all the stages
there could ever be: so the largest stage bound is valid whatever rule decides when to stop, including one
that looks at the bounds so far, and whenever the budget runs out.  This is the stitching of Howard,
Ramdas, McAuliffe, Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences" (Annals of
Statistics, 2021, Sec. 3): geometric epochs, each with its share of the error.  The price is the level:
stage k is tested at a_k instead of alpha (the bound of the largest stage moves by about the difference
of the normal quantiles at a_k and alpha over sqrt(runs)), and every stage's runs are fresh, so a budget
that reaches stage K has drawn about twice stage K's runs.

The audit stops at the first stage whose algorithmic verdict is "violation" (settled: more runs could
only raise the bound), or before a stage predicted (from the time of the last one, doubled) to end after
the budget.  Stage 0 always runs.  The result is the stage whose verdict is "violation" when one is
(a claimed curve can be refuted below the claimed epsilon, so that stage need not hold the largest bound),
else the stage with the largest `epsilon_lower`; its `floating_point` (if any) is the stage with the
largest floating-point bound, valid by the same union bound.  `time_box` records every stage.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from dpaudit.audit import options as _options
from dpaudit.audit.result import AuditResult, TimeBox
from dpaudit.limits import MAX_CHUNKS, MAX_SAMPLES

__all__ = ["stage_level", "timeboxed_audit"]

#: The spawn key that starts every stage's seed stream: (STAGE_STREAM, k) is disjoint from the stream of
#: an ordinary audit (spawn keys (i,)) and from its floating-point stream ((2**31 + 1, i)).
STAGE_STREAM = 2**31 + 2

#: Called with the stages run so far and the seconds spent: True to run another stage.
KeepGoing = Callable[[list[AuditResult], list[float]], bool]

RunStage = Callable[[_options.AuditOptions, tuple[int, ...]], AuditResult]


def stage_level(alpha: float, k: int) -> float:
    """a_k = alpha / ((k + 1)(k + 2)): the error level of stage k (the levels sum to alpha over k >= 0)."""
    return alpha / ((k + 1) * (k + 2))


def timeboxed_audit(run_stage: RunStage, o: _options.AuditOptions, keep_going: KeepGoing | None = None) -> AuditResult:
    """Run stages until `keep_going` says stop (default: the time budget `o.time_budget`, see the module docstring).

    `run_stage(options, stream)` runs one ordinary audit on the seed stream `stream`.  Too few runs for the
    first stage's level raise `TooFewSamplesError`; for a later stage's, the stages so far are the result.
    """
    budget = float(o.time_budget or 0.0)
    start = time.monotonic()
    alpha = 1.0 - o.confidence
    stages: list[AuditResult] = []
    seconds: list[float] = []
    levels: list[float] = []
    k = 0
    stopped = "budget"
    while True:
        level = stage_level(alpha, k)
        samples = o.samples * 2**k
        if 1.0 - level == 1.0 or samples > MAX_SAMPLES or -(-samples // o.chunk_size) > MAX_CHUNKS:
            break  # no double below 1 for the level, or more runs than an audit takes
        stage_options = dataclasses.replace(
            o,
            samples=samples,
            confidence=1.0 - level,
            time_budget=None,
            checkpoint_dir=None if o.checkpoint_dir is None else f"{o.checkpoint_dir}/stage-{k}",
        )
        t0 = time.monotonic()
        try:
            result = run_stage(stage_options, (STAGE_STREAM, k))
        except _options.TooFewSamplesError as exc:
            if not stages:
                raise _options.TooFewSamplesError(
                    f"the first stage of a time-boxed audit is tested at (1 - confidence) / 2: {exc}"
                ) from None
            break  # too few for this stage's smaller level: the stages so far are the result
        stages.append(result)
        seconds.append(time.monotonic() - t0)
        levels.append(level)
        k += 1
        if result.verdict == "violation":
            stopped = "violation"
            break
        if keep_going is not None:
            if not keep_going(stages, seconds):
                break
        elif time.monotonic() - start + 2.0 * seconds[-1] > budget:
            break
    # a violation: the stage that settled it (its curve test may be what refuted); else the largest bound
    best = len(stages) - 1 if stopped == "violation" else max(range(len(stages)), key=lambda i: stages[i].epsilon_lower)
    result = stages[best]
    fps = [(i, s.floating_point) for i, s in enumerate(stages) if s.floating_point is not None]
    floating_point = max(fps, key=lambda p: p[1].epsilon_lower)[1] if fps else None
    box = TimeBox(
        budget=budget,
        seconds=time.monotonic() - start,
        stopped=stopped,
        best_stage=best,
        stage_samples=tuple(s.samples for s in stages),
        stage_levels=tuple(levels),
        stage_epsilon_lower=tuple(s.epsilon_lower for s in stages),
        samples_drawn=sum(s.samples for s in stages),
    )
    if floating_point is not None:
        floating_point = dataclasses.replace(floating_point, confidence=o.confidence)
    return dataclasses.replace(result, confidence=o.confidence, floating_point=floating_point, time_box=box)
