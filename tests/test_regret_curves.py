"""dpaudit.regret: curve statistics, JSON and plots."""

import json
import math

import numpy as np
import pytest

from dpaudit.regret import RegretCurves, plot_curves, plot_final


def _curves(name="x", runs=30, seed=0):
    rng = np.random.default_rng(seed)
    cp = np.array([1, 10, 100, 1000])
    reg = np.cumsum(rng.random((runs, 4)) * [1, 9, 90, 900], axis=1)
    return RegretCurves(name, cp, reg, {"claim": {"notion": "pure", "epsilon": 1.0}}, {"epsilon": 1.0, "label": name})


def test_statistics():
    c = _curves()
    assert c.runs == 30 and c.horizon == 1000
    lo, hi = c.final_ci
    assert lo < c.final_mean < hi
    se = c.regret[:, -1].std(ddof=1) / math.sqrt(30)
    assert hi - lo == pytest.approx(2 * 1.959964 * se, rel=1e-5)
    assert np.allclose(c.time_average(), c.mean() / c.checkpoints)


def test_one_run_has_no_interval():
    """A single run has no spread: no zero-width "95% interval" (the old code gave (3.0, 3.0))."""
    one = RegretCurves("y", np.array([5]), np.array([[3.0]]))
    assert all(math.isnan(x) for x in one.final_ci)
    js = json.loads(json.dumps(one.to_json(points=True), allow_nan=False))
    assert js["final_mean"] == 3.0 and js["final_ci"] is None and js["band"] is None


def test_json_round_trip():
    js = json.loads(json.dumps(_curves().to_json(points=True), allow_nan=False))
    assert {"algorithm", "horizon", "runs", "final_mean", "final_ci", "privacy"} <= set(js)
    assert len(js["final_ci"]) == 2 and len(js["checkpoints"]) == 4
    inf = RegretCurves("z", np.array([1]), np.array([[0.0]]), {"corrected": {"epsilon": float("inf")}}).to_json()
    assert inf["privacy"]["corrected"]["epsilon"] == "inf"


@pytest.mark.parametrize(
    "cp, reg, msg",
    [
        (np.array([2, 1]), np.zeros((1, 2)), "increasing"),
        (np.array([1, 2]), np.zeros((1, 3)), "shape"),
        (np.array([1]), np.array([[np.nan]]), "finite"),
        (np.array([]), np.zeros((1, 0)), "non-empty"),
    ],
)
def test_validation(cp, reg, msg):
    with pytest.raises(ValueError, match=msg):
        RegretCurves("a", cp, reg)


def test_plots_are_written_as_png(tmp_path):
    a, b = _curves("a"), _curves("b", seed=1)
    path = tmp_path / "curves.png"
    plot_curves([a, b], path, time_average=True, log_x=True, title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    final = tmp_path / "final.png"
    plot_final({"a": ([0.1, 1.0], [a, b])}, final)
    assert final.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curves.png", "final.png"]  # no temp files left
    with pytest.raises(ValueError, match="curves"):
        plot_curves([], tmp_path / "x.png")
    with pytest.raises(ValueError, match="x values"):
        plot_final({"a": ([0.1], [a, b])}, final)
