"""dpaudit's accountants behind dp-accounting's PrivacyAccountant interface, and
dp_accounting.calibrate_dp_mechanism run with them. Every check here is deterministic (no sampling):
the calibrated noise is checked against closed-form privacy profiles, so an optimistic answer fails."""

import math

import dp_accounting as dpa
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy.stats import norm

from dpaudit import accounting as A
from dpaudit.accounting import calibration
from dpaudit.accounting.calibration import calibrate, calibrate_parameter
from dpaudit.accounting.privacy_accountant import PrivacyAccountant, common_relation, leaf_relations

R = dpa.NeighboringRelation


def gaussian_delta(mu: float, eps: float) -> float:
    """Exact delta(eps) of a Gaussian mechanism with mu = sensitivity/sigma (Balle, Wang, "Improving
    the Gaussian mechanism", ICML 2018, Thm 8); k releases compose to mu sqrt(k) (Dong, Roth, Su,
    "Gaussian differential privacy", JRSS-B 2022, Cor. 3.3)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def laplace_delta(eps0: float, eps: float) -> float:
    """Exact delta(eps) of one Laplace release of pure epsilon eps0: 1 - exp((eps - eps0)/2) for
    eps < eps0, the hockey-stick divergence of two Laplace laws one sensitivity apart (the Laplace
    privacy profile of Balle, Barthe, Gaboardi, "Privacy profiles and amplification by
    subsampling", J. Privacy and Confidentiality 2020)."""
    return max(0.0, -math.expm1((eps - eps0) / 2))


def _gaussians(k):
    return lambda s: dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), k)


def test_is_a_dp_accounting_accountant_and_agrees_with_epsilon():
    event = dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.LaplaceDpEvent(5.0)])
    acct = PrivacyAccountant("pld")
    assert isinstance(acct, dpa.PrivacyAccountant)
    assert acct.neighboring_relation is R.ADD_OR_REMOVE_ONE  # dp-accounting's default
    assert isinstance(acct.ledger, dpa.NoOpDpEvent) and acct.get_epsilon(1e-5) == 0.0
    assert acct.compose(event, 3) is acct
    assert acct.ledger == dpa.SelfComposedDpEvent(event, 3)
    assert acct.get_epsilon(1e-5) == A.epsilon(dpa.SelfComposedDpEvent(event, 3), 1e-5, "pld")
    assert acct.get_delta(1.0) == A.delta(dpa.SelfComposedDpEvent(event, 3), 1.0, "pld")
    assert A.PrivacyAccountant is PrivacyAccountant


def test_options_reach_the_named_accountant():
    coarse = PrivacyAccountant("pld", value_discretization_interval=1e-2).compose(dpa.LaplaceDpEvent(1.0), 20)
    fine = PrivacyAccountant("pld").compose(dpa.LaplaceDpEvent(1.0), 20)
    assert coarse.get_epsilon(1e-6) > fine.get_epsilon(1e-6)


@pytest.mark.parametrize(
    "event, relations",
    [
        (dpa.GaussianDpEvent(1.0), set(R)),
        (dpa.RandomizedResponseDpEvent(0.5, 2), {R.REPLACE_ONE, R.REPLACE_SPECIAL}),
        (A.ShuffledDpEvent(1.0, 1000), {R.REPLACE_ONE, R.REPLACE_SPECIAL}),
        (dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), {R.ADD_OR_REMOVE_ONE}),
        (dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)), {R.REPLACE_ONE}),
    ],
)
def test_neighbouring_relation_is_honest(event, relations):
    assert leaf_relations(event) == relations
    for rel in R:
        acct = PrivacyAccountant("best", rel)
        assert acct.supports(event) == (rel in relations)
        if rel not in relations:
            with pytest.raises(dpa.UnsupportedEventError, match=rel.name) as err:
                acct.compose(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), event]))
            assert isinstance(err.value, ValueError)
            assert isinstance(acct.ledger, dpa.NoOpDpEvent) and acct.get_epsilon(1e-5) == 0.0  # nothing changed


def test_refusal_by_the_accountant_is_dp_accountings_error_and_changes_nothing():
    acct = PrivacyAccountant("pure").compose(dpa.LaplaceDpEvent(2.0))
    assert not acct.supports(dpa.GaussianDpEvent(1.0))
    with pytest.raises(dpa.UnsupportedEventError):
        acct.compose(dpa.GaussianDpEvent(1.0))
    assert acct.ledger == dpa.LaplaceDpEvent(2.0) and acct.get_epsilon(0.0) == 0.5


def test_bad_input():
    with pytest.raises(TypeError, match="neighboring_relation"):
        PrivacyAccountant("pld", "replace-one")
    with pytest.raises(ValueError, match="accountant"):
        PrivacyAccountant("moments")
    with pytest.raises(TypeError, match="DpEvent"):
        PrivacyAccountant().compose(1.0)
    acct = PrivacyAccountant("rdp")
    with pytest.raises(ValueError, match="count"):
        acct.compose(dpa.GaussianDpEvent(1.0), -1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        acct.compose(dpa.GaussianDpEvent(0.0))
    assert isinstance(acct.ledger, dpa.NoOpDpEvent)
    assert acct.compose(dpa.GaussianDpEvent(1.0), 0).get_epsilon(1e-5) == 0.0


def test_common_relation():
    assert common_relation(dpa.GaussianDpEvent(1.0)) is R.REPLACE_ONE
    assert common_relation(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0))) is R.ADD_OR_REMOVE_ONE
    mixed = dpa.ComposedDpEvent(
        [dpa.RandomizedResponseDpEvent(0.5, 2), dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0))]
    )
    with pytest.raises(ValueError, match="no common neighbouring relation"):
        common_relation(mixed)


K, EPS, DELTA = 20, 1.0, 1e-5
BRACKET = dpa.ExplicitBracketInterval(2.0, 40.0)


GAUSSIANS = _gaussians(K)


def _calibrated(make_accountant, make_event=GAUSSIANS, bracket=BRACKET):
    return dpa.calibrate_dp_mechanism(make_accountant, make_event, EPS, DELTA, bracket_interval=bracket, tol=1e-6)


@pytest.fixture(scope="module")
def exact_sigma():
    """The exact smallest sigma for K Gaussian releases (bisection on the closed form, to 1e-12)."""
    lo, hi = 2.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if gaussian_delta(math.sqrt(K) / mid, EPS) <= DELTA else (mid, hi)
    return hi


@pytest.mark.parametrize("name", ["best", "pld", "rdp", "zcdp"])
def test_calibrate_dp_mechanism_gaussian_is_never_optimistic(name, exact_sigma):
    sigma = _calibrated(lambda: PrivacyAccountant(name))
    assert gaussian_delta(math.sqrt(K) / sigma, EPS) <= DELTA  # the true guarantee meets the target
    assert sigma >= exact_sigma
    assert PrivacyAccountant(name).compose(_gaussians(K)(sigma)).get_epsilon(DELTA) <= EPS
    # the same answer as dpaudit's own calibration, to the tolerances of the two searches
    assert sigma == pytest.approx(calibrate_parameter("gaussian", EPS, DELTA, count=K, accountant=name), rel=2e-4)


def test_gaussian_against_dp_accountings_accountants(exact_sigma):
    dpa_rdp = _calibrated(rdp_privacy_accountant.RdpAccountant)
    dpa_pld = _calibrated(pld_privacy_accountant.PLDAccountant)
    ours_rdp = _calibrated(lambda: PrivacyAccountant("rdp"))
    ours_pld = _calibrated(lambda: PrivacyAccountant("pld"))
    assert exact_sigma <= ours_rdp <= dpa_rdp * (1 + 1e-6)  # more orders: never looser than dp-accounting's RDP
    assert exact_sigma <= ours_pld <= dpa_pld * (1 + 1e-6)  # exact Gaussian profile: never looser than its PLD
    assert ours_pld == pytest.approx(exact_sigma, rel=1e-6)


def test_laplace_against_the_exact_profile_and_dp_accountings_pld():
    make = lambda b: dpa.LaplaceDpEvent(b)  # noqa: E731
    bracket = dpa.ExplicitBracketInterval(0.2, 5.0)
    ours = _calibrated(lambda: PrivacyAccountant("pld"), make, bracket)
    theirs = _calibrated(pld_privacy_accountant.PLDAccountant, make, bracket)
    assert laplace_delta(1.0 / ours, EPS) <= DELTA
    assert ours == pytest.approx(theirs, rel=1e-3)
    pure = _calibrated(
        lambda: PrivacyAccountant("pure"),
        lambda b: dpa.SelfComposedDpEvent(make(b), 10),
        dpa.ExplicitBracketInterval(1.0, 50.0),
    )
    assert 10 / pure <= EPS and pure == pytest.approx(10 / EPS, rel=1e-5)


def test_calibrate_returns_the_safe_end_when_the_search_returns_an_unsafe_value(monkeypatch):
    """A value that misses the target is never returned, whatever the search gives back."""
    monkeypatch.setattr(calibration.dp_accounting, "calibrate_dp_mechanism", lambda *a, **k: math.log(2.0))
    assert calibrate(_gaussians(K), EPS, DELTA, lower=2.0, upper=40.0, accountant="pld") == 40.0
    monkeypatch.setattr(calibration.dp_accounting, "calibrate_dp_mechanism", lambda *a, **k: math.log(30.0))
    assert calibrate(_gaussians(K), EPS, DELTA, lower=2.0, upper=40.0, accountant="pld") == pytest.approx(30.0)
