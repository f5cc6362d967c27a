"""The event choice holds the selection split once: no step copies it whole, and the memory of `choose_events`
does not grow with the number of families.  Measured with tracemalloc, which counts every array numpy
allocates, so the numbers are deterministic (seeded data, no false failures); each test's twin measures the
copy the test rules out and must exceed the same bound."""

import tracemalloc
from collections.abc import Callable

import numpy as np

from dpaudit.audit.candidates import distinct
from dpaudit.audit.chain import fit_chain_scores
from dpaudit.audit.masked import fit_masked_scores
from dpaudit.audit.scores import ScoreValues, fit_scores
from dpaudit.audit.selection import choose_events


def _peak(fn: Callable[[], object]) -> int:
    """The most memory `fn` holds at once, in bytes, beyond what was allocated before."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _rows(seed: int, n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, width)), rng.normal(0.2, 1.0, size=(n, width))


def test_distinct_scores_each_input_apart_without_a_copy_of_the_rows():
    x0, x1 = _rows(5, 50_000, 16)
    scores = fit_scores(x0[:5_000], x1[:5_000])
    plans = choose_events([(s, s(x0), s(x1)) for s in scores], 10**6, 0.0, 0.01, 32, alternates=4)
    rows_bytes = x0.nbytes + x1.nbytes
    for plan in plans.values():
        assert _peak(lambda plan=plan: distinct(plan, x0, x1, 4)) < 0.5 * rows_bytes  # measured 0.17

        def pooled(plan=plan):  # the twin: scoring both inputs' rows together copies them
            rows = ScoreValues(np.concatenate([x0, x1]))
            return [rows(p.score) for p in (plan, *plan.alternates)]

        assert _peak(pooled) > 0.5 * rows_bytes  # measured 1.13


def test_choose_events_keeps_each_family_s_grid_not_its_sorted_scores():
    rng = np.random.default_rng(6)
    s0, s1 = rng.laplace(size=100_000), rng.laplace(0.5, size=100_000)
    score = fit_scores(*_rows(7, 1_000, 4))[0]
    values_bytes = s0.nbytes + s1.nbytes

    def peak(k: int) -> int:
        families = [(score, s0 + i, s1 + i) for i in range(k)]
        return _peak(lambda: choose_events(families, 10**6, 0.0, 0.01, 32, alternates=4))

    def kept(k: int) -> list[tuple[np.ndarray, ...]]:  # the twin: each family's sorted scores and their merge kept
        out = []
        for i in range(k):
            u0, u1 = np.sort(s0 + i), np.sort(s1 + i)
            pooled = np.concatenate([u0, u1])
            pooled.sort(kind="stable")
            out.append((u0, u1, pooled))
        return out

    one, eight = peak(1), peak(8)
    assert eight < one + 2 * values_bytes  # measured 2.2 and 3.1 times the values
    assert one + _peak(lambda: kept(8)) > one + 2 * values_bytes  # 2 times the values per family


def test_chain_and_masked_fits_read_float64_rows_in_place():
    w0, w1 = _rows(8, 20_000, 72)
    rows_bytes = w0.nbytes + w1.nbytes
    assert _peak(lambda: fit_chain_scores(w0, w1)) < 0.1 * rows_bytes  # wider than the chain family: nothing read
    assert _peak(lambda: fit_masked_scores(w0, w1)) < 0.1 * rows_bytes  # measured 0.03: one column at a time
    # the twin: a float64 conversion that copies
    assert _peak(lambda: (w0.astype(np.float64), w1.astype(np.float64))) > 0.1 * rows_bytes
