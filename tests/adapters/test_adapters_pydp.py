"""python-dp adapters: claims read from the mechanism, batched runs of the library's law, and its float outputs
audited.  python-dp seeds its own generator from the operating system and cannot be seeded, so the statistical tests
here are not bit-reproducible: each states its false-failure rate per run."""

import pickle

import numpy as np
import pytest
from scipy import stats

mechanisms = pytest.importorskip(
    "pydp.algorithms.numerical_mechanisms",
    exc_type=ImportError,
    reason="python-dp is not installed: pip install 'dpaudit[pydp]'",
)

from dpaudit.accounting.guarantees import ApproxDp, PureDp  # noqa: E402
from dpaudit.adapters import audit_target, pydp_gaussian, pydp_laplace  # noqa: E402

BUILDERS = {
    "laplace": (lambda: pydp_laplace(0.5, sensitivity=2.0), PureDp(0.5), (0.0, 2.0), float),
    "laplace int": (lambda: pydp_laplace(1.0, sensitivity=3, integer=True), PureDp(1.0), (0, 3), np.int64),
    "gaussian": (lambda: pydp_gaussian(1.0, 1e-6, sensitivity=2.0), ApproxDp(1.0, 1e-6), (0.0, 2.0), float),
}


@pytest.mark.parametrize("key", sorted(BUILDERS))
def test_claim_neighbours_and_batch_shape(key):
    build, claim, neighbours, dtype = BUILDERS[key]
    target = build()
    assert target.claim == claim and target.claim_epsilon == claim.epsilon
    assert target.claim_delta == (claim.delta if isinstance(claim, ApproxDp) else 0.0)
    assert target.neighbours == neighbours and target.library == "pydp" and not target.reproducible
    runs = target(neighbours[1], np.random.default_rng(0), 40)
    assert runs.shape == (40,) and runs.dtype == dtype and len(np.unique(runs)) > 1
    assert target(neighbours[0], np.random.default_rng(0), 0).shape == (0,)
    copy = pickle.loads(pickle.dumps(target))
    assert copy(neighbours[0], np.random.default_rng(0), 3).shape == (3,) and copy.claim == claim


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        pydp_laplace(0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        pydp_laplace(1.0, sensitivity=1.5, integer=True)
    with pytest.raises(ValueError, match="delta"):
        pydp_gaussian(1.0, 1.0)
    with pytest.raises(TypeError, match="integer"):
        pydp_laplace(1.0, integer="yes")


def test_runs_have_the_stated_law():
    """One-sample KS tests at level 1e-3 (unseeded: each fails a right law with probability 1e-3, so the test with
    probability at most 2e-3) of 8000 runs at 0: the Laplace against Laplace(scale = sensitivity/epsilon) (the
    library's grid of 2^-40 is far below KS's resolution), the Gaussian against N(0, sigma) with sigma the library's
    `std`.  Twins that must be rejected: the same runs against a scale 1.5 times larger (sup |F - G| >= 0.06
    against a critical distance of 0.022: power above 0.9999)."""
    rng = np.random.default_rng(0)
    laplace = pydp_laplace(1.0, sensitivity=2.0)(0.0, rng, 8000)
    sigma = mechanisms.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0).std
    gaussian = pydp_gaussian(1.0, 1e-5)(0.0, rng, 8000)
    assert stats.kstest(laplace, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert stats.kstest(gaussian, stats.norm(scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(laplace, stats.laplace(scale=3.0).cdf).pvalue < 1e-3
    assert stats.kstest(gaussian, stats.norm(scale=1.5 * sigma).cdf).pvalue < 1e-3


def test_laplace_keeps_its_claim_in_floats_and_the_gaussian_does_not():
    """The floating-point audit (float_bits) at 2·10^4 runs per side, confidence 0.999: the Laplace, on a grid of
    2^-40 whatever the input, is consistent (a sound claim fails with probability at most 0.001); the Gaussian's
    x + noise leaks the input through its low-order bits (measured epsilon_lower 4 to 6 against a claim of 1 at
    3·10^4 runs; the assertion asks for 2)."""
    opts = dict(samples=20_000, confidence=0.999, executor="serial", progress=False, float_bits=True)
    assert audit_target(pydp_laplace(1.0), **opts).verdict == "consistent"
    leak = audit_target(pydp_gaussian(1.0, 1e-5), **opts)
    assert leak.verdict == "violation" and leak.epsilon_lower > 2.0
