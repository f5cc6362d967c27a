"""One batch's scores evaluated together (dpaudit.audit.scores.score_values): shared coordinates and feature
columns computed once, blocks of rows, each score's values bit-identical to its own call (exact properties)."""

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit.classifier import LogisticScore, logistic_features
from dpaudit.audit.features import CoordinateLogRatio, atoms_of
from dpaudit.audit.scores import Projection, RowScore, Score, score_values

ATOMS = np.array([-1000.0, -0.0, 1.0, 2.0])


def outputs(rng: np.random.Generator, n: int, width: int, share: float) -> np.ndarray:
    """Laplace rows whose entries are atoms with probability `share`."""
    x = rng.laplace(0.0, 3.0, (n, width))
    return np.where(rng.random((n, width)) < share, rng.choice(ATOMS, (n, width)), x)


def scores(rng: np.random.Generator, width: int, pooled: bool) -> list[Score]:
    """Two logistic scores with the same features (other weights), two coordinate log ratios with equal
    transforms (distinct arrays), one without, and a projection."""
    atoms = [np.unique(rng.choice(ATOMS[:3], int(rng.integers(0, 3)))) for _ in range(width)]
    columns = np.concatenate([np.full(len(a), j) for j, a in enumerate(atoms)]).astype(np.int64)
    values = np.concatenate(atoms).astype(np.float64)
    inv = np.where(rng.random(width) < 0.8, rng.uniform(0.1, 3.0, width), 0.0)
    mix = rng.normal(size=(width, width))
    transform = np.linalg.inv(np.linalg.cholesky(mix @ mix.T + np.eye(width)))  # a whitening, as fitted
    common = dict(
        center=rng.normal(size=width),
        inv_scale=inv,
        atom_columns=columns,
        atom_values=values,
        has_cont_flag=np.array([len(a) > 0 for a in atoms]) & (inv > 0),
        transform=transform if pooled else None,
        pooled=pooled,
    )
    k = logistic_features(np.zeros((1, width)), LogisticScore(**common)).shape[1]

    def logistic() -> LogisticScore:
        weights = rng.normal(size=k) * (rng.random(k) < 0.8)
        return LogisticScore(
            feature_mean=rng.normal(size=k), feature_scale=rng.uniform(0.5, 2.0, k), weights=weights, **common
        )

    def coordinate(t: np.ndarray | None) -> CoordinateLogRatio:
        return CoordinateLogRatio(
            atom_columns=columns,
            atom_values=values,
            atom_ratios=rng.normal(size=len(values)),
            cont_ratio=rng.normal(size=width) * (rng.random(width) < 0.7),
            loc0=rng.normal(size=width),
            loc1=rng.normal(size=width),
            inv_scale=inv,
            transform=t,
        )

    return [logistic(), logistic(), coordinate(transform), coordinate(transform.copy()), coordinate(None),
            Projection(weights=rng.normal(size=width))]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 5, 4095, 4097, 9000]),
    width=st.integers(1, 12),
    share=st.sampled_from([0.0, 0.3, 0.9]),
    pooled=st.booleans(),
)
def test_batched_values_are_each_score_alone(seed, n, width, share, pooled):
    rng = np.random.default_rng(seed)
    x = outputs(rng, n, width, share)
    batch = scores(rng, width, pooled)
    batch = batch + batch[:2]  # repeated scores are evaluated once, and given to each place
    together = score_values(batch, x)
    assert len(together) == len(batch)
    for sc, values in zip(batch, together):
        alone = sc(x)
        assert values.dtype == alone.dtype and values.shape == (n,)
        assert values.tobytes() == alone.tobytes()


def test_blocks_give_the_whole_batchs_values():
    """Rows evaluated by blocks score as they do alone: each row's value depends on that row only (the scores
    evaluated by blocks, without a transform: a BLAS product's rounding may depend on how many rows it
    multiplies, so a transform's coordinates are computed for the whole batch at once)."""
    rng = np.random.default_rng(3)
    x = outputs(rng, 20_000, 8, 0.3)
    blocked = [sc for sc in scores(rng, 8, True) + scores(rng, 8, False) if isinstance(sc, RowScore)]
    for sc in [sc for sc in blocked if getattr(sc, "transform", None) is None]:
        whole = sc(x)
        parts = np.concatenate([sc(x[i : i + 777]) for i in range(0, len(x), 777)])
        assert whole.tobytes() == parts.tobytes()


def test_shared_features_are_one_group_and_scores_stay_picklable():
    rng = np.random.default_rng(4)
    x = outputs(rng, 100, 4, 0.3)
    a, b, c, d, *_ = scores(rng, 4, True)
    assert isinstance(a, RowScore) and isinstance(b, RowScore) and isinstance(c, RowScore) and isinstance(d, RowScore)
    assert a.group_key() == b.group_key() and c.group_key() != d.group_key()
    for sc in (a, c):
        assert pickle.loads(pickle.dumps(sc))(x).tobytes() == sc(x).tobytes()


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -1000.0, float("nan")]) | st.floats(-5, 5), max_size=300),
    cut=st.integers(0, 300),
)
def test_atoms_are_np_uniques_values_repeated_eight_times(values, cut):
    """`atoms_of` is np.unique's values (all when at most 64, else those counted >= 8), signed zeros and NaN included."""
    a = np.array(values, dtype=np.float64)
    x, y = a[: min(cut, len(a))], a[min(cut, len(a)) :]
    unique, counts = np.unique(np.concatenate([x, y]), return_counts=True)
    expected = unique if len(unique) <= 64 else unique[counts >= 8]
    assert atoms_of(x, y).tobytes() == expected.tobytes()
