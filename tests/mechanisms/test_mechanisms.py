"""Mechanism objects: their events give the epsilon the papers state, checked against the exact
privacy loss computed from the pmf/density (not only through an accountant)."""

from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from scipy import special, stats

from dpaudit.accounting.events import DiscreteGaussianDpEvent, SkellamDpEvent
from dpaudit.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponseMechanism,
    SkellamMechanism,
)


def dlap_logpmf(x: np.ndarray, scale: float) -> np.ndarray:
    return math.log(math.tanh(1 / (2 * scale))) - np.abs(x) / scale


def max_loss(logp: np.ndarray, logq: np.ndarray) -> float:
    return float(np.max(np.abs(logp - logq)))


def renyi(logp: np.ndarray, logq: np.ndarray, alpha: float) -> float:
    """D_alpha(P || Q) = log(sum p^alpha q^(1-alpha)) / (alpha - 1), by summation."""
    return float(special.logsumexp(alpha * logp + (1 - alpha) * logq) / (alpha - 1))


@pytest.mark.parametrize("eps,g", [(1.0, 8), (0.5, 16), (0.1, 32), (Fraction(1, 3), 4)])
def test_discrete_laplace_g_over_eps_at_shift_g_is_exactly_eps(eps, g):
    """Chowdhury & Zhou (ICLR 2023), Thm 1 / Fact 3: DLap(g/eps) on a sum of sensitivity g is eps-DP, tightly."""
    mech = DiscreteLaplaceMechanism.for_epsilon(eps, g)
    assert mech.scale == Fraction(g) / Fraction(eps)
    xs = np.arange(-400 * g, 400 * g + 1)
    scale = float(mech.scale)
    loss = max_loss(dlap_logpmf(xs, scale), dlap_logpmf(xs - g, scale))
    assert loss == pytest.approx(float(eps), rel=1e-12)
    assert mech.pure_epsilon(g) == pytest.approx(float(eps), rel=1e-15)
    event = mech.event(g)
    assert isinstance(event, dp_event.DiscreteLaplaceDpEvent)
    assert event.sensitivity == g and event.noise_parameter * g == pytest.approx(float(eps))
    acc = PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(event)
    assert acc.get_epsilon(0.0) == pytest.approx(float(eps), rel=1e-3)


def test_laplace_event_and_exact_loss():
    mech = LaplaceMechanism.for_epsilon(0.7, 2.0)
    xs = np.linspace(-60, 60, 20001)
    logp = stats.laplace.logpdf(xs, scale=mech.scale)
    logq = stats.laplace.logpdf(xs - 2.0, scale=mech.scale)
    assert max_loss(logp, logq) == pytest.approx(0.7, rel=1e-9)
    assert mech.pure_epsilon(2.0) == pytest.approx(0.7)
    assert mech.event(2.0) == dp_accounting.LaplaceDpEvent(mech.scale / 2.0)


def test_gaussian_event_matches_exact_hockey_stick():
    """delta(eps) of N(0, s^2) shifted by D, by integration, against dp-accounting on the event."""
    mech = GaussianMechanism(3.0)
    event = mech.event(2.0)
    assert event == dp_accounting.GaussianDpEvent(1.5)
    xs = np.linspace(-40, 42, 400_001)
    p, q = stats.norm.pdf(xs, 2.0, 3.0), stats.norm.pdf(xs, 0.0, 3.0)
    eps = 0.5
    delta_exact = np.trapezoid(np.maximum(p - math.exp(eps) * q, 0.0), xs)
    acc = PLDAccountant()
    acc.compose(event)
    assert acc.get_delta(eps) == pytest.approx(delta_exact, rel=2e-3)


def test_discrete_gaussian_event_rho_dominates_exact_renyi():
    """CKS 2020 Thm 4: adding N_Z(0, s^2) at sensitivity D is D^2/(2 s^2)-zCDP."""
    mech = DiscreteGaussianMechanism(Fraction(5, 2))
    event = mech.event(2)
    assert event == DiscreteGaussianDpEvent(2.5, 2.0)
    rho = mech.rho(2)
    assert rho == pytest.approx(4 / (2 * 6.25))
    xs = np.arange(-200, 201)
    logp = -(xs**2) / (2 * 6.25)
    logq = -((xs - 2) ** 2) / (2 * 6.25)
    norm = special.logsumexp(logp)
    for alpha in (1.5, 2, 5, 20):
        d = renyi(logp - norm, logq - norm, alpha)
        assert d <= rho * alpha + 1e-12
        assert d >= 0.97 * rho * alpha  # nearly tight at integer shifts


@pytest.mark.parametrize("eps,s,n,alpha,exact", [(0.5, 1, 16, 8, 0.873), (1.0, 1, 64, 2, 0.991)])
def test_skellam_event_lemma3_dominates_exact_renyi(eps, s, n, alpha, exact):
    """Chowdhury & Zhou (ICLR 2023), Thm 2 (checked values): exact RDP of Sk(0, g^2/eps^2) shifted by g <= Lemma 3."""
    g = math.ceil(s * eps * math.sqrt(n))
    var = g**2 / eps**2
    mech = SkellamMechanism(var)
    event = mech.event(g)
    assert event == SkellamDpEvent(var, float(g), float(g))
    half = int(30 * math.sqrt(var)) + 50  # tails beyond carry < 1e-150 of the mass
    xs = np.arange(-half, half + 1)
    logp = stats.skellam.logpmf(xs, var / 2, var / 2)
    logq = stats.skellam.logpmf(xs - g, var / 2, var / 2)
    d = renyi(logp, logq, alpha)
    assert d == pytest.approx(exact, abs=1e-3)
    lemma3 = alpha * g**2 / (2 * var) + min(((2 * alpha - 1) * g**2 + 6 * g) / (4 * var**2), 3 * g / (2 * var))
    assert d <= lemma3


@pytest.mark.parametrize("eps,k", [(1.0, 2), (0.5, 5), (2.0, 3)])
def test_randomized_response_event_gives_eps(eps, k):
    mech = RandomizedResponseMechanism(eps, k)
    event = mech.event()
    p = event.noise_parameter
    assert event.num_buckets == k
    # dp-accounting semantics: true bucket w.p. 1 - p + p/k, each other w.p. p/k
    assert math.log((1 - p + p / k) / (p / k)) == pytest.approx(eps)
    values = np.zeros(200_000, dtype=int)
    out = mech.release(np.random.default_rng(3), values)
    keep = (out == 0).mean()
    # binomial standard error < 0.0012; 6 s.e. bound: false-failure rate about 2e-9
    assert keep == pytest.approx(1 - p + p / k, abs=0.007)


def test_release_adds_noise_of_the_values_shape():
    rng = np.random.default_rng(0)
    v = np.arange(12).reshape(3, 4)
    for mech in (DiscreteLaplaceMechanism(2), DiscreteGaussianMechanism(2), SkellamMechanism(4.0)):
        out = mech.release(rng, v)
        assert out.shape == v.shape and out.dtype == np.int64
    for mech in (LaplaceMechanism(1.0), GaussianMechanism(1.0)):
        assert mech.release(rng, v.astype(float)).shape == v.shape


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="scale"):
        DiscreteLaplaceMechanism(0)
    with pytest.raises(ValueError, match="epsilon"):
        DiscreteLaplaceMechanism.for_epsilon(-1.0, 2)
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplaceMechanism(2).event(0)
    with pytest.raises(TypeError, match="sensitivity"):
        DiscreteLaplaceMechanism(2).event(1.5)
    with pytest.raises(ValueError, match="sigma"):
        DiscreteGaussianMechanism(float("nan"))
    with pytest.raises(ValueError, match="variance"):
        SkellamMechanism(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        RandomizedResponseMechanism(0.0)
    with pytest.raises(ValueError, match="k must"):
        RandomizedResponseMechanism(1.0, 1)
    with pytest.raises(TypeError, match="values"):
        DiscreteLaplaceMechanism(2).release(np.random.default_rng(0), [0.5])


def test_accountant_reads_the_same_epsilon_from_the_events():
    """dpaudit.accounting.epsilon on each pure mechanism's event gives its stated epsilon."""
    from dpaudit import accounting

    assert accounting.epsilon(DiscreteLaplaceMechanism.for_epsilon(0.5, 8).event(8), delta=0.0) == pytest.approx(
        0.5, rel=1e-6
    )
    assert accounting.epsilon(RandomizedResponseMechanism(1.3, 4).event(), delta=0.0) == pytest.approx(1.3, rel=1e-6)
    assert accounting.epsilon(LaplaceMechanism.for_epsilon(0.8, 2.0).event(2.0), delta=0.0) == pytest.approx(
        0.8, rel=1e-6
    )
