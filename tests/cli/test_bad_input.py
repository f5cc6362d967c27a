"""Bad input: exit 2 with a message naming the flag, before any work (one test per reported case)."""

import json
import math
import socket

import pytest

import dpaudit.registry
from dpaudit.cli import join_negative_values, main, name_flags


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the command gets as far as loading the catalog or simulating."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the bad flag was rejected")

    monkeypatch.setattr(dpaudit.registry, "load_plugins", refuse)


def _err(capsys) -> str:
    return capsys.readouterr().err


def test_out_is_a_file(tmp_path, no_work, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["audit", "dp-se.epoch-sum", "--out", str(tmp_path / "f")]) == 2
    assert "--out" in _err(capsys)


def test_out_under_a_file(tmp_path, no_work, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["audit", "dp-se.epoch-sum", "--out", str(tmp_path / "f" / "sub" / "dir")]) == 2
    err = _err(capsys)
    assert "--out" in err and "which is a file" in err


def test_out_not_creatable(no_work, capsys):
    # /proc refuses new folders even to root (a chmod'ed folder would not stop root)
    assert main(["audit", "dp-se.epoch-sum", "--out", "/proc/dpaudit-test/out"]) == 2
    assert "--out" in _err(capsys)


def test_plot_into_a_missing_folder(tmp_path, capsys, monkeypatch):
    import dataclasses

    dpaudit.registry.load_plugins()
    ucb1 = dpaudit.registry.ALGORITHMS.get("ucb1")

    def refuse(**kwargs):
        raise AssertionError("simulated before the bad --plot was rejected")

    monkeypatch.setitem(dpaudit.registry.ALGORITHMS._entries, "ucb1", dataclasses.replace(ucb1, simulate=refuse))
    assert main(["regret", "ucb1", "--horizon", "10", "--runs", "2", "--plot", str(tmp_path / "no" / "r.png")]) == 2
    err = _err(capsys)
    assert "--plot" in err and "does not exist" in err
    assert main(["regret", "ucb1", "--horizon", "10", "--runs", "2", "--plot", str(tmp_path / "r.xyz")]) == 2
    assert "--plot" in _err(capsys)


@pytest.mark.parametrize("samples", ["1", "9"])
def test_too_few_samples(samples, tmp_path, no_work, capsys):
    assert main(["audit", "dp-se.epoch-sum", "--samples", samples, "--out", str(tmp_path)]) == 2
    assert "--samples" in _err(capsys)


def test_samples_minimum_is_the_auditors():
    from dpaudit.audit import audit
    from dpaudit.cli.audit import MIN_SAMPLES

    def target(data, rng, size):
        return rng.random(size)

    with pytest.raises(ValueError, match="samples"):
        audit(target, 0, 1, claim_epsilon=1.0, samples=MIN_SAMPLES - 1, seed=0)


def test_unreachable_dask_scheduler_fails_at_once(tmp_path, no_work, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["audit", "dp-se.epoch-sum", "--executor", f"dask://127.0.0.1:{port}", "--out", str(tmp_path)]) == 2
    err = _err(capsys)
    assert "--executor" in err and f"127.0.0.1:{port}" in err


@pytest.mark.parametrize(
    "argv", [["regret", "ucb1", "--horizon", "10", "--seed", "-1"], ["audit", "dp-se.epoch-sum", "--seed", "-1"]]
)
def test_negative_seed_names_seed(argv, capsys):
    assert main(argv) == 2
    assert "--seed" in _err(capsys)


@pytest.mark.parametrize(
    "argv, flag, internal",
    [
        (["budget", "shuffle", "--epsilon0", "1", "--users", "0"], "--users", "num_users"),
        (["budget", "shuffle", "--epsilon0", "-1", "--users", "10"], "--epsilon0", "local_epsilon"),
        (["budget", "epsilon-delta", "--epsilon0", "0", "--delta0", "1e-6"], "--epsilon0", "--epsilon "),
        (["budget", "epsilon-delta", "--epsilon0", "1", "--delta0", "1"], "--delta0", "--delta "),
    ],
)
def test_errors_name_flags_not_internal_parameters(argv, flag, internal, capsys):
    assert main(argv) == 2
    err = _err(capsys)
    assert flag in err and internal not in err


def test_name_flags_rewrites_only_parameter_positions():
    assert name_flags("num_users must be an integer >= 1, got 0", None) == "--users must be an integer >= 1, got 0"
    assert name_flags("the users of num_users_total", None) == "the users of num_users_total"


@pytest.mark.parametrize(
    "argv, expect",
    [
        (
            ["calibrate", "laplace", "--epsilon", "0.001", "--count", "100000", "--accountant", "pure"],
            "needs a larger --scale",
        ),
        (["calibrate", "gaussian", "--delta", "0", "--accountant", "rdp"], "rdp: skipped: no answer at δ = 0"),
    ],
)
def test_no_bracket_advice(argv, expect, capsys):
    """The CLI user has no bracket to widen: say whether any value could meet the target."""
    assert main(argv) == 2
    err = _err(capsys)
    assert "bracket" not in err and expect in err


def test_single_run_has_no_interval(capsys):
    assert main(["regret", "ucb1", "--horizon", "20", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if row.startswith("95% interval"))
    assert "needs --runs >= 2" in line
    assert main(["regret", "ucb1", "--horizon", "20", "--runs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["final_ci"] is None


def test_budget_count_1_is_1(capsys):
    assert main(["budget", "--count", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == 1 and out["mechanism"] == "gaussian"
    assert main(["budget", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 100


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["calibrate", "gaussian", "--sigma", "2"], "--sigma"),
        (["regret", "ucb1", "--horizon", "10", "--time-average"], "--time-average"),
        (["regret", "--list", "--horizon", "10"], "--horizon"),
        (["list", "--claims"], "--claims"),
    ],
)
def test_flags_that_do_not_apply_are_rejected(argv, flag, capsys):
    assert main(argv) == 2
    assert flag in _err(capsys)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["budget", "gaussian", "--sigma", "1", "--delta", "-1e-5"], "argument --delta: must lie in [0, 1)"),
        (["budget", "gaussian", "--sigma", "-2e0"], "--sigma must be positive"),
        (["calibrate", "laplace", "--epsilon", "-.5"], "argument --epsilon: must lie in (0, inf)"),
    ],
)
def test_negative_values_parse_then_are_rejected(argv, message, capsys):
    assert main(argv) == 2
    assert message in _err(capsys)


def test_join_negative_values():
    assert join_negative_values(["--delta", "-1e-5", "--means", "-0.5,0.2", "-h"]) == [
        "--delta=-1e-5",
        "--means=-0.5,0.2",
        "-h",
    ]
    assert join_negative_values(["--json", "--delta", "1e-5"]) == ["--json", "--delta", "1e-5"]


@pytest.mark.parametrize(
    "text, value",
    [("1e12", 10**12), ("1_000", 1000), ("12", 12), ("1e18", 10**18), ("9.223372036854775807e18", 2**63 - 1)],
)
def test_counts_in_scientific_notation_are_exact_integers(text, value, capsys):
    from dpaudit.cli._types import integer

    assert integer(text) == value and isinstance(integer(text), int)


@pytest.mark.parametrize("text", ["1e30", "9223372036854775808", "1e999999999", "-1e999999999"])
def test_integers_beyond_int64_are_refused_at_once(text):
    """Beyond numpy's int64 no accountant or simulation can take the value; `1e999999999` must not
    become a billion-digit int first."""
    import argparse

    from dpaudit.cli._types import integer

    with pytest.raises(argparse.ArgumentTypeError, match="2\\*\\*63 - 1"):
        integer(text)


def test_budget_huge_count_answers(capsys):
    assert main(["budget", "gaussian", "--sigma", "2", "--count", "1e12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == 10**12
    eps = out["best"]["epsilon"]
    assert eps == "inf" or (isinstance(eps, float) and eps > 1e9 and math.isfinite(eps))
