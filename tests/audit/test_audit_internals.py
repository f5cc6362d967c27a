"""Exact properties of the auditor's parts: chunk plans, counting, bounds, scores."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpaudit.audit import chunks as chunking
from dpaudit.audit.bounds import best_case_epsilon, cp_lower, cp_upper, epsilon_from_rates, mu_from_rates
from dpaudit.audit.scores import CategoryLogRatio, fit_scores, row_keys


@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(1, 3_000))
def test_chunk_plan_partitions_both_splits(n_sel, n_est, size):
    chunks = chunking.plan_chunks(n_sel, n_est, size)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert sum(c.size for c in chunks if c.phase == "selection") == n_sel
    assert sum(c.size for c in chunks if c.phase == "estimation") == n_est
    assert all(1 <= c.size <= size for c in chunks)
    phases = [c.phase for c in chunks]
    assert phases == sorted(phases, key=lambda p: p != "selection")  # selection first


@given(
    arrays(np.int64, st.integers(1, 200), elements=st.integers(-5, 5)),
    st.lists(st.integers(-6, 6), min_size=1, max_size=30),
    st.sampled_from([1, -1]),
)
def test_one_pass_and_sorted_counts_agree(values, thresholds, sign):
    t = np.array(sorted(thresholds), dtype=float)
    v = values.astype(float)
    expected = np.array([np.sum(sign * v > x) for x in t])
    assert np.array_equal(chunking.counts_above(v, sign, t), expected)  # either path, by length
    assert np.array_equal(chunking.counts_above(v, sign, np.repeat(t, 13)), np.repeat(expected, 13))


@given(st.integers(1, 500), st.data(), st.floats(1e-6, 0.4))
@settings(max_examples=50)
def test_clopper_pearson_brackets_and_is_monotone(n, data, level):
    k = np.arange(n + 1)
    low, upp = cp_lower(k, n, level), cp_upper(k, n, level)
    assert np.all(low <= k / n + 1e-12) and np.all(upp >= k / n - 1e-12)
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(upp) >= 0)
    assert low[0] == 0.0 and upp[-1] == 1.0


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.99))
def test_epsilon_and_mu_from_rates_are_non_negative(p0, p1, delta):
    assert epsilon_from_rates(p0, p1, delta) >= 0
    assert mu_from_rates(p0, p1) >= 0


def test_best_case_epsilon_grows_with_samples():
    values = [best_case_epsilon(n, 0.0, 0.0125) for n in (10, 100, 1000, 10**4)]
    assert values == sorted(values) and values[0] > 0


@given(arrays(np.int64, (60, 3), elements=st.integers(0, 2)))
def test_category_lookup_matches_rows_and_unseen_rows_score_zero(rows):
    fit0, fit1 = rows[:30], rows[30:]
    scores = [s for s in fit_scores(fit0, fit1) if isinstance(s, CategoryLogRatio)]
    if not scores:
        return  # too many distinct rows for the category family
    cat = scores[0]
    got = cat(rows)
    keys = list(row_keys(rows))
    for i, key in enumerate(keys):
        j = int(np.searchsorted(cat.keys, key))
        assert got[i] == cat.values[j]
    unseen = np.full((1, 3), 7, dtype=np.int64)
    assert cat(unseen)[0] == 0.0
