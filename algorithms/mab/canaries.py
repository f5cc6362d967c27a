"""Canaries for one-run audits of DP-SE, Dist-DP-SE (and the other batch protocols) and Anytime-Lazy-UCB.

    target = one_run_target(DPSE(epsilon=1.0), horizon=1_000_000, num_canaries=1_000, n_arms=300)
    result = dpaudit.audit.one_run(*target, claim_epsilon=1.0)

One run of `horizon` users on K arms.  Every non-canary user's reward vector is 0 (known to the
auditor: white box); canary i is the user of a fixed round t_i whose reward vector is all ones
when canary i is included and all zeros when it is not, i.e. the two values of one user's data
under the algorithms' neighbouring relation (one round's reward vector, Hu, Huang, Mehta,
arXiv:2102.07929, §2; one user's reward, Chowdhury & Zhou, ICLR 2023, §2).  Each reward enters
exactly one released noisy sum (parallel composition), so that release is the canary's score.

The score reads only what the algorithm releases to the party its trust model does not trust
(`RELEASED`): `mechanism` returns `released_view(algorithm, outcome)`, the actions and that one
statistic, so nothing computed before the noise (e.g. CDP-SE's exact sum, which its trusted
server sees) can reach the score.  The one-run bound holds for the view it is computed from
(Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1, for the output of an eps-DP algorithm):

- DP-SE (Sajed & Sheffet, ICML 2019): arm a's epoch-e sum plus Lap(1/eps) ("noisy_sums"), minus
  the mean of epoch e's releases (which cancels a noise draw shared by all arms, the public-code
  variant `noise="shared"`);
- BatchSE protocols (Chowdhury & Zhou, ICLR 2023, Alg. 1): the release of arm a's batch
  ("releases", in Z_m), centred to (-m/2, m/2] and divided by the precision g, minus the batch's
  mean.  Distributed protocols (Thms 1, 2, 4): the SecAgg output (sum x_hat + sum of the users'
  noise) mod m; 'local' (Thm 6): the sum of the users' DLap(g/eps) messages mod m (a
  post-processing of the messages the server receives); 'central' (CDP-SE, App. H.1, Thm 5): the
  trusted analyzer's (sum x_hat + DLap(g/eps)) mod m, never the exact sum its server sees;
- Anytime-Lazy-UCB (Hu, Huang, Mehta, Alg. 1): the released sum of the array holding the canary's
  observation ("array_sums").

Canaries sharing a release share its score, and each sees the other's bit as noise: the catalog's
entries host one canary per release (`released_block_count`).  Placement: a dry run on the all-zero input (its own
fixed seed, independent of the coins) lists the released blocks; canary k goes to the
(k // B)-th round of block k mod B (B blocks), so every release gets one canary before any gets
two.  The score reads the real run's geometry, so a canary that lands elsewhere is still scored
by the release it entered (0 if none).  The audit is valid whatever the placement: the output is
eps-DP with respect to every canary (Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import Outcome
from dpaudit.validation import check_int_at_least, check_positive_int

__all__ = [
    "RELEASED",
    "CanaryRounds",
    "OneRunTarget",
    "one_run_target",
    "place_canaries",
    "released_block_count",
    "released_blocks",
    "released_statistic",
    "released_view",
    "tail_guesses",
]

PLACEMENT_SEED = 20231210  # the dry run that places the canaries (a fixed public choice)
_PLACEMENT_CHUNK = 1 << 20  # rounds read at once by `place_canaries`

# The statistic each family releases to the party its trust model does not trust (module docstring).
RELEASED: dict[type, str] = {DPSE: "noisy_sums", BatchSE: "releases", AnytimeLazyUCB: "array_sums"}


class OneRunTarget(NamedTuple):
    """The arguments `dpaudit.audit.one_run(mechanism, num_canaries, score, ...)` needs, in order.

    `mechanism` returns only what the algorithm releases under its trust model (its view), and
    `score` reads that view: the one-run bound (Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1)
    is a bound for the released output, not for the algorithm's internal state.
    """

    mechanism: Callable[[np.ndarray, np.random.Generator], Any]
    num_canaries: int
    score: Callable[[Any], np.ndarray]


@dataclasses.dataclass(frozen=True, eq=False)
class CanaryRounds:
    """K arms; round t's reward vector is all ones iff t is an included canary round, else all zeros.

    Stores only the included rounds (sorted), so T = 10^6 costs O(m) memory; every request of the
    multi-armed environments is answered exactly (block sums by binary search).
    """

    n_arms: int
    on: np.ndarray  # sorted rounds of the included canaries

    def __post_init__(self) -> None:
        check_int_at_least(self.n_arms, 2, "n_arms")
        object.__setattr__(self, "on", np.sort(np.asarray(self.on, dtype=np.int64)))

    def _count(self, start, length) -> np.ndarray:
        start = np.asarray(start, dtype=np.int64)
        end = start + np.asarray(length, dtype=np.int64)
        return (np.searchsorted(self.on, end) - np.searchsorted(self.on, start)).astype(float)

    def stream(self, rng: np.random.Generator, size: int) -> Callable[[int, np.ndarray], np.ndarray]:
        """A callable (t, arms) -> rewards: all ones at an included canary round, else zeros."""

        def draw(t: int, arms: np.ndarray) -> np.ndarray:
            return np.full(np.shape(arms), float(self._count(t, 1)))

        return draw

    def segment_sums(self, rng, arms, start, length, rows=None) -> np.ndarray:
        """Number of included canary rounds in [start, start + length), for each run."""
        return np.broadcast_to(self._count(start, length), np.shape(arms)).copy()

    def rounded_segment_sums(self, rng, arms, start, length, g: int, rows=None) -> np.ndarray:
        """Rewards are 0 or 1, so randomized rounding is exact: g * count."""
        return (g * self.segment_sums(rng, arms, start, length, rows)).astype(np.int64)

    def window(self, rng, arms, start, width: int) -> np.ndarray:
        """Rewards at rounds start[i] .. start[i]+width-1, shape (runs, width): 1 at included canary rounds."""
        pos = np.asarray(start, dtype=np.int64)[:, None] + np.arange(width)
        return np.isin(pos, self.on).astype(float)

    def vector_sums(self, rng, start: int, length: int, size: int) -> np.ndarray:
        """Number of included canary rounds in [start, start + length) for every arm, shape (size, K)."""
        return np.full((size, self.n_arms), float(self._count(start, length)))


def _segment_blocks(out: Outcome, values: np.ndarray) -> np.ndarray:
    """Block of every round for the elimination template: segment s is release s while s < len(values)."""
    seg = np.repeat(np.arange(out.lengths.shape[1]), out.lengths[0])
    seg[seg >= values.size] = -1  # in place: one array of T rounds, whatever the horizon
    return seg


def _centred_by_epoch(values: np.ndarray) -> np.ndarray:
    """Released values (1, E, K) with NaN where nothing was released -> flat non-NaN values minus their epoch's mean."""
    grid = values[0]
    mask = ~np.isnan(grid)
    means = np.where(mask, grid, 0.0).sum(axis=1, keepdims=True) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return (grid - means)[mask]


def released_statistic(algorithm: Any) -> str:
    """The name of the statistic `algorithm` releases under its trust model (`RELEASED`)."""
    for cls, name in RELEASED.items():
        if isinstance(algorithm, cls):
            return name
    raise TypeError(f"algorithm must be DPSE, BatchSE or AnytimeLazyUCB, got {type(algorithm).__name__}")


def released_view(algorithm: Any, out: Outcome) -> Outcome:
    """`out` as the untrusted party sees it: the actions and the released statistic, nothing else."""
    name = released_statistic(algorithm)
    return dataclasses.replace(out, statistics={name: np.asarray(out.statistics[name])})


def released_blocks(algorithm: Any, view: Outcome, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """(block of every round, -1 where the round's reward is in no release; score of every block).

    Blocks and scores as in the module docstring, read from the released statistic of one run's
    view (`view.size == 1`; `released_view`).
    """
    stat = view.statistics[released_statistic(algorithm)]
    if isinstance(algorithm, DPSE):
        values = _centred_by_epoch(stat)
        return _segment_blocks(view, values), values
    if isinstance(algorithm, BatchSE):
        agg = np.array(stat, dtype=float)
        for e in range(agg.shape[1]):
            params = algorithm.batch_params(algorithm.base ** (e + 1), horizon)
            m = float(params.m)
            agg[:, e] = (np.mod(agg[:, e] + m / 2, m) - m / 2) / params.g
        values = _centred_by_epoch(agg)
        return _segment_blocks(view, values), values
    if isinstance(algorithm, AnytimeLazyUCB):
        sums = stat[0]  # (K, levels)
        acts = view.actions()[0].astype(np.int64)
        order = np.argsort(acts, kind="stable")
        first = np.searchsorted(acts[order], acts[order])  # index of the arm's first pull in sorted order
        count = np.empty(acts.size, dtype=np.int64)
        count[order] = np.arange(acts.size) - first + 1  # 1-based pull number of its arm
        level = np.floor(np.log2(count)).astype(np.int64)
        block = acts * sums.shape[1] + level
        flat = sums.ravel()
        released = ~np.isnan(flat[block])
        return np.where(released, block, -1), np.nan_to_num(flat, nan=0.0)
    raise ValueError(f"algorithm must be DPSE, BatchSE (not shuffle) or AnytimeLazyUCB, got {type(algorithm).__name__}")


def place_canaries(block: np.ndarray, num_canaries: int) -> np.ndarray:
    """Rounds for `num_canaries` canaries: the first round of every released block, then the second, ...

    Slots are ordered by (rank of the round inside its block, block) and the first `num_canaries`
    taken.  The rounds are read in pieces of `_PLACEMENT_CHUNK`, keeping only the ranks the slots
    reach, so the placement's memory grows with the canaries and the blocks, not with the horizon.
    Raises ValueError when the released blocks hold fewer rounds than canaries.
    """
    block = np.asarray(block)
    sizes = np.zeros(max(int(block.max()) + 1, 0) if block.size else 0, dtype=np.int64)
    for _, piece in _pieces(block):
        sizes += np.bincount(piece[piece >= 0], minlength=sizes.size)
    if sizes.sum() < num_canaries:
        raise ValueError(
            f"num_canaries must be <= {sizes.sum()} (the rounds whose rewards are released in "
            f"this run), got {num_canaries}"
        )
    deepest, slots, by_size = -1, 0, np.sort(sizes)
    while slots < num_canaries:  # rank `deepest` holds one slot in every block of more rounds
        deepest += 1
        slots += by_size.size - int(np.searchsorted(by_size, deepest, side="right"))
    seen = np.zeros_like(sizes)
    kept = [(np.empty(0, dtype=np.int64),) * 3]  # (round, block, rank) of every slot
    for start, piece in _pieces(block):
        rounds = np.flatnonzero(piece >= 0)
        rounds = rounds[seen[piece[rounds]] <= deepest]  # skip the blocks whose slots are all read
        b = piece[rounds]
        order = np.argsort(b, kind="stable")  # by block, then by round
        first = np.searchsorted(b[order], b[order])
        rank = np.empty_like(rounds)
        rank[order] = np.arange(rounds.size) - first
        rank += seen[b]
        keep = rank <= deepest
        kept.append((rounds[keep] + start, b[keep], rank[keep]))
        seen += np.bincount(b, minlength=seen.size)
    rounds, b, rank = (np.concatenate(column) for column in zip(*kept))
    return np.sort(rounds[np.lexsort((b, rank))[:num_canaries]])


def _pieces(block: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(first round, blocks of the rounds from there) in consecutive pieces of `_PLACEMENT_CHUNK` rounds."""
    for start in range(0, block.size, _PLACEMENT_CHUNK):
        yield start, block[start : start + _PLACEMENT_CHUNK]


def _dry_run_blocks(algorithm: Any, horizon: int, n_arms: int) -> np.ndarray:
    """The block of every round in the placement's dry run (all-zero input, `PLACEMENT_SEED`)."""
    dry = algorithm.run(CanaryRounds(n_arms, np.empty(0)), np.random.default_rng(PLACEMENT_SEED), 1, horizon)
    return released_blocks(algorithm, released_view(algorithm, dry), horizon)[0]


def released_block_count(algorithm: Any, horizon: int, n_arms: int) -> int:
    """How many releases the placement's dry run makes: the most canaries that get a release each."""
    released_statistic(algorithm)  # TypeError for an algorithm that releases no noisy statistic
    horizon = check_positive_int(horizon, "horizon")
    n_arms = check_int_at_least(n_arms, 2, "n_arms")
    block = _dry_run_blocks(algorithm, horizon, n_arms)
    return int(np.unique(block[block >= 0]).size)


def tail_guesses(num_canaries: int, epsilon: float) -> tuple[tuple[int, int]]:
    """The guess pair (k, k) fixed before the run from the claim: k = floor(m (1 + e^-eps) / 4).

    A canary's release is a sensitivity-1 sum plus Lap(1/eps) (or its discrete analogue): its score
    moves by 1 with the canary's bit, and the likelihood ratio of the two bits is exactly e^eps on
    {score > 1} and e^-eps on {score < 0}.  Each tail holds (1 + e^-eps) / 4 of the canaries on
    average (half are included, in the upper tail with probability 1/2; half are not, with
    probability e^-eps / 2), so guessing "in" for the k highest scores and "out" for the k lowest
    guesses every canary of the tails at the best precision e^eps / (1 + e^eps).  One pair fixed in
    advance is tested at the full level (no Bonferroni over a grid; Steinke, Nasr, Jagielski,
    NeurIPS 2023, Thm 3.1).
    """
    m = check_positive_int(num_canaries, "num_canaries")
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    k = max(1, int(m * (1.0 + math.exp(-epsilon)) / 4))
    return ((k, k),)


def one_run_target(algorithm: Any, horizon: int, num_canaries: int, *, n_arms: int = 100) -> OneRunTarget:
    """One run of `algorithm` for `horizon` users on `n_arms` arms hosting `num_canaries` canaries.

    `algorithm`: a `DPSE`, a `BatchSE` (any protocol but "shuffle", whose server view is a count of
    shuffled bits) or an `AnytimeLazyUCB`.  Returns `OneRunTarget(mechanism, num_canaries, score)`:
    `mechanism(inclusion, rng)` runs the algorithm once on `CanaryRounds` and returns its
    `released_view` (actions and the released statistic only), `score(view)` the released value
    each canary entered (module docstring).
    """
    horizon = check_positive_int(horizon, "horizon")
    m = check_positive_int(num_canaries, "num_canaries")
    k = check_int_at_least(n_arms, 2, "n_arms")
    if horizon < k:
        raise ValueError(f"horizon must be >= n_arms = {k}, got {horizon}")
    if isinstance(algorithm, BatchSE) and algorithm.protocol == "shuffle":
        raise ValueError(
            "algorithm: BatchSE protocol 'shuffle' cannot host canaries (its server view is one "
            "count of shuffled bits per batch); use another protocol"
        )
    if not isinstance(algorithm, (DPSE, BatchSE, AnytimeLazyUCB)):
        raise TypeError(f"algorithm must be DPSE, BatchSE or AnytimeLazyUCB, got {type(algorithm).__name__}")

    rounds = place_canaries(_dry_run_blocks(algorithm, horizon, k), m)

    def mechanism(inclusion: np.ndarray, rng: np.random.Generator) -> Outcome:
        out = algorithm.run(CanaryRounds(k, rounds[np.asarray(inclusion, dtype=bool)]), rng, 1, horizon)
        return released_view(algorithm, out)

    def score(view: Outcome) -> np.ndarray:
        block, values = released_blocks(algorithm, view, horizon)
        mine = block[rounds]
        return np.where(mine >= 0, values[np.maximum(mine, 0)], 0.0)

    mechanism.__name__ = f"{algorithm.name}_canaries"
    return OneRunTarget(mechanism, m, score)
