"""`python -m benchmarks` from a checkout: `list` names every registered benchmark, `run NAME --help` imports each
benchmark's module and parses its options, every module with a `main` is registered, and no benchmark reaches
its siblings through sys.path or names one machine's interpreter.  Seconds: no benchmark runs."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

from benchmarks import runner
from benchmarks.registry import BENCHMARKS

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
SOURCES = sorted(BENCH.rglob("*.py"))


def _from_the_root(*args: str) -> subprocess.CompletedProcess:
    """`python -m benchmarks ARGS` as a user runs it: in the checkout's root, which Python puts on sys.path (the
    suite's PYTHONSAFEPATH, tests/conftest.py, would keep it off)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_list_names_every_benchmark_from_the_checkout():
    out = _from_the_root("list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines[: len(BENCHMARKS)]] == [b.name for b in BENCHMARKS]
    assert all(b.summary in out.stdout for b in BENCHMARKS)
    assert "python -m benchmarks run NAME --help" in out.stdout


def test_run_passes_the_options_to_the_benchmark_from_the_checkout():
    out = _from_the_root("run", "pins", "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m benchmarks run pins [-h] [--json] before [after]")


def test_an_unknown_name_exits_2_with_the_closest_names(capsys):
    with pytest.raises(SystemExit) as exc:
        runner.main(["run", "pers"])
    assert exc.value.code == 2
    assert "unknown benchmark 'pers'; did you mean peers?" in capsys.readouterr().err


def test_run_without_a_name_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        runner.main(["run"])
    assert exc.value.code == 2 and "name" in capsys.readouterr().err


@pytest.mark.parametrize("name", [b.name for b in BENCHMARKS])
def test_every_benchmark_imports_and_parses_its_options(name, capsys):
    argv = list(sys.argv)
    with pytest.raises(SystemExit) as exc:
        runner.run(name, ["--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m benchmarks run {name} ")
    assert sys.argv == argv  # restored


def _modules_with_main() -> set[str]:
    found = set()
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found - {"benchmarks.runner"}


def test_every_module_with_a_main_is_registered_once():
    names = [b.name for b in BENCHMARKS]
    assert len(set(names)) == len(names)
    assert {b.module for b in BENCHMARKS} == _modules_with_main()


def test_each_docstring_gives_its_runner_usage_line():
    for b in BENCHMARKS:
        path = ROOT / (b.module.replace(".", "/") + ".py")
        assert f"python -m benchmarks run {b.name}" in ast.get_docstring(ast.parse(path.read_text())), b.name


@pytest.mark.parametrize("needle", ["sys.path", "/work/", "/tmp/", "venv/bin"])
def test_no_path_hacks_or_machine_paths(needle):
    assert [str(p.relative_to(ROOT)) for p in SOURCES if needle in p.read_text()] == []


def test_the_readme_shows_the_current_list():
    readme = (BENCH / "README.md").read_text()
    assert all(f"    {line}" in readme for line in runner.list_text().splitlines() if line)
