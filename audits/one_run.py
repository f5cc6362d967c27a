"""Catalog entries audited in one run with canaries (Steinke, Nasr, Jagielski, NeurIPS 2023, Alg. 1, Thm 3.1).

A `OneRunEntry` is an `AuditEntry` whose `target()` builds a `OneRunTarget(mechanism, num_canaries,
score)` (e.g. `dpaudit.algorithms.mab.canaries.one_run_target`): the algorithm runs ONCE at its
deployment `horizon` with `num_canaries` canaries, and `dpaudit.audit.one_run` turns the correct
membership guesses into a lower bound on epsilon at each claimed delta.  `run_entry` dispatches
here (`mode == "one-run"`); the record has the shape of a many-run record (so the report and the
gate read it unchanged) plus, in every audit and claim, `num_canaries`, `guesses` and `correct`.
All deltas are judged on the same run (its output is computed once); each bound is its own
confidence statement, and the CLI's Bonferroni split counts one call per delta.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from dpaudit.audits.catalog import AuditEntry
from dpaudit.validation import check_positive_int

__all__ = ["OneRunEntry", "run_one_run_entry"]


@dataclasses.dataclass(frozen=True)
class OneRunEntry(AuditEntry):
    """An `AuditEntry` audited in one run: `target()` returns a `OneRunTarget`; `horizon` and
    `num_canaries` describe it (the target was built with them).  `guesses`: the (k_plus, k_minus)
    pairs searched, fixed in advance (Bonferroni over their number), or None for
    `dpaudit.audit.one_run.default_guess_grid` (224 pairs at m = 10^4).  A short grid keeps power when the
    suite's family-wise split leaves each call a small level: the bound's delta term, about
    2 m delta / (correct guesses in excess of r e^eps / (1 + e^eps)), does not shrink with the level."""

    horizon: int = 1_000_000
    num_canaries: int = 1_000
    guesses: tuple[tuple[int, int], ...] | None = None

    mode = "one-run"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.horizon, "horizon")
        check_positive_int(self.num_canaries, "num_canaries")

    def summary(self) -> dict[str, Any]:
        """`AuditEntry.summary` plus the one-run fields."""
        return {**super().summary(), "mode": self.mode, "horizon": self.horizon, "num_canaries": self.num_canaries}


def _memoised(mechanism):
    """The mechanism, computed once per (inclusion, generator state): every delta reads the same run."""
    cache: dict[tuple[bytes, str], Any] = {}

    def run(inclusion: np.ndarray, rng: np.random.Generator) -> Any:
        key = (np.packbits(inclusion).tobytes(), repr(rng.bit_generator.state))
        if key not in cache:
            cache[key] = mechanism(inclusion, rng)
        return cache[key]

    return run


def run_one_run_entry(entry: OneRunEntry, record: dict[str, Any], *, confidence: float, base_seed: int,
                      regret: bool) -> dict[str, Any]:
    """Fill `record` (prepared by `dpaudit.audits.run.run_entry`) with one run's audits and claim verdicts."""
    from dpaudit.audit import one_run
    from dpaudit.audits.run import _claim_record, _describe, _regret

    record["mode"] = entry.mode
    record["one_run"] = {"horizon": entry.horizon, "num_canaries": entry.num_canaries}
    target = entry.target()
    record["target"] = _describe(target.mechanism)
    mechanism = _memoised(target.mechanism)
    run_seed = int(np.random.SeedSequence([base_seed, 0]).generate_state(1, dtype=np.uint32)[0])
    for delta in sorted({c.delta for c in entry.claims}):
        values = [c.value() for c in entry.claims if c.delta == delta]
        claim_eps = min((v for v in values if v > 0), default=1e-3)
        start = time.perf_counter()
        res = one_run(mechanism, target.num_canaries, target.score, claim_epsilon=claim_eps, claim_delta=delta,
                      confidence=confidence, seed=run_seed, guesses=entry.guesses)
        record["audits"].append({
            "delta": delta, "claim_epsilon": claim_eps, "samples": "one run", "confidence": confidence,
            "seed": run_seed, "epsilon_lower": float(res.epsilon_lower), "verdict": res.verdict,
            "seconds": round(time.perf_counter() - start, 3), "pair": 0, "mode": entry.mode,
            "horizon": entry.horizon, "num_canaries": res.num_canaries, "guesses": res.guesses,
            "correct": res.correct, "k_plus": res.k_plus, "k_minus": res.k_minus, "selection": res.selection,
        })
    claims = []
    for c in entry.claims:
        rec = _claim_record(c, record["audits"])
        best = next(a for a in record["audits"] if a["delta"] == c.delta)
        rec.update(mode=entry.mode, num_canaries=best["num_canaries"], guesses=best["guesses"], correct=best["correct"])
        claims.append(rec)
    record["claims"] = claims
    if regret:
        record["regret"] = _regret(entry)
    return record
