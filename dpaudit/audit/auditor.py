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
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit._moved import forward
from dpaudit.audit import options as _options
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
    """Counts of rows in each event, as `estimation_chunk` returns them, for rows already drawn."""
    out = []
    for score, sign, thresholds in args:
        s0, s1 = score(out0), score(out1)
        out.append(np.stack([counts_above(s0, sign, thresholds), counts_above(s1, sign, thresholds)]).astype(np.int64))
    return out


def _checkpoints(target: Any, d0: Any, d1: Any, o: _options.AuditOptions, spec: OutputSpec,
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
        got = run_chunks(self.runner, chunks,
                         lambda c: (selection_chunk, (self.target, self.d0, self.d1, self.seeds[c.index], c.size,
                                                      self.spec)),
                         self.store, "", self.bar)
        return np.concatenate([got[c.index][0] for c in chunks]), np.concatenate([got[c.index][1] for c in chunks])

    def count(self, chunks: list[Chunk], args_of: Callable[[Chunk], PlanArgs], events_key: str,
              width: int) -> list[Any]:
        """The counts of the first `width` events of `args_of(chunk)` summed over the estimation `chunks`
        (0 when there are none; a chunk's events may depend on the chunk: cross-fitting counts each
        fold by the other fold's events)."""
        est = run_chunks(self.runner, chunks,
                         lambda c: (estimation_chunk, (self.target, self.d0, self.d1, self.seeds[c.index], c.size,
                                                       self.spec, args_of(c))),
                         self.store, events_key, self.bar)
        return [sum(est[c.index][i] for c in chunks) for i in range(width)]

    def choose(self, sel0: np.ndarray, sel1: np.ndarray, n_counted: int, events: int = 1) -> dict[str, EventPlan]:
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
        return _Selection(np.concatenate([sel.sel0, x0[:extra]]), np.concatenate([sel.sel1, x1[:extra]]),
                          sel.chunks[len(taken):], x0[extra:], x1[extra:])

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
        raw = [a + b for a, b in zip(_count_rows(args_a, sel.sel0[h:], sel.sel1[h:]),
                                     _count_rows(args_b, sel.sel0[:h], sel.sel1[:h]))]
        fold_b = {c.index: i % 2 == 1 for i, c in enumerate(sel.chunks)}
        est = self.count(sel.chunks, lambda c: args_a if fold_b[c.index] else args_b,
                         _events_key(plans_a, False) + _events_key(plans_b, False), len(DIRECTIONS))
        counts = [raw[i] + est[i] for i in range(len(DIRECTIONS))]
        return Counts(plans_a, counts, plans_b, samples)  # every run is counted


def run_audit(target: Callable[[Any, np.random.Generator, int], Any], d0: Any, d1: Any,
              options: _options.AuditOptions) -> AuditResult:
    """`audit` with its options already gathered (and validated) in an `AuditOptions`."""
    o = options
    plan = _options.plan_audit(target, o)
    user_score = UserScore(o.score) if o.score is not None else None
    spec = _probe(target, d0, d1, o.seed, user_score)
    chunks = plan_chunks(plan.n_sel, plan.n_est, o.chunk_size)
    seeds = np.random.SeedSequence(o.seed).spawn(len(chunks))
    sel_chunks = [c for c in chunks if c.phase == "selection"]
    est_chunks = [c for c in chunks if c.phase == "estimation"]
    store = _checkpoints(target, d0, d1, o, spec, user_score)
    payload = (target, d0, d1, user_score)
    with open_runner(o.executor, o.workers, max(len(sel_chunks), len(est_chunks)), payload) as runner, \
            progress_bar(o.progress, 2 * o.samples) as bar:
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
) -> AuditResult:
    """Lower-bound the privacy loss of `target` between neighbouring inputs `d0` and `d1`.

    target(data, rng, size) returns `size` runs (first axis) on `data`: scalars, integer vectors
    or real vectors.  `samples` runs per input; the result's `epsilon_lower` is a lower bound on
    epsilon at `claim_delta` valid with probability >= `confidence`, taking both directions, and its
    verdict compares it with `claim_epsilon`.  Every run is seeded from `numpy.random.SeedSequence(seed)`,
    so the result depends on `seed` and `chunk_size` only, not on where the runs are drawn.

    Keyword-only options (the fields of `AuditOptions`, which `run_audit` takes gathered):

    - `claim`: a DpEvent (composed once into a dpaudit.accounting.Accountant), an accountant result
      with a delta(epsilon) method, or a callable eps -> delta, whose whole curve is tested at
      `curve_points` epsilons (half of 1 - confidence is then spent on it); `claim_epsilon` is derived
      from it when not given.  `claim_accountant` names the dpaudit.accounting accountant for a DpEvent.
    - `score`: a function of a batch of outputs replacing the built-in score families.
    - `selection_fraction`: of the runs used to choose events.
    - `float_bits`: adds bit features of scalar float outputs (docs/how-to/float-bits.md says why they
      are off by default).
    - `crossfit`: chooses events on two folds and counts each on the other fold, so every run is
      counted (point bounds only, not with `claim`).
    - `direction_share` (in [0.5, 1)): the part of the epsilon bound's error probability given to the
      direction whose event the selection split predicts the larger bound for (the other gets the
      rest; 0.5 splits evenly).
    - `events_per_direction` (>= 1): the most epsilon events tested per direction: the best family's
      and runner-up families' (one per direction with `crossfit`).
    - `selection_extension` (None: 0.2, or 0 with `crossfit` or a user `score`; 0 turns it off): a
      further fraction of the runs moved from the estimation split to the selection split when the
      pilot selection (the first `selection_fraction`) leaves its strongest event within 4 selection
      standard errors of 0 (`dpaudit.audit.candidates.resolved`; not with `crossfit`).
    - `families`: None (all) or the names of the score families to choose among
      (`dpaudit.audit.families.FAMILIES`; unknown names are rejected).
    - `grid_size`: thresholds scanned for the trade-off curve.
    - `executor`: None (auto), "serial", "process" (with `workers`), a Dask scheduler address
      ("dask://host:port", "dask://tcp://host:port", "tcp://host:port", "inproc://..."; a client of
      its own is opened and closed), a distributed.Client (default or not) or a
      concurrent.futures.Executor.
    - `chunk_size`: runs per side per chunk (part of what the result depends on, like `seed`).
    - `checkpoint_dir`: a folder to store finished chunks in and resume from.
    - `progress`: True/False/None (None: a bar when stderr is a terminal).
    - `target_name`: the name the result and checkpoints give the target (default: its module and
      qualified name, see `describe_target`).

    Every value is checked before the target runs (ValueError naming the parameter).
    """
    opts = _options.AuditOptions.create(
        claim_epsilon, claim_delta, samples=samples, confidence=confidence, seed=seed, claim=claim,
        claim_accountant=claim_accountant, score=score, selection_fraction=selection_fraction, float_bits=float_bits,
        crossfit=crossfit, direction_share=direction_share, events_per_direction=events_per_direction,
        selection_extension=selection_extension, families=families, grid_size=grid_size, curve_points=curve_points,
        executor=executor, workers=workers, chunk_size=chunk_size, checkpoint_dir=checkpoint_dir, progress=progress,
        target_name=target_name)
    return run_audit(target, d0, d1, opts)
