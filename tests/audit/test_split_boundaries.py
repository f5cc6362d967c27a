"""Run counts at and around the chunk and split boundaries: every size audits, and the counts add up.

The case that once failed: an unresolved pilot moves round(selection_extension * samples) runs to the selection
split, and when the leading chunks hold exactly that many, no drawn row is left to count; a vector output's score
(the logistic classifier) was then called on an empty block. Exact checks only: the counts' bookkeeping, not
their statistics.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.audit import audit


def parallel_laplace(d, rng, n):
    """20 Laplace(200) releases of one value (a vector output, scored by the classifier)."""
    return d[0] + rng.laplace(0.0, 200.0, (n, 20))


def scalar_laplace(d, rng, n):
    return d[0] + rng.laplace(0.0, 200.0, n)


def grouped_bits(d, rng, n):
    """Eight weak randomized responses of one bit: a discrete vector whose coordinates behave alike (scored by
    the group-count family)."""
    return ((rng.random((n, 8)) < 0.505) == bool(d[0])).astype(np.int64)


def _cases():
    chunk = 500
    for samples in (20_000, 20_250):
        for extra in (chunk * 8 - 1, chunk * 8, chunk * 8 + 1, chunk * 10):
            yield samples, chunk, extra / samples
    yield 20_000, 20_000 // 3, 0.25  # a short last chunk


@pytest.mark.parametrize(
    "target, families",
    [(parallel_laplace, None), (scalar_laplace, None), (grouped_bits, ("group-count-log-ratio",))],
    ids=["vector", "scalar", "grouped"],
)
@pytest.mark.parametrize("samples, chunk_size, extension", list(_cases()))
def test_every_run_count_audits_and_the_counts_add_up(target, families, samples, chunk_size, extension):
    r = audit(
        target,
        np.array([0.0]),
        np.array([1.0]),
        claim_epsilon=0.1,
        samples=samples,
        chunk_size=chunk_size,
        selection_extension=extension,
        float_check="off",
        seed=3,
        families=families,
    )
    assert r.selection_samples + r.estimation_samples == samples
    for d in r.directions:
        assert d.nobs == r.estimation_samples
        assert 0 <= d.count_first <= d.nobs and 0 <= d.count_second <= d.nobs


@pytest.mark.parametrize("samples", [999, 1_000, 1_001, 1_999, 2_000, 2_001])
def test_sizes_across_the_chunk_boundary(samples):
    """Chunk size 1000: one chunk short of, at, and past a boundary, with the default split."""
    r = audit(
        parallel_laplace,
        np.array([0.0]),
        np.array([1.0]),
        claim_epsilon=0.1,
        samples=samples,
        chunk_size=1_000,
        float_check="off",
        seed=4,
    )
    assert r.selection_samples + r.estimation_samples == samples
    assert all(d.nobs == r.estimation_samples for d in r.directions)
