"""`dpaudit regret`: listing, JSON, plots and usage errors."""

import json

import pytest

from dpaudit.cli import main

NAMES = [
    "ucb1",
    "se",
    "dp-se",
    "anytime-lazy-ucb",
    "hybrid-ucb",
    "ftnl",
    "dist-dp-se",
    "dist-rdp-se",
    "dist-cdp-se",
    "cdp-se",
    "ldp-se",
]


def test_list_names_every_algorithm_with_its_parameters(capsys):
    assert main(["regret", "--list", "--json"]) == 0
    listing = {item["name"]: item for item in json.loads(capsys.readouterr().out)}
    assert set(NAMES) <= set(listing)
    assert "epsilon" in [p["name"] for p in listing["dp-se"]["params"]]
    assert {"polya", "returning"} <= {p["name"] for p in listing["dist-dp-se"]["params"]}
    assert main(["regret", "--list"]) == 0
    assert "anytime-lazy-ucb" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["dp-se", "--epsilon", "0.5"],
        ["anytime-lazy-ucb", "--instance", "hhm-2"],
        ["ftnl", "--noise", "fixed"],
        ["dist-dp-se", "--epsilon", "1", "--p", "0.1", "--base", "4"],
        ["ldp-se", "--means", "0.9,0.5,0.4"],
    ],
)
def test_json_summary(argv, capsys):
    assert main(["regret", *argv, "--horizon", "3000", "--runs", "4", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == argv[0] and out["horizon"] == 3000 and out["runs"] == 4
    lo, hi = out["final_ci"]
    assert lo <= out["final_mean"] <= hi
    assert out["privacy"]["claim"]["notion"] == "pure"


def test_same_seed_same_answer_and_plot(tmp_path, capsys):
    argv = ["regret", "hybrid-ucb", "--horizon", "600", "--runs", "3", "--seed", "7", "--json"]
    main(argv)
    first = json.loads(capsys.readouterr().out)
    plot = tmp_path / "r.png"
    assert main([*argv, "--plot", str(plot)]) == 0
    assert json.loads(capsys.readouterr().out)["final_mean"] == first["final_mean"]
    assert first["privacy"]["corrected"]["epsilon"] == 1.5
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert main(["regret", "ucb1", "--horizon", "300", "--runs", "2"]) == 0
    assert "final regret" in capsys.readouterr().out


def test_generic_over_registered_entries(capsys, monkeypatch):
    """Any AlgorithmEntry works, with its own parameters and a free-text privacy claim."""
    import argparse

    import numpy as np

    import dpaudit.cli.regret as cli
    from dpaudit.registry import ALGORITHMS, AlgorithmEntry, Param
    from dpaudit.regret import RegretCurves

    def simulate(horizon, runs, seed, width=1.0):
        cp = np.array([1, horizon])
        return RegretCurves("toy", cp, np.full((runs, 2), width), {"claim": "none (toy)"}, {"width": width})

    entry = AlgorithmEntry("toy-test", "a toy", simulate, (Param("width", float, 1.0, "a width"),))
    monkeypatch.setitem(ALGORITHMS._entries, "toy-test", entry)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["toy-test", "--horizon", "9", "--runs", "3", "--width", "2.5"])
    assert cli.run(args) == 0
    out = capsys.readouterr().out
    assert "none (toy)" in out and "2.5" in out


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["nope", "--horizon", "10"], "unknown algorithm"),
        (["ucb1", "--horizon", "100", "--epsilon", "1"], "does not take"),
        (["dp-se", "--horizon", "100", "--epsilon", "-1"], "epsilon"),
        (["dp-se"], "--horizon"),
        (["dp-se", "--horizon", "3"], "horizon"),
        (["dist-dp-se", "--horizon", "100", "--path", "x"], "--path"),
        (["dp-se", "--horizon", "100", "--means", "0.5"], "means"),
        ([], "ALGORITHM"),
    ],
)
def test_usage_errors_exit_2(argv, msg, capsys):
    assert main(["regret", *argv]) == 2
    assert msg in capsys.readouterr().err


@pytest.mark.parametrize("name", NAMES)
def test_every_mab_entry_simulates_and_serialises(name):
    from dpaudit.registry import ALGORITHMS, load_plugins

    load_plugins()
    curves = ALGORITHMS.get(name).simulate(horizon=300, runs=2, seed=0)
    js = json.loads(json.dumps(curves.to_json(), allow_nan=False))
    assert js["horizon"] == 300 and js["runs"] == 2
    assert js["privacy"]["claim"]["notion"] in ("none", "pure", "rdp", "zcdp")
