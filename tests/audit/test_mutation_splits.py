"""Exact bookkeeping of the split audit's runs and workers.

The selection extension moves exactly round(selection_extension * samples) runs per side from the
estimation split to the selection split (at most n_est - 1, so one run is left to count), whatever the
chunk boundaries: every other run is counted once.  Cross-fitting tests one event per direction even
where several families apply, and counts each fold (half of the selection rows, every other estimation chunk)
by the event chosen on the other fold.  A process pool receives the audit's target, inputs and score: one that
cannot be pickled is refused by name before any pool starts.  Scalar float outputs get two audits (the
algorithm's and the floating-point one), each at half of 1 - confidence, except when that half is no float
(confidence next to 1): then one audit, whose planner's TooFewSamplesError reaches the caller.  All deterministic (fixed seeds, exact
counts): no false failures.
"""

import dataclasses

import numpy as np
import pytest

from dpaudit.audit import audit, auditor
from dpaudit.audit.chunks import Chunk, plan_chunks, progress_bar
from dpaudit.audit.executors import open_runner
from dpaudit.audit.options import AuditOptions, TooFewSamplesError, plan_audit


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def weak(data, rng, size):
    """Laplace(1 / 0.02): a loss too small to resolve on a pilot of 100 runs."""
    return 0.02 * data + rng.laplace(0.0, 1.0, size)


def laplace3(data, rng, size):
    """Three noisy coordinates: several score families apply."""
    return data + rng.laplace(0.0, 1.0, (size, 3))


# extra - 1 a multiple of the chunk size (a walk starting one run ahead draws a chunk too few), a multiple
# itself, one below, another chunk size, and a single run moved out of one estimation chunk
@pytest.mark.parametrize(
    ("chunk_size", "extra"), [(1_000, 2_001), (1_000, 2_000), (1_000, 1_999), (700, 1_401), (9_000, 1)]
)
def test_extension_moves_exactly_the_planned_runs(chunk_size, extra):
    samples = 10_000
    o = AuditOptions.create(
        1.0,
        0.0,
        samples=samples,
        seed=3,
        selection_extension=extra / samples,
        chunk_size=chunk_size,
        executor="serial",
        progress=False,
    )
    plan = plan_audit(laplace, o)
    spec = auditor._probe(laplace, 1.0, 0.0, o.seed, None)
    chunks = plan_chunks(plan.n_sel, plan.n_est, chunk_size)
    seeds = np.random.SeedSequence(o.seed).spawn(len(chunks))
    est = [c for c in chunks if c.phase == "estimation"]
    with open_runner("serial", None, len(chunks), None) as runner, progress_bar(False, 2 * samples) as bar:
        run = auditor._Run(laplace, 1.0, 0.0, o, plan, spec, None, runner, bar, None, seeds)
        pilot = auditor._Selection(*run.draw_selection([c for c in chunks if c.phase == "selection"]), est)
        ext = run.extend_selection(pilot)
        taken = est[: len(est) - len(ext.chunks)]
        moved = run.draw_selection([dataclasses.replace(c, phase="selection") for c in taken])
    assert (run.plan.n_sel, run.plan.n_est) == (plan.n_sel + extra, plan.n_est - extra)
    assert ext.chunks == est[len(taken) :]
    for sel, rest, rows in ((ext.sel0, ext.rest0, moved[0]), (ext.sel1, ext.rest1, moved[1])):
        assert len(sel) == run.plan.n_sel
        assert len(rest) + sum(c.size for c in ext.chunks) == run.plan.n_est  # every other run counted once
        assert np.array_equal(np.concatenate([sel[plan.n_sel :], rest]), rows)  # the leading chunks' rows, split


def test_an_extension_at_its_bound_leaves_one_run_to_count():
    # 1_000 samples: 100 pilot runs, 900 for estimation; round(0.8999 * 1_000) = 900 is capped at 899
    r = audit(
        weak,
        1.0,
        0.0,
        claim_epsilon=0.1,
        samples=1_000,
        seed=0,
        executor="serial",
        selection_extension=0.8999,
        float_check="off",
    )
    assert (r.selection_samples, r.estimation_samples) == (999, 1)
    assert all(d.nobs == 1 and 0 <= d.count_first <= 1 and 0 <= d.count_second <= 1 for d in r.directions)


def test_crossfit_tests_one_event_per_direction_where_several_families_apply():
    kw = dict(claim_epsilon=3.0, samples=4_000, seed=0, executor="serial")
    crossfit = audit(laplace3, 1.0, 0.0, crossfit=True, **kw)
    assert [d.events_tested for d in crossfit.directions] == [1, 1]
    # the twin: without cross-fitting the same runs give runner-up events
    split = audit(laplace3, 1.0, 0.0, events_per_direction=3, selection_extension=0.0, **kw)
    assert all(d.events_tested > 1 for d in split.directions)


def test_process_pool_refuses_an_unpicklable_target_by_name():
    def local(data, rng, size):  # a local function cannot be pickled
        return data + rng.laplace(0.0, 1.0, size)

    with pytest.raises(ValueError, match="executor='process' needs a picklable target"):
        audit(local, 1.0, 0.0, claim_epsilon=1.0, samples=2_000, executor="process", workers=1, float_check="off")


def test_one_process_worker_gives_the_serial_result():
    kw = dict(claim_epsilon=1.0, samples=4_000, seed=5, chunk_size=1_000, float_check="off")
    assert audit(laplace, 1.0, 0.0, executor="process", workers=1, **kw) == audit(
        laplace, 1.0, 0.0, executor="serial", **kw
    )


def test_float_outputs_split_one_minus_confidence_between_the_two_audits():
    kw = dict(claim_epsilon=1.0, samples=4_000, seed=0, executor="serial", events_per_direction=1)
    r = audit(laplace, 1.0, 0.0, confidence=0.95, **kw)
    assert r.confidence == 0.95 and r.float_check == "report"
    assert r.floating_point is not None and r.floating_point.confidence == 0.95  # reported at the whole confidence
    for part in (r, r.floating_point):
        # each audit spends its error probability (1 - 0.95) / 2 on two proportions per direction (one event each)
        assert sum(d.level for d in part.directions) == pytest.approx((1 - 0.95) / 2 / 2)


def test_too_few_samples_next_to_confidence_one_raise_the_planners_error():
    # 1 - confidence = 2**-53: its half is no float below 1, so float outputs get one audit, planned again
    with pytest.raises(TooFewSamplesError, match="samples=50 is too few"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=50, confidence=float(np.nextafter(1.0, 0.0)))


def test_float_outputs_next_to_confidence_one_get_one_audit_at_that_confidence():
    confidence = float(np.nextafter(1.0, 0.0))  # 1 - confidence = 2**-53, its half is no float below 1
    kw = dict(claim_epsilon=1.0, samples=20_000, seed=1, executor="serial", events_per_direction=1)
    r = audit(laplace, 5.0, 0.0, confidence=confidence, **kw)
    assert r.floating_point is None and r.confidence == confidence and r.epsilon_lower > 0
    assert sum(d.level for d in r.directions) == pytest.approx((1 - confidence) / 2)


def test_too_few_samples_for_the_two_audits_of_float_outputs_say_why():
    # 17 samples plan one audit at confidence 0.95 (the ratio test's best case), but not two at 0.975 each
    with pytest.raises(
        TooFewSamplesError, match=r"^the floating-point audit of these float outputs takes half of 1 - conf"
    ):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=17, executor="serial")


class _FoldProbe(auditor._Run):
    """A run whose event choice and counting only record what they are given (no target is drawn)."""

    def __init__(self, samples: int):
        self.options = dataclasses.replace(AuditOptions(claim_epsilon=1.0), samples=samples)
        self.chosen: list[np.ndarray] = []
        self.counted: dict[int, str] = {}

    def choose(self, sel0, sel1, n_counted, events=1):
        self.chosen.append(sel0.copy())
        return {"fold": "A" if len(self.chosen) == 1 else "B"}

    def count(self, chunks, args_of, events_key, width):
        self.counted = {c.index: args_of(c)["fold"] for c in chunks}
        return [0] * width


def test_crossfit_counts_each_fold_by_the_other_folds_event(monkeypatch):
    # documented folds: A = the first half of the selection rows and the even-numbered estimation chunks
    rows: list[tuple[str, np.ndarray]] = []
    monkeypatch.setattr(auditor, "plan_args", lambda plans, with_grid: plans)
    monkeypatch.setattr(auditor, "_events_key", lambda plans, with_grid: "")
    monkeypatch.setattr(auditor, "Counts", lambda *a: a)
    monkeypatch.setattr(auditor, "_count_rows", lambda args, r0, r1: rows.append((args["fold"], r0.copy())) or [0, 0])
    probe = _FoldProbe(samples=100)
    chunks = [Chunk("estimation", i, 10) for i in (7, 8, 9, 10, 11)]
    probe.crossfit(auditor._Selection(np.arange(10), np.arange(10) + 100, chunks))
    assert [c.tolist() for c in probe.chosen] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert [(fold, r.tolist()) for fold, r in rows] == [("A", [5, 6, 7, 8, 9]), ("B", [0, 1, 2, 3, 4])]
    assert probe.counted == {7: "B", 8: "A", 9: "B", 10: "A", 11: "B"}  # chunk positions 0, 2, 4 are fold A
