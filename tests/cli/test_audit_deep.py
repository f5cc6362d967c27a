"""`dpaudit audit --deep`: each run-limited entry at the runs its pin note names (`deep_samples`)."""

import dataclasses
import json

import pytest

from dpaudit.cli import main
from dpaudit.entries import AuditEntry
from dpaudit.registry import AUDITS, load_plugins

load_plugins()


def test_a_deep_run_audits_the_entry_at_its_deep_samples(tmp_path, monkeypatch):
    entry = AUDITS.get("dp-se.epoch-sum")
    small = dataclasses.replace(entry, name="test.deep", samples=20_000, deep_samples=30_000, quick=False)
    monkeypatch.setitem(AUDITS._entries, small.name, small)
    assert main(["audit", small.name, "--deep", "--out", str(tmp_path), "--no-regret"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["settings"]["deep"] is True and "--deep" in report["command"]
    (record,) = report["entries"]
    assert {a["samples"] for a in record["audits"]} == {30_000}


def test_without_deep_the_entry_runs_at_its_full_size(tmp_path, monkeypatch):
    entry = AUDITS.get("dp-se.epoch-sum")
    small = dataclasses.replace(entry, name="test.deep", samples=20_000, deep_samples=30_000, quick=False)
    monkeypatch.setitem(AUDITS._entries, small.name, small)
    assert main(["audit", small.name, "--out", str(tmp_path), "--no-regret"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["settings"]["deep"] is False
    assert {a["samples"] for a in report["entries"][0]["audits"]} == {20_000}


@pytest.mark.parametrize(
    "argv, says",
    [
        (["audit", "--deep"], "give --all or entry names"),
        (["audit", "dp-se.epoch-sum", "--deep", "--samples", "20000"], "drop --samples 20000"),
    ],
)
def test_deep_flag_errors_name_the_flag(argv, says, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--deep" in err and says in err


def test_the_run_limited_entries_name_their_deep_sizes():
    # the entries whose pin notes say "more runs" carry the runs they name, above their full size
    deep = {n: AUDITS.get(n).deep_samples for n in AUDITS.names() if getattr(AUDITS.get(n), "deep_samples", None)}
    assert deep["dp-se.decisions"] == 10**7 and deep["linucb-jdp.tree"] == 5 * 10**6
    assert deep["ldp-se.aggregate"] == 6 * 10**7 and deep["linucb-sdp-amp.returning"] == 4 * 10**7
    assert "dist-rdp-se.aggregate" not in deep and "dist-cdp-se.aggregate" not in deep  # pinned on μ at full size
    for name, runs in deep.items():
        assert runs > AUDITS.get(name).samples and AUDITS.get(name).pin_note is not None


@pytest.mark.parametrize("deep", [0, -5, 100_000, 50_000])
def test_deep_samples_must_exceed_the_full_size(deep):
    entry = AUDITS.get("dp-se.epoch-sum")
    with pytest.raises(ValueError, match="deep_samples"):
        AuditEntry(
            **{
                **{f.name: getattr(entry, f.name) for f in dataclasses.fields(AuditEntry)},
                "samples": 100_000,
                "deep_samples": deep,
            }
        )
