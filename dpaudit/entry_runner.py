"""Run built-in catalog entries: audit every neighbouring pair, judge every claim, run the regret spec.

`run_entry` returns the entry's `dpaudit.records.EntryRecord` (one element of the report's
"entries").  Confidence: each call of `dpaudit.audit.audit` gets `confidence`; the caller (the CLI)
splits a family-wise level across all calls of a suite (Bonferroni), so that the whole report's lower
bounds hold together with the stated probability.

A `OneRunEntry` (`mode == "one-run"`) is audited in one run with canaries (Steinke, Nasr, Jagielski,
"Privacy Auditing with One (1) Training Run", NeurIPS 2023, Alg. 1): the algorithm runs ONCE at its
deployment horizon and `dpaudit.audit.one_run` turns the correct membership guesses into a lower bound
on epsilon at each claimed delta.  The analysis is fixed by the claim before the run (`one_run_analysis`):
"epsilon" (their Thm 3.1) at delta = 0, where it has no delta term, and "fdp" (Mahloujifar, Melis, Chaudhuri,
"Auditing f-Differential Privacy in One Run", ICML 2025, Alg. 3: the claim's (eps, delta) curve) at
delta > 0, where Thm 3.1's 2 m delta term costs power as the canaries m grow and the f-DP test has none.
Choosing it from the claim, not from the outcome, keeps each bound's confidence.  All deltas are judged
on the same run (its output is computed once); each bound is its own confidence statement, and the
CLI's Bonferroni split counts one call per delta.  Its record has the shape of a many-run record plus, in
every audit and claim, `num_canaries`, `guesses`, `correct` and `analysis` (audits of the f-DP analysis
also `mu_lower`).

Every entry's audits are seeded from the suite seed and the entry's name alone (`entry_seed`, which
user entries use too).  The entry model (`dpaudit.entries`) imports this module; this one imports it for annotations only.
"""

from __future__ import annotations

import time
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit._interrupt import is_interrupt
from dpaudit.records import (
    EntryRecord,
    PairRecord,
    RegretRecord,
    audit_record,
    claim_record,
    entry_record,
    finish_record,
    json_float,
    one_run_audit_record,
    record_error,
)
from dpaudit.validation import check_open_unit, check_positive_int

if TYPE_CHECKING:
    from dpaudit.entries import AuditEntry, OneRunEntry

__all__ = ["entry_seed", "one_run_analysis", "run_entry", "run_one_run_entry"]

_CURVE_POINTS = 60
_TINY_CLAIM = 1e-3  # passed to the auditor when every claim at this delta is epsilon = 0


def entry_seed(seed: int, name: str) -> int:
    """The seed of one entry's audits: SeedSequence([seed, crc32(name)]), so entries are independent and
    one entry's result does not depend on which other entries run (built-in and user entries alike)."""
    return _call_seed(int(seed), zlib.crc32(name.encode()))


def _describe(value: Any) -> Any:
    """JSON-ready description of a target or option: numbers as they are, functions by qualified name,
    objects by their repr (dataclass targets print every parameter of the algorithm they run)."""
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '')}.{value.__qualname__}"
    text = repr(value)
    return text if len(text) <= 2000 else text[:2000] + "…"


def _claim_epsilon(entry: AuditEntry, delta: float) -> float:
    """The claim the auditor is given at `delta`: the smallest positive claimed epsilon there.  The
    auditor needs a positive claim for its own verdict and sample check; each claim's verdict is
    judged from epsilon_lower, which does not depend on this value."""
    values = [c.value() for c in entry.claims if c.delta == delta]
    return min((v for v in values if v > 0), default=_TINY_CLAIM)


def _call_seed(*words: int) -> int:
    return int(np.random.SeedSequence(list(words)).generate_state(1, dtype=np.uint32)[0])


def _regret(entry: AuditEntry) -> RegretRecord | None:
    spec = entry.regret
    if spec is None:
        return None
    from dpaudit.registry import ALGORITHMS

    start = time.perf_counter()
    curves = ALGORITHMS.get(spec.algorithm).simulate(
        horizon=spec.horizon, runs=spec.runs, seed=spec.seed, **dict(spec.params)
    )
    lo, hi = curves.band(0.95)
    idx = np.unique(
        np.linspace(0, curves.checkpoints.size - 1, min(curves.checkpoints.size, _CURVE_POINTS)).round().astype(int)
    )
    return {
        "algorithm": spec.algorithm,
        "horizon": spec.horizon,
        "runs": spec.runs,
        "seed": spec.seed,
        "params": {
            k: v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)
            for k, v in dict(spec.params).items()
        },
        "final_mean": curves.final_mean,
        "final_ci": list(curves.final_ci),
        "checkpoints": curves.checkpoints[idx].tolist(),
        "mean": curves.mean()[idx].tolist(),
        "lower": lo[idx].tolist(),
        "upper": hi[idx].tolist(),
        "seconds": round(time.perf_counter() - start, 3),
    }


def _pin_fields(entry: AuditEntry, record: EntryRecord) -> None:
    """What the entry declares about its interval: the accountant's Gaussian-DP mu of the view
    (`mu_upper`) and why the interval stays wide (`pin_note`); `dpaudit.report` computes the
    interval itself (`epsilon_upper`, `pin`) from the claims and audits."""
    note = entry.pin_note
    record["pin_note"] = None if note is None else {"loose": note.loose, "reason": note.reason}
    record["mu_upper"] = None if entry.mu_upper is None else json_float(entry.mu_upper())


def _many_runs(
    entry: AuditEntry, record: EntryRecord, *, samples: int, confidence: float, base_seed: int, executor: Any
) -> None:
    """Every pair audited at every claimed delta with `dpaudit.audit.audit`, then every claim judged."""
    from dpaudit.audit import audit, describe_target

    target = entry.target()
    record["target"] = describe_target(target)  # module.qualname, no memory addresses
    record["audit_options"] = {k: _describe(v) for k, v in entry.audit_options.items()}
    options = dict(entry.audit_options)
    if executor is not None:
        options["executor"] = executor
    deltas = sorted({c.delta for c in entry.claims})
    for i, pair in enumerate(entry.pairs):
        for j, delta in enumerate(deltas):
            claim_eps = _claim_epsilon(entry, delta)
            seed = _call_seed(base_seed, i, j)
            start = time.perf_counter()
            result = audit(
                target,
                pair.d0,
                pair.d1,
                claim_epsilon=claim_eps,
                claim_delta=delta,
                samples=samples,
                confidence=confidence,
                seed=seed,
                **options,
            )
            record["audits"].append(
                audit_record(
                    result,
                    delta=delta,
                    claim_epsilon=claim_eps,
                    samples=samples,
                    confidence=confidence,
                    seed=seed,
                    seconds=round(time.perf_counter() - start, 3),
                    pair=i,
                )
            )
    record["claims"] = [claim_record(c, record["audits"]) for c in entry.claims]


def one_run_analysis(delta: float) -> str:
    """The analysis of a one-run audit at claimed `delta`, chosen from the claim before the run.

    "epsilon" for a pure claim (delta = 0): Steinke, Nasr, Jagielski (NeurIPS 2023, Thm 3.1), a binomial tail
    with no delta term there (the f-DP grid search gives bounds 0.3-0.4% lower on the catalog's pure runs at
    95%: `benchmarks/figures/one_run_analyses.txt`).
    "fdp" for delta > 0: their bound adds a term that grows with 2 m delta (m canaries), which the f-DP test
    of the (eps, delta) curve (Mahloujifar, Melis, Chaudhuri, ICML 2025, Alg. 3) does not have.  Picking the
    analysis after seeing both bounds would void their confidence; this rule never looks at the run."""
    return "fdp" if delta > 0 else "epsilon"


def _memoised(mechanism: Any) -> Any:
    """The mechanism, computed once per (inclusion, generator state): every delta reads the same run."""
    cache: dict[tuple[bytes, str], Any] = {}

    def run(inclusion: np.ndarray, rng: np.random.Generator) -> Any:
        key = (np.packbits(inclusion).tobytes(), repr(rng.bit_generator.state))
        if key not in cache:
            cache[key] = mechanism(inclusion, rng)
        return cache[key]

    return run


def run_one_run_entry(
    entry: OneRunEntry, record: EntryRecord, *, confidence: float, base_seed: int, regret: bool
) -> EntryRecord:
    """Fill `record` (its head made by `run_entry`) with one run's audits and claim verdicts."""
    from dpaudit.audit import one_run

    record["mode"] = entry.mode
    record["one_run"] = {"horizon": entry.horizon, "num_canaries": entry.num_canaries}
    target = entry.target()
    record["target"] = _describe(target.mechanism)
    mechanism = _memoised(target.mechanism)
    run_seed = _call_seed(base_seed, 0)
    for delta in sorted({c.delta for c in entry.claims}):
        claim_eps = _claim_epsilon(entry, delta)
        start = time.perf_counter()
        res = one_run(
            mechanism,
            target.num_canaries,
            target.score,
            claim_epsilon=claim_eps,
            claim_delta=delta,
            confidence=confidence,
            seed=run_seed,
            guesses=entry.guesses,
            analysis=one_run_analysis(delta),
        )
        record["audits"].append(
            one_run_audit_record(
                res,
                delta=delta,
                claim_epsilon=claim_eps,
                confidence=confidence,
                seed=run_seed,
                seconds=round(time.perf_counter() - start, 3),
                horizon=entry.horizon,
            )
        )
    claims = []
    for c in entry.claims:
        rec = claim_record(c, record["audits"])
        best = next(a for a in record["audits"] if a["delta"] == c.delta)
        rec["mode"], rec["num_canaries"] = entry.mode, best["num_canaries"]
        rec["guesses"], rec["correct"], rec["analysis"] = best["guesses"], best["correct"], best["analysis"]
        claims.append(rec)
    record["claims"] = claims
    if regret:
        record["regret"] = _regret(entry)
    return record


def run_entry(
    entry: AuditEntry,
    *,
    samples: int | None = None,
    quick: bool = False,
    confidence: float = 0.95,
    seed: int = 0,
    executor: Any = None,
    regret: bool = True,
    baseline_events: dict[str, Any] | None = None,
) -> EntryRecord:
    """Audit `entry` and return its report record.

    samples: runs per input (default: the entry's `quick_samples` when `quick`, else its `samples`);
    confidence: of each audit call; seed: the suite seed (each entry derives its own, `entry_seed`).
    baseline_events (what `dpaudit audit --baseline` passes every entry) is accepted and ignored: a
    catalog record keeps no event, so `dpaudit.baseline.compare` lists its rises, never gating on them.
    A failure inside the entry (an exception) is recorded as `error` with ok = False, not raised,
    so one broken entry cannot hide the others' results.
    """
    check_open_unit(confidence, "confidence")
    if samples is None:
        samples = entry.quick_samples if (quick and entry.quick_samples) else entry.samples
    samples = check_positive_int(samples, "samples")
    start = time.perf_counter()
    base = entry_seed(seed, entry.name)
    pairs: list[PairRecord] = [{"relation": p.relation, "description": p.description} for p in entry.pairs]
    record = entry_record(entry, base, pairs)
    try:
        _pin_fields(entry, record)
        if getattr(entry, "mode", None) == "one-run":
            run_one_run_entry(
                entry,  # type: ignore[arg-type]
                record,
                confidence=confidence,
                base_seed=base,
                regret=regret,
            )
            return finish_record(record, start)
        _many_runs(entry, record, samples=samples, confidence=confidence, base_seed=base, executor=executor)
        if regret:
            record["regret"] = _regret(entry)
    except BaseException as exc:  # sys.exit() in user code too: recorded (ok = False), the suite goes on
        if is_interrupt(exc):
            raise
        record_error(record, exc)
    return finish_record(record, start)
