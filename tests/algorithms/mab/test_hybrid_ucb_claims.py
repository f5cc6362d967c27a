"""Hybrid-UCB's tree accounting, claimed vs corrected (Hu, Huang, Mehta, Alg. 4, Thm 5 / App. E.3.1; exact tests)."""

import pytest

from dpaudit.algorithms.mab.hybrid_ucb import hybrid_ucb_node_scale, hybrid_ucb_tree_events


def test_hybrid_ucb_claimed_vs_corrected():
    # Hu, Huang, Mehta (arXiv:2102.07929), Alg. 4 and Thm 5: tree r, node Lap(r / (0.5 eps)); claimed 0.5 eps, corrected 0.5 eps (r+1)/r
    for r in (1, 2, 5):
        assert hybrid_ucb_node_scale(1.0, r) == 2.0 * r
        claimed, corrected = hybrid_ucb_tree_events(1.0, r)

        def pure(ev):
            return (ev.count if hasattr(ev, "count") else 1) / (
                ev.event if hasattr(ev, "count") else ev
            ).noise_multiplier

        assert pure(claimed) == pytest.approx(0.5)
        assert pure(corrected) == pytest.approx(0.5 * (r + 1) / r)


def test_events_read_through_the_accounting_engine():
    from dpaudit import accounting

    claimed, corrected = hybrid_ucb_tree_events(1.0, 1)
    assert accounting.epsilon(claimed, 0.0) == pytest.approx(0.5)
    assert accounting.epsilon(corrected, 0.0) == pytest.approx(1.0)  # 1.5 eps with the array part


def test_node_scale_rejects_a_bad_tree_index():
    with pytest.raises(ValueError, match="tree_index"):
        hybrid_ucb_node_scale(1.0, 0)
