"""Every way out of `dpaudit audit` is a verdict, an error or a partial report, never a silent pass.

User code that raises any BaseException (sys.exit(0) included) is an error of its entry (exit 3),
a worker that dies is its entry's error, Ctrl-C writes what finished (exit 130), a project that
declares no audits is refused (exit 2), and a run that audits nothing is no pass.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from ci_modules import laplace_module

from dpaudit._interrupt import is_interrupt, sigint_stops
from dpaudit.cli import main
from dpaudit.user_config import find_config, find_project_file

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A Laplace(1) count against its true claim epsilon = 1: consistent except with probability <= 5% per
# audit (fixed seeds: never here), so every failure below comes from the broken entry.
RAISES = """
def broken(data, rng, size):
    {body}
dpaudit.register_audit(name="shop.broken", claim_epsilon=1.0, d0=D0, d1=D1, samples=2000)(broken)
"""


def _broken_module(body: str) -> str:
    return laplace_module(samples=2000) + textwrap.dedent(RAISES).format(body=body)


def _report(project) -> dict:
    return json.loads((project.root / "rep" / "report.json").read_text())


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    "body, error",
    [
        ("import sys; sys.exit(0)", "SystemExit: 0"),
        ("import sys; sys.exit(1)", "SystemExit: 1"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise GeneratorExit", "GeneratorExit"),
    ],
)
def test_any_base_exception_in_a_target_is_that_entrys_error(project, capsys, jobs, body, error):
    project.config()
    project.write("shop_audits.py", _broken_module(body))
    code = main(["audit", "--out", "rep", "--jobs", jobs, "--junit-xml", "j.xml"])
    out = capsys.readouterr().out
    assert code == 3 and "gate: ERROR" in out
    report = _report(project)
    assert report["summary"]["errors"] == ["shop.broken"]
    entries = {e["name"]: e for e in report["entries"]}
    assert entries["shop.broken"]["error"].startswith(error)
    assert entries["shop.count"]["claims"][0]["verdict"] == "consistent"  # the other entry still audited
    junit = (project.root / "j.xml").read_text()
    assert '<error message="' + error in junit and 'name="shop.count[declared]"' in junit


@pytest.mark.parametrize("body", ["import sys; sys.exit(0)", "raise KeyboardInterrupt"])
def test_a_module_that_exits_at_import_is_a_declaration_error(project, capsys, body):
    project.config()
    project.write("shop_audits.py", laplace_module() + f"\n{body}\n")
    assert main(["audit", "--out", "rep"]) == 2
    err = capsys.readouterr().err
    assert "shop_audits" in err and ("SystemExit" in err or "KeyboardInterrupt" in err)
    assert not (project.root / "rep" / "report.json").exists()


def test_a_worker_that_dies_is_its_entrys_error(project, capsys):
    project.config()
    project.write(
        "shop_audits.py",
        _broken_module("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
        + textwrap.dedent(RAISES)
        .replace("shop.broken", "shop.exits")
        .replace("broken", "exits")
        .format(body="import os; os._exit(7)"),
    )
    assert main(["audit", "--out", "rep", "--jobs", "2"]) == 3
    report = _report(project)
    entries = {e["name"]: e for e in report["entries"]}
    assert "killed by SIGKILL" in entries["shop.broken"]["error"]
    assert "exited with status 7" in entries["shop.exits"]["error"]
    assert entries["shop.count"]["claims"][0]["verdict"] == "consistent"
    assert sorted(report["summary"]["errors"]) == ["shop.broken", "shop.exits"]


SLOW = """
def slow(data, rng, size):
    import time
    time.sleep(600)
dpaudit.register_audit(name="shop.zz-slow", claim_epsilon=1.0, d0=D0, d1=D1, samples=100)(slow)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_writes_what_finished_and_stops_the_workers(project, jobs):
    project.config()
    project.write("shop_audits.py", laplace_module(samples=2000) + textwrap.dedent(SLOW))
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpaudit", "audit", "--out", "rep", "--jobs", jobs],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(project.root)},
    )
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not any("] shop.count ... ok" in line for line in err_lines):
        time.sleep(0.2)  # shop.count finishes in seconds; shop.zz-slow sleeps
    assert any("] shop.count ... ok" in line for line in err_lines), "".join(err_lines)
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    proc.wait(timeout=60)
    reader.join(10)
    err = "".join(err_lines)
    assert time.monotonic() - sent < 10, "the run went on after Ctrl-C"
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "INTERRUPTED" in out
    report = _report(project)
    assert report["settings"]["incomplete"] and report["settings"]["not_run"] == ["shop.zz-slow"]
    assert [e["name"] for e in report["entries"]] == ["shop.count"]
    if jobs == "2":  # no worker left behind
        children = subprocess.run(["pgrep", "-f", "dpaudit-shop"], capture_output=True, text=True).stdout
        assert children.strip() == ""


def test_a_project_without_declarations_is_refused(tmp_path, monkeypatch, capsys):
    (tmp_path / "myshop" / "src").mkdir(parents=True)
    (tmp_path / "myshop" / "pyproject.toml").write_text('[project]\nname = "myshop"\n')
    monkeypatch.chdir(tmp_path / "myshop" / "src")
    assert main(["audit", "--junit-xml", "j.xml", "--out", "rep"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "myshop" / "pyproject.toml") in err and "modules" in err and "--catalog builtin" in err
    assert not pathlib.Path("j.xml").exists() and not pathlib.Path("rep/report.json").exists()
    assert main(["list"]) == 2


def test_the_nearest_pyproject_upward_is_the_project(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    (project.root / "src" / "deep").mkdir(parents=True)
    os.chdir(project.root / "src" / "deep")
    assert find_project_file() == project.root / "pyproject.toml"
    assert find_config().modules == ("shop_audits",)
    assert main(["list", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["shop.count"]


def test_outside_any_project_the_builtin_catalog_runs_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert find_project_file() is None
    assert main(["audit", "dp-se.epoch-sum", "--samples", "2000", "--no-regret", "--out", "rep"]) == 0
    out, err = capsys.readouterr()
    assert "catalog: built-in catalog (no project declares audits here)" in out and "built-in catalog" in err
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["settings"]["catalog"] == "builtin"


def test_dpaudits_own_checkout_declares_the_builtin_catalog(monkeypatch):
    monkeypatch.chdir(ROOT / "tests")
    config = find_config()
    assert config.file == ROOT / "pyproject.toml" and config.catalog == "builtin" and config.modules == ()


def test_a_run_that_audits_nothing_is_no_pass(project, capsys):
    project.write("pyproject.toml", '[tool.dpaudit]\ncatalog = "builtin"\n')
    assert main(["audit", "--catalog", "user", "--out", "rep"]) == 2
    assert "declares no modules" in capsys.readouterr().err
    assert not (project.root / "rep" / "report.json").exists()


@pytest.mark.parametrize(
    "toml, needle",
    [
        ("tool = 5\n", "`tool` must be a table"),
        ("[tool]\ndpaudit = 5\n", "`tool.dpaudit` must be a table"),
        ('[tool.dpaudit]\ncatalog = "mine"\n', "catalog must be one of"),
        ('[tool.dpaudit]\ncatalog = "builtin"\nmodules = ["a"]\n', 'catalog = "all"'),
    ],
)
def test_bad_tables_exit_2(project, capsys, toml, needle):
    project.write("pyproject.toml", toml)
    assert main(["audit", "--out", "rep"]) == 2
    assert needle in capsys.readouterr().err


def test_a_raised_keyboard_interrupt_is_not_a_ctrl_c():
    with sigint_stops():
        assert not is_interrupt(KeyboardInterrupt())  # raised by code, no SIGINT came
        assert not is_interrupt(SystemExit(0))
        with pytest.raises(KeyboardInterrupt) as caught:  # noqa: PT012  (the signal arrives during the sleep)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        assert is_interrupt(caught.value)


@pytest.mark.parametrize("samples", ["1e15", str(2**64)])
def test_samples_beyond_the_auditors_limits_exit_2_before_any_work(project, capsys, samples):
    project.config()
    project.write("shop_audits.py", laplace_module())
    assert main(["audit", "--samples", samples, "--out", "rep"]) == 2
    assert "--samples" in capsys.readouterr().err
    assert not (project.root / "rep" / "report.json").exists()


@pytest.mark.parametrize("flag", ["--junit-xml", "--baseline"])
def test_a_path_longer_than_the_system_allows_exits_2(project, capsys, flag):
    project.config()
    project.write("shop_audits.py", laplace_module())
    assert main(["audit", flag, "x" * 5000, "--out", "rep"]) == 2
    assert flag in capsys.readouterr().err
