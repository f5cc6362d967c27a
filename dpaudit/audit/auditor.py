"""`audit`: a confidence lower bound on the privacy loss of a black-box randomized target.

Procedure (sources in the package docstring):
1. Probe the target with two runs per input to check its outputs (rows, NaN, shapes) early.
2. Draw `samples` runs per input in seeded chunks; the first `selection_fraction` of them form the
   selection split, the rest the estimation split.
3. On the selection split, fit score functions (learned ones on its first half) and choose, per
   direction, one event {sign*score > t} for epsilon, one for mu and a grid of thresholds.
4. On the estimation split, count the runs in those events and apply one-sided Clopper-Pearson bounds
   with the error probability 1 - confidence split by Bonferroni over everything tested (the
   direction the selection split favours gets `direction_share` of the epsilon bound's share).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import pickle
from dataclasses import dataclass
from typing import Any, Callable

import dp_accounting
import numpy as np

import dpaudit
from dpaudit.audit.bounds import (
    best_case_epsilon,
    cp_lower,
    cp_upper,
    epsilon_from_rates,
    mu_from_rates,
    probit_cp_lower,
    probit_cp_upper,
)
from dpaudit.audit.chain import fit_chain_scores
from dpaudit.audit.describe import describe_target
from dpaudit.audit.execution import (
    CheckpointStore,
    counts_above,
    OutputSpec,
    check_executor,
    draw,
    estimation_chunk,
    fingerprint_data,
    normalise,
    open_runner,
    plan_chunks,
    progress_bar,
    run_chunks,
    selection_chunk,
)
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult
from dpaudit.audit.classifier import fit_classifier_scores
from dpaudit.audit.event_codec import encode_event
from dpaudit.audit.families import check_families, family_of, keep_families
from dpaudit.audit.features import fit_feature_scores
from dpaudit.audit.masked import fit_masked_scores
from dpaudit.audit.scores import Score, UserScore, fit_scores
from dpaudit.audit.selection import DIRECTIONS, EventPlan, choose_events, direction_levels
from dpaudit.validation import (
    check_delta,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
)

__all__ = ["audit", "AuditOptions", "run_audit"]

_PROBE_SIZE = 2
_MIN_SAMPLES = 10
_MAX_SAMPLES = 2**50
#: Category scores with more fitted categories than this are not refitted on the whole selection split.
_REFIT_MAX_CATEGORIES = 64
#: With alternates, the lead event's share of its direction's level (`_direction_result`).  benchmarks/peers.py
#: at 10^6 runs, true bound of the events tested, mean over 6 selection draws (the lead alone / the lead
#: at 1/2 / at 3/4 with two alternates; benchmarks/selection_draws.py): SVT3 0.096 / 0.107 / 0.106,
#: NumericalSVT 0.0266 / 0.0263 / 0.0263, PrefixSum (where the lead is right) 0.768 / 0.761 / 0.764; on
#: the benchmark's seeds 0/1 the larger share keeps Rappor above StatDP's 0.2416 (1/2: 0.241 on seed 1).
_LEAD_SHARE = 0.75
#: Two events whose Jaccard index on the selection runs is at least this are the same event (`_distinct`).
_SAME_EVENT = 0.95
#: At most this many chunks (each a task, a checkpoint file and a seed).
_MAX_CHUNKS = 2**20
#: With `selection_extension`, the pilot is resolved when its predicted bound is at least this many
#: selection standard errors of the chosen event's log ratio (`_resolved`).  Measured on the rows of
#: benchmarks/peers.py at 10^6 runs, six fresh selection draws each (benchmarks/figures/
#: extension_policy.txt): the 0.2 extension raised the expected bound of every row whose pilots sit
#: below 4 s.e. (SVT1 0.037 -> 0.042, SVT2 0.032 -> 0.047, LaplaceParallel 0.015 -> 0.018,
#: NumericalSVT 0.024 -> 0.027, SVT3 0.114 -> 0.120; worst draws 0.009 / 0.004 / 0.006 -> 0.033 /
#: 0.036 / 0.011), and did nothing for SVT6 (0.228 -> 0.226), whose pilots sit at 3.4-7.5 s.e., as do
#: Rappor's, PrefixSum's and SVT4's on the benchmark's seeds (4.1-16.7).  A pilot led by a coarse event
#: clears 1.5 s.e. while still poor: SVT1/SVT2 on seed 3, 3.6 s.e. and 0.019 / 0.027 in the end.
_RESOLVED_SE = 4.0
#: ... or when one of its two selection counts is below this (`_resolved`).
_RESOLVED_MIN_COUNT = 20
#: `selection_extension=None` (the default): this share, or 0 with `crossfit` or a user `score`.
_AUTO_EXTENSION = 0.2


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
    raise ValueError("claim_epsilon is required (it can only be derived from a DpEvent claim or an accountant "
                     "result with an epsilon(delta) method)")


def _samples_needed(claim_epsilon: float, delta: float, level: float, fraction: float) -> int:
    """Smallest samples per side for which a perfect distinguisher could exceed claim_epsilon."""
    n = 1
    while best_case_epsilon(n, delta, level) <= claim_epsilon:
        n *= 2
        if n > _MAX_SAMPLES:
            raise ValueError(f"claim_epsilon={claim_epsilon} cannot be exceeded by any audit of practical size "
                             f"(over {_MAX_SAMPLES} runs per side would be needed)")
    lo, hi = n // 2, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if best_case_epsilon(mid, delta, level) > claim_epsilon else (mid, hi)
    return max(_MIN_SAMPLES, math.ceil(hi / (1 - fraction)) + 1)


def _probe(target, d0, d1, seed: int, score: Score | None) -> OutputSpec:
    """Run the target twice per input and check that the outputs are usable and consistent."""
    root = np.random.SeedSequence(seed, spawn_key=(2**31,))  # disjoint from the chunk seeds
    rngs = [np.random.default_rng(s) for s in root.spawn(2)]
    out0, spec0 = normalise(target(d0, rngs[0], _PROBE_SIZE), _PROBE_SIZE, "d0")
    out1 = draw(target, d1, rngs[1], _PROBE_SIZE, spec0, "d1")
    if score is not None:
        score(out0)
        score(out1)
    return spec0


def _events_key(plans: dict[str, EventPlan], with_grid: bool) -> str:
    h = hashlib.sha256()
    for d in DIRECTIONS:
        for i, p in enumerate((plans[d], *plans[d].alternates)):
            thresholds = p.thresholds(with_grid) if i == 0 else np.array([p.threshold])
            h.update(pickle.dumps((d, i, p.sign, thresholds.tobytes(), type(p.score).__name__, p.score.describe())))
            _hash_fitted(h, p.score)
    return h.hexdigest()


def _hash_fitted(h: Any, obj: Any) -> None:
    """Every fitted array and parameter of a score, nested scores included (a resumed chunk must
    have counted the same events)."""
    for f in dataclasses.fields(obj) if dataclasses.is_dataclass(obj) else ():
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            h.update(f.name.encode() + str(value.dtype).encode() + repr(value.shape).encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, (int, float, str, bool)) or value is None:
            h.update(f"{f.name}={value!r}".encode())
        elif dataclasses.is_dataclass(value):
            h.update(f"{f.name}:{type(value).__name__}".encode())
            _hash_fitted(h, value)
        elif isinstance(value, tuple) and all(dataclasses.is_dataclass(v) for v in value):
            for i, v in enumerate(value):
                h.update(f"{f.name}[{i}]:{type(v).__name__}".encode())
                _hash_fitted(h, v)


@dataclass(frozen=True)
class _Candidates:
    """The candidate scores with their values on the selection runs they are judged on (as
    `choose_events` takes them), and for each learned one (by name) the fitter that refits it."""

    scored: list[tuple[Score, np.ndarray, np.ndarray]]
    fitter: dict[str, Callable[[np.ndarray, np.ndarray], list[Score]]]


def _families(score: Score | None, sel0: np.ndarray, sel1: np.ndarray, float_bits: bool = False,
              families: tuple[str, ...] | None = None) -> _Candidates:
    """Candidate scores (see module docstring); only those of `families` when given
    (`dpaudit.audit.families`).

    Learned scores are fitted on the first half of the selection split and judged on the second;
    the engineered and classifier families are refitted on the whole split once chosen
    (`_refit_on_selection`; the projections gain little and cost much).  The chain and masked
    families are fitted and judged on the whole split (few, well-populated parameters: halving their
    rows costs more than the in-sample choice, see `dpaudit.audit.chain.fit_chain_scores`)."""
    if score is not None:
        return _Candidates([(score, score(sel0), score(sel1))], {})
    half = len(sel0) // 2
    fit0, fit1 = sel0[:half], sel1[:half]
    refit_features = lambda a, b: fit_feature_scores(a, b, float_bits)  # noqa: E731
    refit_classifier = lambda a, b: fit_classifier_scores(a, b, float_bits)  # noqa: E731
    fitted = [(sc, None) for sc in fit_scores(fit0, fit1)]
    fitted += [(sc, refit_features) for sc in fit_feature_scores(fit0, fit1, float_bits)]
    if families is None or "logistic-regression" in families:
        fitted += [(sc, refit_classifier) for sc in fit_classifier_scores(fit0, fit1, float_bits)]
    whole = fit_chain_scores(sel0, sel1) if families is None or "chain-log-ratio" in families else []
    if families is None or "masked-value-log-ratio" in families:
        whole += fit_masked_scores(sel0, sel1)
    kept = [(sc, f) for sc, f in fitted if not families or family_of(sc.name) in families]
    kept_whole = keep_families(whole, families)
    if not kept and not kept_whole:
        found = sorted({family_of(sc.name) for sc in [sc for sc, _ in fitted] + whole})
        raise ValueError(f"families={families!r} leaves no candidate score for these outputs; the families "
                         f"fitted on them are {', '.join(found)}")
    scored, fitter = [], {}
    for sc, f in kept:
        a, b = (sel0[half:], sel1[half:]) if sc.learned else (sel0, sel1)
        scored.append((sc, sc(a), sc(b)))
        if sc.learned and f is not None:
            fitter[sc.name] = f
    scored += [(sc, sc(sel0), sc(sel1)) for sc in kept_whole]
    return _Candidates(scored, fitter)


def _refit_on_selection(plans: dict[str, EventPlan], cands: _Candidates, sel0: np.ndarray, sel1: np.ndarray,
                        p: "_Plan", o: "AuditOptions") -> dict[str, EventPlan]:
    """Each chosen learned score with a refitter (leads and alternates) refitted on the whole
    selection split and its thresholds chosen again there (it was chosen on held-out runs; the refit
    only uses more runs).  Only for scores with few fitted values (`_REFIT_MAX_CATEGORIES`): a
    category ratio over many rare rows would be chosen for its noise on the rows it was fitted on.

    The estimation split is untouched, so its Clopper-Pearson bounds stay valid."""
    refits: dict[int, dict[str, Score]] = {}

    def final(plan: EventPlan) -> EventPlan:
        chosen = plan.score
        fit = cands.fitter.get(chosen.name)
        if fit is None or len(getattr(chosen, "keys", ())) > _REFIT_MAX_CATEGORIES:
            return plan
        if id(fit) not in refits:
            refits[id(fit)] = {r.name: r for r in fit(sel0, sel1)}
        sc = refits[id(fit)].get(chosen.name)
        if sc is None or type(sc) is not type(chosen):
            return plan
        return choose_events([(sc, sc(sel0), sc(sel1))], p.n_est, o.claim_delta, p.level_eps, o.grid_size)[plan.direction]

    return {d: dataclasses.replace(final(plans[d]), alternates=tuple(final(a) for a in plans[d].alternates))
            for d in DIRECTIONS}


def _distinct(plan: EventPlan, sel0: np.ndarray, sel1: np.ndarray, alternates: int) -> EventPlan:
    """`plan` with at most `alternates` alternates, dropping each whose epsilon event nearly repeats
    the lead's or an earlier alternate's on the selection runs (Jaccard index >= `_SAME_EVENT`): a
    repeat costs Bonferroni level and cannot give a different bound."""
    rows = np.concatenate([sel0, sel1])
    kept: list[EventPlan] = []
    seen = [plan.sign * plan.score(rows) > plan.threshold]
    for alt in plan.alternates:
        if len(kept) == alternates:
            break
        e = alt.sign * alt.score(rows) > alt.threshold
        if any(np.count_nonzero(e & f) >= _SAME_EVENT * max(np.count_nonzero(e | f), 1) for f in seen):
            continue
        kept.append(alt)
        seen.append(e)
    return dataclasses.replace(plan, alternates=tuple(kept))


def _direction_result(plan: EventPlan, first: np.ndarray, second: np.ndarray, n: int, delta: float,
                      level_eps: float, level_mu: float,
                      alternates: tuple[tuple[EventPlan, int, int], ...] = ()) -> DirectionResult:
    """The bounds of one direction.  Its epsilon events are the lead's and `alternates` (plan, count
    of the first input, of the second); with alternates the lead is tested at level_eps * `_LEAD_SHARE`
    and each alternate at an equal part of the rest.  The levels add up to level_eps, so by the union
    bound the largest of the bounds is valid at level_eps (which events are tested depends on the
    selection runs only).  The mu and trade-off fields are the lead's."""
    events = ((plan, int(first[0]), int(second[0])), *alternates)
    levels = [level_eps] if not alternates else \
        [level_eps * _LEAD_SHARE] + [level_eps * (1 - _LEAD_SHARE) / len(alternates)] * len(alternates)
    bounds = []
    for (_, c1, c2), level in zip(events, levels):
        low, upp = float(cp_lower(c1, n, level)), float(cp_upper(c2, n, level))
        bounds.append((float(epsilon_from_rates(low, upp, delta)), low, upp))
    best = max(range(len(events)), key=lambda i: (bounds[i][0], -i))  # the lead on a tie
    chosen, k1, k2 = events[best]
    _, p1_low, p2_upp = bounds[best]
    level = levels[best]
    m1, m2 = int(first[1]), int(second[1])
    mu_low = max(float(probit_cp_lower(m1, n, level_mu) - probit_cp_upper(m2, n, level_mu)), 0.0)
    if len(first) > 2:
        split, grid_first, grid_second = "estimation", first[2:] / n, second[2:] / n
    else:
        split = "selection"
        grid_first, grid_second = np.array(plan.selection_first), np.array(plan.selection_second)
    return DirectionResult(
        direction=plan.direction,
        event=_event_name(chosen),
        score=json.dumps(chosen.score.describe(), sort_keys=True),
        threshold=chosen.threshold,
        nobs=n,
        count_first=k1,
        count_second=k2,
        p_first_lower=p1_low,
        p_second_upper=p2_upp,
        epsilon_lower=bounds[best][0],
        epsilon_point=float(epsilon_from_rates(k1 / n, k2 / n, delta)),
        mu_threshold=plan.mu_threshold,
        mu_count_first=m1,
        mu_count_second=m2,
        mu_lower=mu_low,
        mu_point=float(mu_from_rates(m1 / n, m2 / n)),
        tradeoff_split=split,
        tradeoff_thresholds=plan.grid,
        tradeoff_alpha=tuple(float(v) for v in grid_second),
        tradeoff_beta=tuple(float(v) for v in 1.0 - grid_first),
        level=float(level),
        events_tested=len(events),
        lead_event=_event_name(plan),
        event_state=_event_state(chosen),
    )


def _event_name(plan: EventPlan) -> str:
    return f"{'' if plan.sign > 0 else '-'}{plan.score.name} > {plan.threshold!r}"


def _event_state(plan: EventPlan) -> str:
    """The event of `plan` as JSON (`dpaudit.audit.event_codec`); "" for a score the codec does not know."""
    try:
        return encode_event(plan.score, plan.sign, plan.threshold, plan.direction)
    except TypeError:
        return ""


def _claimed_deltas(delta_of: Callable[[float], float], epsilons: np.ndarray) -> np.ndarray:
    """delta_of at each epsilon, checked to lie in [0, 1] (NaN included in the check)."""
    claimed = np.empty(len(epsilons))
    for i, e in enumerate(epsilons):
        try:
            claimed[i] = float(delta_of(float(e)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"claim: the claimed curve failed at epsilon={float(e)!r} ({exc})") from None
        if not 0.0 <= claimed[i] <= 1.0:  # false for NaN too
            raise ValueError(f"claim: the claimed curve returned delta={float(claimed[i])!r} at epsilon={float(e)!r}; "
                             "a delta must lie in [0, 1]")
    return claimed


def _curve_check(delta_of: Callable[[float], float], name: str, rates: list[tuple[np.ndarray, np.ndarray]],
                 n: int, alpha: float, points: int, claim_epsilon: float) -> CurveCheck:
    """Test delta(eps) at every scanned event; Bonferroni over all events and both proportions.

    The claimed curve is evaluated once per grid epsilon (`points` calls in all, however many events
    were scanned); the lower bounds of all events are compared with it at once.
    """
    events = sum(len(a) for a, _ in rates)
    level = alpha / (2 * events)
    lows = np.concatenate([cp_lower(a, n, level) for a, _ in rates])
    upps = np.concatenate([cp_upper(b, n, level) for _, b in rates])
    with np.errstate(divide="ignore"):
        reach = np.where(lows > 0, np.log(np.maximum(lows, 1e-300)) - np.log(upps), 0.0)
    # Grid on (0, max]: accountants define delta(epsilon) for epsilon > 0 only.
    eps_grid = np.linspace(0.0, max(float(reach.max()), claim_epsilon), points + 1)[1:]
    claimed = _claimed_deltas(delta_of, eps_grid)
    delta_low = np.maximum((lows[None, :] - np.exp(eps_grid)[:, None] * upps[None, :]).max(axis=1), 0.0)
    excess = delta_low - claimed
    i = int(np.argmax(excess))
    return CurveCheck(
        claim=name,
        alpha=alpha,
        events_tested=int(events),
        epsilons=tuple(float(e) for e in eps_grid),
        claimed_delta=tuple(float(c) for c in claimed),
        delta_lower=tuple(float(d) for d in delta_low),
        violation=bool(excess[i] > 0),
        worst_epsilon=float(eps_grid[i]),
        worst_excess=float(excess[i]),
    )


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
    #: (claim object, its delta(epsilon), its name): the claim prepared once (a DpEvent composed once).
    claim_parts: tuple[Any, Callable[[float], float], str] | None = dataclasses.field(default=None, repr=False,
                                                                                      compare=False)

    def __post_init__(self) -> None:
        self._check()

    @classmethod
    def create(cls, claim_epsilon: float | None = None, claim_delta: float = 0.0, **options: Any) -> "AuditOptions":
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
        put("samples", check_int_at_least(self.samples, _MIN_SAMPLES, "samples"))
        if self.samples > _MAX_SAMPLES:
            raise ValueError(f"samples must be at most 2**50 runs per input, got {self.samples}")
        put("seed", check_int_at_least(self.seed, 0, "seed"))
        put("selection_fraction", check_open_unit(self.selection_fraction, "selection_fraction"))
        put("grid_size", check_int_at_least(self.grid_size, 2, "grid_size"))
        put("curve_points", check_int_at_least(self.curve_points, 2, "curve_points"))
        put("chunk_size", check_int_at_least(self.chunk_size, 1, "chunk_size"))
        if -(-self.samples // self.chunk_size) > _MAX_CHUNKS:
            raise ValueError(f"chunk_size={self.chunk_size} splits samples={self.samples} into more than {_MAX_CHUNKS} "
                             f"chunks; use chunk_size >= {-(-self.samples // _MAX_CHUNKS)}")
        if self.workers is not None:
            put("workers", check_int_at_least(self.workers, 1, "workers"))
        if self.score is not None and not callable(self.score):
            raise ValueError(f"score must be a function of a batch of outputs, got {self.score!r}")
        if not isinstance(self.float_bits, bool):
            raise ValueError(f"float_bits must be True or False, got {self.float_bits!r}")
        put("families", check_families(self.families))
        if self.families is not None and self.score is not None:
            raise ValueError("families restricts the built-in score families; it cannot be combined with score=...")
        if (isinstance(self.direction_share, bool) or not isinstance(self.direction_share, (int, float))
                or not 0.5 <= self.direction_share < 1.0):
            raise ValueError(f"direction_share must be a number in [0.5, 1), got {self.direction_share!r}")
        put("direction_share", float(self.direction_share))
        put("events_per_direction", check_int_at_least(self.events_per_direction, 1, "events_per_direction"))
        if self.selection_extension is None:
            auto = self.crossfit is False and self.score is None and _AUTO_EXTENSION < 1.0 - self.selection_fraction
            put("selection_extension", _AUTO_EXTENSION if auto else 0.0)
        if (isinstance(self.selection_extension, bool) or not isinstance(self.selection_extension, (int, float))
                or not 0.0 <= self.selection_extension < 1.0 - self.selection_fraction):
            raise ValueError(f"selection_extension must be a number in [0, 1 - selection_fraction) = "
                             f"[0, {1.0 - self.selection_fraction:g}), got {self.selection_extension!r}")
        put("selection_extension", float(self.selection_extension))
        if self.selection_extension > 0 and self.crossfit:
            raise ValueError("selection_extension > 0 cannot be combined with crossfit=True (the folds are fixed "
                             "before any run is drawn)")
        if not isinstance(self.crossfit, bool):
            raise ValueError(f"crossfit must be True or False, got {self.crossfit!r}")
        if self.crossfit and self.claim is not None:
            raise ValueError("crossfit=True tests the point bound only; a claimed curve (claim=...) needs crossfit=False")
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
class _Plan:
    """What the validated options imply: error levels, split sizes and the claimed curve."""

    alpha: float
    alpha_point: float
    level_eps: float  # per proportion, for epsilon_lower: two directions x two proportions
    level_mu: float
    n_sel: int
    n_est: int
    delta_of: Callable[[float], float] | None
    claim_name: str | None


def _validate(target: Any, o: AuditOptions) -> _Plan:
    """Check what the options cannot check alone (target, sample size, the claimed curve); no runs yet."""
    if not callable(target):
        raise ValueError(f"target must be callable as target(data, rng, size), got {target!r}")
    alpha = 1.0 - o.confidence
    alpha_point = alpha / 2 if o.claim is not None else alpha
    level_eps = alpha_point / 4
    n_sel = max(4, round(o.selection_fraction * o.samples))
    n_est = o.samples - n_sel
    if n_est < 1 or best_case_epsilon(n_est, o.claim_delta, level_eps) <= o.claim_epsilon:
        need = _samples_needed(o.claim_epsilon, o.claim_delta, level_eps, o.selection_fraction)
        raise ValueError(
            f"samples={o.samples} is too few: even a perfectly distinguishing event could not give an epsilon "
            f"lower bound above claim_epsilon={o.claim_epsilon} at confidence={o.confidence}; use samples >= {need}"
        )
    delta_of = claim_name = None
    if o.claim is not None:
        _, delta_of, claim_name = o.claim_parts
        _claimed_deltas(delta_of, np.array([o.claim_epsilon]))  # a broken curve fails before any run
    return _Plan(alpha, alpha_point, level_eps, alpha / 4, n_sel, n_est, delta_of, claim_name)


def _checkpoints(target: Any, d0: Any, d1: Any, o: AuditOptions, spec: OutputSpec,
                 user_score: UserScore | None) -> CheckpointStore | None:
    if o.checkpoint_dir is None:
        return None
    identity = {
        "seed": o.seed, "target": describe_target(target, o.target_name), "data": fingerprint_data((d0, d1)),
        "score": None if user_score is None else describe_target(user_score.fn), "float_bits": o.float_bits,
        "crossfit": o.crossfit, "families": None if o.families is None else list(o.families),
        "output_shape": list(spec.row_shape), "discrete": spec.discrete,
    }
    manifest = {**identity, "samples": o.samples, "chunk_size": o.chunk_size,
                "selection_fraction": o.selection_fraction, "selection_extension": o.selection_extension,
                "confidence": o.confidence, "claim_delta": o.claim_delta}
    return CheckpointStore(o.checkpoint_dir, manifest, identity)


def _run(target: Any, d0: Any, d1: Any, o: AuditOptions, p: _Plan):
    """Draw the runs, choose the events on the selection split, count them on the estimation split."""
    user_score = UserScore(o.score) if o.score is not None else None
    spec = _probe(target, d0, d1, o.seed, user_score)
    chunks = plan_chunks(p.n_sel, p.n_est, o.chunk_size)
    seeds = np.random.SeedSequence(o.seed).spawn(len(chunks))
    sel_chunks = [c for c in chunks if c.phase == "selection"]
    est_chunks = [c for c in chunks if c.phase == "estimation"]
    store = _checkpoints(target, d0, d1, o, spec, user_score)
    payload = (target, d0, d1, user_score)
    with open_runner(o.executor, o.workers, max(len(sel_chunks), len(est_chunks)), payload) as runner, \
            progress_bar(o.progress, 2 * o.samples) as bar:
        sel = run_chunks(
            runner, sel_chunks,
            lambda c: (selection_chunk, (target, d0, d1, seeds[c.index], c.size, spec)),
            store, "", bar,
        )
        sel0 = np.concatenate([sel[c.index][0] for c in sel_chunks])
        sel1 = np.concatenate([sel[c.index][1] for c in sel_chunks])
        if o.crossfit:
            return _crossfit(runner, bar, store, target, d0, d1, o, p, spec, user_score, sel0, sel1, est_chunks,
                             seeds)
        plans = _choose(user_score, sel0, sel1, o, p, p.n_est, o.events_per_direction)
        rest0 = rest1 = None
        if o.selection_extension > 0 and not _resolved(plans, sel0, sel1):
            p, sel0, sel1, rest0, rest1, est_chunks = _extend_selection(runner, bar, store, target, d0, d1, o, p, spec,
                                                                        sel0, sel1, est_chunks, seeds)
            plans = _choose(user_score, sel0, sel1, o, p, p.n_est, o.events_per_direction)
        del sel, sel0, sel1
        # The grid is counted on the estimation split only when a claimed curve is tested on it;
        # otherwise the trade-off points are read off the selection split (cheaper chunks).
        with_grid = o.claim is not None
        plan_args = _plan_args(plans, with_grid)
        est = run_chunks(
            runner, est_chunks,
            lambda c: (estimation_chunk, (target, d0, d1, seeds[c.index], c.size, spec, plan_args)),
            store, _events_key(plans, with_grid), bar,
        )
    counts = [sum(est[c.index][i] for c in est_chunks) for i in range(len(plan_args))]
    if rest0 is not None:
        counts = [a + b for a, b in zip(counts, _count_rows(plan_args, rest0, rest1))]
    return spec, plans, counts, None, p


def _resolved(plans: dict[str, EventPlan], sel0: np.ndarray, sel1: np.ndarray) -> bool:
    """Whether the pilot's strongest event stands out of the selection split's noise.

    For the direction with the larger predicted bound (`EventPlan.predicted`), with a, b the fractions
    of the n selection runs of its first and second input in its epsilon event (add-1/2 smoothed),
    the selection split's standard error of log(a / b) is

        se = sqrt((1 - a) / (n a) + (1 - b) / (n b))       (delta method, two independent binomials),

    and the pilot counts as resolved when predicted >= `_RESOLVED_SE` * se: the event was then not
    picked among candidates whose estimates are mostly noise.  It also counts as resolved when either
    count is below `_RESOLVED_MIN_COUNT`: the delta method does not describe such counts, and an event
    that one input almost never gives (ReportNoisyMax4 of benchmarks/peers.py: 27 against 8 of 10^5
    runs, a loss that is in fact infinite) is limited by the estimation split's size, which an
    extension would shorten.
    """
    return bool(_pilot_ratio(plans, sel0, sel1) >= _RESOLVED_SE)


def _pilot_ratio(plans: dict[str, EventPlan], sel0: np.ndarray, sel1: np.ndarray) -> float:
    """predicted / se of the lead event (`_resolved`); inf when a count is below `_RESOLVED_MIN_COUNT`."""
    lead = max(DIRECTIONS, key=lambda d: (plans[d].predicted, -DIRECTIONS.index(d)))
    plan = plans[lead]
    n = len(sel0)
    k0 = int(counts_above(plan.score(sel0), plan.sign, np.array([plan.threshold]))[0])
    k1 = int(counts_above(plan.score(sel1), plan.sign, np.array([plan.threshold]))[0])
    first, second = (k0, k1) if lead == DIRECTIONS[0] else (k1, k0)
    if min(first, second) < _RESOLVED_MIN_COUNT:
        return math.inf
    a, b = (first + 0.5) / (n + 1), (second + 0.5) / (n + 1)
    se = math.sqrt((1 - a) / (n * a) + (1 - b) / (n * b))
    return plan.predicted / se


def _extend_selection(runner, bar, store, target, d0, d1, o: "AuditOptions", p: "_Plan", spec: OutputSpec,
                      sel0: np.ndarray, sel1: np.ndarray, est_chunks, seeds):
    """Move round(selection_extension * samples) runs per side from the estimation split to the selection split.

    The leading estimation chunks are drawn in full (as selection chunks: raw rows kept, same seeds);
    their first rows join the selection split, the rest are counted like estimation runs once the
    events are chosen.  The decision was taken on the pilot selection runs only, and these runs are
    independent of them, so every run left for estimation is still independent of the chosen events.
    """
    extra = min(round(o.selection_extension * o.samples), p.n_est - 1)
    taken, total = [], 0
    for c in est_chunks:
        if total >= extra:
            break
        taken.append(c)
        total += c.size
    as_sel = [dataclasses.replace(c, phase="selection") for c in taken]
    got = run_chunks(runner, as_sel, lambda c: (selection_chunk, (target, d0, d1, seeds[c.index], c.size, spec)),
                     store, "", bar)
    x0 = np.concatenate([got[c.index][0] for c in as_sel])
    x1 = np.concatenate([got[c.index][1] for c in as_sel])
    p2 = dataclasses.replace(p, n_sel=p.n_sel + extra, n_est=p.n_est - extra)
    return (p2, np.concatenate([sel0, x0[:extra]]), np.concatenate([sel1, x1[:extra]]), x0[extra:], x1[extra:],
            est_chunks[len(taken):])


def _choose(user_score: UserScore | None, sel0: np.ndarray, sel1: np.ndarray, o: AuditOptions, p: _Plan,
            n_counted: int, events: int = 1) -> dict[str, EventPlan]:
    """The events chosen on these selection rows (learned families fitted on their first half,
    refitted on all), with up to `events` - 1 alternates per direction."""
    cands = _families(user_score, sel0, sel1, o.float_bits, o.families)
    # spare runner-ups: some may repeat the lead's event once refitted (`_distinct`)
    plans = choose_events(cands.scored, n_counted, o.claim_delta, p.level_eps, o.grid_size,
                          alternates=2 * (events - 1))
    plans = _refit_on_selection(plans, cands, sel0, sel1, p, o)
    return {d: _distinct(plans[d], sel0, sel1, events - 1) for d in DIRECTIONS}


def _plan_args(plans: dict[str, EventPlan], with_grid: bool) -> list[tuple[Score, int, np.ndarray]]:
    """What the estimation chunks count: each direction's thresholds, then each alternate's epsilon
    threshold (directions in the order of DIRECTIONS, alternates best first)."""
    lead = [(plans[d].score, plans[d].sign, plans[d].thresholds(with_grid)) for d in DIRECTIONS]
    return lead + [(a.score, a.sign, np.array([a.threshold])) for d in DIRECTIONS for a in plans[d].alternates]


def _count_rows(plan_args, out0: np.ndarray, out1: np.ndarray) -> list[np.ndarray]:
    """Counts of rows in each event, as `estimation_chunk` returns them, for rows already drawn."""
    out = []
    for score, sign, thresholds in plan_args:
        s0, s1 = score(out0), score(out1)
        out.append(np.stack([counts_above(s0, sign, thresholds), counts_above(s1, sign, thresholds)]).astype(np.int64))
    return out


def _crossfit(runner, bar, store, target, d0, d1, o: AuditOptions, p: _Plan, spec: OutputSpec,
              user_score: UserScore | None, sel0: np.ndarray, sel1: np.ndarray, est_chunks, seeds):
    """Two-fold cross-fitting (see the package docstring): every run is counted, by the event of the
    other fold.

    Fold A = the first half of the selection rows and the even-numbered estimation chunks, fold B the
    rest.  Events are chosen on each fold's selection rows; A's event is counted on all of fold B and
    B's on all of fold A; per event the two counts are added (n = samples runs per side in all).
    """
    h = len(sel0) // 2
    plans_a = _choose(user_score, sel0[:h], sel1[:h], o, p, o.samples)
    plans_b = _choose(user_score, sel0[h:], sel1[h:], o, p, o.samples)
    args_a, args_b = _plan_args(plans_a, False), _plan_args(plans_b, False)
    raw = [a + b for a, b in zip(_count_rows(args_a, sel0[h:], sel1[h:]), _count_rows(args_b, sel0[:h], sel1[:h]))]
    fold_b = {c.index: i % 2 == 1 for i, c in enumerate(est_chunks)}
    est = run_chunks(
        runner, est_chunks,
        lambda c: (estimation_chunk, (target, d0, d1, seeds[c.index], c.size, spec,
                                      args_a if fold_b[c.index] else args_b)),
        store, _events_key(plans_a, False) + _events_key(plans_b, False), bar,
    )
    counts = [raw[i] + sum(est[c.index][i] for c in est_chunks) for i in range(len(DIRECTIONS))]
    return spec, plans_a, counts, plans_b, p


def _assemble(target: Any, o: AuditOptions, p: _Plan, spec: OutputSpec, plans: dict[str, EventPlan],
              counts: list[np.ndarray], partner: dict[str, EventPlan] | None = None,
              nobs: int | None = None) -> AuditResult:
    """Bounds from the counts, the verdict and the result record (`partner`: fold B's events when cross-fitted)."""
    directions = []
    rates = []
    nobs = p.n_est if nobs is None else nobs
    # Cross-fitted: two folds may lead in different directions, so the split stays even.
    levels = (direction_levels(plans, p.alpha_point, o.direction_share) if partner is None
              else {d: p.level_eps for d in DIRECTIONS})
    at = len(DIRECTIONS)  # counts of the alternates follow the directions' (`_plan_args`)
    for i, d in enumerate(DIRECTIONS):
        first, second = (counts[i][0], counts[i][1]) if d == "d0>d1" else (counts[i][1], counts[i][0])
        alternates = []
        for a in plans[d].alternates:
            c = counts[at][:, 0]
            alternates.append((a, int(c[0]), int(c[1])) if d == "d0>d1" else (a, int(c[1]), int(c[0])))
            at += 1
        if partner is not None:
            # Cross-fitted counts are sums of two binomials: Hoeffding's comparison covers every count
            # except 1 (lower bounds) and nobs - 1 (upper bounds), taken as 0 and nobs (package docstring).
            first = np.where(first <= 1, 0, first)
            second = np.where(second >= nobs - 1, nobs, second)
        r = _direction_result(plans[d], first, second, nobs, o.claim_delta, levels[d], p.level_mu, tuple(alternates))
        if partner is not None:
            q = partner[d]
            other = f"{'' if q.sign > 0 else '-'}{q.score.name} > {q.threshold!r}"
            r = dataclasses.replace(r, event=f"cross-fitted: {r.event} (fold A) + {other} (fold B)", lead_event="",
                                    event_state="")
        directions.append(r)
        rates.append((first[2:], second[2:]))
    best = max(directions, key=lambda r: r.epsilon_lower)
    best_mu = max(directions, key=lambda r: r.mu_lower)
    curve = None
    if p.delta_of is not None:
        curve = _curve_check(p.delta_of, p.claim_name, rates, p.n_est, p.alpha - p.alpha_point, o.curve_points,
                             o.claim_epsilon)
    violation = best.epsilon_lower > o.claim_epsilon or (curve is not None and curve.violation)
    return AuditResult(
        epsilon_lower=best.epsilon_lower,
        verdict="violation" if violation else "consistent",
        claim_epsilon=o.claim_epsilon,
        claim_delta=o.claim_delta,
        confidence=o.confidence,
        samples=o.samples,
        seed=o.seed,
        chunk_size=o.chunk_size,
        selection_fraction=o.selection_fraction,
        selection_samples=p.n_sel,
        estimation_samples=nobs,  # cross-fitted: every run is counted (by the other fold's event)
        output_shape=spec.row_shape,
        discrete=spec.discrete,
        direction=best.direction,
        directions=tuple(directions),
        mu_lower=best_mu.mu_lower,
        mu_point=best_mu.mu_point,
        curve=curve,
        version=dpaudit.__version__,
        target=describe_target(target, o.target_name),
    )


def run_audit(target: Callable[[Any, np.random.Generator, int], Any], d0: Any, d1: Any,
              options: AuditOptions) -> AuditResult:
    """`audit` with its options already gathered (and validated) in an `AuditOptions`."""
    plan = _validate(target, options)
    spec, plans, counts, partner, plan = _run(target, d0, d1, options, plan)
    nobs = options.samples if partner is not None else plan.n_est  # cross-fitted: every run is counted
    return _assemble(target, options, plan, spec, plans, counts, partner, nobs)


def audit(
    target: Callable[[Any, np.random.Generator, int], Any],
    d0: Any,
    d1: Any,
    claim_epsilon: float | None = None,
    claim_delta: float = 0.0,
    samples: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    **options: Any,
) -> AuditResult:
    """Lower-bound the privacy loss of `target` between neighbouring inputs `d0` and `d1`.

    target(data, rng, size) returns `size` runs (first axis) on `data`: scalars, integer vectors
    or real vectors.  `samples` runs per input; the result's `epsilon_lower` is a lower bound on
    epsilon at `claim_delta` valid with probability >= `confidence`, taking both directions.

    Keyword options (the fields of `AuditOptions`): `claim` a DpEvent (composed once into a
    dpaudit.accounting.Accountant), an accountant result with a delta(epsilon) method, or a callable
    eps -> delta, whose whole curve is tested at `curve_points` epsilons (half of 1 - confidence is
    then spent on it; `claim_accountant` names the dpaudit.accounting accountant for a DpEvent);
    `score` a function of a batch of outputs replacing the built-in score families;
    `selection_fraction` of the runs used to choose events; `float_bits` (default False) adds bit
    features of scalar float outputs (see the package docstring for why they are off by default);
    `crossfit` (default False) chooses events on two folds and counts each on the other fold, so
    every run is counted (point bounds only, not with `claim`); `direction_share` (default 0.9, in
    [0.5, 1)) the part of the epsilon bound's error probability given to the direction whose event the
    selection split predicts the larger bound for (the other gets the rest; 0.5 splits evenly);
    `events_per_direction` (default 3, >= 1) the most epsilon events tested per direction: the best
    family's and runner-up families' (one per direction with `crossfit`);
    `selection_extension` (default None: 0.2, or 0 with `crossfit` or a user `score`; 0 turns it off)
    a further fraction of the runs moved from the estimation split to the selection split when the
    pilot selection (the first `selection_fraction`) leaves its strongest event within 4 selection
    standard errors of 0 (`_resolved`; not with `crossfit`); `families` None (all) or the names of
    the score families to choose among (`dpaudit.audit.families.FAMILIES`; unknown names are rejected);
    `grid_size` thresholds scanned for the
    trade-off curve; `executor` None (auto), "serial", "process" (with `workers`), a Dask scheduler
    address ("dask://host:port", "dask://tcp://host:port", "tcp://host:port", "inproc://..."; a
    client of its own is opened and closed), a distributed.Client (default or not) or a
    concurrent.futures.Executor; `chunk_size` runs per side per chunk (part of what the result
    depends on, like `seed`); `checkpoint_dir` to store finished chunks and resume; `progress`
    True/False/None (None: a bar when stderr is a terminal); `target_name` the name the result and
    checkpoints give the target (default: its module and qualified name, see `describe_target`).
    Every value is checked before the target runs (ValueError naming the parameter).
    """
    opts = AuditOptions.create(claim_epsilon, claim_delta, samples=samples, confidence=confidence, seed=seed,
                               **options)
    return run_audit(target, d0, d1, opts)
