"""`dpaudit budget` and `dpaudit calibrate`: default run, tables, --json, usage errors."""

import json

import pytest

from dpaudit.cli import main


def test_budget_default_prints_a_table(capsys):
    assert main(["budget"]) == 0
    out = capsys.readouterr().out
    assert "gaussian" in out and "pld" in out and "best" in out


def test_budget_json_and_values(capsys):
    assert main(["budget", "laplace", "--scale", "2", "--count", "10", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["accountant"]: r for r in out["results"]}
    assert rows["pure"]["epsilon"] == pytest.approx(5.0)
    assert rows["shuffle"]["supported"] is False and rows["shuffle"]["reason"]
    assert out["best"]["epsilon"] == min(r["epsilon"] for r in rows.values() if r["supported"])


def test_budget_delta_at_epsilon(capsys):
    assert main(["budget", "rr", "--epsilon0", "1", "--count", "5", "--epsilon", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == 3.0
    assert all(0 <= r["delta"] <= 1 for r in out["results"] if r["supported"])


@pytest.mark.parametrize(
    "argv",
    [
        ["budget", "gaussian"],  # missing --sigma
        ["budget", "gaussian", "--sigma", "0"],
        ["budget", "gaussian", "--sigma", "1", "--delta", "1.5"],
        ["budget", "gaussian", "--sigma", "1", "--epsilon", "-1"],
        ["budget", "shuffle", "--epsilon0", "1", "--users", "0"],
        ["budget", "gaussian", "--sigma", "1", "--users", "3"],
        ["calibrate", "laplace", "--epsilon", "nan"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_calibrate_table_and_json(capsys):
    assert (
        main(
            ["calibrate", "laplace", "--count", "4", "--epsilon", "2", "--delta", "0", "--accountant", "pure", "--json"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["tuned"] == "scale" and out["best"]["scale"] == pytest.approx(2.0, rel=1e-3)
    assert main(["calibrate", "rr", "--count", "3", "--epsilon", "1.5", "--accountant", "pure"]) == 0
    assert "epsilon0" in capsys.readouterr().out


def test_budget_shuffle_reports_both_fmt_bounds(capsys):
    assert main(["budget", "shuffle", "--epsilon0", "1", "--users", "100000", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    b = out["shuffle_bounds"]
    assert b["fmt_numerical"] < b["fmt_closed_form"] < 1.0
    assert out["best"]["epsilon"] == pytest.approx(b["fmt_numerical"])
