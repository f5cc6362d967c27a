"""Catalog entries for the linear contextual bandits: Chowdhury & Zhou's (ICML 2022) shuffle LinUCB (Alg. 1) and its
baselines (App. F).

Inputs are fixed `ContextTable`s (designed for the audit): the auditor controls the contexts and gives
every user the same feature on both offered actions, so phi_t is chosen directly. Neighbours replace
the target user (user 1, in batch 1) in the three ways of `_pairs` (vector, reward and matrix pairs).
"""

from __future__ import annotations

import functools

import numpy as np

from dpaudit.algorithms.linear.environment import ContextTable
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec
from dpaudit.registry import AUDITS

from dpaudit.audits.build import ObserveLinear, lazy_claims
from dpaudit.audits.catalog import AuditEntry, NeighbourPair, RegretRun

__all__ = ["ENTRIES"]

DIM = 2
EPS, DELTA = 1.0, 0.1  # Chowdhury & Zhou's (ICML 2022) experiments (§5) use delta = 0.1


def _table(horizon: int, phi: np.ndarray, y: float) -> ContextTable:
    """Every user offered e1 twice with reward 1, except user 1: offered `phi` twice with reward `y`."""
    feats = np.zeros((horizon, 2, DIM))
    feats[:, :, 0] = 1.0
    rewards = np.ones((horizon, 2))
    feats[0] = phi
    rewards[0] = y
    return ContextTable(feats, rewards)


def _pairs(horizon: int, which: str = "all") -> tuple[NeighbourPair, ...]:
    """The pairs for user 1: the vector pair (e1, 1) vs (-e1, 1) moves y·φ by 2 with φφᵀ
    fixed; the reward pair (e1, 1) vs (e1, -1) moves y·φ by 2 through the reward alone; the matrix pair
    (e1, 0) vs (e2, 0) moves φφᵀ by √2 with y·φ = 0 fixed."""
    e1, e2 = np.eye(DIM)[0], np.eye(DIM)[1]
    vector = NeighbourPair("context-only", _table(horizon, e1, 1.0), _table(horizon, -e1, 1.0),
                           f"d={DIM}, T={horizon}; user 1 (φ, y) = (e1, 1) vs (-e1, 1): y·φ moves by 2")
    if which == "vector":
        return (vector,)
    return (
        vector,
        NeighbourPair("reward-only", _table(horizon, e1, 1.0), _table(horizon, e1, -1.0),
                      f"d={DIM}, T={horizon}; user 1 (φ, y) = (e1, 1) vs (e1, -1): the reward alone moves y·φ by 2"),
        NeighbourPair("context-only", _table(horizon, e1, 0.0), _table(horizon, e2, 0.0),
                      f"d={DIM}, T={horizon}; user 1 (φ, y) = (e1, 0) vs (e2, 0): φφᵀ moves by √2"),
    )


def _returning_table(horizon: int, batch: int, sign: float) -> ContextTable:
    """Every user offered e1 twice with reward 1; the returning user (first of each batch) offered sign·e1."""
    feats = np.zeros((horizon, 2, DIM))
    feats[:, :, 0] = 1.0
    feats[::batch] *= sign
    return ContextTable(feats, np.ones((horizon, 2)))


def _batch1_columns(horizon: int, batch: int) -> tuple[int, ...]:
    """Columns of batch 1's V (d x d) and u (d) in `target("released")`: keys sorted ("V" then "u"),
    each flattened over (batches, ...)."""
    batches = horizon // batch
    return tuple(range(DIM * DIM)) + tuple(batches * DIM * DIM + i for i in range(DIM))


def linear_entries() -> list[AuditEntry]:
    regret = {"dim": 5, "arms": 20, "epsilon": EPS, "delta": DELTA}
    out = []
    for noise in ("paper", "code"):
        algo = LinUCBLDP(epsilon=EPS, delta=DELTA, noise=noise)
        horizon = 4
        code = noise == "code"
        out.append(AuditEntry(
            name="linucb-ldp.message" + (".code-noise" if code else ""), algorithm="linucb-ldp",
            variant="Chowdhury & Zhou's (ICML 2022) simulation noise constant" if code else "",
            description="Locally private LinUCB (Zheng et al. 2020): each user's Gaussian messages; "
                        + ("with the authors' simulation σ = sqrt(ln(2.5/δ))/ε, far below the theorem's." if code
                           else "σ = 4 sqrt(2 ln(2.5/δ))/ε (classical Gaussian mechanism)."),
            target=functools.partial(ObserveLinear, algo, "released", _batch1_columns(horizon, 1)),
            pairs=_pairs(horizon, "vector" if code else "all"), observable="white-box",
            observable_description="user 1's noisy messages y·φ and φφᵀ",
            claims=lazy_claims(functools.partial(algo.privacy, horizon, dim=DIM), paper_expect="violation" if code else "consistent"),
            samples=400_000, quick=code, quick_samples=50_000,
            regret=None if code else RegretRun("linucb-ldp", horizon=2000, runs=5, params=regret),
            source="Zheng et al. (NeurIPS 2020), locally private LinUCB; the baseline of Chowdhury & Zhou (ICML 2022)" + ("; the authors' simulation noise constant" if code else "")))
    for noise in ("paper", "code"):
        batch = 2
        horizon = 4
        algo = LinUCBSDPAmp(epsilon=EPS, delta=DELTA, batch=batch, noise=noise)
        code = noise == "code"
        out.append(AuditEntry(
            name="linucb-sdp-amp.batch-sum" + (".code-noise" if code else ""), algorithm="linucb-sdp-amp",
            variant="Chowdhury & Zhou's (ICML 2022) simulation noise constant" if code else "",
            description="LinUCB-SDP-Amp (Chowdhury & Zhou 2022, Alg. 1 with P_Amp): the analyzer's batch sum of the users' "
                        "Gaussian messages, a post-processing of the shuffled view"
                        + (", with the authors' simulation σ (missing √log(2/δ) and 4√2)." if code else "."),
            target=functools.partial(ObserveLinear, algo, "released", _batch1_columns(horizon, batch)),
            pairs=_pairs(horizon, "vector" if code else "all"), observable="white-box",
            observable_description=f"batch 1's released sums u and V over its B={batch} users",
            claims=lazy_claims(functools.partial(algo.privacy, horizon, dim=DIM), paper_expect="violation" if code else "consistent"),
            samples=1_000_000 if code else 400_000, quick=False,
            regret=None if code else RegretRun("linucb-sdp-amp", horizon=2000, runs=5, params={**regret, "batch": 20}),
            source="Chowdhury & Zhou (ICML 2022), Algorithm 1 with P_Amp" + ("; the authors' simulation noise constant" if code else "")))
    for noise in ("paper", "code"):
        batch, horizon = 2, 8
        algo = LinUCBSDPAmp(epsilon=EPS, delta=DELTA, batch=batch, users="returning", noise=noise)
        code = noise == "code"
        batches = horizon // batch
        out.append(AuditEntry(
            name="linucb-sdp-amp.returning" + (".code-noise" if code else ""), algorithm="linucb-sdp-amp",
            variant="Chowdhury & Zhou's (ICML 2022) simulation noise constant, returning users" if code else "",
            description="LinUCB-SDP-Amp with returning users (Chowdhury & Zhou 2022, §4): one user in every batch; the claim "
                        "composes the M batches (advanced composition)"
                        + (", but the authors' simulation σ is used." if code else "."),
            target=functools.partial(ObserveLinear, algo, "released",
                                     tuple(batches * DIM * DIM + i for i in range(batches * DIM))),
            pairs=(NeighbourPair("context-only", _returning_table(horizon, batch, 1.0),
                                 _returning_table(horizon, batch, -1.0),
                                 f"d={DIM}, T={horizon}, B={batch}: the returning user (first of every batch) has "
                                 "φ = e1 vs -e1 in all her rounds, reward 1"),),
            observable="white-box", observable_description=f"every batch's released vector sum u (M={batches})",
            claims=lazy_claims(functools.partial(algo.privacy, horizon, dim=DIM), paper_expect="violation" if code else "consistent"),
            samples=200_000, quick=code, quick_samples=50_000, source="Chowdhury & Zhou (ICML 2022), §4 (returning users), Theorem 4.2" + ("; the authors' simulation noise constant" if code else "")))
    vec = LinUCBSDPVec(epsilon=EPS, delta=DELTA, batch=2)
    out.append(AuditEntry(
        name="linucb-sdp-vec.batch-sum", algorithm="linucb-sdp-vec",
        description="LinUCB-SDP-Vec (Chowdhury & Zhou 2022, Alg. 1 with P_Vec): bit-level vector summation with binomial noise "
                    "(theorem g, b); the analyzer's batch sum.",
        target=functools.partial(ObserveLinear, vec, "released", _batch1_columns(4, 2)), pairs=_pairs(4),
        observable="white-box", observable_description="batch 1's released sums u and V over its B=2 users",
        claims=lazy_claims(functools.partial(vec.privacy, 4, dim=DIM)), samples=200_000, quick=False,
        regret=RegretRun("linucb-sdp-vec", horizon=2000, runs=5, params={**regret, "batch": 20}),
        source="Chowdhury & Zhou (ICML 2022), Algorithm 1 with P_Vec, Theorem 3.5"))
    jdp = LinUCBJDP(epsilon=EPS, delta=DELTA)
    horizon = 4
    out.append(AuditEntry(
        name="linucb-jdp.tree", algorithm="linucb-jdp",
        description="Jointly private LinUCB (Shariff & Sheffet 2018): tree-based Gram matrices with Gaussian node noise.",
        target=functools.partial(ObserveLinear, jdp, "released"), pairs=_pairs(horizon), observable="white-box",
        observable_description="every released prefix and node of the tree over T=4 users",
        claims=lazy_claims(functools.partial(jdp.privacy, horizon, dim=DIM)), samples=200_000, quick=False,
        regret=RegretRun("linucb-jdp", horizon=2000, runs=5, params=regret), source="Shariff & Sheffet (NeurIPS 2018), jointly private LinUCB; the baseline of Chowdhury & Zhou (ICML 2022)"))
    return out


ENTRIES = linear_entries()
for _entry in ENTRIES:
    AUDITS.register(_entry.name, _entry)
