"""Canaries for one-run audits of batched private LinUCB (Chowdhury & Zhou, ICML 2022, Alg. 1).

    target = one_run_target(LinUCBSDPAmp(epsilon=1.0, delta=1e-6), horizon=1_000_000, num_canaries=10_000)
    result = dpaudit.audit.one_run(*target, claim_epsilon=1.0, claim_delta=1e-6)

One run of `horizon` users with one fixed set of K action features (Chowdhury & Zhou 2022, §5
generator, a fixed public seed).  Every non-canary user's reward is 0 for every action (known to the
auditor: white box); canary i is the user of a fixed round t_i whose reward is 1 for every action
when included and `excluded_reward` (default 0; Assumption 3.1 bounds |y| <= 1, so -1 is allowed) when
not (one user's reward responses, the neighbouring relation of Chowdhury & Zhou 2022, §2; the context
is unchanged).  Her data enter the release of her batch m = t_i // B only, which moves by
(1 - excluded_reward) phi_{t_i} (phi of norm 1) when she is included.  Placement: the first user of
every batch, then the second, and so on (canary k at round (k mod M) B + k // M, M = horizon // B
full batches).

The score reads only what the release mechanism gives the party its trust model does not trust
(`RELEASED`): `mechanism` returns a `LinearView` (the actions and that one per-batch statistic), so
nothing computed before the noise can reach it.  Score <r_i, phi_{t_i}>, with r_i:
- shuffle (LinUCB-SDP-Amp and -Vec, Chowdhury & Zhou 2022, Thms 3.2, 3.5): the analyzer's batch sum
  u~_m = sum_t phi_t y_t + noise ("u"), a post-processing of the shuffled messages;
- local (LinUCB-LDP, Chowdhury & Zhou 2022, Prop. F.1): her own message phi y + N(0, sigma^2 I)
  ("messages_u"), which the server receives;
- joint DP (LinUCB-JDP: Shariff & Sheffet, NeurIPS 2018, batched in Chowdhury & Zhou 2022, Prop. F.3):
  the increment of the released noisy tree prefix ("prefix", its phi y block) from batch m - 1 to m.
Non-private LinUCB releases no noisy statistic and is rejected.  The actions in the view are a
function of the earlier releases and the public contexts (a user acts on the model of the previous
batches), so reading a_{t_i} from them is post-processing.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from dpaudit.algorithms.linear.environment import Block, paper_vectors
from dpaudit.algorithms.linear.linucb import LinearAlgorithm
from dpaudit.algorithms.linear.linucb_jdp import TreeSums
from dpaudit.algorithms.linear.linucb_ldp import LocalGaussianSums
from dpaudit.algorithms.linear.shuffle_linucb import AmpSums, VecSums
from dpaudit.algorithms.mab.canaries import OneRunTarget
from dpaudit.validation import check_int_at_least, check_positive_int

__all__ = [
    "FEATURE_SEED",
    "RELEASED",
    "CanaryUsers",
    "LinearView",
    "canary_releases",
    "one_run_target",
    "released_statistic",
]

FEATURE_SEED = 2022  # the fixed public action features (Chowdhury & Zhou 2022, §5 generator)

# The per-batch statistic each release mechanism gives the party its trust model does not trust.
RELEASED: dict[type, str] = {AmpSums: "u", VecSums: "u", LocalGaussianSums: "messages_u", TreeSums: "prefix"}


class LinearView(NamedTuple):
    """One run as the untrusted party sees it: the actions (T,) and the released statistic (M, ...)."""

    actions: np.ndarray
    name: str
    released: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class CanaryUsers:
    """One run, `horizon` users, fixed features (K, d); reward 1 for every action at the rounds in `on`,
    `off_reward` at the rounds in `off` (the excluded canaries), 0 elsewhere."""

    features: np.ndarray
    horizon: int
    on: np.ndarray
    off: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    off_reward: float = 0.0

    def __post_init__(self) -> None:
        check_positive_int(self.horizon, "horizon")
        object.__setattr__(self, "on", np.sort(np.asarray(self.on, dtype=np.int64)))
        object.__setattr__(self, "off", np.sort(np.asarray(self.off, dtype=np.int64)))
        object.__setattr__(self, "off_reward", _check_reward(self.off_reward, "off_reward"))

    runs = 1

    @property
    def dim(self) -> int:
        """Feature dimension d."""
        return self.features.shape[1]

    @property
    def n_arms(self) -> int:
        """Number of actions K."""
        return self.features.shape[0]

    def block(self, t0: int, n: int, rng: np.random.Generator) -> Block:
        """Rounds t0 .. t0+n-1: the fixed features, zero means, and reward 1 (`off_reward`) for every
        action at the included (excluded) canary rounds.
        """
        feats = np.broadcast_to(self.features[None, None], (1, n, self.n_arms, self.dim))
        means = np.broadcast_to(np.zeros((1, 1, self.n_arms)), (1, n, self.n_arms))
        rewards = np.zeros((1, n, self.n_arms))
        for rounds, value in ((self.off, self.off_reward), (self.on, 1.0)):
            lo, hi = np.searchsorted(rounds, [t0, t0 + n])
            rewards[0, rounds[lo:hi] - t0] = value
        return Block(t0, feats, means, rewards)


def _check_reward(value: float, name: str) -> float:
    """A reward below the included canary's 1 and within Assumption 3.1's |y| <= 1 (Chowdhury & Zhou 2022)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not -1.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [-1, 1) (rewards |y| <= 1, below the included canary's 1), got {value!r}")
    return float(value)


def released_statistic(algorithm: LinearAlgorithm, dim: int, horizon: int) -> str:
    """The name of the per-batch statistic `algorithm`'s release mechanism releases (`RELEASED`)."""
    release = algorithm.make_release(dim, horizon)
    for cls, name in RELEASED.items():
        if isinstance(release, cls):
            return name
    raise ValueError(
        f"algorithm: {algorithm.name} releases no noisy per-batch statistic ({type(release).__name__}); "
        f"one-run canaries need one of {sorted({c.__name__ for c in RELEASED})}"
    )


def canary_releases(view: LinearView, rounds: np.ndarray, batch: int, dim: int) -> np.ndarray:
    """r_i (num_canaries, d): the part of the released statistic canary i's data entered (module docstring)."""
    m_idx = rounds // batch
    if view.name == "messages_u":
        return view.released[m_idx, rounds % batch]
    if view.name == "prefix":
        cum = view.released[:, :dim, dim]  # the phi y block of each prefix
        steps = np.diff(cum, axis=0, prepend=np.zeros((1, dim)))
        return steps[m_idx]
    return view.released[m_idx]


def one_run_target(
    algorithm: LinearAlgorithm,
    horizon: int,
    num_canaries: int,
    *,
    dim: int = 5,
    n_arms: int = 100,
    excluded_reward: float = 0.0,
) -> OneRunTarget:
    """One run of the batched private `algorithm` (batch >= 2) hosting `num_canaries` canaries.

    An excluded canary's reward is `excluded_reward` in [-1, 1) for every action (an included one's is 1).
    Returns `OneRunTarget(mechanism, num_canaries, score)` (module docstring); the mechanism
    returns the run's `LinearView`, the score reads each canary's release from it.
    """
    horizon = check_positive_int(horizon, "horizon")
    m = check_positive_int(num_canaries, "num_canaries")
    dim = check_positive_int(dim, "dim")
    k = check_int_at_least(n_arms, 2, "n_arms")
    low = _check_reward(excluded_reward, "excluded_reward")
    if not isinstance(algorithm, LinearAlgorithm) or algorithm.batch < 2:
        raise ValueError(f"algorithm must be a batched LinearAlgorithm (batch >= 2), got {algorithm!r}")
    name = released_statistic(algorithm, dim, horizon)
    batch = algorithm.batch
    batches = horizon // batch
    if m > batches * batch:
        raise ValueError(
            f"num_canaries must be <= {batches * batch} (users in the {batches} full batches of {batch}), got {m}"
        )
    features = paper_vectors(np.random.default_rng(FEATURE_SEED), (k,), dim)
    i = np.arange(m)
    rounds = (i % batches) * batch + i // batches

    def mechanism(inclusion: np.ndarray, rng: np.random.Generator) -> LinearView:
        included = np.asarray(inclusion, dtype=bool)
        env = CanaryUsers(features, horizon, rounds[included], rounds[~included], low)
        res = algorithm.run(env, rng, record=True)
        return LinearView(res.actions[0], name, res.released[name][0])

    def score(view: LinearView) -> np.ndarray:
        phi = features[view.actions[rounds]]
        return np.einsum("ij,ij->i", canary_releases(view, rounds, batch, dim), phi)

    mechanism.__name__ = f"{algorithm.name}_canaries"
    return OneRunTarget(mechanism, m, score)
