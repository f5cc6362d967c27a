"""The Chowdhury & Zhou (ICLR 2023, Sec. 7, Figs. 1-3) table of benchmarks/reproduce_mab.py --part cz (benchmarks/cz_table.py):
the authors' jsonl, single-run and 4-run cells, the intervals and the 'inside' verdict, the cache. Seconds, no simulation."""

import json
import math
import pathlib
import zlib

import numpy as np
import pytest
from scipy import stats

from benchmarks import cz_table as czt
from benchmarks import reproduce_mab as rm


def _jsonl(tmp_path, lines) -> pathlib.Path:
    p = tmp_path / "runs.jsonl"
    p.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return p


def _run(alg="dpse", eps=1.0, instance="hard", horizon=10**7, run=0, regret=100.0):
    return {
        "alg": alg,
        "epsilon": eps,
        "instance": instance,
        "horizon": horizon,
        "run": run,
        "regret": regret,
        "seconds": 1,
    }


def _summary(alg="dpse", eps=1.0, mean=2715, se=241, runs=4):
    return {
        "alg": alg,
        "epsilon": eps,
        "instance": "easy",
        "horizon": 10**6,
        "runs": runs,
        "mean": mean,
        "se": se,
        "source": "reported",
    }


# ---- parsing the authors' jsonl -----------------------------------------------------------------------------------
def test_single_runs_summaries_and_reruns(tmp_path):
    path = _jsonl(
        tmp_path,
        [
            _run(run=0, regret=10.0),
            "",
            _run(run=1, regret=20.0),
            _run(run=0, regret=12.0),  # run 0 re-run: replaces
            _summary(),
            _summary(alg="distdp", mean=4078, se=276),
            _run(alg="distdp", instance="easy", horizon=10**6, run=2, regret=5.0),  # a single run beats the summary
        ],
    )
    cells = czt.read_authors_runs(path)
    hard = cells[("hard", 10**7, 1.0, "dpse")]
    assert hard.ids == [0, 1] and hard.values.tolist() == [12.0, 20.0] and hard.mean == 16.0
    easy = cells[("easy", 10**6, 1.0, "dpse")]
    assert easy.runs == {} and easy.ids == [0, 1, 2, 3] and easy.mean == 2715 and easy.values is None
    assert easy.source == "reported"
    assert cells[("easy", 10**6, 1.0, "distdp")].ids == [2]


@pytest.mark.parametrize(
    "line, match",
    [
        ("{not json", "runs.jsonl:2: not a JSON line"),
        (json.dumps({"alg": "dpse", "epsilon": 1, "horizon": 10}), "lacks instance"),
        (json.dumps(_run(instance="medium")), "instance must be one of"),
        (json.dumps({k: v for k, v in _run().items() if k != "regret"}), "run and regret"),
        (json.dumps(_run(regret=float("nan"))), "regret must be finite"),
        (json.dumps(_summary(runs=1)), "runs >= 2"),
    ],
)
def test_a_bad_line_is_named(tmp_path, line, match):
    with pytest.raises(ValueError, match=match):
        czt.read_authors_runs(_jsonl(tmp_path, [_run(), line]))


def test_the_stored_jsonl_parses():
    cells = czt.read_authors_runs()
    one = cells[("hard", 10**7, 1.0, "dpse")]
    assert one.ids[0] == 0 and one.runs[0] == pytest.approx(22477.16, abs=0.01)
    four = cells[("easy", 10**6, 0.1, "distdp")]
    assert four.ids == [0, 1, 2, 3] and four.mean == pytest.approx(13188.09, abs=0.01)
    assert cells[("easy", 10**6, 1.0, "dpse")].summary["mean"] == 2715


def test_the_authors_intervals():
    x = [14532.5, 12601.6, 14481.6, 11136.7]
    cell = czt.AuthorsCell("easy", 10**6, 0.1, "distdp", dict(enumerate(x)))
    h = stats.t.ppf(0.975, 3) * np.std(x, ddof=1) / 2
    assert cell.interval() == pytest.approx((np.mean(x) - h, np.mean(x) + h))
    assert all(math.isnan(v) for v in czt.AuthorsCell("hard", 10**7, 1.0, "dpse", {0: 1.0}).interval())
    summ = czt.AuthorsCell("easy", 10**6, 1.0, "dpse", {}, {"mean": 2715, "se": 241, "runs": 4})
    assert summ.interval() == pytest.approx((2715 - stats.t.ppf(0.975, 3) * 241, 2715 + stats.t.ppf(0.975, 3) * 241))


# ---- the intervals and 'inside' -----------------------------------------------------------------------------------
def test_order_statistic_interval_is_min_max_at_39_and_refuses_fewer():
    x = np.arange(39.0)[::-1]
    assert czt.order_statistic_interval(x) == (0.0, 38.0, 0.95)
    assert czt.order_statistic_interval(np.arange(79.0)) == (1.0, 77.0, 76 / 80)
    with pytest.raises(ValueError, match="at least 39 runs, got 25"):
        czt.order_statistic_interval(np.arange(25.0))


def _coverage(new_scale: float, reps: int = 20000) -> float:
    rng = np.random.default_rng(12345)
    ours = rng.lognormal(0.0, 1.0, size=(reps, 39))
    new = rng.lognormal(0.0, new_scale, size=reps)
    return float(np.mean((ours.min(axis=1) <= new) & (new <= ours.max(axis=1))))


def test_one_run_interval_covers_a_new_run_95_percent():
    # Exactly 38/40 = 0.95 for any continuous law; 20000 seeded draws: sd 0.0015, so |error| < 0.006 (3.9 sd)
    # fails with probability about 1e-4 for a correct interval.
    assert abs(_coverage(1.0) - 0.95) < 0.006


def test_one_run_interval_twin_fails_when_the_noise_is_perturbed():
    # The twin: the new run from a law with 1.5x the log-spread (what a wrong noise scale does): coverage falls
    # far below 0.95 and the same check fails.
    assert not abs(_coverage(1.5) - 0.95) < 0.006


def _ours(values, variance=0.0):
    return {"pseudo": list(values), "variance": [variance] * len(values)}


def _seed(i):
    return [4, 7, 1, i]


def test_single_run_cell_inside_and_outside():
    ours = {0: _ours(np.arange(1.0, 40.0))}  # no reward noise: the realised regrets are the pseudo-regrets
    inside = czt.compare(czt.AuthorsCell("hard", 10**7, 1.0, "dpse", {0: 39.0}), ours, _seed)
    assert inside["ours"]["expected"] == [1.0, 39.0] and inside["ours"]["coverage"] == 0.95 and inside["inside"]
    assert inside["ours"]["mean"] == 20.0 and inside["ours"]["copies"] == 39
    assert inside["authors"]["regret"] == [39.0] and math.isnan(inside["authors"]["t_interval"][0])
    outside = czt.compare(czt.AuthorsCell("hard", 10**7, 1.0, "dpse", {0: 39.5}), ours, _seed)
    assert not outside["inside"]
    assert "one run" in outside["ours"]["method"]


def test_single_run_interval_carries_the_reward_noise():
    ours = {0: _ours(np.full(39, 1000.0), variance=100.0**2)}
    pred = czt.predict(ours, [0], _seed)
    y = czt.realised_draws(np.full(39, 1000.0), np.full(39, 1e4), _seed(0))
    assert pred["expected"] == [y.min(), y.max()] and pred["expected"][1] - pred["expected"][0] > 200
    assert pred["realised_noise_sd"] == [100.0]
    assert np.array_equal(y, czt.realised_draws(np.full(39, 1000.0), np.full(39, 1e4), _seed(0)))  # reproducible


def test_four_run_cell_interval_is_the_law_of_the_mean_of_one_run_per_instance():
    rng = np.random.default_rng(3)
    pseudo = {i: rng.choice([1000.0 * (i + 1), 1300.0 * (i + 1)], p=[0.7, 0.3], size=39) for i in range(4)}  # atoms
    ours = {i: {"pseudo": pseudo[i].tolist(), "variance": [25.0 * (i + 1)] * 39} for i in range(4)}
    y = [czt.realised_draws(pseudo[i], np.full(39, 25.0 * (i + 1)), _seed(i)) for i in range(4)]
    # brute force over the 39^4 combinations, one loop level per instance
    grid = (
        y[0][:, None, None, None] + y[1][None, :, None, None] + y[2][None, None, :, None] + y[3][None, None, None, :]
    ) / 4
    want = np.quantile(grid.ravel(), [0.025, 0.975])
    cell = czt.AuthorsCell("easy", 10**6, 0.5, "dpse", dict.fromkeys(range(4), 0.0))
    pred = czt.predict(ours, cell.ids, _seed)
    assert pred["expected"] == pytest.approx(want.tolist()) and pred["mean"] == pytest.approx(
        np.mean(list(pseudo.values()))
    )
    assert pred["runs"] == 156 and pred["copies"] == 39 and "4-run mean" in pred["method"]
    per = np.stack([pseudo[i] for i in range(4)])
    se = math.sqrt(per.var(axis=1, ddof=1).sum() / 39) / 4
    h = stats.norm.ppf(0.975) * math.sqrt(sum(per[i].var(ddof=1) + 25.0 * (i + 1) for i in range(4)) / 16 + se**2)
    assert pred["expected_normal"] == pytest.approx([per.mean() - h, per.mean() + h])

    def with_mean(x):  # the authors' 4-run mean x
        return czt.AuthorsCell("easy", 10**6, 0.5, "dpse", {0: 4 * x, 1: 0.0, 2: 0.0, 3: 0.0})

    lo, hi = pred["expected"]
    assert (
        czt.compare(with_mean(hi - 1e-6), ours, _seed)["inside"]
        and czt.compare(with_mean(lo + 1e-6), ours, _seed)["inside"]
    )
    assert not czt.compare(with_mean(hi + 1e-6), ours, _seed)["inside"]
    assert not czt.compare(with_mean(lo - 1e-6), ours, _seed)["inside"]


def test_mean_interval_sampled_when_the_combinations_are_many():
    rng = np.random.default_rng(5)
    y = rng.normal(0.0, 1.0, size=(8, 39))  # 39^8 combinations: sampled; the mean of 8 N(0,1)-ish values
    lo, hi = czt.mean_of_one_per_instance_interval(y, [1, 2], draws=200_000)
    exact_sd = math.sqrt(y.var(axis=1).sum()) / 8  # the plug-in law's sd (population variance of each row)
    assert lo == pytest.approx(-1.96 * exact_sd + y.mean(), abs=0.03) and hi == pytest.approx(
        1.96 * exact_sd + y.mean(), abs=0.03
    )
    assert (lo, hi) == czt.mean_of_one_per_instance_interval(y, [1, 2], draws=200_000)  # seeded


def test_summary_cell_uses_instances_0_to_n_minus_1():
    ours = {i: _ours([2700.0 + i, 2710.0 + i, 2720.0 + i]) for i in range(4)}
    cell = czt.AuthorsCell("easy", 10**6, 1.0, "dpse", {}, {"mean": 2715, "se": 241, "runs": 4, "source": "s"})
    out = czt.compare(cell, ours, _seed)
    assert out["authors"]["instances"] == [0, 1, 2, 3] and out["authors"]["regret"] is None and out["inside"]
    assert out["ours"]["mean"] == pytest.approx(2711.5)


def test_predict_refuses_missing_instances_and_unequal_runs():
    with pytest.raises(KeyError):
        czt.predict({0: _ours([1.0, 2.0])}, [0, 1], _seed)
    with pytest.raises(ValueError, match="same number"):
        czt.predict({0: _ours([1.0, 2.0]), 1: _ours([1.0, 2.0, 3.0])}, [0, 1], _seed)
    with pytest.raises(ValueError, match="at least one"):
        czt.predict({}, [], _seed)


def test_realised_variance_from_the_pulls():
    arms = np.array([[0, 1, 2, 1], [1, 1, 1, 1]])
    lengths = np.array([[4, 3, 2, 1], [5, 2, 2, 1]])
    pulls = czt.pulls_per_arm(arms, lengths, 3)
    assert pulls.tolist() == [[4, 4, 2], [0, 10, 0]]
    v = np.array([0.01, 0.02, 0.03])
    got = czt.realised_variance(pulls, v, np.array([0.5, 0.6, 0.4]))  # best arm 1: v_* = 0.02
    assert got == pytest.approx([4 * 0.03 + 2 * 0.05, 0.0])


# ---- rows, keys and the cache -------------------------------------------------------------------------------------
def test_rows():
    assert czt.table_row("hard", 0.5, "DP-SE", None, None, True)[3:] == ("not run", "-", "-", "-", "-", "-")
    assert czt.table_row("easy", 1.0, "DP-SE (authors' shared noise)", None, [1.0, 3.0], False)[3] == "n/a"
    cmp = czt.compare(czt.AuthorsCell("hard", 10**7, 1.0, "dpse", {0: 50.0}), {0: _ours(np.arange(1.0, 40.0))}, _seed)
    row = czt.table_row("hard", 1.0, "DP-SE", cmp, None, True)
    assert row[3].strip() == "50" and row[4] == "0" and row[6] == "[     1,     39]" and row[7] == "NO"
    assert czt.ids_label([0, 1, 2, 3]) == "0-3" and czt.ids_label([0]) == "0" and czt.ids_label([0, 2]) == "0,2"


def test_keys_and_seeds_are_stable():
    key = czt.cell_key("hard", 10**7, 1.0, "Dist-RDP-SE s=10")
    assert key == "hard/T=10000000/eps=1/Dist-RDP-SE s=10"
    assert czt.run_seed(4, key, 0) == [4, zlib.crc32(key.encode()), 1, 0] and czt.run_seed(4, key) == [
        4,
        zlib.crc32(key.encode()),
    ]
    assert czt.seed_key([4, 12, 1, 0]) == "seed=4-12-1-0"


def test_cache_round_trip(tmp_path):
    path = tmp_path / "ours.json"
    cache = czt.load_cache(path)
    assert cache["on_authors_instances"] == {} and cache["version"] == czt.CACHE_VERSION
    czt.put_instance_runs(cache, "k", [4, 1, 1, 0], 0, np.arange(czt.COPIES) + 0.12345, np.ones(czt.COPIES), 1.0)
    czt.put_figure_runs(cache, "k", [4, 1], np.array([1.5, 2.5]))
    czt.save_cache(cache, path)
    back = czt.load_cache(path)
    assert czt.get_instance_runs(back, "k", [4, 1, 1, 0])["pseudo"][1] == 1.123
    assert czt.get_instance_runs(back, "k", [4, 1, 1, 0], copies=25) is None  # other copies: not reused
    assert czt.get_instance_runs(back, "k", [5, 1, 1, 0]) is None and czt.get_figure_runs(back, "k", [4, 1]) == [
        1.5,
        2.5,
    ]
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(ValueError, match="cache version 99"):
        czt.load_cache(path)


def test_the_stored_cache_covers_every_authors_cell():
    """Every cell of the authors' jsonl has our runs in benchmarks/figures/mab_cz_ours.json (what --from-cache needs),
    and the hard instance's cells not yet run by the authors too (instance 0)."""
    if not czt.CACHE.exists():
        pytest.skip("no cache yet: run `python -m benchmarks run reproduce_mab --part cz`")
    cache = czt.load_cache()
    text, missing = rm.cz_table({}, cache, root=4, runs=20)
    assert missing == [] and "not in cache" not in text
    for eps in czt.EPSILONS:
        for name in czt.CODE_ALGS:
            key = czt.cell_key("hard", 10**7, eps, name)
            assert czt.get_instance_runs(cache, key, czt.run_seed(4, key, 0)) is not None, key


def test_a_jsonl_cell_without_cached_runs_is_reported_not_guessed(tmp_path, monkeypatch):
    """--from-cache never simulates: a cell of the jsonl on an instance the cache lacks is named, and its row says so."""
    monkeypatch.setattr(
        rm.czt, "AUTHORS_CODE", _jsonl(tmp_path, [_run(run=5, regret=20000.0), _run(run=0, eps=0.5, regret=1000.0)])
    )
    cache = rm.czt.new_cache()
    key = czt.cell_key("hard", 10**7, 0.5, "DP-SE")
    rm.czt.put_instance_runs(cache, key, czt.run_seed(4, key, 0), 0, np.arange(39.0) * 10, np.zeros(39), 0.0)
    text, missing = rm.cz_table({}, cache, root=4, runs=20)
    assert missing == ["hard/T=10000000/eps=1/DP-SE on instances [5]"]
    rows = {tuple(line.split()[:3]): line for line in text.splitlines() if line.startswith("hard")}
    assert "not in cache" in rows[("hard", "1", "DP-SE")]
    assert rows[("hard", "0.5", "DP-SE")].split()[3:5] == ["1000", "0"] and " NO " in rows[("hard", "0.5", "DP-SE")]
