"""Declared privacy of Sarmasarkar's (shuffle/joint DP GLM bandits) algorithms (Algs. 1-2): the paper's claim next to the
corrected accounting.

Neighbouring relation (Sarmasarkar (shuffle/joint-DP GLM bandits), Defs. B.1/B.4): replace one user t's (context set X_t, reward r_t).

Private-GLM (Alg. 2, joint DP, central trusted learner). Claim (Thm 6.2): (ε, δ)-JDP, composed as
ε/3 trees + ε/3 switching indicators + ε/3 optimisers, with the V and H trees (and the θ̂_o and θ̂_τ
optimiser sequences) treated as acting on disjoint users (parallel). Corrected:
- the V tree's leaves x xᵀ have norm up to 1, not 1/κ* (Lemma I.4 calibrates both trees to 1/κ*);
- replace-one moves a leaf by ‖xxᵀ − x'x'ᵀ‖_F ≤ √2 (the Gaussian mechanism needs Frobenius, not operator);
- one user can move from T_o to its complement, so it touches both trees and both optimiser sequences
  (and the authors' code feeds T_o rounds to θ̂_τ as well): sequential composition of all four;
- the switching indicators of the other users are post-processing of the released V nodes and their own
  contexts: no separate budget.
ShuffleGLM (Alg. 1, multi-round shuffle DP). Claim (Thm 5.1): (ε, δ), per batch (ε/2, δ/2) for the
covariance sum plus (ε/2, δ/2) for P_GD, batches in parallel (disjoint users). The proof step fails: the
randomizer's input spans [0, 2Δ], so the summation theorem applied to the real count range doubles ε
(`proof_step`, `shuffle_claims.theorem_event`). Corrected: the exact binomial-count accounting of what is
released (`BitSumProtocol.event`, P_GD as the composition of its T_it rounds), which at the paper's
noise levels is far below the claim: the claim holds, its proof does not. The events are built from the
eq. 127 parameters in Python integers (`shuffle_claims.bit_sum_event`, `pgd_events`): P_GD's noise bits
n·b grow like T_it ∝ n², past 2⁶³ from n ≈ 2·10⁴, where the int64 counts of a simulated protocol end.
"""

from __future__ import annotations

import dataclasses
import math

import dp_accounting

from dpaudit.accounting.events import EpsilonDeltaDpEvent, ParallelComposedDpEvent
from dpaudit.algorithms.glm.claims import glm_tree_events
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, private_glm_constants, sgd_call_event
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams
from dpaudit.algorithms.shuffle_claims import bit_sum_event, bit_sum_theorem_event, cheu_parameters, pgd_events
from dpaudit.mechanisms import BinaryTree, paper_tree_depth
from dpaudit.privacy import RELATIONS, Guarantee, Privacy
from dpaudit.validation import check_positive, check_positive_int

__all__ = ["NEIGHBOURING", "optimiser_call_events", "private_glm_privacy", "shuffle_glm_privacy"]

NEIGHBOURING = RELATIONS["user"]  # the relation both declarations name


def _declare(
    trust_model: str,
    eps: float,
    delta: float,
    theorem: str,
    event: dp_accounting.DpEvent,
    paper: dp_accounting.DpEvent,
    note: str,
    proof_step: dp_accounting.DpEvent | None = None,
) -> Privacy:
    """The declaration: claim as stated, corrected = the best accountant's ε of `event` at the claim's δ
    (inf when the event's own δ exceeds it)."""
    claim = Guarantee("approx", eps, delta, source=f"Sarmasarkar (shuffle/joint DP GLM bandits) {theorem}")
    declared = Privacy("user", trust_model, event, claim, None, note, paper_event=paper, proof_step=proof_step)
    accounted = declared.accounted_epsilon()  # never None here: the declaration has an event
    corrected = Guarantee(
        "approx",
        math.inf if accounted is None else max(accounted, 1e-12),
        delta,
        source="dpaudit.accounting of the declared event",
    )
    return dataclasses.replace(declared, corrected=corrected)


def private_glm_privacy(
    params: PrivateGLMParams, horizon: int, dim: int, kappa: float, kappa_star: float, S: float
) -> Privacy:
    """Claimed vs corrected privacy of Private-GLM run with `params` (Sarmasarkar, Thm 6.2)."""
    if not params.private:
        raise ValueError("private_glm_privacy needs params.epsilon (the non-private variant claims nothing)")
    if params.tree_query != "correct":
        raise ValueError(
            f"tree_query={params.tree_query!r} (the authors' first-commit tree, a reproduction device) "
            "has no privacy accounting: its queries are not the binary mechanism's"
        )
    T = check_positive_int(horizon, "horizon")
    d = check_positive_int(dim, "dim")
    kappa_star = check_positive(kappa_star, "kappa_star")
    c = private_glm_constants(params, T, d, kappa, kappa_star, S)
    eps, delta, zeta = params.dp_epsilon, params.delta, params.zeta
    v_claim, v_corr = glm_tree_events(c.sigma_v, T, d, kappa_star, tree="V")
    h_claim, h_corr = glm_tree_events(c.sigma_h, T, d, kappa_star, tree="H")
    if params.tree_calibration == "code":
        # the code calibrates V to leaf bound 1 (not 1/κ*), still with operator-norm sensitivity
        v_claim = _code_v_claim(c.sigma_v, T, d)
    call_o, call_tau = optimiser_call_events(params, c)
    paper = dp_accounting.ComposedDpEvent(
        [
            ParallelComposedDpEvent([v_claim, h_claim]),
            EpsilonDeltaDpEvent(eps / 3, delta / 6 + zeta / 6),
            ParallelComposedDpEvent(
                [
                    dp_accounting.SelfComposedDpEvent(EpsilonDeltaDpEvent(*c.call_budget_o), c.count1_cutoff),
                    dp_accounting.SelfComposedDpEvent(EpsilonDeltaDpEvent(*c.call_budget_tau), c.count2_cutoff),
                ]
            ),
        ]
    )
    corrected = dp_accounting.ComposedDpEvent(
        [
            v_corr,
            h_corr,
            dp_accounting.SelfComposedDpEvent(call_o, c.count1_cutoff),
            dp_accounting.SelfComposedDpEvent(call_tau, c.count2_cutoff),
        ]
    )
    note = (
        f"joint DP; tree calibration {params.tree_calibration!r}; V leaf bound 1 and Frobenius √2; "
        "trees and optimiser sequences composed sequentially"
    )
    if params.optimizer == "dp-sgd":
        note += (
            f"; DP-SGD: {c.sgd_steps_o}/{c.sgd_steps_tau} Poisson-sampled Gaussian steps (q = "
            f"{params.sgd_sampling_rate:g}) per θ̂_o/θ̂_τ call at the replace-one sensitivity 2C"
        )
        if params.sgd_noise == "code":
            note += " (the authors' noise C·z: half the multiplier their accounting assumes)"
    return _declare("joint", eps, delta, "Theorem 6.2", corrected, paper, note)


def optimiser_call_events(params: PrivateGLMParams, c) -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
    """What one θ̂_o call and one θ̂_τ call release about one user (`c`: `private_glm_constants`).

    DP-GD: `optimizer_iterations` Gaussian releases with multiplier σ/(2 clip) (replace-one moves the
    clipped sum by up to 2 clip). DP-SGD: `sgd_steps` releases of dp-accounting's
    PoissonSampledDpEvent(q, GaussianDpEvent(σ/(2C))), σ the std actually added (2C·z, or C·z for the
    authors' `sgd_noise="code"`). The sampled event is dp-accounting's add-or-remove-one analysis with
    the replace-one change 2C as the sensitivity: exact at q = 1 (a Gaussian of sensitivity 2C), and at
    q < 1 above dp-accounting's own substitution (REPLACE_ONE) PLD of a change C → −C, which the tests
    check. A user leaving or entering T_o adds or removes one row of θ̂_o's data (change ≤ C ≤ 2C).
    """
    if params.optimizer == "dp-gd":
        sens, it = 2.0 * params.clip, params.optimizer_iterations
        return (
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(c.sigma_opt_o / sens), it),
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(c.sigma_opt_tau / sens), it),
        )
    sens, q = 2.0 * params.sgd_clip, float(params.sgd_sampling_rate)
    return (
        sgd_call_event(c.sigma_opt_o / sens, q, c.sgd_steps_o),
        sgd_call_event(c.sigma_opt_tau / sens, q, c.sgd_steps_tau),
    )


def _code_v_claim(sigma: float, horizon: int, dim: int) -> dp_accounting.DpEvent:
    """The authors' code's own claim for its V tree: zCDP calibration to leaf bound C_V = 1 (operator norm)."""
    tree = BinaryTree(horizon, "gaussian", sigma, (dim, dim), symmetric=True, symmetrize="average")
    return tree.event(1.0, nodes_per_leaf=paper_tree_depth(horizon))


def _matrix_sum_events(
    num_users: int, dim: int, epsilon: float, delta: float
) -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
    """(exact, theorem) events of one batch's covariance sum: the eq. 127 bit sum at (ε, δ) over the d(d+1)/2
    labels i <= j (Sarmasarkar, Alg. 4 R2; `bit_sum_event`, `bit_sum_theorem_event`). V's entries lie in
    [-1, 1]; H_k's in [-1/κ*, 1/κ*] give the same counts up to scale, so the same events."""
    g, b, p = cheu_parameters(epsilon, delta, num_users, dim)
    return (
        bit_sum_event(num_users, dim * (dim + 1) // 2, g, b, p),
        bit_sum_theorem_event(num_users, g, b, dim, delta, p),
    )


def shuffle_glm_privacy(
    params: ShuffleGLMParams, batch_sizes: list[int], dim: int, iterations: list[int] | None = None
) -> Privacy:
    """Claimed vs corrected privacy of ShuffleGLM with the given batch sizes (Sarmasarkar, Thm 5.1, App. D.1).

    iterations: P_GD rounds per batch (default Alg. 7's T_it).
    """
    if not params.private:
        raise ValueError("shuffle_glm_privacy needs params.epsilon (the non-private variant claims nothing)")
    d = check_positive_int(dim, "dim")
    sizes = [check_positive_int(n, "batch_sizes") for n in batch_sizes]
    if not sizes:
        raise ValueError("batch_sizes must hold at least one batch")
    eps, delta = params.dp_epsilon, params.delta
    iters: list[int | None] = list(iterations) if iterations else [None] * len(sizes)
    if len(iters) != len(sizes):
        raise ValueError(f"iterations must have one entry per batch ({len(sizes)}), got {len(iters)}")
    paper, corrected, proof = [], [], []
    for n, it in zip(sizes, iters):
        matrix, matrix_theorem = _matrix_sum_events(n, d, eps / 2, delta / 2)
        pgd, pgd_theorem = pgd_events(n, d, eps / 2, delta / 2, it)
        paper.append(
            dp_accounting.ComposedDpEvent(
                [EpsilonDeltaDpEvent(eps / 2, delta / 2), EpsilonDeltaDpEvent(eps / 2, delta / 2)]
            )
        )
        corrected.append(dp_accounting.ComposedDpEvent([matrix, pgd]))
        proof.append(dp_accounting.ComposedDpEvent([matrix_theorem, pgd_theorem]))
    return _declare(
        "shuffle",
        eps,
        delta,
        "Theorem 5.1",
        ParallelComposedDpEvent(corrected),
        ParallelComposedDpEvent(paper),
        "exact binomial-count accounting of each invocation; batches on disjoint users; "
        "the proof's theorem on the real count range (2g) is `proof_step`",
        ParallelComposedDpEvent(proof),
    )
