"""The bandit papers' statements about Cheu et al.'s shuffled bit sum: eq. 127's parameters, the claimed ε,
the statement on the real count range, and P_GD built with them (Chowdhury & Zhou (ICML 2022), Thm C.1;
Sarmasarkar (arXiv), App. S eq. 127 and App. T Alg. 7). Exact tests only."""

import math

import dp_accounting
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit.mechanisms as mechanisms
from dpaudit import accounting
from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.algorithms.shuffle_claims import (
    bit_sum_protocol,
    cheu_claimed_epsilon,
    cheu_parameters,
    claimed_epsilon,
    claimed_event,
    corrected_epsilon,
    pgd_claimed_event,
    pgd_theorem_event,
    pvec_protocols,
    shuffle_gradient_descent,
    theorem_event,
)
from dpaudit.mechanisms.shuffle_gd import ShuffleGradientDescent, pgd_iterations, pgd_round_privacy
from dpaudit.mechanisms.vector_sum import BitSumProtocol


def test_cheu_parameters_eq_127():
    g, b, p = cheu_parameters(1.0, 1e-3, 20, 5)
    assert (g, p) == (9, 0.25)  # ceil(max(2 sqrt(20) = 8.94, 5, 4))
    assert b == math.ceil(24e4 * 81 * math.log(4 * 26 / 1e-3) ** 2 / 20)
    assert cheu_parameters(0.5, 1e-3, 4, 10)[0] == 10
    assert cheu_parameters(0.5, 1e-3, 1, 1)[0] == 4


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.05, 15.0), delta=st.floats(1e-9, 0.49), n=st.integers(1, 10**5), d=st.integers(1, 20))
def test_claimed_epsilon_inverts_the_parameters(eps, delta, n, d):
    g, b, _ = cheu_parameters(eps, delta, n, d)
    back = cheu_claimed_epsilon(g, b, n, d, delta)
    assert back <= eps * (1 + 1e-12)  # b rounded up: never a larger claimed epsilon
    assert back >= eps * math.sqrt(1 - 1 / b) * (1 - 1e-12)


def test_claim_range_is_enforced():
    with pytest.raises(ValueError, match="epsilon"):
        cheu_parameters(16.0, 1e-3, 10, 2)
    with pytest.raises(ValueError, match="delta"):
        cheu_parameters(1.0, 0.6, 10, 2)
    with pytest.raises(ValueError, match="epsilon"):
        cheu_claimed_epsilon(9, 1, 20, 5, 1e-3)  # b far too small: no guarantee
    with pytest.raises(ValueError, match="g must"):
        cheu_claimed_epsilon(3, 10**9, 20, 5, 1e-3)


def test_claimed_and_corrected_events():
    proto = bit_sum_protocol(1.0, 1e-3, 20, 5)
    assert claimed_event(proto, 5, 1e-3).epsilon <= 1.0
    assert corrected_epsilon(proto, 5, 1e-3) == pytest.approx(2 * claimed_epsilon(proto, 5, 1e-3))
    assert theorem_event(proto, 5, 1e-3) == EpsilonDeltaDpEvent(corrected_epsilon(proto, 5, 1e-3), 1e-3)
    norm = bit_sum_protocol(1.0, 1e-3, 20, 5, range="normalized")
    assert corrected_epsilon(norm, 5, 1e-3) == pytest.approx(claimed_epsilon(norm, 5, 1e-3))
    assert (proto.count_sensitivity(), norm.count_sensitivity()) == (18, 9)
    no_noise = BitSumProtocol(20, 5, 9, 0)
    assert no_noise.event(5, 1e-3) == theorem_event(no_noise, 5, 1e-3) == dp_accounting.NonPrivateDpEvent()
    with pytest.raises(ValueError, match="b must"):
        claimed_epsilon(no_noise, 5, 1e-3)
    with pytest.raises(ValueError, match="p = 1/4"):
        claimed_epsilon(BitSumProtocol(20, 5, 9, proto.b, p=0.3), 5, 1e-3)


def test_pvec_protocols_for_a_batch():
    vec, mat = pvec_protocols(1.0, 0.1, 20, 5)
    g, b, p = cheu_parameters(1.0, 0.1, 20, 5)
    assert (vec.num_labels, mat.num_labels) == (5, 15)
    assert (vec.g, vec.b, vec.p, vec.num_users) == (mat.g, mat.b, mat.p, mat.num_users) == (g, b, p, 20)


def test_theorem_sized_noise_is_accountable():
    # eq. 127's b (~ 10^8 here) is beyond any enumeration; approx reads the exact tails, and the
    # protocol is far more private than the theorem says
    proto = bit_sum_protocol(1.0, 1e-3, 20, 5)
    assert "approx" in accounting.supporting_accountants(proto.event())
    exact = accounting.epsilon(proto.event(), 1e-6)
    assert 0 < exact < claimed_epsilon(proto, 5, 1e-3) / 10


def test_shuffle_gradient_descent_uses_eq_127_at_the_round_budget():
    pgd = shuffle_gradient_descent(200, 3, 1.0, 1e-3, lipschitz=1.0, radius=1.0, iterations=7)
    eps_it, delta_it = pgd_round_privacy(1.0, 1e-3, 7)
    assert pgd.protocol == bit_sum_protocol(eps_it, delta_it, 200, 3, bound=1.0)
    assert pgd.iterations == 7 and pgd.round_privacy == (eps_it, delta_it)
    default = shuffle_gradient_descent(1000, 5, 1.0, 1e-3, lipschitz=2.0, radius=1.0)
    assert default.iterations == pgd_iterations(1.0, 1e-3, 1000, 5) and default.protocol.bound == 2.0
    given_proto = BitSumProtocol(200, 3, 9, 4)
    assert (
        shuffle_gradient_descent(200, 3, 1.0, 1e-3, 1.0, 1.0, iterations=7, protocol=given_proto).protocol
        is given_proto
    )
    with pytest.raises(ValueError, match="lipschitz"):
        shuffle_gradient_descent(200, 3, 1.0, 1e-3, lipschitz=0.0, radius=1.0, iterations=7)
    with pytest.raises(ValueError, match="protocol is required"):
        ShuffleGradientDescent(200, 3, 1.0, 1e-3, lipschitz=1.0, radius=1.0, iterations=7)


def test_pgd_claimed_and_theorem_events_compose_the_rounds():
    pgd = shuffle_gradient_descent(200, 3, 1.0, 1e-3, lipschitz=1.0, radius=1.0, iterations=7)
    delta_it = pgd.round_privacy[1]
    assert pgd_claimed_event(pgd) == dp_accounting.SelfComposedDpEvent(claimed_event(pgd.protocol, 3, delta_it), 7)
    assert pgd_theorem_event(pgd) == dp_accounting.SelfComposedDpEvent(theorem_event(pgd.protocol, 3, delta_it), 7)


def test_mechanisms_no_longer_carry_the_papers_claims():
    """The shuffled bit sum in dpaudit.mechanisms is Cheu et al.'s mechanism for any (g, b, p); the papers'
    eq. 127 and claimed ε are in dpaudit.algorithms.shuffle_claims."""
    import dpaudit.mechanisms.vector_sum as vector_sum

    for name in ("cheu_parameters", "cheu_claimed_epsilon", "pvec_protocols", "CHEU_CONSTANT"):
        assert not hasattr(mechanisms, name) and not hasattr(vector_sum, name), name
    for method in ("from_privacy", "claimed_epsilon", "corrected_epsilon", "claimed_event", "theorem_event"):
        assert not hasattr(BitSumProtocol, method), method
    for method in ("claimed_event", "theorem_event"):
        assert not hasattr(ShuffleGradientDescent, method), method
