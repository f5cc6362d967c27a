"""`audit`: a confidence lower bound on the privacy loss of a black-box randomized target.

Procedure (sources: docs/concepts/auditor.md):
1. Probe the target with two runs per input to check its outputs (rows, NaN, shapes) early.
2. Draw `samples` runs per input in seeded chunks; the first `selection_fraction` of them form the
   selection split, the rest the estimation split.
3. On the selection split, fit score functions (learned ones on its first half) and choose, per
   direction, one event {sign*score > t} for epsilon, one for mu and a grid of thresholds
   (`dpaudit.audit.candidates`).
4. On the estimation split, count the runs in those events and apply one-sided Clopper-Pearson bounds
   with the error probability 1 - confidence split by Bonferroni over everything tested (the
   direction the selection split favours gets `direction_share` of the epsilon bound's share;
   `dpaudit.audit.verdict`).

The options are checked and planned in `dpaudit.audit.options`; the runs are drawn in chunks
(`dpaudit.audit.chunks`) by an executor (`dpaudit.audit.executors`), optionally checkpointed
(`dpaudit.audit.checkpoints`).  One audit's run state travels in a `_Run`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit._moved import forward
from dpaudit.audit import options as _options
from dpaudit.audit.anytime import timeboxed_audit
from dpaudit.audit.blas import one_blas_thread
from dpaudit.audit.candidates import choose, resolved
from dpaudit.audit.checkpoints import CheckpointStore, fingerprint_data
from dpaudit.audit.chunks import (
    Chunk,
    counts_above,
    estimation_chunk,
    plan_chunks,
    progress_bar,
    run_chunks,
    selection_chunk,
)
from dpaudit.audit.describe import describe_target
from dpaudit.audit.executors import open_runner
from dpaudit.audit.outputs import OutputSpec, draw, normalise
from dpaudit.audit.result import AuditResult
from dpaudit.audit.scores import Score, UserScore
from dpaudit.audit.selection import DIRECTIONS, EventPlan
from dpaudit.audit.verdict import Counts, assemble

__all__ = ["audit", "plan_args", "run_audit"]

# `AuditOptions` moved to `dpaudit.audit.options` (it is `dpaudit.audit.AuditOptions`)
_, __getattr__ = forward(__name__, {"AuditOptions": "dpaudit.audit.options"})

_PROBE_SIZE = 2

#: The floating-point audit's seed stream (`spawn_key`): disjoint from the chunks' (()) and the probe's (2**31).
_FLOAT_STREAM = 2**31 + 1

#: What an estimation chunk counts: (score, sign, thresholds) per event (`plan_args`).
PlanArgs = list[tuple[Score, int, np.ndarray]]


def _probe(target: Callable[..., Any], d0: Any, d1: Any, seed: int, score: Score | None) -> OutputSpec:
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


def plan_args(plans: dict[str, EventPlan], with_grid: bool) -> PlanArgs:
    """What the estimation chunks count: each direction's thresholds, then each alternate's epsilon
    threshold (directions in the order of DIRECTIONS, alternates best first)."""
    lead = [(plans[d].score, plans[d].sign, plans[d].thresholds(with_grid)) for d in DIRECTIONS]
    return lead + [(a.score, a.sign, np.array([a.threshold])) for d in DIRECTIONS for a in plans[d].alternates]


def _count_rows(args: PlanArgs, out0: np.ndarray, out1: np.ndarray) -> list[np.ndarray]:
    """Counts of rows in each event, as `estimation_chunk` returns them, for rows already drawn (none: zeros;
    a score is never called on an empty block)."""
    out = []
    for score, sign, thresholds in args:
        if len(out0) == 0 and len(out1) == 0:
            out.append(np.zeros((2, len(thresholds)), dtype=np.int64))
            continue
        with one_blas_thread():  # tall, thin products (`estimation_chunk`)
            s0, s1 = score(out0), score(out1)
        out.append(np.stack([counts_above(s0, sign, thresholds), counts_above(s1, sign, thresholds)]).astype(np.int64))
    return out


def _checkpoints(
    target: Any, d0: Any, d1: Any, o: _options.AuditOptions, spec: OutputSpec, user_score: UserScore | None
) -> CheckpointStore | None:
    if o.checkpoint_dir is None:
        return None
    identity = {
        "seed": o.seed,
        "target": describe_target(target, o.target_name),
        "data": fingerprint_data((d0, d1)),
        "score": None if user_score is None else describe_target(user_score.fn),
        "float_bits": o.float_bits,
        "crossfit": o.crossfit,
        "families": None if o.families is None else list(o.families),
        "output_shape": list(spec.row_shape),
        "discrete": spec.discrete,
    }
    manifest = {
        **identity,
        "samples": o.samples,
        "chunk_size": o.chunk_size,
        "selection_fraction": o.selection_fraction,
        "selection_extension": o.selection_extension,
        "confidence": o.confidence,
        "claim_delta": o.claim_delta,
    }
    return CheckpointStore(o.checkpoint_dir, manifest, identity)


@dataclass
class _Selection:
    """The selection rows per input, the rows already drawn for estimation (counted as they are, after
    an extension) and the estimation chunks still to draw."""

    sel0: np.ndarray
    sel1: np.ndarray
    chunks: list[Chunk]
    rest0: np.ndarray | None = None
    rest1: np.ndarray | None = None


@dataclass
class _Run:
    """One audit's run state: what every phase reads (target, inputs, options, the plan, the probe's
    output spec, the user's score) and what it draws with (the executor's runner, the progress bar,
    the checkpoint store, one seed per chunk).  `plan` grows its selection split when it is extended."""

    target: Callable[..., Any]
    d0: Any
    d1: Any
    options: _options.AuditOptions
    plan: _options.Plan
    spec: OutputSpec
    user_score: UserScore | None
    runner: Any
    bar: Any
    store: CheckpointStore | None
    seeds: Sequence[np.random.SeedSequence]

    def draw_selection(self, chunks: list[Chunk]) -> tuple[np.ndarray, np.ndarray]:
        """The raw rows of `chunks` per input (drawn as selection chunks, in chunk order)."""
        got = run_chunks(
            self.runner,
            chunks,
            lambda c: (selection_chunk, (self.target, self.d0, self.d1, self.seeds[c.index], c.size, self.spec)),
            self.store,
            "",
            self.bar,
        )
        return np.concatenate([got[c.index][0] for c in chunks]), np.concatenate([got[c.index][1] for c in chunks])

    def count(
        self, chunks: list[Chunk], args_of: Callable[[Chunk], PlanArgs], events_key: str, width: int
    ) -> list[Any]:
        """The counts of the first `width` events of `args_of(chunk)` summed over the estimation `chunks`
        (0 when there are none; a chunk's events may depend on the chunk: cross-fitting counts each
        fold by the other fold's events)."""
        est = run_chunks(
            self.runner,
            chunks,
            lambda c: (
                estimation_chunk,
                (self.target, self.d0, self.d1, self.seeds[c.index], c.size, self.spec, args_of(c)),
            ),
            self.store,
            events_key,
            self.bar,
        )
        return [sum(est[c.index][i] for c in chunks) for i in range(width)]

    def choose(self, sel0: np.ndarray, sel1: np.ndarray, n_counted: int, events: int = 1) -> dict[str, EventPlan]:
        with one_blas_thread():  # tall, thin products (`estimation_chunk`)
            return choose(self.user_score, sel0, sel1, self.options, self.plan, n_counted, events)

    def extend_selection(self, sel: _Selection) -> _Selection:
        """Move round(selection_extension * samples) runs per side from the estimation split to the selection split.

        The leading estimation chunks are drawn in full (as selection chunks: raw rows kept, same seeds);
        their first rows join the selection split, the rest are counted like estimation runs once the
        events are chosen.  The decision was taken on the pilot selection runs only, and these runs are
        independent of them, so every run left for estimation is still independent of the chosen events.
        """
        o, p = self.options, self.plan
        extra = min(round(float(o.selection_extension or 0.0) * o.samples), p.n_est - 1)  # a number once validated
        taken, total = [], 0
        for c in sel.chunks:
            if total >= extra:
                break
            taken.append(c)
            total += c.size
        x0, x1 = self.draw_selection([dataclasses.replace(c, phase="selection") for c in taken])
        self.plan = dataclasses.replace(p, n_sel=p.n_sel + extra, n_est=p.n_est - extra)
        # The rest as copies: a view would keep all the drawn rows alive beside their copy in the selection split.
        return _Selection(
            np.concatenate([sel.sel0, x0[:extra]]),
            np.concatenate([sel.sel1, x1[:extra]]),
            sel.chunks[len(taken) :],
            x0[extra:].copy(),
            x1[extra:].copy(),
        )

    def split(self, sel: _Selection) -> Counts:
        """Events chosen on the selection split (extended when the pilot is unresolved), counted on the
        estimation split."""
        o = self.options
        plans = self.choose(sel.sel0, sel.sel1, self.plan.n_est, o.events_per_direction)
        if (o.selection_extension or 0.0) > 0 and not resolved(plans, sel.sel0, sel.sel1):
            sel = self.extend_selection(sel)
            plans = self.choose(sel.sel0, sel.sel1, self.plan.n_est, o.events_per_direction)
        chunks, rest0, rest1 = sel.chunks, sel.rest0, sel.rest1
        del sel  # the selection rows are not needed while the estimation chunks run
        # The grid is counted on the estimation split only when a claimed curve is tested on it;
        # otherwise the trade-off points are read off the selection split (cheaper chunks).
        with_grid = o.claim is not None
        args = plan_args(plans, with_grid)
        counts = self.count(chunks, lambda c: args, _events_key(plans, with_grid), len(args))
        if rest0 is not None and rest1 is not None:
            counts = [a + b for a, b in zip(counts, _count_rows(args, rest0, rest1))]
        return Counts(plans, counts, None, self.plan.n_est)

    def crossfit(self, sel: _Selection) -> Counts:
        """Two-fold cross-fitting (docs/concepts/auditor.md): every run is counted, by the event of the
        other fold.

        Fold A = the first half of the selection rows and the even-numbered estimation chunks, fold B the
        rest.  Events are chosen on each fold's selection rows; A's event is counted on all of fold B and
        B's on all of fold A; per event the two counts are added (n = samples runs per side in all).
        """
        h = len(sel.sel0) // 2
        samples = self.options.samples
        plans_a = self.choose(sel.sel0[:h], sel.sel1[:h], samples)
        plans_b = self.choose(sel.sel0[h:], sel.sel1[h:], samples)
        args_a, args_b = plan_args(plans_a, False), plan_args(plans_b, False)
        raw = [
            a + b
            for a, b in zip(
                _count_rows(args_a, sel.sel0[h:], sel.sel1[h:]), _count_rows(args_b, sel.sel0[:h], sel.sel1[:h])
            )
        ]
        fold_b = {c.index: i % 2 == 1 for i, c in enumerate(sel.chunks)}
        est = self.count(
            sel.chunks,
            lambda c: args_a if fold_b[c.index] else args_b,
            _events_key(plans_a, False) + _events_key(plans_b, False),
            len(DIRECTIONS),
        )
        counts = [raw[i] + est[i] for i in range(len(DIRECTIONS))]
        return Counts(plans_a, counts, plans_b, samples)  # every run is counted


def run_audit(
    target: Callable[[Any, np.random.Generator, int], Any],
    d0: Any,
    d1: Any,
    options: _options.AuditOptions,
    stream: tuple[int, ...] = (),
) -> AuditResult:
    """`audit` with its options already gathered (and validated) in an `AuditOptions`.

    Scalar float outputs under `float_check` "report" or "gate" (without `float_bits` or a user `score`)
    get two audits with 1 - confidence split evenly: the algorithmic one, and the floating-point one with
    the bit features added, on runs from a seed stream disjoint from the first's.  `stream` prefixes the
    spawn keys of every run's seed (a time-boxed audit's stages each have their own); with a
    `time_budget` the audit runs in stages (`dpaudit.audit.anytime`).
    """
    o = options
    if o.time_budget is not None:
        return timeboxed_audit(lambda stage, key: run_audit(target, d0, d1, stage, key), o)
    maybe_split = o.float_check != "off" and not o.float_bits and o.score is None
    try:
        plan = _options.plan_audit(target, o)
    except _options.TooFewSamplesError:
        if not maybe_split:
            raise
        plan = None  # too few for one audit: the probe says whether the advice must count two
    user_score = UserScore(o.score) if o.score is not None else None
    spec = _probe(target, d0, d1, o.seed, user_score)
    if not maybe_split or spec.discrete or spec.width != 1:  # the bit features read scalar floats
        return _run_one(target, d0, d1, o, plan or _options.plan_audit(target, o), spec, user_score, stream)
    half = 1.0 - (1.0 - o.confidence) / 2
    if half == 1.0:  # 1 - confidence below 2**-52: its half is no float below 1, so no second audit fits
        return _run_one(target, d0, d1, o, plan or _options.plan_audit(target, o), spec, user_score, stream)
    algorithmic = dataclasses.replace(o, confidence=half, float_check="off")
    bits = dataclasses.replace(
        o,
        confidence=half,
        float_check="off",
        float_bits=True,
        checkpoint_dir=None if o.checkpoint_dir is None else os.path.join(o.checkpoint_dir, "floating-point"),
    )
    try:
        plan = _options.plan_audit(target, algorithmic)
    except _options.TooFewSamplesError as exc:
        raise _options.TooFewSamplesError(
            "the floating-point audit of these float outputs takes half of 1 - confidence "
            f"(float_check='off' audits the algorithm alone): {exc}"
        ) from None
    result = _run_one(target, d0, d1, algorithmic, plan, spec, user_score, stream)
    fp = _run_one(target, d0, d1, bits, plan, spec, user_score, (*stream, _FLOAT_STREAM))
    return dataclasses.replace(
        result,
        confidence=o.confidence,
        float_check=o.float_check,
        floating_point=dataclasses.replace(fp, confidence=o.confidence),
    )


def _run_one(
    target: Callable[..., Any],
    d0: Any,
    d1: Any,
    o: _options.AuditOptions,
    plan: _options.Plan,
    spec: OutputSpec,
    user_score: UserScore | None,
    stream: tuple[int, ...],
) -> AuditResult:
    """One audit: chunk seeds from `SeedSequence(seed, spawn_key=stream)` (the algorithmic audit's stream is ())."""
    chunks = plan_chunks(plan.n_sel, plan.n_est, o.chunk_size)
    seeds = np.random.SeedSequence(o.seed, spawn_key=stream).spawn(len(chunks))
    sel_chunks = [c for c in chunks if c.phase == "selection"]
    est_chunks = [c for c in chunks if c.phase == "estimation"]
    store = _checkpoints(target, d0, d1, o, spec, user_score)
    payload = (target, d0, d1, user_score)
    with (
        open_runner(o.executor, o.workers, max(len(sel_chunks), len(est_chunks)), payload) as runner,
        progress_bar(o.progress, 2 * o.samples) as bar,
    ):
        run = _Run(target, d0, d1, o, plan, spec, user_score, runner, bar, store, seeds)
        phase = run.crossfit if o.crossfit else run.split
        counted = phase(_Selection(*run.draw_selection(sel_chunks), est_chunks))  # no other reference to the rows
    return assemble(target, o, run.plan, spec, counted)


def audit(
    target: Callable[[Any, np.random.Generator, int], Any],
    d0: Any,
    d1: Any,
    claim_epsilon: float | None = None,
    claim_delta: float = 0.0,
    samples: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    *,
    claim: Any = None,
    claim_accountant: str = "best",
    score: Callable[[np.ndarray], Any] | None = None,
    selection_fraction: float = 0.1,
    float_bits: bool = False,
    float_check: str = "report",
    crossfit: bool = False,
    direction_share: float = 0.9,
    events_per_direction: int = 3,
    selection_extension: float | None = None,
    families: Sequence[str] | None = None,
    grid_size: int = 32,
    curve_points: int = 64,
    executor: Any = None,
    workers: int | None = None,
    chunk_size: int = 250_000,
    checkpoint_dir: str | None = None,
    progress: bool | None = None,
    target_name: str | None = None,
    time_budget: float | None = None,
) -> AuditResult:
    """Lower-bound the privacy loss of `target` between neighbouring inputs `d0` and `d1`.

    Runs the target `samples` times per input, chooses events on a selection split and bounds their
    probabilities on the rest with Clopper-Pearson intervals: epsilon >= log((P0[E] - delta) / P1[E])
    (Jagielski, Ullman, Oprea, "Auditing Differentially Private Machine Learning", NeurIPS 2020; method in
    docs/concepts/auditor.md).  Every run is seeded from `numpy.random.SeedSequence(seed)`: the result
    depends on `seed` and `chunk_size` only, not on where the runs are drawn.

    Parameters
    ----------
    target : callable
        `target(data, rng, size)` returns `size` runs on `data` (first axis): scalars, integer vectors or
        real vectors.
    d0, d1 : any
        The neighbouring inputs.
    claim_epsilon : float, optional
        The claimed epsilon (> 0); derived from `claim` when omitted.
    claim_delta : float
        The claimed delta, in [0, 1).
    samples : int
        Runs per input (>= 10; the error says how many a claim needs).
    confidence : float
        In (0, 1): every bound of the result holds together with at least this probability.
    seed : int
        >= 0.
    claim : DpEvent, accountant result or callable, optional
        A claimed delta(epsilon) curve, tested at `curve_points` epsilons with half of 1 - confidence;
        `claim_accountant` names the accountant for a DpEvent ("best" by default).
    score : callable, optional
        A function of a batch of outputs replacing the built-in score families (`families` restricts those).
    selection_fraction : float
        In (0, 1): the share of the runs that chooses the events.
    float_bits : bool
        Add the bit features of scalar float outputs to this one audit.
    float_check : {"report", "gate", "off"}
        For scalar float outputs, also audit the implementation with the bit features on independent runs,
        1 - confidence split evenly (`floating_point`); "gate" lets its violation fail `gate_verdict`.
        Not run with `float_bits=True` or a `score`.
    crossfit : bool
        Choose events on two folds and count each on the other, so every run counts (not with `claim`).
    direction_share : float
        In [0.5, 1): the share of the epsilon bound's error for the direction the selection favours.
    events_per_direction : int
        >= 1: epsilon events tested per direction (Bonferroni).
    selection_extension : float, optional
        Runs moved to the selection split when its pilot is unresolved (None: 0.2, or 0 with `crossfit` or
        a `score`).
    grid_size, curve_points : int
        Thresholds scanned for the trade-off curve; epsilons at which a claimed curve is tested.
    executor, workers : optional
        None (auto), "serial", "process" (with `workers`), a Dask address or client, or a
        `concurrent.futures.Executor` (docs/how-to/dask.md).
    chunk_size : int
        Runs per side per chunk (the result depends on it, like on `seed`).
    checkpoint_dir : str, optional
        A folder to keep finished chunks in and resume from (docs/how-to/resume.md).
    progress : bool, optional
        A progress bar (None: when stderr is a terminal).
    target_name : str, optional
        The name the result and checkpoints give the target (default: its module and qualified name).
    time_budget : float, optional
        Seconds (> 0): audit in stages of `samples`, 2 `samples`, 4 `samples`, ... runs per input until the
        budget is spent or a violation is settled, each stage at its share of 1 - confidence, so the bound
        holds whenever it stops (`dpaudit.audit.anytime`); `time_box` records the runs reached.

    Returns
    -------
    AuditResult
        `epsilon_lower` (valid with probability >= `confidence`, both directions taken), `verdict`
        against `claim_epsilon`, `mu_lower`, the chosen events and, for float outputs, `floating_point`.

    Raises
    ------
    ValueError
        A bad value, naming the parameter (too few `samples` says how many are needed), before any run
        of the target (too few for the floating-point split: after a probe of two runs).
    TypeError
        A value of the wrong type, or a target that is not callable.

    Examples
    --------
    >>> import dpaudit
    >>> def laplace_count(x, rng, size):
    ...     return x + rng.laplace(0.0, 1.0, size)   # epsilon = 1 over the reals, in numpy's doubles
    >>> r = dpaudit.audit(laplace_count, 0.0, 1.0, claim_epsilon=1.0, samples=20_000, seed=0)
    >>> r.verdict, r.floating_point.verdict, r.gate_verdict
    ('consistent', 'violation', 'consistent')
    >>> bool(0.8 < r.epsilon_lower <= 1.0)
    True
    """
    opts = _options.AuditOptions.create(
        claim_epsilon,
        claim_delta,
        samples=samples,
        confidence=confidence,
        seed=seed,
        claim=claim,
        claim_accountant=claim_accountant,
        score=score,
        selection_fraction=selection_fraction,
        float_bits=float_bits,
        float_check=float_check,
        crossfit=crossfit,
        direction_share=direction_share,
        events_per_direction=events_per_direction,
        selection_extension=selection_extension,
        families=families,
        grid_size=grid_size,
        curve_points=curve_points,
        executor=executor,
        workers=workers,
        chunk_size=chunk_size,
        checkpoint_dir=checkpoint_dir,
        progress=progress,
        target_name=target_name,
        time_budget=time_budget,
    )
    return run_audit(target, d0, d1, opts)
