"""Extreme values of every kind of flag (huge counts, paths longer than the system allows, numbers past
the doubles): exit 2 naming the flag before any work, or a correct answer where the input is valid."""

import argparse
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit.registry
from dpaudit.cli import main
from dpaudit.cli._types import MAX_INTEGER, MAX_SEED, int_at_least, integer, seed

LONG = "/tmp/" + "x" * 5000  # one name longer than any system's NAME_MAX


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the command gets as far as loading the catalog or the user's entries."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the bad flag was rejected")

    monkeypatch.setattr(dpaudit.registry, "load_plugins", refuse)


@pytest.mark.parametrize(
    "argv, flag",
    [
        # counts, sizes and horizons beyond numpy's int64 (TypeError in the accountants, or an hour of parsing)
        (["budget", "gaussian", "--sigma", "2", "--count", "1e20"], "--count"),
        (["budget", "gaussian", "--sigma", "2", "--count", "18446744073709551616"], "--count"),
        (["budget", "gaussian", "--sigma", "2", "--count", "9223372036854775808"], "--count"),
        (["budget", "gaussian", "--sigma", "2", "--count", "1e999999999"], "--count"),
        (["budget", "gaussian", "--sigma", "2", "--count", "9" * 5000], "--count"),
        (["budget", "shuffle", "--epsilon0", "1", "--users", "1e30"], "--users"),
        (["budget", "rr", "--epsilon0", "1", "--buckets", "1e999999999"], "--buckets"),
        (["budget", "epsilon-delta", "--epsilon0", "1", "--delta0", "1e-6", "--count", "1e308"], "--count"),
        (["calibrate", "gaussian", "--epsilon", "1", "--count", "1e20"], "--count"),
        (["regret", "ucb1", "--horizon", "1e300"], "--horizon"),
        (["regret", "ucb1", "--horizon", "10", "--seed", "1e999999999"], "--seed"),
        (["tradeoff", "dp-se", "--epsilons", "1", "--horizon", "1e300"], "--horizon"),
        # paths the system cannot even look up (OSError: File name too long)
        (["budget", "--plan", LONG + ".toml"], "--plan"),
        (["regret", "ucb1", "--horizon", "10", "--plot", LONG + ".png"], "--plot"),
        (["tradeoff", "dp-se", "--epsilons", "1", "--horizon", "10", "--plot", LONG + ".png"], "--plot"),
        (["report", LONG], "DIR"),
    ],
)
def test_extreme_values_exit_2_naming_the_flag(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err
    assert len(err.strip().splitlines()[-1]) < 400  # a 5000-character value is shown by its ends


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["audit", "dp-se.epoch-sum", "--out", LONG], "--out"),
        (["audit", "dp-se.epoch-sum", "--out", LONG + "/sub"], "--out"),
        (["audit", "dp-se.epoch-sum", "--samples", "1e20"], "--samples"),
        (["audit", "dp-se.epoch-sum", "--seed", "1e999999999"], "--seed"),
        (["audit", "dp-se.epoch-sum", "--jobs", "1e30"], "--jobs"),
    ],
)
def test_audit_extreme_values_exit_2_before_any_work(argv, flag, no_work, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_largest_count_answers(capsys):
    """2**63 - 1 Gaussian releases: every accountant that applies answers (no TypeError from gammaln)."""
    assert main(["budget", "gaussian", "--sigma", "2", "--count", str(MAX_INTEGER), "--json"]) == 0
    out = _json(capsys)
    assert out["count"] == MAX_INTEGER
    assert all(r["supported"] or not r.get("failed") for r in out["results"])
    # k Gaussians of mu = 1/2 are one of mu = sqrt(k)/2, whose epsilon at small delta is about mu^2/2 = rho
    rho = MAX_INTEGER / 8
    assert rho <= out["best"]["epsilon"] <= 1.001 * rho


def test_huge_epsilon_delta_composition_is_inf_not_unsupported(capsys):
    """10**18 releases of (1e6, 0.1)-DP: delta 1 - 0.9**k is ~1 whatever epsilon, so epsilon at delta 1e-5
    is inf (the valid, trivial bound), not "no accountant supports mechanism"."""
    assert main(["budget", "epsilon-delta", "--epsilon0", "1e6", "--delta0", "0.1", "--count", "1e18", "--json"]) == 0
    out = _json(capsys)
    assert out["best"]["epsilon"] == "inf"


def test_shuffle_tiny_local_epsilon_answers(capsys):
    assert main(["budget", "shuffle", "--epsilon0", "1e-17", "--users", "1000", "--json"]) == 0
    eps = _json(capsys)["best"]["epsilon"]
    assert 0.0 <= eps <= 1e-17  # shuffling never loses privacy against the local epsilon


def test_plan_count_beyond_int64_names_plan(tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"releases": [{"mechanism": "gaussian", "count": 2**64, "params": {"sigma": 1.0}}]}))
    assert main(["budget", "--plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--plan" in err and "`count` must be an integer in [1, 2**63 - 1]" in err


@settings(max_examples=200, deadline=None)
@given(st.integers(1, MAX_INTEGER))
def test_count_parser_accepts_every_integer_up_to_int64(n):
    parse = int_at_least(1)
    assert parse(str(n)) == n
    assert parse(f"{n:_}") == n
    digits = str(n).rstrip("0")
    assert parse(f"{digits}e{len(str(n)) - len(digits)}") == n  # scientific notation, exactly


@settings(max_examples=200, deadline=None)
@given(st.integers(MAX_INTEGER + 1, 10**400) | st.integers(max_value=0))
def test_count_parser_rejects_outside_1_to_int64(n):
    with pytest.raises(argparse.ArgumentTypeError):
        int_at_least(1)(str(n))


@settings(max_examples=30, deadline=None)
@given(st.integers(MAX_INTEGER + 1, 10**400))
def test_count_beyond_int64_exits_2_naming_count(n):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["budget", "gaussian", "--sigma", "2", "--count", str(n)]) == 2
    assert "argument --count: must be at most 2**63 - 1" in err.getvalue()


def test_integer_bounds_are_symmetric_and_seeds_reach_128_bits():
    assert integer(str(-MAX_INTEGER)) == -MAX_INTEGER
    with pytest.raises(argparse.ArgumentTypeError):
        integer(str(-MAX_INTEGER - 1))
    assert seed(str(MAX_SEED)) == MAX_SEED
    with pytest.raises(argparse.ArgumentTypeError, match="2\\*\\*128 - 1"):
        seed(str(MAX_SEED + 1))


def test_calibrated_value_at_the_range_end_says_so(capsys):
    """Target epsilon 1e30: sigma 1e-4 (the searched range's end) meets it, and so does far less noise;
    the table must not present 1e-4 as the smallest sigma without saying so."""
    assert main(["calibrate", "gaussian", "--epsilon", "1e30", "--accountant", "zcdp", "--json"]) == 0
    (row,) = _json(capsys)["results"]
    assert row["range_end"] is True
    assert main(["calibrate", "gaussian", "--epsilon", "1e30", "--accountant", "zcdp"]) == 0
    assert "end of the searched range: a smaller --sigma meets the target too" in capsys.readouterr().out
    assert main(["calibrate", "gaussian", "--epsilon", "1", "--accountant", "zcdp", "--json"]) == 0
    assert _json(capsys)["results"][0]["range_end"] is False


@pytest.mark.parametrize(
    "argv, runs_flag",
    [
        (["regret", "ucb1", "--horizon", str(MAX_INTEGER), "--runs", "2"], "--runs"),
        (["regret", "ucb1", "--horizon", "10", "--runs", str(MAX_INTEGER)], "--runs"),
        (["tradeoff", "dp-se", "--epsilons", "1", "--horizon", str(MAX_INTEGER), "--runs", "2"], "--runs"),
        (
            ["calibrate", "dp-se", "--horizon", "100", "--target-epsilon", "1", "--regret-runs", str(MAX_INTEGER)],
            "--regret-runs",
        ),
    ],
)
def test_simulation_beyond_the_machine_names_horizon_and_runs(argv, runs_flag, capsys):
    """numpy refuses the arrays (or their indices overflow): exit 2 naming the flags, not a traceback."""
    assert main(argv) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--horizon" in last and runs_flag in last and "too large to simulate" in last


def test_simulation_out_of_memory_is_a_usage_error(monkeypatch, capsys):
    import dataclasses

    dpaudit.registry.load_plugins()
    ucb1 = dpaudit.registry.ALGORITHMS.get("ucb1")

    def huge(**kwargs):
        raise MemoryError("Unable to allocate 37.3 GiB for an array with shape (2, 10000000000)")

    monkeypatch.setitem(dpaudit.registry.ALGORITHMS._entries, "ucb1", dataclasses.replace(ucb1, simulate=huge))
    assert main(["regret", "ucb1", "--horizon", "1e10", "--runs", "2"]) == 2
    assert "MemoryError: Unable to allocate 37.3 GiB" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["regret", "ucb1", "--horizon", "0"],
        ["budget", "dp-se", "--horizon", "-5"],
        ["tradeoff", "dp-se", "--epsilons", "1", "--horizon", "0"],
    ],
)
def test_horizon_below_one_is_refused_by_the_flag(argv, capsys):
    assert main(argv) == 2
    assert "argument --horizon: must be an integer >= 1" in capsys.readouterr().err
