"""Exact accounting of DP-ConSE's single released views: the RCT lengths and the CATE estimate.

Exact tests only: closed forms, brute-force enumeration of small cases, numerical integration, and
dp-accounting's PLD (optimistic and pessimistic) as an independent bracket.
"""

import itertools
import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dpaudit.algorithms.conse.privacy import (
    cate_mixture_delta,
    cate_mixture_epsilon,
    lap_plus_pmf,
    lap_plus_shift_loss,
    laplace_shift_delta,
    rct_lengths_view_delta,
    rct_lengths_view_epsilon,
)


def _lap_plus_product_delta(eps: float, c: int, m: int, eps_prime: float) -> float:
    """Brute force: δ(ε') of M i.i.d. Lap+_ε centred at c against c + 1, both directions, support 0..c+120."""
    v = np.arange(0, c + 120)
    p, q = lap_plus_pmf(eps, c, v), lap_plus_pmf(eps, c + 1, v)
    out = 0.0
    for a, b in ((p, q), (q, p)):
        joint_a, joint_b = np.ones(1), np.ones(1)
        for _ in range(m):
            joint_a = np.outer(joint_a, a).ravel()
            joint_b = np.outer(joint_b, b).ravel()
        out = max(out, float(np.maximum(joint_a - math.exp(eps_prime) * joint_b, 0.0).sum()))
    return out


@pytest.mark.parametrize("eps,m", [(1.0, 2), (0.5, 3), (2.0, 2)])
def test_rct_lengths_view_bounds_every_centre_brute_force(eps, m):
    """Exact: for every centre c ≥ c_min (c_min..c_min+12) and several ε', the brute-force δ(ε') of the
    M lengths is at most the view bound (exact centres and the dominated tail: exact_centres 0 and 4),
    and from c_min = 20 on the bound is within 1e-3 of the brute force at c = c_min."""
    c_min = 3
    for eps_prime in (0.0, 0.3 * eps, 0.5 * eps * m - 0.1, 0.5 * eps * m + 0.05):
        exact = [_lap_plus_product_delta(eps, c, m, eps_prime) for c in range(c_min, c_min + 13)]
        for k in (0, 4, 64):
            assert max(exact) <= rct_lengths_view_delta(eps, c_min, m, eps_prime, exact_centres=k) + 1e-12
        assert rct_lengths_view_delta(eps, c_min, m, eps_prime) - max(exact) <= 1e-3
        far = rct_lengths_view_delta(eps, 20, m, eps_prime)
        assert _lap_plus_product_delta(eps, 20, m, eps_prime) <= far + 1e-12
        assert far - _lap_plus_product_delta(eps, 20, m, eps_prime) <= 1e-3


def test_rct_lengths_view_pure_limit_and_dp_accounting_bracket():
    """Exact: δ(ε') = 0 beyond M·λ(c_min) (pure composition, `lap_plus_shift_loss`); at δ = 1/n the view ε
    lies between dp-accounting's optimistic PLD of the M lengths at a large centre and M·λ(c_min)."""
    eps, c_min, m = 1.0, 6, 10
    pure = m * lap_plus_shift_loss(eps, c_min)
    assert rct_lengths_view_delta(eps, c_min, m, pure + 1e-9) <= 2e-12
    view = rct_lengths_view_epsilon(eps, c_min, m, 1 / 198)
    assert view == pytest.approx(4.1998, abs=1e-3) and view < pure
    v = np.arange(0, 200)
    c = 60
    lo = {int(x): math.log(p) for x, p in zip(v, lap_plus_pmf(eps, c, v)) if p > 0}
    up = {int(x): math.log(p) for x, p in zip(v, lap_plus_pmf(eps, c + 1, v)) if p > 0}
    optimistic = pld.from_two_probability_mass_functions(
        lo, up, pessimistic_estimate=False, symmetric=False
    ).self_compose(m)
    pessimistic = pld.from_two_probability_mass_functions(
        lo, up, pessimistic_estimate=True, symmetric=False
    ).self_compose(m)
    assert optimistic.get_epsilon_for_delta(1 / 198) <= view + 1e-9
    # the worst centre is c_min (truncation adds loss); the bound stays within 0.1 of the large-centre PLD
    assert view <= pessimistic.get_epsilon_for_delta(1 / 198) + 0.1


def test_rct_lengths_view_validates():
    with pytest.raises(ValueError, match="num_types"):
        rct_lengths_view_delta(1.0, 5, 0, 1.0)
    with pytest.raises(ValueError, match="c_min"):
        rct_lengths_view_delta(1.0, -1, 3, 1.0)
    with pytest.raises(ValueError, match="delta"):
        rct_lengths_view_epsilon(1.0, 5, 3, 0.0)


@pytest.mark.parametrize("b,s", [(1.0, 1.0), (0.5, 0.2), (2.0, 3.0)])
def test_laplace_shift_delta_matches_dp_accounting(b, s):
    """Exact: the closed-form Laplace profile lies within dp-accounting's optimistic/pessimistic bracket."""
    eta = s / b
    for e in (0.0, 0.25 * eta, 0.5 * eta, 0.9 * eta, 1.2 * eta):
        ours = float(laplace_shift_delta(eta, e))
        hi = pld.from_laplace_mechanism(b, s, pessimistic_estimate=True).get_delta_for_epsilon(e)
        lo = pld.from_laplace_mechanism(b, s, pessimistic_estimate=False).get_delta_for_epsilon(e)
        assert lo - 1e-9 <= ours <= hi + 1e-9


def test_cate_mixture_bounds_the_pair_by_integration():
    """Exact (numerical integration): the CATE pair's δ(ε') in both directions, integrated from the two
    mixture densities (`cate_pair_densities`), is below the mixture bound at every ε' checked; the
    densities carry all the mass but that of "no estimate"."""
    from dpaudit.audits.conse.entries import cate_pair_densities

    eps, t_min, arrivals = 1.0, 10.0, 100
    xs = np.linspace(-30.0, 30.0, 120_001)
    dx = xs[1] - xs[0]
    f0, f1, none = cate_pair_densities(eps, t_min, arrivals, xs)
    assert f0.sum() * dx + none == pytest.approx(1.0, abs=1e-4)
    assert f1.sum() * dx + none == pytest.approx(1.0, abs=1e-4)
    for e in (0.0, 0.5, 0.9, 1.5, 2.5):
        pair = max(np.maximum(f0 - math.exp(e) * f1, 0).sum(), np.maximum(f1 - math.exp(e) * f0, 0).sum()) * dx
        assert pair <= cate_mixture_delta(eps, t_min, arrivals, e) + 1e-4
    assert cate_mixture_epsilon(eps, t_min, arrivals, 0.005) == pytest.approx(1.9987, abs=1e-3)


def test_cate_mixture_brute_force_small_rct():
    """Exact: with T fixed near 2 (Lap+ at a large ε) the bound is the hand-enumerated average of the
    Laplace profile over the changed unit's arm count N_a = 1 + Bin(T - 1, 1/2)."""
    eps, t_min = 40.0, 2.0
    e = 10.0
    p = lap_plus_pmf(eps, t_min, np.arange(0, 5))
    expect = 0.0
    for t in (1, 2, 3, 4):
        for coins in itertools.product((0, 1), repeat=t - 1):
            n_a = 1 + sum(coins)
            expect += p[t] * 0.5 ** (t - 1) * float(laplace_shift_delta(eps * t / (2 * n_a), e))
    assert cate_mixture_delta(eps, t_min, 50, e) == pytest.approx(expect, rel=1e-6, abs=1e-12)


def test_cate_mixture_is_far_below_the_conditioned_bound():
    """The mixture bound replaces ε/(2ν) (ν = 0.01 at n = 200: 50) and is at most the worst component
    ε T/2 of the bulk of T (T ≤ 20): 1.999 at n = 200, α = 0.5."""
    assert cate_mixture_epsilon(1.0, 10.0, 100, 1 / 200) < 2.0


def _dp_accounting_phase1(params, n, m, c, pessimistic=True):
    """dp-accounting's PLD of the same components at one centre c: four (ε_i, δ_i) pairs and M Lap+ pairs."""
    from dp_accounting import dp_event  # noqa: F401  (dp-accounting's own composition below)
    from dp_accounting.pld import common

    from dpaudit.algorithms.conse.privacy import _phase1_events

    length, mean, _, _ = _phase1_events(params, n, 1 / (10 * n))
    v = np.arange(0, c + 120)
    lo = {int(x): math.log(p) for x, p in zip(v, lap_plus_pmf(params.epsilon, c, v)) if p > 0}
    up = {int(x): math.log(p) for x, p in zip(v, lap_plus_pmf(params.epsilon, c + 1, v)) if p > 0}
    out = pld.from_two_probability_mass_functions(
        lo, up, pessimistic_estimate=pessimistic, symmetric=False
    ).self_compose(m)
    for ev in (length, length, mean, mean):
        out = out.compose(
            pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(ev.epsilon, ev.delta), value_discretization_interval=1e-4
            )
        )
    return out


def test_context_phase1_epsilon_against_dp_accounting_and_basic_composition():
    """Exact: the composed ε of a phase-1 context change (n = 378, M = 10) is within [-0.01, +0.05] of
    dp-accounting's pessimistic PLD of the same components at the smallest centre c_min = 6 (its
    discretisation 1e-4 is pessimistic; the centres above c_min lose less), and below the basic
    composition of `conse_privacy` (7.16)."""
    from dpaudit.algorithms.conse.algorithm import ConSEParams
    from dpaudit.algorithms.conse.privacy import conse_privacy, context_phase1_epsilon

    params = ConSEParams(alpha=0.0, epsilon=1.0)
    n, m = 378, 10
    ours = context_phase1_epsilon(params, n, m, 1 / n)
    assert ours == pytest.approx(5.976, abs=2e-3)
    assert ours < conse_privacy(params, n, m).implied["context_phase1"].epsilon
    c_min = math.ceil(math.log(n))
    pes = _dp_accounting_phase1(params, n, m, c_min, True).get_epsilon_for_delta(1 / n)
    assert pes - 0.01 <= ours <= pes + 0.05
    with pytest.raises(ValueError, match="horizon"):
        context_phase1_epsilon(params, 1, m, 0.1)
