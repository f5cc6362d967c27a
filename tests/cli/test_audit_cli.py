"""`dpaudit list`, `dpaudit audit`, `dpaudit report`: JSON shapes, files written, exit statuses 0/1/2."""

import dataclasses
import json
import subprocess
import sys

import pytest

from dpaudit.cli import main
from dpaudit.cli._catalog import builtin_names
from dpaudit.entries import Claim
from dpaudit.registry import AUDITS, load_plugins

load_plugins()


def test_list_json_objects(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(builtin_names())
    for r in rows:
        assert {"name", "algorithm", "expect"} <= set(r) and r["expect"] in ("consistent", "violation")


def test_list_table_and_quick(capsys):
    assert main(["list", "--quick"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("name") and "dp-se.shared-noise" in out


def test_audit_writes_report_and_report_rerenders(tmp_path, capsys):
    out = tmp_path / "rep"
    code = main(
        [
            "audit",
            "dp-se.epoch-sum",
            "dp-se.shared-noise",
            "--samples",
            "20000",
            "--out",
            str(out),
            "--json",
            "--no-regret",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)  # progress went to stderr, stdout is pure JSON
    assert doc["ok"] and [e["name"] for e in doc["entries"]] == ["dp-se.epoch-sum", "dp-se.shared-noise"]
    assert "[1/2] dp-se.epoch-sum" in captured.err
    assert any("dp-se" in f for f in doc["findings"])
    report = json.loads((out / "report.json").read_text())
    s = report["settings"]
    assert s["audit_calls"] == 2 and s["per_audit_confidence"] == pytest.approx(0.975)
    assert report["command"][:2] == ["dpaudit", "audit"] and report["entries"][0]["audits"][0]["samples"] == 20000
    (out / "report.md").unlink()
    html_before = (out / "report.html").read_text()
    assert main(["report", str(out)]) == 0
    assert (out / "report.md").is_file() and (out / "report.html").read_text() == html_before


def test_unexpected_outcome_exits_1(tmp_path, monkeypatch, capsys):
    entry = AUDITS.get("dp-se.epoch-sum")
    wrong = dataclasses.replace(entry, name="test.half-claim", claims=(Claim("paper", epsilon=0.5),))
    monkeypatch.setitem(AUDITS._entries, wrong.name, wrong)
    assert main(["audit", wrong.name, "--samples", "20000", "--out", str(tmp_path), "--no-regret"]) == 1
    assert "gate: FAIL" in capsys.readouterr().out
    assert not json.loads((tmp_path / "report.json").read_text())["summary"]["ok"]


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "no-such-entry"],
        ["audit", "--all", "dp-se.epoch-sum"],
        ["audit", "dp-se.epoch-sum", "--confidence", "1.5"],
        ["audit", "dp-se.epoch-sum", "--samples", "0"],
        ["audit", "dp-se.epoch-sum", "--executor", "threads"],
        ["audit", "dp-se.epoch-sum", "--executor", "dask://http://127.0.0.1:8786"],
        ["report", "/nonexistent/dir"],
    ],
)
def test_usage_errors_exit_2(argv, tmp_path, capsys):
    assert main(argv + (["--out", str(tmp_path)] if argv[0] == "audit" else [])) == 2
    assert "error" in capsys.readouterr().err


def test_console_script_lists_entries():
    res = subprocess.run(
        [sys.executable, "-m", "dpaudit", "list", "--json"], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert "dp-se.epoch-sum" in {r["name"] for r in json.loads(res.stdout)}


def test_readme_own_entry_snippet_runs(tmp_path, monkeypatch, capsys):
    import pathlib
    import re

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "how-to" / "catalog-entry.md").read_text()
    section = page.split("## Your own entry", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.setattr(AUDITS, "_entries", dict(AUDITS._entries))  # the snippet registers globally
    exec(compile(code, "docs/how-to/catalog-entry.md", "exec"), {})
    assert main(["audit", "mine.sum", "--samples", "20000", "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["entries"][0]["claims"][0]["verdict"] == "consistent"


def test_audit_on_a_dask_scheduler_matches_local(tmp_path, capsys):
    # The suite's client is not the default client, and none is left behind.
    distributed = pytest.importorskip("distributed")
    argv = ["audit", "dp-se.epoch-sum", "--samples", "20000", "--json", "--no-regret"]
    assert main(argv + ["--out", str(tmp_path / "local")]) == 0
    local = json.loads(capsys.readouterr().out)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address[len("tcp://") :]
        assert main(argv + ["--out", str(tmp_path / "dask"), "--executor", f"dask://{address}"]) == 0
    on_dask = json.loads(capsys.readouterr().out)
    assert on_dask["entries"] == local["entries"]
    with pytest.raises(ValueError, match="No clients found"):
        distributed.default_client()


def _without_seconds(value):
    """The value with every "seconds" field (wall-clock time, the one thing allowed to differ) removed."""
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


def test_parallel_entries_give_the_serial_report(tmp_path, capsys):
    """--jobs 2 (entries in two forked processes) writes the same numbers as --jobs 1: each entry is
    seeded from the suite seed and its name only, and its chunks are bit-identical wherever they run."""
    names = ["dp-se.epoch-sum", "ftnl.rnm", "dp-se.one-run", "hybrid-ucb.fixed", "dp-se.shared-noise"]
    docs = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        assert main(["audit", *names, "--samples", "20000", "--jobs", str(jobs), "--out", str(out)]) == 0
        err = capsys.readouterr().err
        assert all(f"] {n} ... ok" in err for n in names), err
        docs[jobs] = json.loads((out / "report.json").read_text())
    assert docs[2]["settings"]["jobs"] == 2 and docs[1]["settings"]["jobs"] == 1
    assert [e["name"] for e in docs[2]["entries"]] == names  # catalog order, not completion order
    assert _without_seconds(docs[2]["entries"]) == _without_seconds(docs[1]["entries"])
    assert docs[2]["summary"] == docs[1]["summary"]


def test_jobs_flag_checked(tmp_path, capsys):
    assert main(["audit", "dp-se.epoch-sum", "--jobs", "0", "--out", str(tmp_path)]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert (
        main(["audit", "dp-se.epoch-sum", "--jobs", "2", "--executor", "dask://127.0.0.1:1", "--out", str(tmp_path)])
        == 2
    )
    assert "--jobs" in capsys.readouterr().err
