"""Exact tests of dpaudit.accounting.pmf: δ(ε), ε(δ), pure ε and Gaussian-DP μ of a release from its two pmfs,
against closed forms (Gaussian, discrete Laplace), dpaudit's exact discrete Gaussian curve and dp-accounting's
PMF-based PLD."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import epsilon as account
from dpaudit.accounting.curves import gaussian_delta, gaussian_epsilon
from dpaudit.accounting.events import DiscreteGaussianDpEvent
from dpaudit.accounting.pmf import (
    pmf_delta,
    pmf_epsilon,
    pmf_gaussian_mu,
    pmf_is_gaussian_dp,
    pmf_pure_epsilon,
)


def _dg(sigma: float, width: int) -> np.ndarray:
    x = np.arange(-width, width + 1, dtype=float)
    w = np.exp(-x * x / (2 * sigma * sigma))
    return w / w.sum()


def _shift(p: np.ndarray, s: int) -> np.ndarray:
    """p moved right by s on a support padded with zeros (no wrap)."""
    return np.concatenate([np.zeros(s), p[: p.size - s]])


def test_discrete_gaussian_matches_the_exact_curve():
    """Exact: a discrete Gaussian at integer sensitivity against dpaudit's PLD accountant of the discrete
    Gaussian (Canonne, Kamath, Steinke, NeurIPS 2020; pessimistic, so only larger by its discretisation),
    padded so that no mass falls off the window."""
    sigma, sens = 4.0, 4
    p = np.concatenate([_dg(sigma, 200), np.zeros(sens)])
    q = _shift(p, sens)
    for delta in (1e-2, 1e-5, 1e-8):
        ours = pmf_epsilon(p, q, delta)
        pld = account(DiscreteGaussianDpEvent(sigma=sigma, sensitivity=sens), delta, accountant="pld")
        assert pld - 1e-3 <= ours <= pld * (1 + 1e-6)  # ours adds a 10^-9 round-off margin


def test_fine_discretised_gaussian_is_the_gaussian():
    """Exact: N_Z(0, 400²) at shift 400 has the continuous Gaussian's μ = 1 curve to 10^-5 (ε(δ), Balle & Wang)
    and, wrapped, its Gaussian-DP μ is found within the grid's 0.2% (never below 1 - 10^-6: the check is sound)."""
    p = np.concatenate([_dg(400.0, 4000), np.zeros(400)])
    q = _shift(p, 400)
    for delta in (1e-3, 1e-5):
        assert pmf_epsilon(p, q, delta) == pytest.approx(gaussian_epsilon(1.0, delta), rel=1e-5)
    assert pmf_delta(p, q, 2.0) == pytest.approx(gaussian_delta(1.0, 2.0), rel=1e-5)
    assert pmf_gaussian_mu(p, q) == math.inf  # the ends only one side reaches: no μ
    p = _dg(400.0, 4000)
    q = np.roll(p, 400)  # wrapped mod 8001 (10σ from the centre): a finite pure ε
    mu = pmf_gaussian_mu(p, q)
    assert 1.0 - 1e-6 <= mu <= 1.002
    assert pmf_is_gaussian_dp(p, q, mu) and not pmf_is_gaussian_dp(p, q, 0.99)


def test_pure_epsilon_of_discrete_laplace_is_its_scale():
    """Exact: DLap(λ) at shift s (padded support) has pure ε = s/λ, and δ(ε) = 0 from there on."""
    lam, s = 3.0, 2
    x = np.arange(-300, 301)
    p = np.exp(-np.abs(x) / lam)
    p = np.concatenate([p / p.sum(), np.zeros(s)])
    q = _shift(p, s)
    keep = (p > 0) & (q > 0)
    top = pmf_pure_epsilon(p[keep] / p[keep].sum(), q[keep] / q[keep].sum())
    assert top == pytest.approx(s / lam, rel=1e-8) and top >= s / lam
    assert pmf_pure_epsilon(p, q) == math.inf  # the ends only one side reaches
    assert pmf_delta(p[keep] / p[keep].sum(), q[keep] / q[keep].sum(), top) == 0.0


def test_agrees_with_dp_accounting_pmf_pld():
    """Exact: on a skewed pair, ε(δ) agrees with dp-accounting's PMF-based PLD
    (from_two_probability_mass_functions, pessimistic), which may only be larger by its discretisation."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(40))
    q = rng.dirichlet(np.ones(40))
    pld = pld_lib.from_two_probability_mass_functions(
        {i: math.log(v) for i, v in enumerate(p)},
        {i: math.log(v) for i, v in enumerate(q)},
        pessimistic_estimate=True,
        value_discretization_interval=1e-5,
        symmetric=False,
    )
    for delta in (0.05, 0.2):
        ours = pmf_epsilon(q, p, 0.0 + delta)  # both directions: at least dp-accounting's one direction
        theirs = pld.get_epsilon_for_delta(delta)
        assert ours >= theirs - 1e-4
    # one direction of ours is exactly theirs (the hockey-stick of the pair in dp-accounting's order)
    eps = 0.7
    one_way = float(np.maximum(p - math.exp(eps) * q, 0).sum())
    assert pld.get_delta_for_epsilon(eps) == pytest.approx(one_way, abs=1e-4)


def test_slack_is_added_on_the_safe_side():
    """Exact: the missing mass only raises δ, ε and the pure ε (which stays finite: the excess is pointwise)."""
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5])
    assert pmf_delta(p, q, 0.1, slack=1e-3) > pmf_delta(p, q, 0.1)
    assert pmf_pure_epsilon(p, q, slack=1e-3) > pmf_pure_epsilon(p, q) >= math.log(2.5)
    assert pmf_epsilon(p, q, 1e-6, slack=1e-3) > pmf_epsilon(p, q, 1e-6)
    assert pmf_epsilon(p, q, 1e-4, slack=1e-3) <= pmf_pure_epsilon(p, q, slack=1e-3)  # delta is 0 from the pure eps on
    assert pmf_epsilon(p, q, 0.0) == pytest.approx(math.log(2.5), rel=1e-8)


def test_mass_only_one_side_produces():
    """Exact: mass p puts where q has none is infinite loss: it stays in δ at every ε, so ε(δ) is inf
    below it and the pure ε and μ are inf."""
    p = np.array([0.1, 0.4, 0.5])
    q = np.array([0.0, 0.5, 0.5])
    assert pmf_delta(p, q, 1e3) == pytest.approx(0.1, rel=1e-6)
    assert pmf_epsilon(p, q, 0.05) == math.inf
    assert pmf_epsilon(p, q, 0.2) < 1.0
    assert pmf_pure_epsilon(p, q) == math.inf and pmf_gaussian_mu(p, q) == math.inf


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(p=np.array([0.5, 0.6]), q=np.array([0.5, 0.5])), "p must be"),
        (dict(p=np.array([0.5, 0.5]), q=np.array([1.0])), "p and q must be"),
        (dict(p=np.array([0.5, 0.5]), q=np.array([-0.1, 1.0])), "q must be"),
    ],
)
def test_bad_pmfs_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        pmf_delta(bad["p"], bad["q"], 1.0)


def test_bad_scalars_are_named():
    p = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="epsilon"):
        pmf_delta(p, p, -1.0)
    with pytest.raises(ValueError, match="slack"):
        pmf_delta(p, p, 1.0, slack=-1e-3)
    with pytest.raises(ValueError, match="delta"):
        pmf_epsilon(p, p, 1.5)
    with pytest.raises(ValueError, match="mu"):
        pmf_is_gaussian_dp(p, p, 0.0)


@settings(max_examples=60)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=2, max_value=30),
    st.floats(min_value=0.0, max_value=3.0),
)
def test_hockey_stick_properties(seed, size, eps):
    """Exact properties on random pmfs: δ(0) is the total variation distance, δ is symmetric in (p, q) and
    non-increasing in ε, ε(δ) meets its δ, and δ vanishes from the pure ε on."""
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(size)), rng.dirichlet(np.ones(size))
    assert pmf_delta(p, q, 0.0) == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-8)
    assert pmf_delta(p, q, eps) == pmf_delta(q, p, eps)
    assert pmf_delta(p, q, eps + 0.1) <= pmf_delta(p, q, eps)
    target = 0.5 * pmf_delta(p, q, eps)
    if target > 0:
        assert pmf_delta(p, q, pmf_epsilon(p, q, target)) <= target
    top = pmf_pure_epsilon(p, q)
    assert top >= np.abs(np.log(p / q)).max() and pmf_delta(p, q, top) == 0.0
