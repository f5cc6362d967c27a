"""The auditor's faster forms give the numbers of the plain ones, bit for bit (exact properties): the BLAS thread
limit with its libraries looked up once (dpaudit.audit.blas), the mean absolute deviation with one temporary
(dpaudit.audit.features.mean_abs_deviation), the pooled logistic features summed for all features at once and
min(|u|, 4) read off clip(u, -4, 4) (dpaudit.audit.classifier), and the compiled kernels of the pooled logistic
features and of the coordinate log ratio (dpaudit.audit.kernels, with numba): their scores, and a whole audit, are
those of the numpy paths."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_info

from dpaudit.audit import audit, kernels
from dpaudit.audit.blas import _controller, one_blas_thread
from dpaudit.audit.classifier import LogisticScore, logistic_features
from dpaudit.audit.features import CoordinateLogRatio, mean_abs_deviation

HAS_NUMBA = kernels._compiled() is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba (dpaudit[fast]) is not installed")

ENTRIES = [0.0, -0.0, 1.0, -2.5, 1e-12, -1e-12, 4.0, -4.0, 1e300, -1e300, float("inf"), float("nan")]


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_blas_thread_limits_and_restores_with_one_lookup():
    before = _blas_threads()
    with one_blas_thread():
        assert _blas_threads() and all(n == 1 for n in _blas_threads())
        with one_blas_thread():  # nested, as a score batch inside a chunk
            assert all(n == 1 for n in _blas_threads())
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before
    assert _controller() is _controller()  # the libraries were looked up once


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.sampled_from(ENTRIES) | st.floats(-1e6, 1e6), min_size=1, max_size=200),
    center=st.sampled_from([0.0, -0.0, 0.5, -3.25, float("inf")]) | st.floats(-10, 10),
)
def test_mean_abs_deviation_is_numpys(values, center):
    v = np.array(values, dtype=np.float64)
    for c in (center, np.float64(center)):
        got, plain = mean_abs_deviation(v, c), np.mean(np.abs(v - c))
        assert type(got) is type(plain) and np.asarray(got).tobytes() == np.asarray(plain).tobytes()
        assert np.asarray(mean_abs_deviation(v[::2], c)).tobytes() == np.asarray(np.mean(np.abs(v[::2] - c))).tobytes()


def _rows(rng: np.random.Generator, n: int, width: int) -> np.ndarray:
    """Laplace rows with entries at and near the centers (u = -0.0 and 0 after rounding), far out (|u| > 4) and
    huge (the sums' rounding)."""
    x = rng.laplace(0.0, 3.0, (n, width))
    pick = rng.random((n, width))
    x = np.where(pick < 0.1, 1e-13 * rng.standard_normal((n, width)), x)
    x = np.where((pick >= 0.1) & (pick < 0.15), 1e15 * rng.standard_normal((n, width)), x)
    return x


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 2, 7, 4097, 9000]), width=st.integers(1, 12))
def test_pooled_features_are_the_coordinates_features_summed_in_order(seed, n, width):
    rng = np.random.default_rng(seed)
    x = _rows(rng, n, width)
    inv = np.where(rng.random(width) < 0.8, rng.uniform(0.1, 3.0, width), 0.0)
    common = dict(center=np.zeros(width), inv_scale=inv, has_cont_flag=np.zeros(width, dtype=bool))
    per = logistic_features(x, LogisticScore(**common))
    pooled = logistic_features(x, LogisticScore(pooled=True, **common))
    cont = np.flatnonzero(inv > 0)
    assert per.shape == (n, 5 * len(cont)) and pooled.shape == (n, 5)
    for k in range(5):
        total = np.zeros(n)
        for r in range(len(cont)):
            total += per[:, 5 * r + k]
        assert pooled[:, k].tobytes() == total.tobytes()
    for r, j in enumerate(cont):
        u = np.round((x[:, j] - 0.0) * inv[j], 9)
        plain = [np.sign(u), np.clip(u, -0.25, 0.25), np.clip(u, -1, 1), np.clip(u, -4, 4), np.minimum(np.abs(u), 4)]
        assert per[:, 5 * r : 5 * r + 5].tobytes() == np.stack(plain, axis=1).tobytes()


def _numpy_and_kernel(evaluate):
    """evaluate() by the numpy paths (no batch reaches `MIN_ROWS`), then with the kernels on every batch."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernels, "MIN_ROWS", 2**62)
        plain = evaluate()
        mp.setattr(kernels, "MIN_ROWS", 0)
        mp.setattr(kernels, "WARM_ROWS", 0)
        return plain, evaluate()


@needs_numba
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 3, 500]),
    width=st.integers(1, 10),
    special=st.sampled_from([0.0, 1.0, float("inf"), -float("inf"), float("nan"), 1e308]),
    decimals=st.sampled_from([9, None, 4]),
)
def test_compiled_scores_are_the_numpy_scores(seed, n, width, special, decimals):
    """Pooled logistic scores and coordinate log ratios (caps of 0, idle and shifted coordinates, terms rounded or
    raw) on rows with zeros, ties with the centers, huge and infinite entries; with a NaN the kernels give the batch
    back to the numpy path, whose NaN scores are kept."""
    rng = np.random.default_rng(seed)
    x = _rows(rng, n, width)
    x[rng.random((n, width)) < 0.05] = special
    center = np.where(rng.random(width) < 0.3, 0.0, rng.normal(size=width))
    x[:, 0] = np.where(rng.random(n) < 0.3, center[0], x[:, 0])  # ties: u = 0 and |z - m| = 0
    inv = np.where(rng.random(width) < 0.8, rng.uniform(0.1, 3.0, width), 0.0)
    shift = np.where(rng.random(width) < 0.3, 0.0, rng.normal(size=width))
    coord = CoordinateLogRatio(
        cont_ratio=np.where(rng.random(width) < 0.5, 0.0, rng.normal(size=width)),
        loc0=center + 0.5 * shift,
        loc1=center - 0.5 * shift,
        inv_scale=inv,
    )
    k = 5
    logistic = LogisticScore(
        center=center,
        inv_scale=inv,
        has_cont_flag=np.zeros(width, dtype=bool),
        pooled=True,
        feature_mean=rng.normal(size=k),
        feature_scale=rng.uniform(0.5, 2.0, k),
        weights=rng.normal(size=k) * (rng.random(k) < 0.8),
    )

    def evaluate():
        with pytest.MonkeyPatch.context() as mp, np.errstate(all="ignore"):  # inf - inf on the numpy paths
            mp.setattr("dpaudit.audit.features._TERM_DECIMALS", decimals)
            return coord(x), logistic(x), logistic_features(x, logistic)

    plain, compiled = _numpy_and_kernel(evaluate)
    for a, b in zip(plain, compiled):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@needs_numba
def test_kernels_wait_for_large_batches_and_a_warm_process_and_leave_nan_to_numpy(monkeypatch):
    monkeypatch.setattr(kernels, "_numpy_rows", 0)
    monkeypatch.setattr(kernels, "WARM_ROWS", 2 * kernels.MIN_ROWS)
    z = np.zeros((kernels.MIN_ROWS, 3))
    ones = np.ones(3)
    assert kernels.pooled_feature_sums(z[:-1], ones, ones, 9) is None  # a small batch: not counted
    for _ in range(2):  # the numpy paths score WARM_ROWS rows first
        assert kernels.pooled_feature_sums(z, ones, ones, 9) is None
    assert kernels.pooled_feature_sums(z, ones, ones, 9) is not None
    assert kernels.coordinate_log_ratio(z, ones, -ones, ones, ones, 9) is not None
    assert kernels.pooled_feature_sums(z[:-1], ones, ones, 9) is None
    assert kernels.coordinate_log_ratio(z, ones, -ones, ones, ones, 4) is None  # other decimals: numpy's
    z[-1, 1] = np.nan
    assert kernels.pooled_feature_sums(z, ones, ones, 9) is None
    assert kernels.coordinate_log_ratio(z, ones, -ones, ones, ones, 9) is None


def _laplace_vector(data, rng, size):
    return data + rng.laplace(0.0, 8.0, (size, 8))


@needs_numba
def test_an_audit_with_the_kernels_is_the_audit_without():
    """A vector audit whose estimation chunks and selection halves are large enough for the kernels (50,000 rows,
    its events a pooled logistic and coordinate log ratios) gives the same result, events and fitted scores
    included, as without them."""

    def run():
        return audit(_laplace_vector, 0.0, 1.0, claim_epsilon=1.0, samples=300_000, selection_fraction=1 / 3, seed=3,
                     float_check="off", executor="serial", chunk_size=50_000).to_json()  # fmt: skip

    calls = []
    original = kernels._compiled

    def counted():
        calls.append(1)
        return original()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernels, "_compiled", counted)
        plain, compiled = _numpy_and_kernel(run)
    assert calls and compiled == plain
    assert "logistic-regression" in plain and "coordinate-log-ratio" in plain
