"""Every help screen renders (argparse %-formats help strings: a bare "95%" crashed `dpaudit --help`),
and `--help` loads no heavy module, no catalog and no plugin."""

import json
import subprocess
import sys

import pytest

from dpaudit.cli import build_parser, main

COMMANDS = sorted(build_parser()[1])


@pytest.mark.parametrize("argv", [["--help"], ["-h"]])
def test_top_level_help(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dpaudit") and all(c in out for c in COMMANDS)


def test_bare_dpaudit_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: dpaudit" in capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_help(command, capsys):
    assert main([command, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: dpaudit {command}")


def test_commands_are_the_expected_ones():
    assert set(COMMANDS) == {"audit", "budget", "calibrate", "list", "regret", "report", "tradeoff"}


def test_help_in_a_fresh_interpreter():
    res = subprocess.run([sys.executable, "-m", "dpaudit", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: dpaudit") and "95%" in res.stdout


HEAVY = (
    "matplotlib",
    "statsmodels",
    "distributed",
    "dask",
    "tqdm",
    "pandas",
    "dp_accounting",
    "dpaudit.algorithms",
    "dpaudit.audits",
    "dpaudit.mechanisms",
    "dpaudit.accounting",
)


def test_help_imports_nothing_heavy():
    """Checked through sys.modules in a fresh interpreter (not a timing test)."""
    code = f"""
import contextlib, io, json, sys
import dpaudit.cli
with contextlib.redirect_stdout(io.StringIO()):
    assert dpaudit.cli.main(["--help"]) == 0
heavy = {HEAVY!r}
print(json.dumps(sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == []
