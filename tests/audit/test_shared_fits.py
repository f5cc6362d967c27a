"""Work shared by the fitters of one selection split (dpaudit.audit.features.FitRows, column_stats) and by the
scores of one batch (dpaudit.audit.scores.ScoreValues) gives the arrays each computes alone, bit for bit
(exact properties)."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit.candidates import distinct
from dpaudit.audit.classifier import fit_classifier_scores
from dpaudit.audit.features import FitRows, _kth_of_two, atoms_of, column_stats, fit_feature_scores
from dpaudit.audit.scores import ScoreValues, fit_scores
from dpaudit.audit.selection import choose_events

ENTRIES = [0.0, -0.0, 1.0, 2.5, -1000.0, float("inf"), float("nan")]


def _rest(column: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    return column[~np.isin(column, atoms)]


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.sampled_from(ENTRIES) | st.floats(-5, 5) | st.integers(-3, 3).map(float), max_size=300),
    cut=st.integers(0, 300),
)
def test_column_stats_are_atoms_of_and_np_median(values, cut):
    """Atoms as `atoms_of` gives them and medians of the non-atom entries as np.median gives them (None: left
    to np.median), signed zeros, infinities and NaN included."""
    a = np.array(values, dtype=np.float64)
    x, y = a[: min(cut, len(a))], a[min(cut, len(a)) :]
    s = column_stats(x, y)
    assert s.atoms.dtype == np.float64 and s.atoms.tobytes() == atoms_of(x, y).tobytes()
    for median, rest in ((s.median0, _rest(x, s.atoms)), (s.median1, _rest(y, s.atoms))):
        if median is not None:
            assert type(median) is np.float64 and median.tobytes() == np.median(rest).tobytes()
    if s.median is not None:
        pooled = np.concatenate([_rest(x, s.atoms), _rest(y, s.atoms)])
        assert type(s.median) is np.float64 and s.median.tobytes() == np.median(pooled).tobytes()


def test_column_stats_read_plain_columns_off_their_sorts():
    """The medians come from the sorts for real, mixed and integer columns and for columns with zeros of one
    sign, and are left to np.median when a column holds both 0.0 and -0.0, or a NaN."""
    rng = np.random.default_rng(0)
    real = rng.laplace(0.0, 1.0, (2, 5_000))
    mixed = np.where(rng.random((2, 5_000)) < 0.4, -1000.0, real)
    counts = rng.poisson(300.0, (2, 5_000)).astype(np.float64)  # > 64 values, the rare ones not atoms
    zeros = np.where(rng.random((2, 5_000)) < 0.3, 0.0, real)
    for x, y in (real, mixed, counts, zeros, -zeros):
        s = column_stats(x, y)
        assert s.atoms.tobytes() == atoms_of(x, y).tobytes()
        r0, r1 = _rest(x, s.atoms), _rest(y, s.atoms)
        for median, rest in ((s.median0, r0), (s.median1, r1), (s.median, np.concatenate([r0, r1]))):
            assert median is not None and median.tobytes() == np.median(rest).tobytes()
    signed = np.where(rng.random(5_000) < 0.5, -0.0, 0.0)
    with_nan = np.where(rng.random(5_000) < 0.01, np.nan, real[0])
    for x, y in ((signed, real[1]), (real[0], with_nan)):
        assert column_stats(x, y).median0 is None


@settings(max_examples=300, deadline=None)
@given(
    a=st.lists(st.integers(-20, 20), max_size=40),
    b=st.lists(st.integers(-20, 20), max_size=40),
    k=st.integers(0, 79),
)
def test_kth_of_two_sorted_arrays(a, b, k):
    x, y = np.sort(np.array(a, dtype=np.float64)), np.sort(np.array(b, dtype=np.float64))
    if k < len(x) + len(y):
        assert _kth_of_two(x, y, k) == np.sort(np.concatenate([x, y]))[k]


def _fitted(score) -> tuple:
    """Every field of a fitted score, arrays as bytes."""
    out = []
    for f in dataclasses.fields(score):
        v = getattr(score, f.name)
        out.append((f.name, v.dtype.str, v.shape, v.tobytes()) if isinstance(v, np.ndarray) else (f.name, repr(v)))
    return (type(score).__name__, *out)


def _rows(kind: str, rng: np.random.Generator, n: int, x: float) -> np.ndarray:
    if kind == "real":
        return x + rng.laplace(0.0, 2.0, (n, 4))
    if kind == "prefix":
        return np.cumsum(x + rng.laplace(0.0, 2.0, (n, 4)), axis=1)
    if kind == "mixed":
        q = x + rng.laplace(0.0, 2.0, (n, 4))
        return np.column_stack([np.where(q > 1.0, q, -1000.0), rng.poisson(3.0 + x, n)])
    return rng.binomial(4, 0.4 + 0.1 * x, (n, 3)).astype(np.int8)


def test_families_fitted_on_shared_rows_are_those_fitted_alone():
    """The engineered and classifier families fitted on one FitRows (atoms, whitening, medians computed
    once) are those each fits on its own rows; a subset of `names` gives those same scores."""
    rng = np.random.default_rng(1)
    for kind in ("real", "prefix", "mixed", "ints"):
        x0, x1 = _rows(kind, rng, 3_000, 0.0), _rows(kind, rng, 3_000, 1.0)
        shared = FitRows(x0, x1)
        together = fit_feature_scores(x0, x1, False, shared) + fit_classifier_scores(x0, x1, False, shared)
        alone = fit_feature_scores(x0, x1) + fit_classifier_scores(x0, x1)
        assert [_fitted(s) for s in together] == [_fitted(s) for s in alone]
        assert {"coordinate-log-ratio"} <= {s.name for s in alone}
        for name in {s.name for s in alone}:
            some = fit_feature_scores(x0, x1, False, FitRows(x0, x1), frozenset({name}))
            assert [_fitted(s) for s in some] == [_fitted(s) for s in fit_feature_scores(x0, x1) if s.name == name]


def test_whitened_coordinates_are_the_plain_product():
    rng = np.random.default_rng(2)
    x0, x1 = _rows("prefix", rng, 5_000, 0.0), _rows("prefix", rng, 5_000, 1.0)
    rows = FitRows(x0, x1)
    w = rows.whitening
    assert w is not None
    z0, z1 = rows.whitened
    assert z0.tobytes() == (x0 @ w.T).tobytes() and z1.tobytes() == (x1 @ w.T).tobytes()


def test_score_values_are_each_scores_own_call():
    """Scores evaluated through one ScoreValues (shared Rows and coordinates, each once) give their own calls'
    values; a second request returns the first values."""
    rng = np.random.default_rng(3)
    x0, x1 = _rows("prefix", rng, 4_000, 0.0), _rows("prefix", rng, 4_000, 1.0)
    scores = fit_scores(x0, x1) + fit_feature_scores(x0, x1) + fit_classifier_scores(x0, x1)
    assert any(getattr(s, "transform", None) is not None for s in scores)
    batch = ScoreValues(x1)
    for sc in scores:
        assert batch(sc).tobytes() == sc(x1).tobytes()
        assert batch(sc) is batch(sc)


def test_distinct_with_shared_values_keeps_the_same_alternates():
    rng = np.random.default_rng(4)
    x0, x1 = _rows("real", rng, 4_000, 0.0), _rows("real", rng, 4_000, 1.0)
    scores = fit_scores(x0[:2_000], x1[:2_000]) + fit_feature_scores(x0[:2_000], x1[:2_000])
    plans = choose_events([(s, s(x0), s(x1)) for s in scores], 10**5, 0.0, 0.01, 32, alternates=4)
    rows = (ScoreValues(x0), ScoreValues(x1))
    pooled = ScoreValues(np.concatenate([x0, x1]))
    for plan in plans.values():
        assert plan.alternates
        for p in (plan, *plan.alternates):  # each input scored alone: the numbers of both scored together
            assert np.concatenate([rows[0](p.score), rows[1](p.score)]).tobytes() == pooled(p.score).tobytes()
        for k in range(4):
            assert distinct(plan, x0, x1, k, rows).alternates == distinct(plan, x0, x1, k).alternates


def test_a_refit_keeps_the_chosen_float_bit_feature():
    """Each float-bit feature has its own name, so the refit on the whole selection split returns the feature
    that was chosen (with one shared name the dict of refits held only the last feature fitted, the low byte)."""
    from types import SimpleNamespace

    from dpaudit.audit.candidates import candidate_scores, refit_on_selection

    rng = np.random.default_rng(5)
    # values on the grid 0.25 Z, half of d1's moved to the next float up: few (sign, exponent, trailing zeros)
    # categories, and low bytes 0 and 1, so both features are fitted
    sel0 = 0.25 * rng.integers(1, 41, 20_000).astype(float)
    sel1 = 0.25 * rng.integers(1, 41, 20_000).astype(float)
    sel1[::2] = np.nextafter(sel1[::2], np.inf)
    cands = candidate_scores(None, sel0, sel1, float_bits=True, families=("float-bit-log-ratio",))
    kinds = sorted(sc.kind for sc, _, _ in cands.scored)
    assert kinds == ["exponent-trailing-zeros", "low-byte"]
    chosen = next(s for s in cands.scored if s[0].kind == "exponent-trailing-zeros")
    assert len(chosen[0].keys) <= 64  # refitted (`REFIT_MAX_CATEGORIES`)
    plans = choose_events([chosen], 100_000, 0.0, 0.01, 16)
    p, o = (
        SimpleNamespace(n_est=100_000, level_eps=0.01),
        SimpleNamespace(claim_delta=0.0, crossfit=False, grid_size=16),
    )
    refitted = refit_on_selection(plans, cands, sel0, sel1, p, o)
    assert all(plan.score.kind == "exponent-trailing-zeros" for plan in refitted.values())
    assert all(plan.score is not chosen[0] for plan in refitted.values())  # refitted on the whole split
