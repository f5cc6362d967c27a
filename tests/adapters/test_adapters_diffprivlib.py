"""diffprivlib adapters: claims read from the constructor's arguments, runs that are a function of the audit's
seed with the law of the library's own calls, and the float Laplace caught by float_bits (Mironov, CCS 2012)."""

import pickle

import numpy as np
import pytest
from scipy import stats

mechanisms = pytest.importorskip(
    "diffprivlib.mechanisms",
    exc_type=ImportError,
    reason="diffprivlib is not installed: pip install 'dpaudit[diffprivlib]'",
)

from dpaudit.accounting.guarantees import ApproxDp, PureDp  # noqa: E402
from dpaudit.adapters import (  # noqa: E402
    audit_target,
    diffprivlib_exponential,
    diffprivlib_gaussian,
    diffprivlib_geometric,
    diffprivlib_laplace,
    diffprivlib_mechanism,
    diffprivlib_snapping,
)

BUILDERS = {
    "laplace": lambda: diffprivlib_laplace(1.0, sensitivity=2.0),
    "laplace delta": lambda: diffprivlib_laplace(1.0, delta=0.1),
    "gaussian classic": lambda: diffprivlib_gaussian(0.5, 1e-5, variant="classic"),
    "gaussian analytic": lambda: diffprivlib_gaussian(2.0, 1e-6),
    "gaussian discrete": lambda: diffprivlib_gaussian(1.0, 1e-5, variant="discrete"),
    "geometric": lambda: diffprivlib_geometric(0.5, sensitivity=2),
    "exponential": lambda: diffprivlib_exponential(1.0, candidates=4),
    "permute and flip": lambda: diffprivlib_exponential(1.0, candidates=4, permute_and_flip=True),
    "snapping": lambda: diffprivlib_snapping(1.0, lower=-10.0, upper=10.0),
}
CLAIMS = {
    "laplace": PureDp(1.0),
    "laplace delta": ApproxDp(1.0, 0.1),
    "gaussian classic": ApproxDp(0.5, 1e-5),
    "gaussian analytic": ApproxDp(2.0, 1e-6),
    "gaussian discrete": ApproxDp(1.0, 1e-5),
    "geometric": PureDp(0.5),
    "exponential": PureDp(1.0),
    "permute and flip": PureDp(1.0),
    "snapping": PureDp(1.0),
}


@pytest.mark.parametrize("key", sorted(BUILDERS))
def test_claim_shape_and_seeding(key):
    target = BUILDERS[key]()
    claim = CLAIMS[key]
    assert target.claim == claim and target.claim_epsilon == claim.epsilon
    assert target.claim_delta == (claim.delta if isinstance(claim, ApproxDp) else 0.0)
    assert target.library == "diffprivlib" and target.reproducible
    d0, d1 = target.neighbours
    a = target(d1, np.random.default_rng(7), 50)
    assert a.shape == (50,) and target(d0, np.random.default_rng(7), 0).shape == (0,)
    np.testing.assert_array_equal(a, target(d1, np.random.default_rng(7), 50))  # a function of the seed
    assert not np.array_equal(a, target(d1, np.random.default_rng(8), 50))
    copy = pickle.loads(pickle.dumps(target))
    np.testing.assert_array_equal(a, copy(d1, np.random.default_rng(7), 50))


def test_a_generic_mechanism_and_bad_input():
    mech = mechanisms.Laplace(epsilon=0.5, sensitivity=1.0, random_state=3)
    target = diffprivlib_mechanism(mech, (0.0, 1.0), name="mine")
    assert target.claim == PureDp(0.5) and target.name == "mine"
    with pytest.raises(TypeError, match="mechanism"):
        diffprivlib_mechanism(object(), (0.0, 1.0))
    with pytest.raises(ValueError, match="data_argument"):
        diffprivlib_mechanism(mech, (0.0, 1.0), data_argument="utility")
    with pytest.raises(TypeError, match="neighbours"):
        diffprivlib_mechanism(mech, [0.0, 1.0])
    with pytest.raises(ValueError, match="candidates"):
        diffprivlib_exponential(1.0, candidates=1)
    with pytest.raises(ValueError, match="variant"):
        diffprivlib_gaussian(1.0, 1e-5, variant="staircase")


def test_runs_have_the_law_of_the_librarys_own_calls():
    """Seeded two-sample tests at level 1e-3 (a fresh seed would fail with probability 1e-3) of target runs against
    the library's own calls (random_state=RandomState(1)).  KS of 8000 runs of Laplace(epsilon=1); its twin with
    epsilon / 1.5 (scale times 1.5: sup |F - G| = 0.061 against a critical distance of 0.031) must be rejected,
    power above 0.9999.  Chi-square (4 indices) of 10^4 runs of the exponential mechanism; its twin with
    epsilon / 2 must be rejected, power 0.99999 (non-centrality 69, 3 degrees of freedom)."""
    rng = np.random.default_rng(0)
    own = mechanisms.Laplace(epsilon=1.0, sensitivity=1.0, random_state=np.random.RandomState(1))
    reference = np.array([own.randomise(0.0) for _ in range(8000)])
    assert stats.ks_2samp(diffprivlib_laplace(1.0)(0.0, rng, 8000), reference).pvalue > 1e-3
    assert stats.ks_2samp(diffprivlib_laplace(1 / 1.5)(0.0, rng, 8000), reference).pvalue < 1e-3
    utility = list(diffprivlib_exponential(1.0, candidates=4).neighbours[0])
    own = mechanisms.Exponential(epsilon=1.0, sensitivity=1.0, utility=utility, random_state=np.random.RandomState(1))
    reference = np.bincount([own.randomise() for _ in range(10_000)], minlength=4)
    for epsilon, same in ((1.0, True), (0.5, False)):
        counts = np.bincount(diffprivlib_exponential(epsilon, candidates=4)(utility, rng, 10_000), minlength=4)
        assert (stats.chi2_contingency(np.vstack([counts, reference]))[1] > 1e-3) == same, epsilon


def test_float_laplace_is_caught_with_float_bits():
    """Mironov's low-order-bit leak (CCS 2012) in diffprivlib's float Laplace: at 2 * 10^4 runs per side (seeded)
    the audit with float_bits finds a violation far above the claim, the default audit does not; Snapping,
    built against that leak, stays consistent with float_bits."""
    opts = dict(samples=20_000, seed=0, executor="serial", progress=False)
    bits = audit_target(diffprivlib_laplace(1.0), float_bits=True, **opts)
    plain = audit_target(diffprivlib_laplace(1.0), **opts)
    snapping = audit_target(diffprivlib_snapping(1.0, lower=-10.0, upper=10.0), float_bits=True, **opts)
    assert bits.verdict == "violation" and bits.epsilon_lower > 3.0
    assert plain.verdict == "consistent" and snapping.verdict == "consistent"
