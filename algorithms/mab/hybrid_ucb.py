"""Hybrid-UCB (Hu, Huang, Mehta (arXiv:2102.07929), Algorithm 4, App. E.2; summary §4.2): arrays plus a binary tree per arm.

Arm j's observations 2^r .. 2^{r+1}-1 (1-based, r >= 1) form tree r with 2^r leaves and,
in parallel, array F^(r). Full arrays are released once as sum + Lap(2/eps) (the "array part",
Alg. 1 at budget eps/2; the init observation is array 0). The current tree releases, after each
pull, the dyadic node that just completed with noise Lap(s_r) fixed per node (binary counter of
Chan, Shi & Song 2011); its prefix B~ is the sum of the nodes at the set bits of the leaf count.
    mu_j = (F~ + B~) / O_j                                                     (eq. 34)
    A_t = argmax_j mu_j + sqrt(3 log2 t / O_j) + 6 sqrt(8) log2 t floor(log2(O_j+1)) / (eps O_j)   (eq. 35)

Node scale s_r (`node_scale`): 'paper' s_r = r/(0.5 eps) (log2 of the tree size; Thm 5 claims
eps); a leaf, however, lies in r+1 released nodes (levels 0..r), so the tree costs 0.5eps(r+1)/r
and the whole 1.5 eps at r = 1 (Hu, Huang, Mehta (arXiv 2021), Alg. 4). 'fixed' s_r = (r+1)/(0.5 eps) restores eps.
The scales and the claimed/corrected tree events are `hybrid_ucb_node_scale` and `hybrid_ucb_tree_events`
below (a `dpaudit.mechanisms.tree.BinaryTree` per tree).

Simulation (`engine`): both engines keep B~ in one `TreeStream` of mechanisms.tree with a
counter per (run, arm) (node noise Lap(1) times the run scale s_r; a full tree r restarts as tree
r+1 with scale s_(r+1)). 'rounds' runs all runs one round per step: the pulled arm's counter
inserts its leaf (masked insert). 'windows' (default) gives the same law faster: the other arms'
indices change only through t while the leader J is pulled, so J's next w rewards are drawn at
once and `TreeStream.lookahead` gives its B~ after each of those pulls (node noises drawn once),
its index after each pull is computed vectorised, and J is pulled (`TreeStream.advance`) until the
first round where another arm's index wins (lowest index on ties) or its tree fills. Draws past
that round are discarded: rewards of unplayed rounds and noises of nodes never released are never
observed. `hybrid_arm_releases` gives one arm's releases for a fixed observation stream through
`mechanisms.tree.BinaryTree` (white-box audits).
"""

from __future__ import annotations

import dataclasses

import dp_accounting
import numpy as np

from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.mab.base import Algorithm, resolve_horizon
from dpaudit.algorithms.mab.outcome import Outcome, SegmentLog
from dpaudit.mechanisms.tree import BinaryTree
from dpaudit.privacy import Guarantee, Privacy
from dpaudit.validation import check_choice, check_epsilon, check_finite_array, check_positive, check_positive_int

__all__ = ["HYBRID_ENGINES", "HYBRID_NODE_SCALES", "HybridUCB", "hybrid_arm_releases"]

HYBRID_NODE_SCALES = ("paper", "fixed")
HYBRID_ENGINES = ("windows", "rounds")
_WINDOW_CELLS = 1 << 17  # bound on runs * window * levels per step of the window engine


def hybrid_ucb_node_scale(epsilon: float, tree_index: int) -> float:
    """Hu, Huang, Mehta, Alg. 4 / App. E.2 (Hybrid-UCB): node noise Lap(log2(λ)/(0.5ε)) = Lap(r/(0.5ε))
    for tree r with λ = 2^r leaves."""
    epsilon = check_epsilon(epsilon)
    r = check_positive_int(tree_index, "tree_index")
    return r / (0.5 * epsilon)


def hybrid_ucb_tree_events(
    epsilon: float, tree_index: int, node_scale: float | None = None
) -> tuple[dp_accounting.DpEvent, dp_accounting.DpEvent]:
    """(claimed, corrected) events of Hybrid-UCB's tree r (Hu, Huang, Mehta, Thm 5 / App. E.3.1).

    Claimed: the paper counts log2(λ) = r nodes per leaf, so Lap(r/(0.5ε)) nodes cost 0.5ε.
    Corrected: leaf 1 of a tree of 2^r leaves lies in r + 1 released nodes (levels 0..r, the root
    included), so the tree part costs 0.5ε(r+1)/r (1.5× at r = 1 with the array
    part). Rewards lie in [0, 1]: leaf sensitivity 1. `node_scale` defaults to the paper's.
    """
    r = check_positive_int(tree_index, "tree_index")
    scale = hybrid_ucb_node_scale(epsilon, r) if node_scale is None else check_positive(node_scale, "node_scale")
    tree = BinaryTree(horizon=1 << r, noise="laplace", scale=scale)
    return tree.event(1.0, nodes_per_leaf=r), tree.event(1.0)


def _node_scale(epsilon: float, r: int, which: str) -> float:
    return hybrid_ucb_node_scale(epsilon, r) * ((r + 1) / r if which == "fixed" else 1.0)


def hybrid_arm_releases(
    rng: np.random.Generator, rewards: np.ndarray, epsilon: float, node_scale: str = "paper"
) -> np.ndarray:
    """One arm's released totals R_n = O mu_j after each of its n = 1..N pulls, shape (size, N).

    rewards[i, n-1] is the n-th observation in run i. Observation 1 is array 0; observations
    2^r .. 2^{r+1}-1 are tree r (prefix releases through `BinaryTree.run`) and array r, whose
    Lap(2/eps) is added once the tree is full: the statistics Hybrid-UCB releases (Hu, Huang, Mehta (arXiv 2021),
    Alg. 4, App. E.2), observed white-box.
    """
    epsilon = check_epsilon(epsilon)
    check_choice(node_scale, HYBRID_NODE_SCALES, "node_scale")
    x = check_finite_array(rewards, "rewards", ndim=2)
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError("rewards must lie in [0, 1]")
    size, n = x.shape
    out = np.empty((size, n))
    arrays = x[:, 0] + rng.laplace(0.0, 2.0 / epsilon, size)  # F~ after array 0
    out[:, 0] = arrays
    r = 1
    while (1 << r) - 1 < n:
        lo, hi = (1 << r) - 1, min((1 << (r + 1)) - 1, n)  # 0-based observation range of tree r
        tree = BinaryTree(horizon=1 << r, noise="laplace", scale=_node_scale(epsilon, r, node_scale))
        release = tree.run(rng, x[:, lo:hi])
        out[:, lo:hi] = arrays[:, None] + release.prefix_sums
        if hi - lo == 1 << r:
            arrays = arrays + x[:, lo:hi].sum(axis=1) + rng.laplace(0.0, 2.0 / epsilon, size)
        r += 1
    return out


@dataclasses.dataclass(frozen=True)
class HybridUCB(Algorithm):
    """Hybrid-UCB at privacy parameter `epsilon` (Hu, Huang, Mehta, Alg. 4).

    record_releases=True adds statistics["released_totals"], shape (runs, T): at round t the
    pulled arm's released total O mu = F~ + B~ after its update (the white-box observable).
    """

    epsilon: float = 1.0
    node_scale: str = "paper"
    record_releases: bool = False
    engine: str = "windows"
    name = "hybrid-ucb"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice(self.node_scale, HYBRID_NODE_SCALES, "node_scale")
        check_choice(self.engine, HYBRID_ENGINES, "engine")
        if self.record_releases and self.engine != "rounds":
            raise ValueError("record_releases needs engine='rounds' (the per-round releases)")

    def privacy(self, horizon: int) -> Privacy:
        """Events per tree r = 1..floor(log2 T): array Lap(2/eps) composed with the tree's r+1 nodes."""
        eps = self.epsilon
        rmax = max(check_positive_int(horizon, "horizon").bit_length() - 1, 1)
        array = dp_accounting.LaplaceDpEvent(noise_multiplier=2.0 / eps)
        per_tree = []
        for r in range(1, rmax + 1):
            _, corrected = hybrid_ucb_tree_events(eps, r, _node_scale(eps, r, self.node_scale))
            per_tree.append(dp_accounting.ComposedDpEvent([array, corrected]))
        claim = Guarantee("pure", eps, source="Hu, Huang, Mehta, Thm 5 / App. E.3.1")
        if self.node_scale == "paper":
            return Privacy(
                "round-vector",
                "central",
                ParallelComposedDpEvent(per_tree),
                claim,
                Guarantee(
                    "pure",
                    1.5 * eps,
                    source="a leaf of tree r lies in r+1 released nodes (Hu, Huang, Mehta, Alg. 4 node noise Lap(r/(0.5ε)))",
                ),
                "a leaf of tree r lies in r+1 released nodes, not r: 0.5eps + 0.5eps(r+1)/r, worst 1.5eps at r=1",
            )
        return Privacy(
            "round-vector",
            "central",
            ParallelComposedDpEvent(per_tree),
            claim,
            None,
            "node scale (r+1)/(0.5eps): each of the r+1 nodes holding a leaf costs 0.5eps/(r+1)",
        )

    def run_epsilons(self, env, rng: np.random.Generator, runs: int, horizon: int, epsilons) -> list[Outcome]:
        """`runs` runs at each epsilon of `epsilons` simulated together (rows stacked), one Outcome each.

        Same law as separate `HybridUCB(eps).run(env, rng, runs, horizon)` calls; per-run means of
        `env` must then have len(epsilons) * runs rows (epsilon-major).
        """
        eps = np.array([check_epsilon(e) for e in np.atleast_1d(epsilons)], dtype=float)
        runs = check_positive_int(runs, "runs")
        out = self._simulate(env, rng, runs * eps.size, resolve_horizon(env, horizon), np.repeat(eps, runs))
        part = [slice(i * runs, (i + 1) * runs) for i in range(eps.size)]
        return [Outcome(out.horizon, out.n_arms, out.arms[s], out.lengths[s]) for s in part]

    def _run(self, env, rng, size, horizon) -> Outcome:
        return self._simulate(env, rng, size, horizon, np.full(size, self.epsilon))

    def _simulate(self, env, rng, size: int, horizon: int, eps_rows: np.ndarray) -> Outcome:
        if self.engine == "windows":
            return self._windows(env, rng, size, horizon, eps_rows)
        return self._rounds(env, rng, size, horizon, eps_rows)

    def _scales(self, levels: int, eps_rows: np.ndarray) -> np.ndarray:
        """Node scale per (run, tree index r): r/(0.5 eps), times (r+1)/r for the fixed variant."""
        r_ids = np.arange(levels + 1, dtype=float)
        per_r = r_ids * (r_ids + 1) / np.maximum(r_ids, 1) if self.node_scale == "fixed" else r_ids
        return per_r[None, :] / (0.5 * eps_rows[:, None])

    def _counters(self, rng, size: int, K: int, horizon: int, scales: np.ndarray):
        """One binary counter per (run, arm), row run*K + arm (`TreeStream` with per-run counters):
        node noise Lap(1)·s_r through the run scale; tree r+1 is a restart with scale s_(r+1)."""
        tree = BinaryTree(horizon=1 << max(horizon.bit_length() - 1, 1), noise="laplace", scale=1.0)
        return tree.start(rng, size * K, np.repeat(scales[:, 1], K))

    @staticmethod
    def _next_trees(stream, scales, tree_r, fr, fj, K: int) -> None:
        """Runs fr finished arm fj's tree: start tree r+1 (tree_r already advanced)."""
        flat = fr * K + fj
        done = np.zeros(stream.runs, dtype=bool)
        done[flat] = True
        run_scale = np.ones(stream.runs)
        run_scale[flat] = scales[fr, tree_r[fr, fj]]
        stream.restart(done, run_scale)

    @classmethod
    def _release_arrays(cls, rng, stream, scales, arrays, raw, tree_r, fr, fj, eps_rows: np.ndarray, K: int) -> None:
        """Runs fr filled arm fj's tree r: release array r's sum once with Lap(2/eps) (added to F~),
        then start tree r+1 (Hu, Huang, Mehta, Alg. 4: the array mechanism at budget eps/2)."""
        arrays[fr, fj] += raw[fr, fj] + rng.laplace(0.0, 1.0, fr.size) * 2.0 / eps_rows[fr]
        tree_r[fr, fj] += 1
        raw[fr, fj] = 0.0
        cls._next_trees(stream, scales, tree_r, fr, fj, K)

    def _windows(self, env, rng, size: int, horizon: int, eps_rows: np.ndarray) -> Outcome:
        K = env.n_arms
        eps = eps_rows[:, None]
        rows = np.arange(size)
        levels = max(horizon.bit_length(), 1) + 1
        scales = self._scales(levels, eps_rows)
        log = SegmentLog(size)
        for j in range(K):
            log.add(j, 1)
        first = np.stack(
            [env.segment_sums(rng, np.full(size, j), np.full(size, j), np.ones(size, np.int64)) for j in range(K)],
            axis=1,
        )
        arrays = first + rng.laplace(0.0, 1.0, (size, K)) * (2.0 / eps)
        count = np.ones((size, K), dtype=np.int64)
        tree_r = np.ones((size, K), dtype=np.int64)
        raw = np.zeros((size, K))
        stream = self._counters(rng, size, K, horizon, scales)
        mu = arrays.copy()
        coef = 6 * np.sqrt(8) / eps_rows
        t = np.full(size, K, dtype=np.int64)
        width = 16
        while True:
            live = t < horizon
            if not live.any():
                break
            lt = np.log2(t + 1.0)[:, None]
            idx = mu + np.sqrt(3 * lt / count) + coef[:, None] * lt * np.floor(np.log2(count + 1.0)) / count
            J = np.argmax(idx, axis=1)
            flat = rows * K + J
            m0, r0 = stream.counts[flat], tree_r[rows, J]
            cap = np.where(live, np.minimum((np.int64(1) << r0) - m0, horizon - t), 0)
            W = int(min(width, cap.max(), max(1, _WINDOW_CELLS // (size * levels))))
            k = np.arange(1, W + 1)
            x = env.window(rng, J, t, W)
            # J's noisy prefix B~ after k = 1..W more pulls (node noises drawn once, by the stream)
            leaf = np.zeros((size * K, W))
            leaf[flat] = x
            mask = np.zeros(size * K, dtype=bool)
            mask[flat[live]] = True
            noisy_k = stream.lookahead(leaf, mask)[flat]
            raw_k = raw[rows, J][:, None] + np.cumsum(x, axis=1)
            cnt_k = count[rows, J][:, None] + k[None, :]
            mu_k = (arrays[rows, J][:, None] + noisy_k) / cnt_k
            # decisions at rounds t+1 .. t+W-1 (1-based t+2 ..): J's index after k pulls vs the others'
            lt_k = np.log2(t[:, None] + 1.0 + k[None, :])
            jidx = mu_k + np.sqrt(3 * lt_k / cnt_k) + coef[:, None] * lt_k * np.floor(np.log2(cnt_k + 1.0)) / cnt_k
            oth = (
                mu[:, None, :]
                + np.sqrt(3 * lt_k[:, :, None] / count[:, None, :])
                + (coef[:, None] * lt_k)[:, :, None] * (np.floor(np.log2(count + 1.0)) / count)[:, None, :]
            )
            arm = np.arange(K)
            lower = np.where((arm[None, :] < J[:, None])[:, None, :], oth, -np.inf).max(axis=2)
            upper = np.where((arm[None, :] > J[:, None])[:, None, :], oth, -np.inf).max(axis=2)
            stay = (jidx > lower) & (jidx >= upper)
            stay[k[None, :] >= cap[:, None]] = False  # the window ends at the cap (tree full, horizon)
            stay = np.concatenate([stay[:, : W - 1], np.zeros((size, 1), dtype=bool)], axis=1)  # k = 1..W-1
            n_pull = np.minimum(np.argmin(stay, axis=1) + 1, cap)  # pulls until the next decision leaves J
            log.add(J, n_pull)
            steps = np.zeros(size * K, dtype=np.int64)
            steps[flat] = n_pull
            stream.advance(steps)
            upd = n_pull > 0
            ru, ju, nu = rows[upd], J[upd], n_pull[upd]
            sel = nu - 1
            raw[ru, ju] = raw_k[ru, sel]
            count[ru, ju] = cnt_k[ru, sel]
            mu[ru, ju] = mu_k[ru, sel]
            full = stream.counts[ru * K + ju] == (np.int64(1) << tree_r[ru, ju])
            if full.any():
                fr, fj = ru[full], ju[full]
                self._release_arrays(rng, stream, scales, arrays, raw, tree_r, fr, fj, eps_rows, K)
                mu[fr, fj] = arrays[fr, fj] / count[fr, fj]
            t = t + n_pull
            used = n_pull[live]
            width = int(np.clip(2 ** np.ceil(np.log2(2 * np.median(used) + 1)), 4, 4096))
        return log.outcome(horizon, K)

    def _rounds(self, env, rng, size: int, horizon: int, eps_rows: np.ndarray) -> Outcome:
        K = env.n_arms
        eps = eps_rows[:, None]
        rows = np.arange(size)
        draw = env.stream(rng, size)
        levels = max(horizon.bit_length(), 1) + 1
        scales = self._scales(levels, eps_rows)
        actions = np.empty((size, horizon), dtype=np.int16)
        actions[:, :K] = np.arange(K)
        first = np.stack([draw(j, np.full(size, j)) for j in range(K)], axis=1)
        arrays = first + rng.laplace(0.0, 2.0 / eps, (size, K))  # F~: released full arrays
        count = np.ones((size, K), dtype=np.int64)  # O_j
        tree_r = np.ones((size, K), dtype=np.int64)  # index r of the current tree
        raw = np.zeros((size, K))  # exact sum of the current tree (= array F^(r))
        stream = self._counters(rng, size, K, horizon, scales)  # B~ of arm j in run i: row i*K + j
        mu = arrays.copy()
        released = np.empty((size, horizon)) if self.record_releases else None
        if released is not None:
            released[:, :K] = arrays
        coef = 6 * np.sqrt(8) / eps
        leaf = np.zeros(size * K)
        for t in range(K, horizon):
            lt = np.log2(t + 1.0)
            bonus = np.sqrt(3 * lt / count) + coef * lt * np.floor(np.log2(count + 1.0)) / count
            J = np.argmax(mu + bonus, axis=1)
            actions[:, t] = J
            x = draw(t, J)
            flat = rows * K + J
            mask = np.zeros(size * K, dtype=bool)
            mask[flat] = True
            leaf[flat] = x
            noisy = stream.insert(leaf, mask)[flat]  # B~ of the pulled arms
            raw[rows, J] += x
            count[rows, J] += 1
            total = arrays[rows, J] + noisy
            full = stream.counts[flat] == (np.int64(1) << tree_r[rows, J])
            if full.any():
                fr, fj = rows[full], J[full]
                self._release_arrays(rng, stream, scales, arrays, raw, tree_r, fr, fj, eps_rows, K)
                total[full] = arrays[fr, fj]
            mu[rows, J] = total / count[rows, J]
            if released is not None:
                released[:, t] = total
        return Outcome.from_actions(actions, K, {} if released is None else {"released_totals": released})
