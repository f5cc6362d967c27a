"""Catalog entries for Sarmasarkar's (shuffle/joint DP GLM bandits) GLM contextual bandits: Private-GLM (Alg. 2) and ShuffleGLM (Alg. 1).

Inputs are (environment, data) pairs: the context sets live in the `GLMEnvironment` and the users'
reward coins (and pinned rewards) in `GLMData`, so a context-only neighbour changes the environment
and a reward-only neighbour pins one user's reward (each component changed alone). The paper's
constants are loose, so audits are expected far below the nominal ε; the
corrected accounting (every tree and optimiser sequence a user touches, composed) is the reference.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, cast

import numpy as np

from dpaudit.algorithms.glm.environment import GLMData, GLMEnvironment
from dpaudit.algorithms.glm.privacy import private_glm_privacy, shuffle_glm_privacy
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, private_glm_constants, run_private_glm
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams, run_shuffle_glm
from dpaudit.entries import AuditEntry, Claim, NeighbourPair, PinNote, RegretRun
from dpaudit.mechanisms.tree import tree_depth
from dpaudit.registry import AUDITS

__all__ = ["ENTRIES", "GLMObserve", "v_tree_mu", "v_tree_node_score", "v_tree_score"]

EPS, DELTA = 4.0, 0.02  # the authors' experiments (Sarmasarkar, §8)
THETA = np.array([1.0, 0.5])
V_THETA = np.array([3.0, 3.0])
"""θ* of the V-tree pair: symmetric, so user 1's {e1, e1} and {e2, e2} give the same κ, κ*, S (the run's constants
do not depend on the change), and κ S² large enough (κ ≈ 226) that Criterion I's threshold 1/(0.01 κ S² d) ≈ 0.012
is below ‖e_i‖²/λ ≈ 0.034 at round 1: user 1 explores in every run, so her x xᵀ is the V tree's first leaf."""


@dataclasses.dataclass(frozen=True)
class GLMObserve:
    """target((env, data), rng, size): `size` runs of Private-GLM ("private") or ShuffleGLM ("shuffle").

    observable: "V" (Private-GLM's released V prefix sums, every round) or "V1" (ShuffleGLM's released
    batch-1 matrix V, with λI).
    """

    algorithm: str
    params: PrivateGLMParams | ShuffleGLMParams
    observable: str

    def __call__(self, data: tuple[GLMEnvironment, GLMData], rng: np.random.Generator, size: int) -> np.ndarray:
        env, one = data
        rep = GLMData(np.repeat(one.seeds, size, 0), np.repeat(one.pinned, size, 0))
        if self.algorithm == "private":
            released = run_private_glm(env, rep, cast(PrivateGLMParams, self.params), rng, release=True).released
            return cast(dict[str, np.ndarray], released)[self.observable].reshape(size, -1)
        shuffled = run_shuffle_glm(env, rep, cast(ShuffleGLMParams, self.params), rng)
        return shuffled.matrices[:, 0].reshape(size, -1)


def v_tree_score(out: np.ndarray) -> np.ndarray:
    """Sum over the released prefixes of V_11 - V_22 (d = 2): the statistic for
    the pair x = e1 vs e2 (every node covering the changed leaf moves it by 2)."""
    return (out[:, 0::4] - out[:, 3::4]).sum(axis=1)


def v_tree_node_score(out: np.ndarray) -> np.ndarray:
    """Sum of V_11 - V_22 (d = 2) over the released prefixes of 2^l leaves (rounds 1, 2, 4, ...): each of them is
    one node holding leaf 1 (the binary decomposition of a power of two is a single node), and the nodes are
    independent with equal noise, so for the pair x = e1 vs e2 (each node's V_11 - V_22 moves by 2) this sum is
    the Neyman-Pearson statistic of the tree's mean shift (up to the other users' rare exploration leaves)."""
    rounds = out.shape[1] // 4
    powers = [1 << k for k in range(max(rounds - 1, 1).bit_length()) if 1 << k < rounds]
    return sum(out[:, 4 * t] - out[:, 4 * t + 3] for t in powers)


def _context_pair(horizon: int, theta: np.ndarray = THETA) -> NeighbourPair:
    """d = 2, K = 2; every user offered (0.5 e1, 0.5 e2); user 1 offered e1 twice vs e2 twice."""
    ctx = np.zeros((horizon, 2, 2))
    ctx[:, 0, 0] = ctx[:, 1, 1] = 0.5
    c0, c1 = ctx.copy(), ctx.copy()
    c0[0] = [[1.0, 0.0], [1.0, 0.0]]
    c1[0] = [[0.0, 1.0], [0.0, 1.0]]
    coins = GLMData(np.full((1, horizon), 0.5), np.full((1, horizon), np.nan))
    return NeighbourPair(
        "context-only",
        (GLMEnvironment(theta, c0, "probit"), coins),
        (GLMEnvironment(theta, c1, "probit"), coins),
        f"d=2, T={horizon}, probit, θ*={tuple(float(v) for v in theta)}; user 1's context set "
        f"{{e1, e1}} vs {{e2, e2}}; rewards fixed coins",
    )


def v_tree_mu(params: PrivateGLMParams, horizon: int, env: GLMEnvironment) -> float:
    """Gaussian-DP μ of Private-GLM's released V prefixes (rounds 1..T, each before its own leaf) for one user.

    μ = √(2 m)/σ_V with m = tree_depth(T - 1): the prefixes hold at most T - 1 leaves, so a leaf lies in at most
    m released nodes (mechanisms/tree.py); each node is a Gaussian mechanism with symmetric ("average") noise
    of diagonal std σ_V, whose sensitivity is the Frobenius norm of the leaf's change, ‖x xᵀ - x' x'ᵀ‖_F <= √2
    for ‖x‖, ‖x'‖ <= 1 (Sarmasarkar, Lemma I.4). Later leaves depend on the user only through the released V
    (Criterion I and the exploration arm read V⁻¹), so the view is an adaptive composition of m Gaussian
    mechanisms: μ² adds (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Cor. 3.3).
    """
    c = private_glm_constants(params, horizon, env.dim, env.kappa, env.kappa_star, env.S)
    return math.sqrt(2.0 * tree_depth(horizon - 1)) / c.sigma_v


V_TREE_NOTE = PinNote(
    "audit",
    "pinned on the Gaussian-DP μ (μ_upper = √(2m)/σ_V, m = 3 released nodes hold user 1's leaf at T = 8); "
    "the ε-interval at δ = 0.02 stays wider: the corrected claim composes the H tree, the switching and the "
    "optimiser calls, which this view does not see, and the auditor's ε at δ = 0.02 trails the ε of its μ. "
    "With θ* = (1, 0.5) (the first round's pair) no round explores, so the V view did not depend on user 1",
)


def _declared_event(privacy: Any, which: str) -> Any:
    """The DpEvent `which` ("event" or "paper_event") of the declaration `privacy()`, built when accounted."""
    return getattr(privacy(), which)


def glm_entries() -> list[AuditEntry]:
    out = []
    horizon = 8
    pair = _context_pair(horizon, V_THETA)
    env0 = pair.d0[0]
    for calibration in ("paper", "code"):
        params = PrivateGLMParams(epsilon=EPS, delta=DELTA, zeta=DELTA, tree_calibration=calibration)
        privacy = functools.cache(
            functools.partial(private_glm_privacy, params, horizon, 2, env0.kappa, env0.kappa_star, env0.S)
        )
        out.append(
            AuditEntry(
                name=f"private-glm.v-tree.{calibration}",
                algorithm="private-glm",
                description="Private-GLM (Sarmasarkar, Alg. 2): the V tree's released prefix sums of x xᵀ "
                + (
                    "with the paper's Lemma I.4 noise (calibrated to 1/κ*)."
                    if calibration == "paper"
                    else "with the authors' code's zCDP calibration (leaf bound 1)."
                ),
                target=functools.partial(GLMObserve, "private", params, "V"),
                pairs=(pair,),
                observable="white-box",
                observable_description=f"the released V prefix sums at all {horizon} rounds",
                claims=(
                    Claim("paper", delta=DELTA, epsilon=EPS, source="Thm 6.2: (ε, δ)-JDP"),
                    Claim(
                        "paper-composition",
                        delta=DELTA,
                        accountant="best",
                        event=functools.partial(_declared_event, privacy, "paper_event"),
                        source="the paper's own split: ε/3 trees (V, H in parallel), ε/3 switching, ε/3 optimisers",
                    ),
                    Claim(
                        "corrected",
                        delta=DELTA,
                        accountant="best",
                        event=functools.partial(_declared_event, privacy, "event"),
                        source="V leaf bound 1 (Frobenius √2 for a replaced x), trees and optimisers composed",
                    ),
                    Claim(
                        "paper-trees",
                        delta=DELTA / 6 + DELTA / 6,
                        epsilon=EPS / 3,  # ζ = δ in the experiments
                        expect="violation" if calibration == "paper" else "consistent",
                        source="Lemma I.4's budget for the trees {V_t, H_t} alone: (ε/3, δ/6 + ζ/6) (step 1 of Thm 6.2's "
                        "proof); "
                        + (
                            "the lemma calibrates the V tree to the 1/κ* leaf bound of H, but a V leaf "
                            "x xᵀ moves by up to √2 in Frobenius norm"
                            if calibration == "paper"
                            else "the code's zCDP calibration with leaf bound 1"
                        ),
                    ),
                ),
                audit_options={"score": v_tree_node_score},
                samples=200_000 if calibration == "paper" else 100_000,
                quick=False,
                pin_note=V_TREE_NOTE,
                mu_upper=functools.partial(v_tree_mu, params, horizon, env0),
                regret=RegretRun(
                    "private-glm", horizon=500, runs=4, params={"epsilon": EPS, "tree_calibration": calibration}
                ),
                source="Sarmasarkar, Algorithm 2 (Private-GLM), Theorem 6.2, Lemma I.4",
            )
        )
    shuffle_params = ShuffleGLMParams(epsilon=EPS, delta=DELTA, first_batch=8, batches=2)
    shuffle_horizon = 32
    sizes = [8, shuffle_horizon - 8]
    shuffle_privacy = functools.cache(functools.partial(shuffle_glm_privacy, shuffle_params, sizes, 2))
    out.append(
        AuditEntry(
            name="shuffle-glm.batch-1-matrix",
            algorithm="shuffle-glm",
            description="ShuffleGLM (Sarmasarkar, Alg. 1): the shuffle-private sum of batch 1's x xᵀ (Cheu et al. bit "
            "summation with binomial noise), as the analyzer releases it.",
            target=functools.partial(GLMObserve, "shuffle", shuffle_params, "V1"),
            pairs=(_context_pair(shuffle_horizon),),
            observable="white-box",
            observable_description="batch 1's released matrix V (B_1 = 8 users)",
            claims=(
                Claim("paper", delta=DELTA, epsilon=EPS, source="Thm 5.1: (ε, δ)-SDP"),
                Claim(
                    "corrected",
                    delta=DELTA,
                    accountant="best",
                    event=lambda: shuffle_privacy().event,
                    source="exact binomial-count accounting of the summation and the P_GD rounds (the paper's proof step on the real range 2g gives more: proof_step)",
                ),
            ),
            samples=10_000,
            quick=False,
            pin_note=PinNote(
                "both",
                "every proven claim is ε = 0 at δ = 0.02: the binomial counts' exact δ(0), their total variation, "
                "is 0.0019 (the accountant's privacy loss distribution) and δ(ε) falls below 10⁻⁶ by ε = 0.05, so "
                "no ε above 0 can be certified at δ = 0.02, and the counts are not Gaussian, so no μ is declared. "
                "A pin on the total variation itself (within 10% of 0.0019) needs the difference of two proportions "
                "near 1/2 to ≈ 10⁻⁴ at the suite's level: ≳ 10⁸ runs per side with the best event, hours for "
                "this target",
            ),
            regret=RegretRun("shuffle-glm", horizon=2000, runs=4, params={"epsilon": EPS}),
            source="Sarmasarkar, Algorithm 1 (ShuffleGLM), Theorem 5.1",
        )
    )
    return out


ENTRIES = glm_entries()
for _entry in ENTRIES:
    AUDITS.register(_entry.name, _entry)
