"""Binary-tree (continual-release) aggregation: private prefix sums of a stream.

The binary mechanism of Dwork, Naor, Pitassi, Rothblum ("Differential privacy under continual
observation", STOC 2010) and Chan, Shi, Song ("Private and continual release of statistics",
ACM TISSEC 2011, Alg. 2, the binary counter). Leaves are numbered t = 1..T. At step t the tree
releases exactly one new node, the dyadic interval (t - 2^v, t] with v = the number of trailing
zero bits of t, as its exact sum plus fresh noise drawn once for that node (never redrawn). The
prefix sum over [1, t] is the sum of the released nodes at the set bits of t: node ending at
(t >> l) << l for every bit l set in t (at most ⌊log2 T⌋ + 1 nodes).

Privacy: a leaf lies in at most ``tree_depth(T) = ⌊log2 T⌋ + 1`` released nodes (leaf 1 attains it),
so one changed leaf is an adaptive composition of that many Laplace or Gaussian node releases.
dp-accounting counts the same depth for its `SingleEpochTreeAggregationDpEvent` (ceil(log2(T+1))).

Used by Hybrid-UCB (Hu, Huang, Mehta, Alg. 4; Laplace node noise), Private-GLM (Sarmasarkar, Alg. 2, App. I.1;
design-matrix trees) and Shariff & Sheffet's JDP LinUCB (Gaussian noise on symmetric d×d matrices). A paper's own
calibration of its trees, and its claimed accounting, live with the algorithm (`dpaudit.algorithms`).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import dp_accounting
import numpy as np

from dpaudit.mechanisms.samplers import gaussian, laplace
from dpaudit.validation import (
    check_choice,
    check_finite_array,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

__all__ = [
    "TREE_NOISES",
    "TREE_SYMMETRIZATIONS",
    "BinaryTree",
    "TreeRelease",
    "TreeStream",
    "nodes_containing_leaf",
    "paper_tree_depth",
    "prefix_cover",
    "symmetric_noise",
    "tree_depth",
]

TREE_NOISES = ("gaussian", "laplace")
TREE_SYMMETRIZATIONS = ("upper", "average")


def tree_depth(horizon: int) -> int:
    """Largest number of released nodes that hold one leaf: ⌊log2 T⌋ + 1 (= T.bit_length()).

    Leaf 1 lies in the nodes (0, 2^l] for every l with 2^l <= T; no leaf lies in two nodes of
    one level. Equals the paper convention ⌈log2 T⌉ + 1 when T is a power of two, is smaller
    otherwise (nodes that would end after T are never released).
    """
    return check_positive_int(horizon, "horizon").bit_length()


def paper_tree_depth(horizon: int) -> int:
    """The papers' count of nodes per leaf, m = ⌈log2 T + 1⌉ = ⌈log2 T⌉ + 1 (Sarmasarkar, §6, App. I.1;
    the tree of Shariff & Sheffet 2018 behind Chowdhury & Zhou 2022, Prop. F.3). Always >= `tree_depth(T)`, so accounting with it is safe (never optimistic)."""
    horizon = check_positive_int(horizon, "horizon")
    return (horizon - 1).bit_length() + 1


def prefix_cover(t: int) -> list[tuple[int, int]]:
    """Nodes (level l, end time e) whose sum is the prefix [1, t]: e = (t >> l) << l, l a set bit of t."""
    t = check_positive_int(t, "t")
    return [(level, (t >> level) << level) for level in range(t.bit_length()) if (t >> level) & 1]


def nodes_containing_leaf(leaf: int, horizon: int) -> list[tuple[int, int]]:
    """Released nodes (level l, end time e) of a tree of `horizon` leaves whose interval holds `leaf`.

    A node of level l is released at its end time e when e's lowest set bit is l (binary counter),
    so it holds leaf s iff e - 2^l < s <= e; the candidate at level l is e = ⌈s / 2^l⌉·2^l.
    """
    horizon = check_positive_int(horizon, "horizon")
    leaf = check_positive_int(leaf, "leaf")
    if leaf > horizon:
        raise ValueError(f"leaf must lie in 1..horizon={horizon}, got {leaf}")
    out = []
    for level in range(horizon.bit_length()):
        end = -(-leaf // (1 << level)) << level
        if end <= horizon and (end >> level) & 1:
            out.append((level, end))
    return out


def _trailing_zeros(t: np.ndarray) -> np.ndarray:
    """Number of trailing zero bits of each positive integer in `t` (exact, integer arithmetic)."""
    low = t & -t
    return np.frexp(low.astype(float))[1] - 1


@functools.lru_cache(maxsize=64)
def _upper_index(dim: int) -> tuple[int, np.ndarray]:
    """(number of entries i <= j, the (dim*dim,) map from each entry (i, j) to its upper entry)."""
    iu, ju = np.triu_indices(dim)
    index = np.empty((dim, dim), dtype=np.intp)
    index[iu, ju] = np.arange(iu.size)
    index[ju, iu] = np.arange(iu.size)
    return iu.size, index.ravel()


def symmetric_noise(
    rng: np.random.Generator, size: tuple[int, ...], dim: int, noise: str, scale: float, symmetrize: str
) -> np.ndarray:
    """Noise matrices of shape size + (dim, dim) that are symmetric.

    symmetrize="upper": entries i <= j i.i.d. (Laplace or Gaussian with `scale`), copied to j > i
    (Chowdhury & Zhou 2022, Alg. 2 / App. B.1); the release is a mechanism on the d(d+1)/2 upper entries.
    symmetrize="average": Z = (Z' + Z'ᵀ)/2 with Z' i.i.d. Gaussian (Sarmasarkar, Lemma I.4): diagonal
    std `scale`, off-diagonal std scale/√2; the release is a Gaussian mechanism whose sensitivity is
    the Frobenius norm of the change (Sarmasarkar (shuffle/joint-DP GLM bandits), Lemma I.4). Gaussian only (a sum of two Laplaces is not
    Laplace).
    """
    if symmetrize == "upper":
        count, index = _upper_index(dim)
        vals = _draw(rng, noise, scale, size + (count,))
        return np.take(vals, index, axis=-1).reshape(size + (dim, dim))
    if noise != "gaussian":
        raise ValueError(f"symmetrize='average' needs noise='gaussian', got noise={noise!r}")
    z = _draw(rng, noise, scale, size + (dim, dim))
    return 0.5 * (z + np.swapaxes(z, -1, -2))


def _draw(rng: np.random.Generator, noise: str, scale: float, size: tuple[int, ...]) -> np.ndarray:
    if scale == 0.0:
        return np.zeros(size)
    if noise == "gaussian":
        return gaussian(rng, scale, size)
    return laplace(rng, scale, size)


@dataclasses.dataclass(frozen=True)
class TreeRelease:
    """Everything a tree released over steps 1..n, for `runs` independent runs.

    prefix_sums[r, t-1] = noisy sum of leaves 1..t; node_sums[r, t-1] = the node released at
    step t, i.e. the sum of leaves node_start[t-1]+1 .. t plus its noise; node_level[t-1] = v(t)
    (node length 2^v). Arrays have shape (runs, n) + leaf shape.
    """

    prefix_sums: np.ndarray
    node_sums: np.ndarray
    node_start: np.ndarray
    node_level: np.ndarray


@dataclasses.dataclass(frozen=True)
class BinaryTree:
    """A binary-tree aggregator of `horizon` leaves of shape `shape` with per-node noise.

    noise: "gaussian" (std `scale` per coordinate) or "laplace" (scale b = `scale`); scale = 0 is
    the noiseless tree (exact prefix sums). shape: () scalars, (d,) vectors, (d, d) matrices.
    symmetric: leaves are symmetric d×d matrices and the node noise is symmetric (see
    `symmetric_noise` for the two conventions `symmetrize` = "upper" | "average").
    """

    horizon: int
    noise: str
    scale: float
    shape: tuple[int, ...] = ()
    symmetric: bool = False
    symmetrize: str = "upper"

    def __post_init__(self) -> None:
        object.__setattr__(self, "horizon", check_positive_int(self.horizon, "horizon"))
        check_choice(self.noise, TREE_NOISES, "noise")
        object.__setattr__(self, "scale", check_nonnegative(self.scale, "scale"))
        if not isinstance(self.shape, tuple):
            raise TypeError(f"shape must be (), (d,) or (d, d), got {self.shape!r}")
        if len(self.shape) > 2:
            raise ValueError(f"shape must be (), (d,) or (d, d), got {self.shape!r}")
        shape = tuple(check_positive_int(s, "shape") for s in self.shape)
        object.__setattr__(self, "shape", shape)
        check_choice(self.symmetrize, TREE_SYMMETRIZATIONS, "symmetrize")
        if self.symmetric:
            if len(shape) != 2 or shape[0] != shape[1]:
                raise ValueError(f"shape must be (d, d) for symmetric=True, got {shape}")
            if self.symmetrize == "average" and self.noise != "gaussian":
                raise ValueError("symmetrize='average' needs noise='gaussian' (a sum of Laplaces is not Laplace)")

    @property
    def depth(self) -> int:
        """Released nodes per leaf in the worst case, `tree_depth(horizon)`."""
        return tree_depth(self.horizon)

    def node_noise(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Fresh node noise of shape size + shape."""
        if self.symmetric:
            return symmetric_noise(rng, size, self.shape[0], self.noise, self.scale, self.symmetrize)
        return _draw(rng, self.noise, self.scale, size + self.shape)

    def start(self, rng: np.random.Generator, runs: int, run_scale: np.ndarray | None = None) -> TreeStream:
        """A streaming tree for `runs` independent runs, each with its own leaf counter (see
        `TreeStream`); run i's node noise has scale `scale`·run_scale[i] (default 1)."""
        return TreeStream(self, rng, check_positive_int(runs, "runs"), run_scale)

    def run(self, rng: np.random.Generator, leaves: np.ndarray) -> TreeRelease:
        """Release all nodes and prefix sums of a whole (non-adaptive) stream at once.

        leaves: shape (runs, n) + shape with n <= horizon. The noise is drawn step by step in the
        same order as `start(rng, runs)` with n inserts, so both give the same release.
        """
        leaves = check_finite_array(leaves, "leaves")
        if leaves.ndim != 2 + len(self.shape) or leaves.shape[2:] != self.shape:
            raise ValueError(f"leaves must have shape (runs, n) + {self.shape}, got {leaves.shape}")
        runs, n = leaves.shape[:2]
        if not 1 <= n <= self.horizon:
            raise ValueError(f"leaves must hold 1..horizon={self.horizon} steps, got {n}")
        if runs < 1:
            raise ValueError("leaves must hold at least one run")
        t = np.arange(1, n + 1)
        level = _trailing_zeros(t)
        start = t - (1 << level)
        # time-major internally (row gathers are contiguous); (runs, n, ...) views on return
        csum = np.zeros((n + 1, runs) + self.shape)
        np.cumsum(np.moveaxis(leaves, 1, 0), axis=0, out=csum[1:])
        nodes = csum[t] - csum[start]
        nodes += self.node_noise(rng, (n, runs))
        # prefix(t) = prefix(t - 2^v(t)) + node(t): the cover of t is the cover of t with its lowest
        # set bit cleared, plus the node released at t. Fill by popcount, O(T) work in all.
        prefix = nodes.copy()
        popcount = np.array([bin(x).count("1") for x in range(n + 1)])[1:]
        for k in range(2, int(popcount.max()) + 1):
            idx = np.flatnonzero(popcount == k)
            prefix[idx] += prefix[start[idx] - 1]
        prefix, nodes = np.moveaxis(prefix, 0, 1), np.moveaxis(nodes, 0, 1)
        return TreeRelease(prefix, nodes, start, level)

    def leaf_sensitivity(self, diff: np.ndarray) -> float:
        """Norm of a change `diff` of one leaf in the coordinates the noise protects.

        Gaussian: L2 norm; Laplace: L1 norm. Symmetric leaves with symmetrize="upper": over the
        upper triangle (the released coordinates); with "average": the Frobenius norm (Sarmasarkar (shuffle/joint-DP GLM bandits)
        §3.1: the (Z'+Z'ᵀ)/2 release is a Gaussian mechanism of sensitivity ‖Δ‖_F).
        """
        diff = check_finite_array(diff, "diff")
        if diff.shape != self.shape:
            raise ValueError(f"diff must have the leaf shape {self.shape}, got {diff.shape}")
        if self.symmetric:
            if not np.allclose(diff, diff.T):
                raise ValueError("diff must be symmetric for a symmetric tree")
            if self.symmetrize == "upper":
                diff = diff[np.triu_indices(self.shape[0])]
        order = 2 if self.noise == "gaussian" else 1
        return float(np.linalg.norm(np.ravel(diff), ord=order))

    def node_event(self, sensitivity: float) -> dp_accounting.DpEvent:
        """One node release: Gaussian (noise multiplier σ/Δ2) or Laplace (b/Δ1) of a leaf change."""
        sensitivity = check_positive(sensitivity, "sensitivity")
        if self.scale == 0.0:
            return dp_accounting.NonPrivateDpEvent()
        if self.noise == "gaussian":
            return dp_accounting.GaussianDpEvent(noise_multiplier=self.scale / sensitivity)
        return dp_accounting.LaplaceDpEvent(noise_multiplier=self.scale / sensitivity)

    def event(self, sensitivity: float, nodes_per_leaf: int | None = None) -> dp_accounting.DpEvent:
        """The whole stream (event level: one leaf changes by at most `sensitivity`).

        SelfComposedDpEvent(node_event, m) with m = `depth` released nodes holding the leaf (the
        composition may be adaptive: leaves may depend on earlier releases). For Gaussian noise
        this equals a Gaussian mechanism of L2 sensitivity √m·Δ; for Laplace, pure ε = m·Δ/b.
        `nodes_per_leaf` overrides m, to state a paper's own (possibly wrong) count.
        """
        m = self.depth if nodes_per_leaf is None else check_positive_int(nodes_per_leaf, "nodes_per_leaf")
        node = self.node_event(sensitivity)
        return node if m == 1 else dp_accounting.SelfComposedDpEvent(node, m)


class TreeStream:
    """Streaming state of a `BinaryTree` over a batch of runs (binary counter, O(log T) memory).

    Each run has its own counter: `insert(leaf, mask)` adds the next leaf of every run with mask
    True (all runs when mask is None), releases that run's node (noise drawn once for it, never
    redrawn) and returns the noisy prefix sums of all runs, shape (runs,) + shape; `counts[i]` is
    run i's number of leaves, `last_node[i]` the node its last insert released. `restart(mask)`
    starts a new empty tree in the masked runs. `lookahead(leaves, mask)` gives the prefix sums
    after each of the next W leaves before inserting them, `advance(n)` inserts the first n[i]. `run_scale` (shape (runs,), default 1) multiplies
    run i's node noise: scale tree.scale·run_scale[i] (Laplace, Gaussian and the symmetric noises
    are scale families). While all runs insert in lock step, node noise is drawn from `rng` in
    blocks of consecutive steps (the same values, in the same order, as one draw per step, so a
    lock-step stream equals `BinaryTree.run`); masked inserts take one node noise per masked run from
    a pool drawn ahead in blocks (each value used once, never redrawn).
    """

    _BLOCK_VALUES = 1 << 16

    def __init__(
        self, tree: BinaryTree, rng: np.random.Generator, runs: int, run_scale: np.ndarray | None = None
    ) -> None:
        self.tree = tree
        self.runs = runs
        self.counts = np.zeros(runs, dtype=np.int64)
        self._lockstep = True  # every run has had the same inserts (block noise applies)
        self._run_scale = self._check_scale(run_scale, np.ones(runs))
        levels = tree.depth
        self._levels = np.arange(levels)
        self._exact = np.zeros((runs, levels) + tree.shape)
        self._noisy = np.zeros((runs, levels) + tree.shape)
        self._rng = rng
        self._block = np.zeros((0, runs) + tree.shape)
        self._block_pos = 0
        self._block_len = max(1, self._BLOCK_VALUES // (runs * max(1, math.prod(tree.shape))))
        self._pending: tuple | None = None  # the last lookahead, until `advance`
        self._pool = np.zeros((0,) + tree.shape)  # masked mode: node noises drawn ahead, used in order
        self._pool_len = max(1, self._BLOCK_VALUES // max(1, math.prod(tree.shape)))
        self.last_node = np.zeros((runs,) + tree.shape)
        self.prefix = np.zeros((runs,) + tree.shape)

    def _check_scale(self, run_scale: np.ndarray | None, default: np.ndarray) -> np.ndarray:
        if run_scale is None:
            return default
        run_scale = check_finite_array(run_scale, "run_scale")
        if run_scale.shape != default.shape or np.any(run_scale <= 0):
            raise ValueError(f"run_scale must be positive with shape {default.shape}, got shape {run_scale.shape}")
        return run_scale.astype(float)

    def _check_mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        return None if mask is None else self._mask(mask)

    def _mask(self, mask: np.ndarray) -> np.ndarray:
        """`mask` as a boolean array of shape (runs,): TypeError for another dtype, ValueError for another shape."""
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise TypeError(f"mask must be a boolean array of shape ({self.runs},), got {mask.dtype} {mask.shape}")
        if mask.shape != (self.runs,):
            raise ValueError(f"mask must be a boolean array of shape ({self.runs},), got {mask.dtype} {mask.shape}")
        return mask

    def _scaled(self, noise: np.ndarray, idx: np.ndarray | slice) -> np.ndarray:
        scale = self._run_scale[idx]
        return noise * scale.reshape(scale.shape + (1,) * (noise.ndim - scale.ndim))

    def _next_noise(self) -> np.ndarray:
        if self._block_pos == self._block.shape[0]:
            steps = min(self._block_len, self.tree.horizon - int(self.counts[0]))
            self._block = self.tree.node_noise(self._rng, (steps, self.runs))
            self._block_pos = 0
        self._block_pos += 1
        return self._scaled(self._block[self._block_pos - 1], slice(None))

    def _pooled_noise(self, n: int) -> np.ndarray:
        """The next n node noises (unit run scale): consecutive values of one long draw, which has
        the law of a fresh draw per node."""
        if self._pool.shape[0] < n:
            fresh = self.tree.node_noise(self._rng, (max(n, self._pool_len),))
            self._pool = np.concatenate([self._pool, fresh])
        out, self._pool = self._pool[:n], self._pool[n:]
        return out

    def insert(self, leaf: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Add the next leaf of each masked run (leaf rows of other runs are ignored), release its
        node, return the prefix sums of all runs. leaf: shape (runs,) + shape; mask: (runs,) bool."""
        leaf = check_finite_array(leaf, "leaf")
        want = (self.runs,) + self.tree.shape
        if leaf.shape != want:
            raise ValueError(f"leaf must have shape {want}, got {leaf.shape}")
        mask = self._check_mask(mask)
        self._pending = None
        if mask is not None and mask.all():
            mask = None
        if mask is None and self._lockstep:
            return self._insert_lockstep(leaf)
        idx = np.arange(self.runs) if mask is None else np.flatnonzero(mask)
        self._lockstep = False
        if idx.size == 0:
            return self.prefix
        count = self.counts[idx] + 1
        if count.max() > self.tree.horizon:
            raise ValueError(f"the tree is full: horizon={self.tree.horizon} leaves already inserted")
        level = _trailing_zeros(count)
        ext = (1,) * len(self.tree.shape)
        below = (self._levels[None, :] < level[:, None]).reshape((idx.size, self._levels.size) + ext)
        exact, noisy = self._exact[idx], self._noisy[idx]
        # the bits below `level` were set in count-1 and are cleared in count: merge their exact
        # sums into the new node and drop their noisy nodes from the prefix
        node = np.where(below, exact, 0.0).sum(axis=1) + leaf[idx]
        prefix = self.prefix[idx] - np.where(below, noisy, 0.0).sum(axis=1)
        released = node + self._scaled(self._pooled_noise(idx.size), idx)
        rows = np.arange(idx.size)
        exact[rows, level] = node
        noisy[rows, level] = released
        self._exact[idx], self._noisy[idx] = exact, noisy
        self.prefix[idx] = prefix + released
        self.last_node[idx] = released
        self.counts[idx] = count
        return self.prefix

    def _insert_lockstep(self, leaf: np.ndarray) -> np.ndarray:
        t = int(self.counts[0])
        if t >= self.tree.horizon:
            raise ValueError(f"the tree is full: horizon={self.tree.horizon} leaves already inserted")
        noise = self._next_noise()
        t += 1
        level = (t & -t).bit_length() - 1
        if level:
            node = self._exact[:, :level].sum(axis=1) + leaf
            self._exact[:, :level] = 0.0
            self.prefix = self.prefix - self._noisy[:, :level].sum(axis=1)
        else:
            node = leaf
        self._exact[:, level] = node
        self._noisy[:, level] = node + noise
        self.last_node = self._noisy[:, level].copy()
        self.prefix = self.prefix + self.last_node
        self.counts += 1
        return self.prefix

    def lookahead(self, leaves: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Prefix sums of each masked run after k = 1..W more leaves, shape (runs, W) + shape, before
        they are inserted; `advance(n)` then inserts the first n[i] of them in run i.

        leaves: shape (runs, W) + shape (rows of other runs ignored). The node released at each of
        the W future steps gets its noise now, once; the prefix after k leaves is the exact prefix
        plus the noises of the nodes at the set bits of the count (stored ones, or new). Entries
        past the horizon are NaN; unmasked rows repeat the current prefix. Values past the n[i]
        later inserted are not releases (their noise is discarded), so a caller's decisions may
        depend on the value after k leaves only once those k leaves are inserted: a simulator
        looks ahead to find how many steps an arm keeps being chosen (Hybrid-UCB's window engine).
        """
        leaves = check_finite_array(leaves, "leaves")
        shape = self.tree.shape
        if leaves.ndim != 2 + len(shape) or leaves.shape[0] != self.runs or leaves.shape[2:] != shape:
            raise ValueError(f"leaves must have shape ({self.runs}, W) + {shape}, got {leaves.shape}")
        mask = self._check_mask(mask)
        idx = np.arange(self.runs) if mask is None else np.flatnonzero(mask)
        self._lockstep = False
        W = leaves.shape[1]
        n, ext = idx.size, (1,) * len(shape)
        m0 = self.counts[idx]
        mk = m0[:, None] + np.arange(1, W + 1)[None, :]  # (n, W)
        shift = mk[:, :, None] >> self._levels  # (n, W, L)
        bit = ((shift & 1) == 1).reshape(shift.shape + ext)
        old = ((shift << self._levels) <= m0[:, None, None]).reshape(shift.shape + ext)
        exact, noisy = self._exact[idx], self._noisy[idx]
        m0_bits = (((m0[:, None] >> self._levels) & 1) == 1).reshape((n, self._levels.size) + ext)
        exact0 = np.where(m0_bits, exact, 0.0).sum(axis=1)  # exact prefix over 1..m0
        fresh = self._scaled(self._pooled_noise(n * W).reshape((n, W) + shape), idx)
        # noise of the node ending at e > m0 at level l: fresh[e - m0 - 1]
        pick = np.clip(((shift << self._levels) - m0[:, None, None]) - 1, 0, W - 1)
        new = fresh[np.arange(n)[:, None, None], pick]
        val = np.where(old, (noisy - exact)[:, None], new)
        csum = np.cumsum(leaves[idx], axis=1)
        prefix = exact0[:, None] + csum + np.where(bit, val, 0.0).sum(axis=2)
        prefix[mk > self.tree.horizon] = np.nan
        out = np.repeat(self.prefix[:, None], W, axis=1)
        out[idx] = prefix
        self._pending = (idx, m0, leaves[idx], fresh, prefix)
        return out

    def advance(self, steps: np.ndarray) -> np.ndarray:
        """Insert the first steps[i] (0..W) leaves of the last `lookahead` in each of its masked
        runs, with the node noises drawn there; returns the prefix sums of all runs. steps: (runs,)."""
        pending = getattr(self, "_pending", None)
        if pending is None:
            raise ValueError("advance needs a lookahead first")
        idx, m0, leaves, fresh, prefix = pending
        self._pending = None
        steps = np.asarray(steps)
        if not np.issubdtype(steps.dtype, np.integer):
            raise TypeError(f"steps must be an integer array of shape ({self.runs},), got {steps.dtype} {steps.shape}")
        if steps.shape != (self.runs,):
            raise ValueError(f"steps must be an integer array of shape ({self.runs},), got {steps.dtype} {steps.shape}")
        n = steps[idx]
        W = leaves.shape[1]
        if np.any(n < 0) or np.any(n > W) or np.any(m0 + n > self.tree.horizon):
            raise ValueError(f"steps must lie in 0..{W} (the lookahead) and keep each run within the horizon")
        go = n > 0
        idx, m0, n, leaves, fresh, prefix = idx[go], m0[go], n[go], leaves[go], fresh[go], prefix[go]
        if idx.size == 0:
            return self.prefix
        ext = (1,) * len(self.tree.shape)
        rows = np.arange(idx.size)
        count = m0 + n
        exact, noisy = self._exact[idx], self._noisy[idx]
        m0_bits = (((m0[:, None] >> self._levels) & 1) == 1).reshape((idx.size, self._levels.size) + ext)
        low = np.cumsum(np.where(m0_bits, exact, 0.0), axis=1) - np.where(m0_bits, exact, 0.0)  # levels < l
        csum = np.concatenate([np.zeros((idx.size, 1) + self.tree.shape), np.cumsum(leaves, axis=1)], axis=1)
        ends = (count[:, None] >> self._levels) << self._levels  # (n, L)
        renew = (((count[:, None] >> self._levels) & 1) == 1) & (ends > m0[:, None])
        pos = np.clip(ends - m0[:, None], 0, leaves.shape[1])
        start = np.clip(ends - (1 << self._levels) - m0[:, None], 0, leaves.shape[1])
        straddle = (ends - (1 << self._levels) <= m0[:, None]).reshape(ends.shape + ext)
        # exact node (e - 2^l, e]: window leaves, plus (if it starts at or before m0) the old
        # leaves (e - 2^l, m0], which are m0's stored nodes below level l
        node = csum[rows[:, None], pos] - csum[rows[:, None], start] + np.where(straddle, low, 0.0)
        released = node + fresh[rows[:, None], np.maximum(pos - 1, 0)]
        r = renew.reshape(renew.shape + ext)
        self._exact[idx] = np.where(r, node, exact)
        self._noisy[idx] = np.where(r, released, noisy)
        level = _trailing_zeros(count)
        self.last_node[idx] = released[rows, level]
        self.prefix[idx] = prefix[rows, n - 1]
        self.counts[idx] = count
        return self.prefix

    def restart(self, mask: np.ndarray, run_scale: np.ndarray | None = None) -> None:
        """Start a new empty tree (no leaves, prefix 0) in each masked run; `run_scale` (shape
        (runs,)) gives the new noise multipliers of the masked runs (others keep theirs)."""
        mask = self._mask(mask)
        scale = self._check_scale(run_scale, self._run_scale)
        self._pending = None
        if not mask.any():
            return
        self._lockstep = False
        self._run_scale = np.where(mask, scale, self._run_scale)
        self._exact[mask] = 0.0
        self._noisy[mask] = 0.0
        self.prefix[mask] = 0.0
        self.last_node[mask] = 0.0
        self.counts[mask] = 0
