"""Execute catalog entries: audit every neighbouring pair, judge every claim, run the regret spec.

The result of `run_entry` is the JSON-ready record that `dpaudit.report` renders (one element of
the report's "entries"). Confidence: each call of `dpaudit.audit.audit` gets `confidence`; the
caller (the CLI) splits a family-wise level across all calls of a suite (Bonferroni), so that the
whole report's lower bounds hold together with the stated probability.
The entries' data model (`catalog`) imports this module, not the other way round.
"""

from __future__ import annotations

import math
import time
import traceback
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit._interrupt import is_interrupt
from dpaudit.validation import check_open_unit, check_positive_int

if TYPE_CHECKING:  # annotations only: `catalog` imports this module (AuditEntry.run), never the reverse
    from dpaudit.audits.catalog import AuditEntry, Claim

__all__ = ["entry_seed", "run_entry"]

_OPTIONAL_RESULT_FIELDS = ("mu_lower", "mu_point", "direction", "selection_samples", "estimation_samples", "chunk_size")
_CURVE_POINTS = 60
_TINY_CLAIM = 1e-3  # passed to the auditor when every claim at this delta is epsilon = 0


def entry_seed(seed: int, name: str) -> int:
    """The seed of one entry's audits: SeedSequence([seed, crc32(name)]), so entries are independent
    and one entry's result does not depend on which other entries run."""
    state = np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]).generate_state(1, dtype=np.uint32)
    return int(state[0])


def _deltas(entry: AuditEntry) -> list[float]:
    return sorted({c.delta for c in entry.claims})


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _describe(value: Any) -> Any:
    """JSON-ready description of a target or option: numbers as they are, functions by qualified name,
    objects by their repr (dataclass targets print every parameter of the algorithm they run)."""
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '')}.{value.__qualname__}"
    text = repr(value)
    return text if len(text) <= 2000 else text[:2000] + "…"


def _tradeoff_of(result: Any) -> dict[str, list[float]] | None:
    """The auditor's empirical trade-off points (type I error alpha, type II error beta), both directions."""
    alpha = [a for d in getattr(result, "directions", ()) for a in d.tradeoff_alpha]
    beta = [b for d in getattr(result, "directions", ()) for b in d.tradeoff_beta]
    pts = np.array([(a, b) for a, b in zip(alpha, beta) if math.isfinite(a) and math.isfinite(b)])
    if pts.size == 0:
        return None
    pts = pts[np.argsort(pts[:, 0])]
    return {"alpha": pts[:, 0].round(6).tolist(), "beta": pts[:, 1].round(6).tolist()}


def _one_audit(entry: AuditEntry, target: Any, pair_index: int, delta: float, claim_epsilon: float,
               samples: int, confidence: float, seed: int, executor: Any) -> dict[str, Any]:
    from dpaudit.audit import audit

    pair = entry.pairs[pair_index]
    kwargs = dict(entry.audit_options)
    if executor is not None:
        kwargs["executor"] = executor
    start = time.perf_counter()
    result = audit(target, pair.d0, pair.d1, claim_epsilon=claim_epsilon, claim_delta=delta,
                   samples=samples, confidence=confidence, seed=seed, **kwargs)
    record: dict[str, Any] = {
        "delta": delta,
        "claim_epsilon": claim_epsilon,
        "samples": samples,
        "confidence": confidence,
        "seed": seed,
        "epsilon_lower": float(result.epsilon_lower),
        "verdict": str(result.verdict),
        "seconds": round(time.perf_counter() - start, 3),
    }
    for name in _OPTIONAL_RESULT_FIELDS:
        if hasattr(result, name):
            value = getattr(result, name)
            record[name] = value if isinstance(value, (str, int)) else _float(value)
    if getattr(result, "curve", None) is not None:
        record["curve_violation"] = bool(result.curve.violation)
    curve = _tradeoff_of(result)
    if curve is not None:
        record["tradeoff"] = curve
    return record


def _regret(entry: AuditEntry) -> dict[str, Any] | None:
    spec = entry.regret
    if spec is None:
        return None
    from dpaudit.registry import ALGORITHMS

    start = time.perf_counter()
    curves = ALGORITHMS.get(spec.algorithm).simulate(horizon=spec.horizon, runs=spec.runs, seed=spec.seed,
                                                     **dict(spec.params))
    lo, hi = curves.band(0.95)
    idx = np.unique(np.linspace(0, curves.checkpoints.size - 1,
                                min(curves.checkpoints.size, _CURVE_POINTS)).round().astype(int))
    return {
        "algorithm": spec.algorithm,
        "horizon": spec.horizon,
        "runs": spec.runs,
        "seed": spec.seed,
        "params": {k: v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)
                   for k, v in dict(spec.params).items()},
        "final_mean": curves.final_mean,
        "final_ci": list(curves.final_ci),
        "checkpoints": curves.checkpoints[idx].tolist(),
        "mean": curves.mean()[idx].tolist(),
        "lower": lo[idx].tolist(),
        "upper": hi[idx].tolist(),
        "seconds": round(time.perf_counter() - start, 3),
    }


def _claim_record(claim: Claim, audits: list[dict[str, Any]]) -> dict[str, Any]:
    value = claim.value()
    mine = [a for a in audits if a["delta"] == claim.delta]
    best = max(mine, key=lambda a: a["epsilon_lower"])
    verdict = "violation" if best["epsilon_lower"] > value else "consistent"
    return {
        "label": claim.label,
        "epsilon": value,
        "delta": claim.delta,
        "accountant": claim.accountant,
        "by_accountant": claim.by_accountant(),
        "source": claim.source,
        "expect": claim.expect,
        "epsilon_lower": best["epsilon_lower"],
        "confidence": best["confidence"],
        "pair": best["pair"],
        "verdict": verdict,
        "tightness": best["epsilon_lower"] / value if 0 < value < math.inf else None,
        "ok": verdict == claim.expect,
    }


def run_entry(entry: AuditEntry, *, samples: int | None = None, quick: bool = False, confidence: float = 0.95,
              seed: int = 0, executor: Any = None, regret: bool = True,
              baseline_events: dict[str, Any] | None = None) -> dict[str, Any]:
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
    record: dict[str, Any] = {
        "name": entry.name,
        "algorithm": entry.algorithm,
        "variant": entry.variant,
        "description": entry.description,
        "observable": entry.observable,
        "observable_description": entry.observable_description,
        "expect": entry.expect,
        "source": entry.source,
        "seed": base,
        "pairs": [{"relation": p.relation, "description": p.description} for p in entry.pairs],
        "audits": [],
        "claims": [],
        "regret": None,
        "error": None,
    }
    try:
        _pin_fields(entry, record)
        if getattr(entry, "mode", None) == "one-run":  # audited in one run with canaries (audits/one_run.py)
            from dpaudit.audits.one_run import run_one_run_entry

            run_one_run_entry(entry, record, confidence=confidence, base_seed=base, regret=regret)
            return _finish(record, start)
        target = entry.target()
        from dpaudit.audit import describe_target  # module.qualname, no memory addresses

        record["target"] = describe_target(target)
        record["audit_options"] = {k: _describe(v) for k, v in entry.audit_options.items()}
        deltas = _deltas(entry)
        for i in range(len(entry.pairs)):
            for j, delta in enumerate(deltas):
                # the auditor needs a positive claim for its own verdict and sample check; each claim's
                # verdict is judged below from epsilon_lower, which does not depend on this value
                values = [c.value() for c in entry.claims if c.delta == delta]
                claim_eps = min((v for v in values if v > 0), default=_TINY_CLAIM)
                call_seed = int(np.random.SeedSequence([base, i, j]).generate_state(1, dtype=np.uint32)[0])
                one = _one_audit(entry, target, i, delta, claim_eps, samples, confidence, call_seed, executor)
                one["pair"] = i
                record["audits"].append(one)
        record["claims"] = [_claim_record(c, record["audits"]) for c in entry.claims]
        if regret:
            record["regret"] = _regret(entry)
    except BaseException as exc:  # sys.exit() in user code too: recorded (ok = False), the suite goes on
        if is_interrupt(exc):
            raise
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc(limit=6)
    return _finish(record, start)


def _pin_fields(entry: AuditEntry, record: dict[str, Any]) -> None:
    """What the entry declares about its interval: the accountant's Gaussian-DP mu of the view
    (`mu_upper`) and why the interval stays wide (`pin_note`); `dpaudit.report` computes the
    interval itself (`epsilon_upper`, `pin`) from the claims and audits."""
    note = getattr(entry, "pin_note", None)
    record["pin_note"] = None if note is None else {"loose": note.loose, "reason": note.reason}
    mu = getattr(entry, "mu_upper", None)
    record["mu_upper"] = None if mu is None else _float(mu())


def _finish(record: dict[str, Any], start: float) -> dict[str, Any]:
    record["ok"] = record["error"] is None and all(c["ok"] for c in record["claims"])
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record
