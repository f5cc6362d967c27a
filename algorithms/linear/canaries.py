"""Canaries for one-run audits of batched LinUCB, in particular LinUCB-SDP (Chowdhury & Zhou, ICML 2022, Alg. 1).

    target = one_run_target(LinUCBSDPAmp(epsilon=1.0, delta=1e-6), horizon=1_000_000, num_canaries=10_000)
    result = dpaudit.audit.one_run(*target, claim_epsilon=1.0, claim_delta=1e-6)

One run of `horizon` users with one fixed set of K action features (Chowdhury & Zhou 2022, §5
generator, a fixed public seed).  Every non-canary user's reward is 0 for every action (known to the
auditor: white box); canary i is the user of a fixed round t_i whose reward is 1 for every action
when included and 0 when not (one user's reward responses, the neighbouring relation of
Chowdhury & Zhou 2022, §2; the context is unchanged).  Her data enter the batch release of her
batch m = t_i // B only: the analyzer's sum u~_m = sum_t phi_t y_t + noise ("u"), which moves by her
chosen feature vector phi_{t_i} (norm 1) when she is included.  Score: <u~_m, phi_{t_i}>, with
a_{t_i} read from the run's actions.  Placement: the first user of every batch, then the second,
and so on (canary k at round (k mod M) B + k // M, M = horizon // B full batches).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpaudit.algorithms.linear.environment import Block, paper_vectors
from dpaudit.algorithms.linear.linucb import LinearAlgorithm, LinUCBResult
from dpaudit.algorithms.mab.canaries import OneRunTarget
from dpaudit.validation import check_int_at_least, check_positive_int

__all__ = ["CanaryUsers", "one_run_target", "FEATURE_SEED"]

FEATURE_SEED = 2022  # the fixed public action features (Chowdhury & Zhou 2022, §5 generator)


@dataclasses.dataclass(frozen=True, eq=False)
class CanaryUsers:
    """One run, `horizon` users, fixed features (K, d); reward 1 for every action iff the round is in `on`."""

    features: np.ndarray
    horizon: int
    on: np.ndarray

    def __post_init__(self) -> None:
        check_positive_int(self.horizon, "horizon")
        object.__setattr__(self, "on", np.sort(np.asarray(self.on, dtype=np.int64)))

    runs = 1

    @property
    def dim(self) -> int:
        return self.features.shape[1]

    @property
    def n_arms(self) -> int:
        return self.features.shape[0]

    def block(self, t0: int, n: int, rng: np.random.Generator) -> Block:
        feats = np.broadcast_to(self.features[None, None], (1, n, self.n_arms, self.dim))
        means = np.broadcast_to(np.zeros((1, 1, self.n_arms)), (1, n, self.n_arms))
        lo, hi = np.searchsorted(self.on, [t0, t0 + n])
        rewards = np.zeros((1, n, self.n_arms))
        rewards[0, self.on[lo:hi] - t0] = 1.0
        return Block(t0, feats, means, rewards)


def one_run_target(algorithm: LinearAlgorithm, horizon: int, num_canaries: int, *, dim: int = 5,
                   n_arms: int = 100) -> OneRunTarget:
    """One run of the batched `algorithm` (batch >= 2, releasing "u" per batch) hosting `num_canaries` canaries.

    Returns `OneRunTarget(mechanism, num_canaries, score)` (module docstring); the mechanism
    returns the run's `LinUCBResult` with every batch's released statistics recorded.
    """
    horizon = check_positive_int(horizon, "horizon")
    m = check_positive_int(num_canaries, "num_canaries")
    dim = check_positive_int(dim, "dim")
    k = check_int_at_least(n_arms, 2, "n_arms")
    if not isinstance(algorithm, LinearAlgorithm) or algorithm.batch < 2:
        raise ValueError(f"algorithm must be a batched LinearAlgorithm (batch >= 2), got {algorithm!r}")
    batch = algorithm.batch
    batches = horizon // batch
    if m > batches * batch:
        raise ValueError(f"num_canaries must be <= {batches * batch} (users in the {batches} full batches of "
                         f"{batch}), got {m}")
    features = paper_vectors(np.random.default_rng(FEATURE_SEED), (k,), dim)
    i = np.arange(m)
    rounds = (i % batches) * batch + i // batches

    def mechanism(inclusion: np.ndarray, rng: np.random.Generator) -> LinUCBResult:
        env = CanaryUsers(features, horizon, rounds[np.asarray(inclusion, dtype=bool)])
        return algorithm.run(env, rng, record=True)

    def score(res: LinUCBResult) -> np.ndarray:
        if "u" not in res.released:
            raise ValueError(f"{algorithm.name} released no per-batch 'u'; it cannot be audited with canaries")
        u = res.released["u"][0]  # (M, d)
        phi = features[res.actions[0, rounds]]
        return np.einsum("ij,ij->i", u[rounds // batch], phi)

    mechanism.__name__ = f"{algorithm.name}_canaries"
    return OneRunTarget(mechanism, m, score)
