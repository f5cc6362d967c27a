"""`dpaudit tradeoff`: regret against the corrected epsilon, as a table, --json and --plot; bad input exits 2."""

import json

import pytest

from dpaudit.cli import main
from dpaudit.registry import ALGORITHMS, load_plugins

load_plugins()

ARGS = ["--epsilons", "0.5,1", "--horizon", "300", "--runs", "3", "--seed", "5"]


def test_tradeoff_json_points(capsys):
    assert main(["tradeoff", "hybrid-ucb", "ftnl", "ucb1", *ARGS, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    pts = {(p["algorithm"], p["value"]): p for p in out["points"]}
    assert set(pts) == {("hybrid-ucb", 0.5), ("hybrid-ucb", 1.0), ("ftnl", 0.5), ("ftnl", 1.0), ("ucb1", None)}
    # corrected epsilon: Hu, Huang, Mehta Alg. 4 is 1.5 eps-DP, FTNL's RNM 2 eps-DP (pure accountant)
    assert pts["hybrid-ucb", 1.0]["corrected_epsilon"] == pytest.approx(1.5)
    assert pts["ftnl", 0.5]["corrected_epsilon"] == pytest.approx(1.0)
    assert pts["ucb1", None]["corrected_epsilon"] == "inf"
    for p in out["points"]:
        lo, hi = p["final_ci"]
        assert lo <= p["final_mean"] <= hi
    # the regret of a point is the one `dpaudit regret` simulates with the same seed and parameters
    curves = ALGORITHMS.get("hybrid-ucb").simulate(horizon=300, runs=3, seed=5, epsilon=0.5)
    assert pts["hybrid-ucb", 0.5]["final_mean"] == curves.final_mean


def test_tradeoff_table_and_plot(tmp_path, capsys):
    plot = tmp_path / "frontier.png"
    assert main(["tradeoff", "dp-se", *ARGS, "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "corrected eps" in out and "dp-se" in out and f"plot: {plot}" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p != plot]  # written atomically: no temporary file left


def test_shared_parameters_apply_to_the_algorithms_that_take_them(capsys):
    assert main(["tradeoff", "dp-se", "ucb1", *ARGS, "--instance", "hhm-2", "--beta", "0.1", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert all(p["params"]["instance"] == "hhm-2" for p in pts)
    assert [p["params"].get("beta") for p in pts] == [0.1, 0.1, None]


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["tradeoff", "nope", *ARGS], "nope"),
        (["tradeoff", "dp-se", "--epsilons", "0,1", "--horizon", "300"], "--epsilons"),
        (["tradeoff", "dp-se", "--epsilons", "1", "--horizon", "2"], "--horizon"),
        (["tradeoff", "dp-se", "--epsilons", "1"], "--horizon"),
        (["tradeoff", "dp-se", *ARGS, "--dim", "3"], "--dim"),
        (["tradeoff", "dp-se", *ARGS, "--runs", "1"], "--runs"),
        (["tradeoff", "ucb1", *ARGS, "--plot", "x.png"], "--plot"),
        (["tradeoff", "dp-se", *ARGS, "--plot", "/no/such/folder/x.png"], "--plot"),
        (["tradeoff", "dp-se", *ARGS, "--plot", "x.notaformat"], "--plot"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(argv, flag, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert flag in capsys.readouterr().err
