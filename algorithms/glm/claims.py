"""The GLM paper's own accounting, kept as claimed next to the corrected one.

Sarmasarkar, "Shuffle and Joint Differential Privacy for Generalized Linear Contextual Bandits":
Private-GLM's tree noise (Lemma I.4) and its design-matrix trees' claimed vs corrected events (App. I.1);
P_GD's overall claim (Lemma T.2). `dpaudit.mechanisms` keeps the generic tree and P_GD protocol.
"""

from __future__ import annotations

import math

import dp_accounting

from dpaudit.mechanisms.shuffle_gd import advanced_composition, pgd_round_privacy
from dpaudit.mechanisms.tree import BinaryTree, paper_tree_depth
from dpaudit.validation import check_choice, check_epsilon, check_open_unit, check_positive

__all__ = ["glm_tree_events", "glm_tree_sigma", "pgd_claimed_guarantee"]


def glm_tree_sigma(epsilon: float, delta: float, horizon: int, kappa_star: float) -> float:
    """Lemma I.4 node noise: σ² = 36·m·log²(32/δ)/(κ*² ε²), m = ⌈log2 T + 1⌉.

    The paper calibrates both Private-GLM trees (V and H) to leaf sensitivity 1/κ*.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_open_unit(delta, "delta")
    kappa_star = check_positive(kappa_star, "kappa_star")
    m = paper_tree_depth(horizon)
    return 6.0 * math.sqrt(m) * math.log(32.0 / delta) / (kappa_star * epsilon)


def glm_tree_events(
    sigma: float, horizon: int, dim: int, kappa_star: float, tree: str = "V"
) -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
    """(claimed, corrected) events of one of Private-GLM's design-matrix trees (App. I.1).

    Node noise (Z'+Z'ᵀ)/2 with std `sigma` (Lemma I.4), so the node release is a Gaussian mechanism
    of Frobenius sensitivity. Claimed: leaf change 1/κ* for both trees (Lemma I.4, operator norm).
    Corrected: the V tree's leaves are x xᵀ with ‖x‖ <= 1, so a
    replace-one change has ‖xxᵀ − x'x'ᵀ‖_F <= √2; the H tree's leaves are scaled by at most 1/κ*,
    so √2/κ*. κ* >= 1 is a lower bound (leaf scalars must be clipped to 1/κ*).
    """
    check_choice(tree, ("V", "H"), "tree")
    kappa_star = check_positive(kappa_star, "kappa_star")
    agg = BinaryTree(
        horizon=horizon, noise="gaussian", scale=sigma, shape=(dim, dim), symmetric=True, symmetrize="average"
    )
    claimed = agg.event(1.0 / kappa_star, nodes_per_leaf=paper_tree_depth(horizon))
    corrected = agg.event(math.sqrt(2.0) * (1.0 if tree == "V" else 1.0 / kappa_star))
    return claimed, corrected


def pgd_claimed_guarantee(epsilon: float, delta: float, iterations: int) -> tuple[float, float]:
    """The paper's overall claim for P_GD, evaluated: advanced composition of T_it rounds of
    (ε_it, δ_it) with δ' = δ_it, so the total δ is exactly δ (Lemma T.2). The ε it gives is
    ≈ (ε/2)√(log((T+1)/δ)/log(1/δ)) + O(ε²/T); Lemma T.2 states it as ε (computed here,
    because ε_it uses log(1/δ) where the composition needs log(1/δ'))."""
    eps_it, delta_it = pgd_round_privacy(epsilon, delta, iterations)
    return advanced_composition(eps_it, delta_it, iterations, delta_it)
