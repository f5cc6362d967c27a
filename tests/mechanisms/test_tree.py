"""Binary-tree aggregation: exact structure (hypothesis), events, and seeded statistical checks."""

import copy
import itertools
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.mechanisms.tree import (
    BinaryTree,
    TreeStream,
    nodes_containing_leaf,
    paper_tree_depth,
    prefix_cover,
    symmetric_noise,
    tree_depth,
)

ALPHA = 1e-3  # per statistical check: false-failure rate <= 1e-3 (a fixed seed makes each run deterministic)

shapes = st.sampled_from([((), False), ((3,), False), ((2, 2), False), ((3, 3), True)])


def _leaves(rng, runs, n, shape, symmetric):
    x = rng.normal(size=(runs, n) + shape)
    return x + np.swapaxes(x, -1, -2) if symmetric else x


# ---------------------------------------------------------------- exact structure


@settings(deadline=None)
@given(t=st.integers(1, 10_000))
def test_prefix_cover_is_a_disjoint_cover_of_popcount_nodes(t):
    cover = prefix_cover(t)
    assert len(cover) == bin(t).count("1")
    intervals = sorted((end - (1 << lvl), end) for lvl, end in cover)
    assert intervals[0][0] == 0 and intervals[-1][1] == t
    assert all(a[1] == b[0] for a, b in itertools.pairwise(intervals))
    # every node of the cover is one the binary counter releases (end's lowest set bit = level)
    assert all((end & -end) == (1 << lvl) for lvl, end in cover)


@settings(deadline=None)
@given(horizon=st.integers(1, 600), data=st.data())
def test_leaf_lies_in_at_most_depth_released_nodes(horizon, data):
    leaf = data.draw(st.integers(1, horizon))
    nodes = nodes_containing_leaf(leaf, horizon)
    # brute force over the T released nodes (t - 2^v(t), t]
    brute = [(((t & -t).bit_length() - 1), t) for t in range(1, horizon + 1) if t - (t & -t) < leaf <= t]
    assert nodes == brute
    assert len(nodes) <= tree_depth(horizon) <= paper_tree_depth(horizon)
    assert len(nodes_containing_leaf(1, horizon)) == tree_depth(horizon) == math.floor(math.log2(horizon)) + 1


@settings(deadline=None)
@given(k=st.integers(0, 20))
def test_paper_depth_equals_exact_depth_on_powers_of_two(k):
    assert paper_tree_depth(2**k) == tree_depth(2**k) == k + 1


@settings(max_examples=25, deadline=None)
@given(horizon=st.integers(1, 40), runs=st.integers(1, 3), shp=shapes, seed=st.integers(0, 2**32 - 1), data=st.data())
def test_stream_equals_batch_and_prefix_is_sum_of_cover(horizon, runs, shp, seed, data):
    shape, symmetric = shp
    n = data.draw(st.integers(1, horizon))
    tree = BinaryTree(horizon, "gaussian", 0.7, shape, symmetric)
    leaves = _leaves(np.random.default_rng(seed), runs, n, shape, symmetric)
    rel = tree.run(np.random.default_rng(seed + 1), leaves)
    stream = tree.start(np.random.default_rng(seed + 1), runs)
    for i in range(n):
        np.testing.assert_allclose(stream.insert(leaves[:, i]), rel.prefix_sums[:, i], atol=1e-9)
        np.testing.assert_allclose(stream.last_node, rel.node_sums[:, i], atol=1e-9)
    for t in range(1, n + 1):
        from_cover = sum(rel.node_sums[:, end - 1] for _, end in prefix_cover(t))
        np.testing.assert_allclose(rel.prefix_sums[:, t - 1], from_cover, atol=1e-9)
    if symmetric:
        np.testing.assert_array_equal(rel.node_sums, np.swapaxes(rel.node_sums, -1, -2))


def test_stream_noise_blocks_match_batch_across_block_boundaries(monkeypatch):
    monkeypatch.setattr(TreeStream, "_BLOCK_VALUES", 7)  # blocks of 7 // 3 = 2 steps for 3 runs
    tree = BinaryTree(45, "laplace", 1.0)
    leaves = np.random.default_rng(0).normal(size=(3, 45))
    rel = tree.run(np.random.default_rng(1), leaves)
    stream = tree.start(np.random.default_rng(1), 3)
    got = np.stack([stream.insert(leaves[:, i]) for i in range(45)], axis=1)
    np.testing.assert_allclose(got, rel.prefix_sums, atol=1e-9)


class _Replay:
    """A stand-in generator whose normal draws replay given unit values (one per requested entry),
    then zeros (a lock-step stream draws its noise blocks ahead of the inserts)."""

    def __init__(self, values, pad):
        self.values = list(values) + [0.0] * pad

    def normal(self, loc, scale, size):
        n = math.prod(size)
        out, self.values = np.array(self.values[:n]), self.values[n:]
        return loc + scale * out.reshape(size)


def _check_against_own_streams(tree, stream, prefix, mine, scale, symmetric):
    """Run i's prefix equals that of its own single-run stream fed its leaves and (replayed) node
    noises; each released node is the exact dyadic sum of its leaves plus its noise, and the prefix
    is the sum of the released nodes of its cover (noise drawn once per node)."""
    for i, own in enumerate(mine):
        assert stream.counts[i] == len(own)
        if not own:
            np.testing.assert_array_equal(prefix[i], 0.0)
            continue
        xs = np.stack([x for x, _ in own])
        noises = []
        for t, (_, node) in enumerate(own, start=1):
            noise = (node - xs[t - (t & -t) : t].sum(axis=0)) / (tree.scale * scale[i])
            noises.append(noise[np.triu_indices(tree.shape[0])] if symmetric else np.ravel(noise))
        single = tree.start(_Replay(np.concatenate(noises), tree.horizon * 9), 1, scale[i : i + 1])
        for x in xs:
            single.insert(x[None])
        np.testing.assert_allclose(single.prefix[0], prefix[i], atol=1e-9)
        np.testing.assert_allclose(single.last_node[0], own[-1][1], atol=1e-9)
        cover = sum(own[end - 1][1] for _, end in prefix_cover(len(own)))
        np.testing.assert_allclose(prefix[i], cover, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(horizon=st.integers(1, 24), runs=st.integers(1, 4), shp=shapes, seed=st.integers(0, 2**32 - 1))
def test_masked_stream_equals_independent_per_run_streams(horizon, runs, shp, seed):
    """Lock-step and masked inserts, lookahead + advance, restarts: every run behaves as its own
    stream fed its own leaves (`_check_against_own_streams`); a lookahead's value after k leaves
    is the prefix that inserting those k leaves releases, NaN past the horizon."""
    shape, symmetric = shp
    rng = np.random.default_rng(seed)
    tree = BinaryTree(horizon, "gaussian", 0.7, shape, symmetric)
    scale = rng.uniform(0.5, 2.0, runs)
    stream = tree.start(np.random.default_rng(seed + 1), runs, scale)
    mine = [[] for _ in range(runs)]  # per run: (leaf, released node) of its current tree
    ops = ["all"] * int(rng.integers(0, 3))  # lock-step inserts first (block noise), then the rest
    ops += list(rng.choice(["mask", "look", "restart"], 3 * horizon, p=[0.5, 0.3, 0.2]))
    for op in ops:
        room = stream.counts < horizon
        mask = (rng.random(runs) < 0.6) & room
        if op == "restart":
            done = rng.random(runs) < 0.3
            scale = np.where(done, rng.uniform(0.5, 2.0, runs), scale)
            stream.restart(done, scale)
            mine = [[] if done[i] else own for i, own in enumerate(mine)]
            prefix = stream.prefix
        elif op == "look":
            W = int(rng.integers(1, 6))
            xs = _leaves(rng, runs, W, shape, symmetric)
            ahead = stream.lookahead(xs, mask).copy()
            steps = np.where(mask, np.minimum(rng.integers(0, W + 1, runs), horizon - stream.counts), 0)
            nodes = {}
            for k in range(1, W + 1):
                trial = copy.deepcopy(stream)
                got = trial.advance(np.where(mask, np.minimum(k, horizon - stream.counts), 0))
                for i in np.flatnonzero(mask):
                    if stream.counts[i] + k > horizon:
                        assert np.isnan(ahead[i, k - 1]).all()
                        continue
                    np.testing.assert_allclose(ahead[i, k - 1], got[i], atol=1e-9)
                    nodes[i, k] = trial.last_node[i].copy()
            prefix = stream.advance(steps).copy()
            for i in range(runs):
                mine[i] += [(xs[i, k - 1], nodes[i, k]) for k in range(1, steps[i] + 1)]
        else:
            if op == "all":
                if not room.all():
                    continue
                mask = None
            leaf = _leaves(rng, runs, 1, shape, symmetric)[:, 0]
            prefix = stream.insert(leaf, mask).copy()
            for i in range(runs):
                if mask is None or mask[i]:
                    mine[i].append((leaf[i], stream.last_node[i].copy()))
        _check_against_own_streams(tree, stream, prefix, mine, scale, symmetric)


@settings(max_examples=30, deadline=None)
@given(horizon=st.integers(1, 32), runs=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_noiseless_masked_stream_releases_exact_prefix_sums(horizon, runs, seed):
    rng = np.random.default_rng(seed)
    stream = BinaryTree(horizon, "laplace", 0.0, (2,)).start(rng, runs)
    total = np.zeros((runs, 2))
    for _ in range(2 * horizon):
        mask = (rng.random(runs) < 0.5) & (stream.counts < horizon)
        leaf = rng.integers(-5, 6, (runs, 2)).astype(float)
        total[mask] += leaf[mask]
        np.testing.assert_array_equal(stream.insert(leaf, mask), total)
    done = stream.counts == horizon
    stream.restart(done)
    total[done] = 0.0
    np.testing.assert_array_equal(stream.prefix, total)


def test_masked_stream_bad_inputs_raise():
    s = BinaryTree(2, "laplace", 1.0).start(np.random.default_rng(0), 3)
    with pytest.raises(TypeError, match="mask"):
        s.insert(np.zeros(3), np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="mask"):
        s.insert(np.zeros(3), np.array([True, False]))
    with pytest.raises(ValueError, match="run_scale"):
        s.restart(np.array([True, False, False]), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="run_scale"):
        BinaryTree(2, "laplace", 1.0).start(np.random.default_rng(0), 3, np.ones(2))
    first = np.array([True, False, False])
    s.insert(np.zeros(3), first)
    s.insert(np.zeros(3), first)
    with pytest.raises(ValueError, match="full"):
        s.insert(np.zeros(3), first)
    s.insert(np.zeros(3), ~first)  # the other runs have their own counters
    np.testing.assert_array_equal(s.counts, [2, 1, 1])
    with pytest.raises(ValueError, match="lookahead"):
        s.advance(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="leaves"):
        s.lookahead(np.zeros((2, 2)))
    ahead = s.lookahead(np.zeros((3, 2)), ~first)
    assert np.isnan(ahead[1:, 1]).all() and not np.isnan(ahead[1:, 0]).any()  # horizon 2
    with pytest.raises(ValueError, match="steps"):
        s.advance(np.array([0, 2, 0]))
    ahead = s.lookahead(np.zeros((3, 2)), ~first)
    with pytest.raises(TypeError, match="steps"):
        s.advance(np.array([0.0, 1.0, 0.0]))


@settings(max_examples=25, deadline=None)
@given(
    horizon=st.integers(1, 64), shp=shapes, noise=st.sampled_from(["gaussian", "laplace"]), seed=st.integers(0, 1000)
)
def test_noiseless_tree_releases_exact_sums(horizon, shp, noise, seed):
    shape, symmetric = shp
    leaves = _leaves(np.random.default_rng(seed), 2, horizon, shape, symmetric)
    rel = BinaryTree(horizon, noise, 0.0, shape, symmetric).run(np.random.default_rng(0), leaves)
    np.testing.assert_allclose(rel.prefix_sums, np.cumsum(leaves, axis=1), atol=1e-9)
    for t in range(1, horizon + 1):
        np.testing.assert_allclose(rel.node_sums[:, t - 1], leaves[:, rel.node_start[t - 1] : t].sum(axis=1), atol=1e-9)
        assert t - rel.node_start[t - 1] == 2 ** rel.node_level[t - 1] == t & -t


def test_symmetric_noise_conventions():
    rng = np.random.default_rng(3)
    for mode in ("upper", "average"):
        z = symmetric_noise(rng, (5,), 4, "gaussian", 1.0, mode)
        np.testing.assert_array_equal(z, np.swapaxes(z, -1, -2))
    z = symmetric_noise(rng, (2,), 3, "laplace", 1.0, "upper")
    np.testing.assert_array_equal(z, np.swapaxes(z, -1, -2))


# ---------------------------------------------------------------- events


@pytest.mark.parametrize("horizon", [1, 2, 7, 8, 1000, 2**17])
def test_gaussian_tree_event_matches_dp_accounting_tree_rdp(horizon):
    tree = BinaryTree(horizon, "gaussian", 3.0)
    mine = RdpAccountant().compose(tree.event(1.5)).get_epsilon(1e-6)
    special = dp_accounting.NeighboringRelation.REPLACE_SPECIAL
    ref_event = dp_accounting.SingleEpochTreeAggregationDpEvent(2.0, horizon)
    ref = RdpAccountant(neighboring_relation=special).compose(ref_event).get_epsilon(1e-6)
    assert mine == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("horizon", [1, 5, 16, 100])
def test_laplace_tree_event_is_depth_times_node_epsilon(horizon):
    tree = BinaryTree(horizon, "laplace", 4.0, (3,))
    ev = tree.event(2.0)
    node = ev if tree.depth == 1 else ev.event
    count = 1 if tree.depth == 1 else ev.count
    assert count == tree_depth(horizon)
    assert count / node.noise_multiplier == pytest.approx(tree_depth(horizon) * 2.0 / 4.0)


def test_vector_laplace_node_event_dominates_split_changes():
    # a Laplace node event with L1 sensitivity Δ (dp-accounting's convention) is a valid description
    # of a vector leaf whose change is split over coordinates: its δ(ε) is never below the split's
    from dp_accounting.pld import PLDAccountant

    node = BinaryTree(4, "laplace", 1.0, (2,)).node_event(1.0)
    single = PLDAccountant().compose(node)
    for a in (0.5, 0.2):
        split = [dp_accounting.LaplaceDpEvent(1 / a), dp_accounting.LaplaceDpEvent(1 / (1 - a))]
        comp = PLDAccountant().compose(dp_accounting.ComposedDpEvent(split))
        for eps in (0.0, 0.3, 0.7, 0.95):
            assert comp.get_delta(eps) <= single.get_delta(eps) + 1e-9


def test_noiseless_tree_is_non_private():
    assert BinaryTree(4, "gaussian", 0.0).node_event(1.0) == dp_accounting.NonPrivateDpEvent()


def test_leaf_sensitivity_norms():
    e1 = np.outer([1.0, 0, 0], [1.0, 0, 0])
    e2 = np.outer([0, 1.0, 0], [0, 1.0, 0])
    off = np.array([[0, 1.0, 0], [1.0, 0, 0], [0, 0, 0]])
    up = BinaryTree(8, "gaussian", 1.0, (3, 3), True, "upper")
    avg = BinaryTree(8, "gaussian", 1.0, (3, 3), True, "average")
    lap = BinaryTree(8, "laplace", 1.0, (3, 3), True, "upper")
    assert up.leaf_sensitivity(e1 - e2) == pytest.approx(math.sqrt(2))
    assert avg.leaf_sensitivity(e1 - e2) == pytest.approx(math.sqrt(2))
    assert up.leaf_sensitivity(off) == pytest.approx(1.0)  # one upper entry
    assert avg.leaf_sensitivity(off) == pytest.approx(math.sqrt(2))  # Frobenius
    assert lap.leaf_sensitivity(e1 - e2 + off) == pytest.approx(3.0)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(horizon=0, noise="gaussian", scale=1.0), "horizon"),
        (dict(horizon=4, noise="cauchy", scale=1.0), "noise"),
        (dict(horizon=4, noise="gaussian", scale=-1.0), "scale"),
        (dict(horizon=4, noise="gaussian", scale=float("nan")), "scale"),
        (dict(horizon=4, noise="gaussian", scale=1.0, shape=(3,), symmetric=True), "shape"),
        (dict(horizon=4, noise="laplace", scale=1.0, shape=(2, 2), symmetric=True, symmetrize="average"), "average"),
        (dict(horizon=4, noise="gaussian", scale=1.0, symmetrize="lower"), "symmetrize"),
        (dict(horizon=4, noise="gaussian", scale=1.0, shape=(2, 0)), "shape"),
    ],
)
def test_bad_parameters_raise(kwargs, word):
    with pytest.raises(ValueError, match=word):
        BinaryTree(**kwargs)


def test_bad_inputs_raise():
    tree = BinaryTree(2, "gaussian", 1.0, (2,))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="leaves"):
        tree.run(rng, np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="leaves"):
        tree.run(rng, np.zeros((1, 2, 3)))
    with pytest.raises(ValueError, match="leaves"):
        tree.run(rng, np.full((1, 2, 2), np.nan))
    s = tree.start(rng, 2)
    with pytest.raises(ValueError, match="leaf"):
        s.insert(np.zeros((3, 2)))
    s.insert(np.zeros((2, 2)))
    s.insert(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="full"):
        s.insert(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="sensitivity"):
        tree.event(0.0)
    with pytest.raises(ValueError, match="diff"):
        tree.leaf_sensitivity(np.zeros(3))


# ---------------------------------------------------------------- statistical


def _prefix_noise(tree, runs, n, seed):
    leaves = np.ones((runs, n) + tree.shape)
    rel = tree.run(np.random.default_rng(seed), leaves)
    return rel.prefix_sums - np.cumsum(leaves, axis=1)


def _tree_noise_pvalues(prefix_noise, sigma):
    """KS p-values: node noise N(0, sigma^2), prefix noise at t=7 N(0, 3 sigma^2), and a
    z-test that prefix noises at t=2 and t=3 share the node (0, 2] (covariance sigma^2)."""
    ks7 = stats.kstest(prefix_noise[:, 6] / (sigma * math.sqrt(3)), "norm").pvalue
    ks1 = stats.kstest(prefix_noise[:, 0] / sigma, "norm").pvalue
    a, b = prefix_noise[:, 1], prefix_noise[:, 2]
    prod = a * b
    z = (prod.mean() - sigma**2) / (prod.std(ddof=1) / math.sqrt(prod.size))
    return ks1, ks7, 2 * stats.norm.sf(abs(z))


def test_gaussian_tree_noise_has_the_stated_law():
    # false-failure rate <= 3e-3 (three checks at ALPHA)
    sigma = 2.0
    noise = _prefix_noise(BinaryTree(8, "gaussian", sigma), 20_000, 8, seed=11)
    assert min(_tree_noise_pvalues(noise, sigma)) > ALPHA


def test_twin_perturbed_or_redrawn_noise_is_detected():
    # Twin of the test above: the same checks must reject (p < ALPHA) a tree whose noise is 10% too
    # small, and a buggy tree that redraws noise per query (no shared node between t=2 and t=3).
    sigma = 2.0
    small = _prefix_noise(BinaryTree(8, "gaussian", 0.9 * sigma), 20_000, 8, seed=11)
    assert min(_tree_noise_pvalues(small, sigma)[:2]) < ALPHA
    rng = np.random.default_rng(12)
    pop = np.array([bin(t).count("1") for t in range(1, 9)])
    redrawn = rng.normal(size=(20_000, 8)) * sigma * np.sqrt(pop)
    assert _tree_noise_pvalues(redrawn, sigma)[2] < ALPHA


def test_laplace_and_average_symmetric_noise_laws():
    # false-failure rate <= 3e-3 (three KS checks at ALPHA); twin: a 10% scale error is rejected
    b = 1.5
    tree = BinaryTree(4, "laplace", b, (2,))
    rel = tree.run(np.random.default_rng(5), np.zeros((10_000, 4, 2)))
    node_noise = rel.node_sums[:, 0].ravel()
    assert stats.kstest(node_noise / b, "laplace").pvalue > ALPHA
    assert stats.kstest(node_noise / (1.1 * b), "laplace").pvalue < ALPHA
    avg = BinaryTree(2, "gaussian", 1.0, (2, 2), True, "average")
    z = avg.run(np.random.default_rng(6), np.zeros((20_000, 1, 2, 2))).node_sums[:, 0]
    assert stats.kstest(z[:, 0, 0], "norm").pvalue > ALPHA
    assert stats.kstest(z[:, 0, 1] * math.sqrt(2), "norm").pvalue > ALPHA
    assert stats.kstest(z[:, 0, 1], "norm").pvalue < ALPHA


def _masked_stream_noise(b, runs, seed, redraw=False):
    """Zero leaves, masked inserts and lookahead/advance, run scales 1 or 2: (last node noise / (b·s) over all runs, and
    the products p2·p3/(b·s)^2 of each run's prefixes at counts 2 and 3, which share the node
    (0, 2]: mean Var(Lap(1)) = 2). redraw=True is a buggy stream that redraws the prefix noise."""
    rng = np.random.default_rng(seed)
    s = np.where(np.arange(runs) % 2, 2.0, 1.0)
    stream = BinaryTree(8, "laplace", b).start(rng, runs, s)
    p2, p3 = np.full(runs, np.nan), np.full(runs, np.nan)
    stream.insert(np.zeros(runs))
    for step in range(8):
        mask = (rng.random(runs) < 0.5) & (stream.counts < 7)
        m0 = stream.counts.copy()
        if step % 2:  # masked insert
            prefix = stream.insert(np.zeros(runs), mask)
            ahead = prefix[:, None]
            n = mask.astype(np.int64)
        else:  # lookahead of 2 leaves, then 0..2 of them inserted
            ahead = stream.lookahead(np.zeros((runs, 2)), mask)
            n = np.where(mask, rng.integers(0, 3, runs), 0)
            stream.advance(n)
        for c, out in ((2, p2), (3, p3)):
            k = c - m0  # the step at which the count reached c
            hit = (k >= 1) & (k <= n)
            value = ahead[np.arange(runs), np.clip(k - 1, 0, ahead.shape[1] - 1)]
            if redraw:
                value = rng.laplace(0.0, b * s, runs) + rng.laplace(0.0, b * s, runs)
            out[hit] = value[hit]
    both = ~np.isnan(p2) & ~np.isnan(p3)
    return stream.last_node / (b * s), (p2 * p3 / (b * s) ** 2)[both]


def _shared_node_pvalue(prod):
    z = (prod.mean() - 2.0) / (prod.std(ddof=1) / math.sqrt(prod.size))
    return 2 * stats.norm.sf(abs(z))


def test_masked_stream_noise_has_the_stated_law():
    # false-failure rate <= 2e-3 (two checks at ALPHA): node noise Lap(b·run_scale), and the node
    # (0, 2] is kept (not redrawn) between a run's prefixes at counts 2 and 3
    node, prod = _masked_stream_noise(1.5, 20_000, seed=21)
    assert stats.kstest(node, "laplace").pvalue > ALPHA
    assert _shared_node_pvalue(prod) > ALPHA


def test_twin_masked_stream_wrong_scale_or_redrawn_noise_is_detected():
    # Twin of the test above: a 10% scale error and a stream that redraws its noise are rejected
    node, _ = _masked_stream_noise(1.5, 20_000, seed=21)
    assert stats.kstest(node / 1.1, "laplace").pvalue < ALPHA
    _, prod = _masked_stream_noise(1.5, 20_000, seed=21, redraw=True)
    assert _shared_node_pvalue(prod) < ALPHA
