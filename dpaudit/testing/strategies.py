"""Hypothesis strategies for neighbouring datasets of the papers' relations (needs `hypothesis`).

Every strategy draws a `Neighbours(d0, d1, user, relation)`: two datasets that are equal except in
user `user`, changed the way `relation` says. Datasets are plain numpy arrays (dicts of arrays for
structured data) so they feed any implementation; dpaudit's own environment classes take them
directly (e.g. `RewardTable(pair.d0)`, `ContextTable(**pair.d0)`).

- `reward_tables`: rewards (T, K) in [0, 1]. relation "vector" replaces one round's whole reward
  vector (the event-level relation of Hu, Huang, Mehta's Anytime-Lazy-UCB and Hybrid-UCB, §2.2);
  "entry" changes one user's single reward (Chowdhury, Zhou, "Distributed Differential Privacy in
  Multi-Armed Bandits", ICLR 2023, Sec. 2).
- `contextual_datasets`: features (T, K, d) with ||x||_2 <= 1 and rewards (T, K) in [0, 1];
  relation "reward-only", "context-only" or "both" (Chowdhury, Zhou, "Shuffle Private Linear
  Contextual Bandits", ICML 2022, Def. 2.1; Sarmasarkar, "Shuffle and Joint Differential Privacy for
  Generalized Linear Contextual Bandits", Defs. B.1/B.4).
- `typed_patients`: types (n,) in {0..M-1} and potential outcomes y0, y1 (n,) in [0, 1];
  relation "reward-only" (outcomes), "context-only" (type) or "both" (Li, Shi, Simchi-Levi,
  "Privacy Preserving Adaptive Experiment Design", ICML 2024, §1.2, Defs. 1.3/1.4).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # dpaudit does not install hypothesis; its [testing] extra does
    raise ImportError(
        f'dpaudit.testing.strategies needs hypothesis ({exc}): pip install "dpaudit[testing]" '
        "(the [testing] extra of the path, wheel or git URL dpaudit is installed from)",
        name=__name__,
    ) from None

__all__ = ["RELATIONS", "Neighbours", "contextual_datasets", "reward_tables", "typed_patients", "unit_floats"]

RELATIONS = ("reward-only", "context-only", "both")


@dataclasses.dataclass(frozen=True, eq=False)
class Neighbours:
    """Two datasets equal except in user `user`, who differs the way `relation` says."""

    d0: Any
    d1: Any
    user: int
    relation: str


def unit_floats() -> st.SearchStrategy[float]:
    """Floats in [0, 1], with the endpoints (the worst cases for sensitivity) drawn often."""
    return st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0, allow_nan=False, width=32))


def _unit_array(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=unit_floats())


def reward_tables(
    relation: str = "vector",
    rounds: st.SearchStrategy[int] = st.integers(2, 32),
    arms: st.SearchStrategy[int] = st.integers(2, 6),
) -> st.SearchStrategy[Neighbours]:
    """Reward tables (T, K) in [0, 1] differing in one round's vector ("vector") or one entry ("entry")."""
    if relation not in ("vector", "entry"):
        raise ValueError(f"unknown relation {relation!r}; choose one of vector, entry")
    return _reward_tables(relation, rounds, arms)


@st.composite
def _reward_tables(draw, relation, rounds, arms) -> Neighbours:
    t_max, k = draw(rounds), draw(arms)
    d0 = draw(_unit_array((t_max, k)))
    user = draw(st.integers(0, t_max - 1))
    d1 = d0.copy()
    if relation == "vector":
        new = draw(_unit_array((k,)).filter(lambda row: not np.array_equal(row, d0[user])))
        d1[user] = new
    else:
        arm = draw(st.integers(0, k - 1))
        d1[user, arm] = draw(unit_floats().filter(lambda v: v != d0[user, arm]))
    return Neighbours(d0, d1, user, relation)


def _features(draw, shape: tuple[int, ...]) -> np.ndarray:
    """Vectors along the last axis scaled into the unit ball (||x||_2 <= 1)."""
    raw = draw(hnp.arrays(np.float64, shape, elements=st.floats(-1.0, 1.0, allow_nan=False, width=32)))
    norms = np.linalg.norm(raw, axis=-1, keepdims=True)
    return raw / np.maximum(norms, 1.0)


def contextual_datasets(
    relation: str = "both",
    rounds: st.SearchStrategy[int] = st.integers(2, 24),
    arms: st.SearchStrategy[int] = st.integers(2, 5),
    dim: st.SearchStrategy[int] = st.integers(1, 4),
) -> st.SearchStrategy[Neighbours]:
    """{"features": (T, K, d), "rewards": (T, K)} pairs differing in one user's context, rewards or both."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown relation {relation!r}; choose one of {', '.join(RELATIONS)}")
    return _contextual_datasets(relation, rounds, arms, dim)


@st.composite
def _contextual_datasets(draw, relation, rounds, arms, dim) -> Neighbours:
    t_max, k, d = draw(rounds), draw(arms), draw(dim)
    feats = _features(draw, (t_max, k, d))
    rewards = draw(_unit_array((t_max, k)))
    user = draw(st.integers(0, t_max - 1))
    f1, r1 = feats.copy(), rewards.copy()
    if relation in ("context-only", "both"):
        new = _features(draw, (k, d))
        if np.array_equal(new, feats[user]):
            new = -new if np.any(new) else np.eye(k, d)  # the zero context: move to unit vectors
        f1[user] = new
    if relation in ("reward-only", "both"):
        r1[user] = draw(_unit_array((k,)).filter(lambda row: not np.array_equal(row, rewards[user])))
    return Neighbours({"features": feats, "rewards": rewards}, {"features": f1, "rewards": r1}, user, relation)


def typed_patients(
    relation: str = "both",
    units: st.SearchStrategy[int] = st.integers(2, 64),
    types: st.SearchStrategy[int] = st.integers(1, 5),
) -> st.SearchStrategy[Neighbours]:
    """{"types": (n,), "y0": (n,), "y1": (n,)} pairs differing in one unit's type, outcomes or both."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown relation {relation!r}; choose one of {', '.join(RELATIONS)}")
    return _typed_patients(relation, units, types)


@st.composite
def _typed_patients(draw, relation, units, types) -> Neighbours:
    n, m = draw(units), draw(types)
    if relation != "reward-only" and m < 2:
        m = 2  # a type change needs two types
    kinds = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, m - 1)))
    y0, y1 = draw(_unit_array((n,))), draw(_unit_array((n,)))
    user = draw(st.integers(0, n - 1))
    k1, z0, z1 = kinds.copy(), y0.copy(), y1.copy()
    if relation in ("context-only", "both"):
        k1[user] = draw(st.integers(0, m - 1).filter(lambda v: v != kinds[user]))
    if relation in ("reward-only", "both"):
        new = draw(st.tuples(unit_floats(), unit_floats()).filter(lambda p: p != (y0[user], y1[user])))
        z0[user], z1[user] = new
    return Neighbours({"types": kinds, "y0": y0, "y1": y1}, {"types": k1, "y0": z0, "y1": z1}, user, relation)
