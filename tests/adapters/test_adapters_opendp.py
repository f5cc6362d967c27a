"""OpenDP adapters: claims read from OpenDP's own maps, batched runs of the scalar measurement's law, and a small
audit.  OpenDP draws from the operating system's entropy and cannot be seeded, so the statistical tests here are
not bit-reproducible: each states its false-failure rate per run."""

import pickle

import numpy as np
import pytest
from scipy import stats

dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed: pip install 'dpaudit[opendp]'")

from dpaudit.accounting.guarantees import PureDp, Zcdp  # noqa: E402
from dpaudit.adapters import (  # noqa: E402
    audit_target,
    opendp_discrete_gaussian,
    opendp_discrete_laplace,
    opendp_gaussian,
    opendp_laplace,
    opendp_measurement,
    opendp_noisy_max,
)

dp.enable_features("contrib")
FLOAT = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
INT = dp.atom_domain(T=int), dp.absolute_distance(T=int)
SCORES = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)


def test_claims_are_opendps_maps():
    assert opendp_laplace(2.0, sensitivity=3.0).claim == PureDp(dp.m.make_laplace(*FLOAT, scale=2.0).map(3.0))
    assert opendp_discrete_laplace(2.0, sensitivity=3).claim == PureDp(dp.m.make_laplace(*INT, scale=2.0).map(3))
    assert opendp_laplace(2.0).claim_epsilon == 0.5 and opendp_laplace(2.0).claim_delta == 0.0
    noisy_max = dp.m.make_noisy_max(*SCORES, dp.max_divergence(), scale=2.0)
    assert opendp_noisy_max(2.0).claim == PureDp(noisy_max.map(1.0)) == PureDp(1.0)
    for build, inputs in ((opendp_gaussian, FLOAT), (opendp_discrete_gaussian, INT)):
        target = build(2.0, delta=1e-7)
        d_in = 1.0 if inputs is FLOAT else 1
        gaussian = dp.m.make_gaussian(*inputs, scale=2.0)
        assert target.claim == Zcdp(gaussian.map(d_in)) and target.claim_rho == 0.125
        # the (epsilon, delta) point: OpenDP's own conversion gives the same epsilon (both CKS 2020, Prop. 12)
        own_epsilon, own_delta = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gaussian), 1e-7).map(d_in)
        assert target.claim_delta == own_delta == 1e-7
        assert target.claim_epsilon == pytest.approx(own_epsilon, rel=1e-9)


def test_a_generic_measurement_and_bad_input():
    target = opendp_measurement(dp.m.make_laplace(*FLOAT, scale=4.0), 2.0, (0.0, 2.0), name="laplace 4")
    assert target.claim == PureDp(0.5) and target.name == "laplace 4" and not target.reproducible
    assert target.library == "opendp" and target.version.count(".") >= 1
    with pytest.raises(TypeError, match="measurement"):
        opendp_measurement(lambda x: x, 1.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="output measure"):  # a privacy profile has no single point to read
        opendp_measurement(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*FLOAT, scale=1.0)), 1.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="delta"):
        opendp_measurement(dp.m.make_gaussian(*FLOAT, scale=1.0), 1.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="scale"):
        opendp_laplace(0.0)
    with pytest.raises(ValueError, match="candidates"):
        opendp_noisy_max(1.0, candidates=1)


@pytest.mark.parametrize(
    "build, dtype",
    [
        (lambda: opendp_laplace(1.0, chunk=2), np.floating),
        (lambda: opendp_discrete_laplace(1.0, chunk=2), np.integer),
        (lambda: opendp_noisy_max(1.0, candidates=3, chunk=2), np.integer),
    ],
)
def test_shapes_across_chunks(build, dtype):
    target = build()
    rng = np.random.default_rng(0)
    d0 = target.neighbours[0]
    for size in (0, 1, 2, 5):
        assert target(d0, rng, size).shape == (size,)
    out = target(np.asarray(d0), rng, 3)  # numpy inputs are converted to what OpenDP accepts
    assert out.shape == (3,) and np.issubdtype(out.dtype, dtype)


def test_pickles_as_its_measurement():
    for target in (opendp_laplace(1.0), opendp_noisy_max(1.0, candidates=3, chunk=4)):
        copy = pickle.loads(pickle.dumps(target))
        assert copy.claim == target.claim and copy(target.neighbours[1], np.random.default_rng(0), 6).shape == (6,)


def test_vector_batch_has_the_scalar_law():
    """Two-sample KS of 4000 batched runs (vector domain) against 4000 scalar calls of make_laplace(scale=1),
    rejected at p < 1e-3: the false-failure rate is 1e-3 per run (unseeded).  The twin, batched runs at scale 2,
    must be rejected: sup |F_1 - F_2| = 1/8 (at x = 2 log 2) against a critical distance of 0.044, a miss
    below 1e-9."""
    scalar = dp.m.make_laplace(*FLOAT, scale=1.0)
    reference = np.array([scalar(0.0) for _ in range(4000)])
    rng = np.random.default_rng(0)
    assert stats.ks_2samp(opendp_laplace(1.0)(0.0, rng, 4000), reference).pvalue > 1e-3
    assert stats.ks_2samp(opendp_laplace(2.0)(0.0, rng, 4000), reference).pvalue < 1e-3


def test_composition_batch_has_the_scalar_law():
    """Chi-square (10 cells) of 4000 composed runs of noisy max (scale 1, scores (1, 0, ..., 0)) against 4000
    single calls, rejected at p < 1e-3: false-failure rate 1e-3 per run.  The twin at scale 1.5 moves P(index 0)
    from 0.269 to 0.195 (non-centrality 62 for 9 degrees of freedom): rejected with probability 0.9995."""
    single = dp.m.make_noisy_max(*SCORES, dp.max_divergence(), scale=1.0)
    d0 = opendp_noisy_max(1.0).neighbours[0]
    reference = np.bincount([single(list(d0)) for _ in range(4000)], minlength=10)
    rng = np.random.default_rng(0)
    for scale, same in ((1.0, True), (1.5, False)):
        counts = np.bincount(opendp_noisy_max(scale)(d0, rng, 4000), minlength=10)
        p = stats.chi2_contingency(np.vstack([counts, reference]))[1]
        assert (p > 1e-3) == same, (scale, p)


def test_laplace_audit_is_consistent():
    """OpenDP's float Laplace resists Mironov's low-order-bit attack: with float_bits the audit at 2 * 10^4
    runs per side stays at or below the claim.  Its bound is valid at confidence 0.999, so the false-failure
    rate (a bound above the true epsilon = the claim) is at most 1e-3 per run (unseeded)."""
    target = opendp_laplace(1.0)
    result = audit_target(
        target, samples=20_000, seed=0, float_bits=True, confidence=0.999, executor="serial", progress=False
    )
    assert result.verdict == "consistent" and 0.5 < result.epsilon_lower <= 1.0
