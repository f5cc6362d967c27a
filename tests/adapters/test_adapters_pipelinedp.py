"""PipelineDP adapters: claims read from the mechanism spec, batched runs of the library's law.  PipelineDP draws
from python-dp's generator and an unseeded numpy generator, so the statistical tests here are not bit-reproducible:
each states its false-failure rate per run."""

import pickle

import numpy as np
import pytest
from scipy import stats

pytest.importorskip(
    "pipeline_dp.dp_computations",
    exc_type=ImportError,
    reason="PipelineDP is not installed: pip install 'dpaudit[pipelinedp]'",
)

from dpaudit.accounting.guarantees import ApproxDp, PureDp
from dpaudit.adapters import pipelinedp_exponential, pipelinedp_gaussian, pipelinedp_laplace

CANDIDATES = 4
BUILDERS = {
    "laplace": (lambda: pipelinedp_laplace(0.5, sensitivity=2.0), PureDp(0.5), float),
    "gaussian": (lambda: pipelinedp_gaussian(1.0, 1e-6, sensitivity=2.0), ApproxDp(1.0, 1e-6), float),
    "exponential": (lambda: pipelinedp_exponential(1.0, candidates=CANDIDATES), PureDp(1.0), np.int64),
}


@pytest.mark.parametrize("key", sorted(BUILDERS))
def test_claim_neighbours_and_batch_shape(key):
    build, claim, dtype = BUILDERS[key]
    target = build()
    assert target.claim == claim and target.claim_epsilon == claim.epsilon
    assert target.claim_delta == (claim.delta if isinstance(claim, ApproxDp) else 0.0)
    assert target.library == "pipelinedp" and not target.reproducible
    d0, d1 = target.neighbours
    runs = target(d1, np.random.default_rng(0), 40)
    assert runs.shape == (40,) and runs.dtype == dtype and len(np.unique(runs)) > 1
    assert target(d0, np.random.default_rng(0), 0).shape == (0,)
    copy = pickle.loads(pickle.dumps(target))
    assert copy(d0, np.random.default_rng(0), 3).shape == (3,) and copy.claim == claim


def test_neighbours_and_bad_input():
    assert pipelinedp_laplace(1.0, sensitivity=2.0).neighbours == (0.0, 2.0)
    assert pipelinedp_exponential(1.0, candidates=3).neighbours == ((1.0, 0.0, 0.0), (0.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="epsilon"):
        pipelinedp_laplace(-1.0)
    with pytest.raises(ValueError, match="delta"):
        pipelinedp_gaussian(1.0, 0.0)
    with pytest.raises(ValueError, match="candidates"):
        pipelinedp_exponential(1.0, candidates=1)


def test_runs_have_the_stated_law():
    """At level 1e-3 each (unseeded: a right law fails with probability at most 2e-3 over both tests).  KS of 8000
    runs of the Laplace at 0 against Laplace(scale = sensitivity/epsilon); its twin against a scale 1.5 times larger
    must be rejected (sup |F - G| >= 0.06 against a critical distance of 0.022: power above 0.9999).  Chi-square
    (4 indices) of 10^4 runs of the exponential mechanism against exp(epsilon u/2) normalized; its twin against
    the probabilities of epsilon/2 must be rejected (non-centrality 144, 3 degrees of freedom: power above 0.9999)."""
    rng = np.random.default_rng(0)
    laplace = pipelinedp_laplace(1.0, sensitivity=2.0)(0.0, rng, 8000)
    assert stats.kstest(laplace, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert stats.kstest(laplace, stats.laplace(scale=3.0).cdf).pvalue < 1e-3
    target = pipelinedp_exponential(1.0, candidates=CANDIDATES)
    utility = np.asarray(target.neighbours[0])
    counts = np.bincount(target(utility, rng, 10_000), minlength=CANDIDATES)
    for epsilon, same in ((1.0, True), (0.5, False)):
        p = np.exp(epsilon * utility / 2)
        assert (stats.chisquare(counts, 10_000 * p / p.sum()).pvalue > 1e-3) == same, epsilon
