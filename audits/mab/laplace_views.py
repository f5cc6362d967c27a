"""Exact ε of the Laplace-noise views the multi-armed entries audit, and their Neyman-Pearson scores.

Hybrid-UCB's released totals (Hu, Huang, Mehta (arXiv:2102.07929), Alg. 4: four independent Laplace
components) and FTNL's Report Noisy Max decisions (Algs. 2-3: two Laplace epoch sums that may move in
opposite directions) have closed-form losses; the entries claim them as the exact ε of the audited view
(`dpaudit.audits.build.VIEW_ACCOUNTANT`).  The SecAgg and shuffle views, whose laws are computed
numerically, are in `dpaudit.audits.mab.exact_views`.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.algorithms.mab.ftnl import FTNL
from dpaudit.algorithms.mab.hybrid_ucb import _node_scale

__all__ = [
    "ftnl_view_epsilon",
    "hybrid_conjunction_score",
    "hybrid_view_epsilon",
    "laplace_difference_sf",
    "laplace_sum_tail_rate",
    "no_forgetting_llr_score",
    "rnm_decision_epsilon",
]


def laplace_sum_tail_rate(*scales: float) -> float:
    """Pure ε of a shift by 1 of Z = sum of independent Laplace(b_i): sup_z log f(z)/f(z+1) = 1/max b_i.

    f is log-concave (a convolution of log-concave densities), so log f(z) - log f(z+1) is
    nondecreasing in z and its supremum is the limit z -> inf, the tail rate of the widest Laplace
    (f(z) ~ C z^k e^{-z/b_max}); by symmetry the same holds for z -> -inf.
    """
    return 1.0 / max(scales)


def hybrid_view_epsilon(epsilon: float, node_scale: str) -> float:
    """Exact pure ε of the audited Hybrid-UCB view R_1..R_4 (an arm's released totals after its pulls
    1-4, any longer stream) over every change of one observation in [0, 1].

    By a bijective linear map the view is (R_1, R_2 - R_1, R_3 - R_1, R_4 - R_1) = (x_1 + A_0,
    x_2 + n_leaf, x_2 + x_3 + n_root, x_2 + x_3 + x_4 + A_1 + n'_leaf) (1-based observations), four
    independent noises: A_0, A_1 ~ Lap(2/ε) (arrays 0, 1), n_leaf, n_root ~ Lap(s_1) (tree 1), n'_leaf ~
    Lap(s_2) (tree 2) (Hu, Huang, Mehta (arXiv:2102.07929), Alg. 4; s_r = `_node_scale`). Pure ε adds over
    independent components, each a shift by at most 1:
    x_1: ε/2; x_2: 2/s_1 + r; x_3: 1/s_1 + r; x_4: r; with r = `laplace_sum_tail_rate`(2/ε, s_2).
    The view's ε is the largest, max(ε/2, 2/s_1 + r): 2ε/3 for node_scale "fixed", 5ε/4 for "paper"
    (attained in the limit of all three noises of x_2 deep in their tails).
    The theorem's ε (and 1.5ε corrected for "paper") bounds the whole run, whose array noise A_1 is
    never released alone; this is the least upper bound for what the audit sees.
    """
    s1, s2 = _node_scale(epsilon, 1, node_scale), _node_scale(epsilon, 2, node_scale)
    rate = laplace_sum_tail_rate(2.0 / epsilon, s2)
    return max(epsilon / 2.0, 2.0 / s1 + rate)


def no_forgetting_llr_score(out: np.ndarray) -> np.ndarray:
    """The log-likelihood ratio (times 1/ε, up to an affine map) of the no-forgetting pair: releases 1-3
    contain the 2nd observation (0 vs 1) under independent Lap(1/ε), so log f_1/f_0 = ε Σ_r
    clip(2 y_r - 1, -1, 1), i.e. Σ_r clip(y_r, 0, 1) up to scale and shift. Its top value 3 is the event
    {all three releases >= 1}, of probability 1/8 vs e^{-3}/8: the full loss 3ε (Neyman–Pearson)."""
    return np.clip(np.asarray(out, dtype=float)[:, 1:4], 0.0, 1.0).sum(axis=1)


_ROUND_UP = 1e-12
"""Added to closed-form ε values computed in floating point (a few operations, relative error < 1e-15), so
that the claim is never below the exact value."""


def laplace_difference_sf(y: float, scale: float) -> float:
    """P(L_1 - L_0 > y) for independent L_0, L_1 ~ Lap(b), b = `scale`.

    The difference has density (1 + |y|/b) e^{-|y|/b} / (4b) (the convolution of two Laplace densities), so
    for y >= 0: P(D > y) = e^{-y/b} (2 + y/b) / 4; for y < 0 it is 1 - P(D > -y) (D is symmetric).
    """
    u = abs(float(y)) / float(scale)
    tail = math.exp(-u) * (2.0 + u) / 4.0
    return tail if y >= 0 else 1.0 - tail


def rnm_decision_epsilon(scale: float, length: int) -> float:
    """Exact pure ε of one Report Noisy Max decision J = argmax_j (G_j + Lap(b)) over K = 2 sums G_j of
    `length` rewards in [0, 1], when one round's reward vector changes (Hu, Huang, Mehta (arXiv:2102.07929),
    §2.2: both sums may move by 1, in opposite directions).

    J = 0 iff D = L_1 - L_0 < x = G_0 - G_1, with x in [-n, n] (n = `length`) and a change moving x by at most
    δ = min(2, 2n). P(J = 0 | x) = S(-x) with S = `laplace_difference_sf`; S is log-concave (D has a log-concave
    density), so log S(u - δ') - log S(u) is nondecreasing in u and in δ', and the largest loss over the pairs
    (x, x - δ') in the domain is at u = -x' = n, δ' = δ (J = 1 is the mirror image):
        ε = log S(n - δ) - log S(n)  =  2/b + log((2 + (n - 2)/b) / (2 + n/b))  for n >= 2,
    below the composed 2/b at every n and reaching it only as n -> inf. Rounded up by `_ROUND_UP`.
    """
    n = int(length)
    if n < 1:
        raise ValueError(f"length must be a positive number of rounds, got {length!r}")
    b = float(scale)
    if not (b > 0 and math.isfinite(b)):
        raise ValueError(f"scale must be positive and finite, got {scale!r}")
    shift = min(2.0, 2.0 * n)
    if n >= shift:  # both points in the tail y >= 0: closed form in logs, no cancellation
        value = shift / b + math.log((2.0 + (n - shift) / b) / (2.0 + n / b))
    else:
        value = math.log(laplace_difference_sf(n - shift, b)) - math.log(laplace_difference_sf(n, b))
    return value + _ROUND_UP


def ftnl_view_epsilon(algorithm: FTNL, round_index: int) -> float:
    """Exact pure ε of FTNL's action in round `round_index` (0-based) for K = 2 arms, over every change of one
    round's reward vector in [0, 1]^2 (any horizon beyond the round).

    Epoch s covers rounds 2^s - 1 .. 2^{s+1} - 2 (0-based) and its RNM sets the action of the next epoch
    (Hu, Huang, Mehta (arXiv:2102.07929), Algs. 2-3), so the action in round r is the RNM of the last epoch
    that ends before r, over sums of 2^s rounds, with fresh noise: `rnm_decision_epsilon`. A change in any
    other round leaves the action's law unchanged. 0 before the first RNM (round 0 plays action 0).
    """
    r = int(round_index)
    if r < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index!r}")
    s = (r + 1).bit_length() - 2  # the largest s with 2^{s+1} - 1 <= r: epoch s has ended by round r
    if s < 0:
        return 0.0
    return rnm_decision_epsilon(algorithm.scale(2), 1 << s)


def hybrid_conjunction_score(out: np.ndarray) -> np.ndarray:
    """min(R_2 - R_1, R_3 - R_1, R_4 - R_1 - 5): {score > 1} is the event
    {R_2 - R_1 > 1, R_3 - R_1 > 1, R_4 - R_1 > 6}, where all three noises covering the 2nd
    observation (leaf, root, array 1) are in their tails at once."""
    d = out[:, 1:4] - out[:, :1]
    return np.minimum(np.minimum(d[:, 0], d[:, 1]), d[:, 2] - 5.0)
