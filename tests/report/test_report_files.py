"""Reports: schema, findings, atomic writes, Markdown and HTML rendered from the JSON alone (exact tests)."""

import json
import os
import re

import pytest

from dpaudit.report import (
    FILES,
    SCHEMA,
    SCHEMA_VERSION,
    atomic_write_text,
    findings,
    load_report,
    render_html,
    render_markdown,
    summarize,
    write_report,
)


def test_summary_counts_expected_and_unexpected(sample_report):
    s = sample_report["summary"]
    assert s["ok"] and s["entries"] == 3 and s["claims"] == 4
    assert s["violations_found"] == ["ftnl-rnm:paper", "dist-dp-se-inverted-polya:paper"]
    assert s["unexpected_violations"] == [] and s["missed_violations"] == []
    bad = [dict(e) for e in sample_report["entries"]]
    bad[2] = dict(bad[2], ok=False, claims=[dict(bad[2]["claims"][0], verdict="violation", ok=False)])
    s2 = summarize(bad)
    assert not s2["ok"] and s2["unexpected_violations"] == ["anytime-lazy-ucb:paper"]


def test_findings_state_the_numbers(sample_report):
    f = findings(sample_report["entries"])
    kinds = [x["kind"] for x in f]
    assert kinds == ["paper", "variant"]
    text = f[0]["text"]
    assert "ε = 1 at δ = 0" in text and "ε ≥ 1.52" in text and "97.5% confidence" in text and "1.52× the claim" in text
    assert "\n" not in text and len(text.split()) <= 40  # one line: claim, audit, confidence
    details = {d["label"]: d["text"] for d in f[0]["details"]}
    assert list(details) == ["audit", "neighbours", "interval", "accountants", "source"]
    assert "corrected ε = 2" in details["accountants"]  # the claim that survives is named
    assert "[1.52, 2]" in details["interval"] and "X(t)=(0,1) vs (1,0)" in details["neighbours"]
    assert "ε ≥ ∞" in f[1]["text"]


def test_json_round_trip_keeps_infinities_and_versions(tmp_path, sample_report):
    paths = write_report(sample_report, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
    raw = json.loads(paths["json"].read_text())  # strict JSON: no bare Infinity
    assert raw["schema"] == SCHEMA and raw["schema_version"] == SCHEMA_VERSION
    assert raw["entries"][1]["claims"][0]["epsilon_lower"] == "inf"
    for key in ("python", "numpy", "dp-accounting", "dpaudit"):
        assert key in raw["versions"]
    back = load_report(tmp_path)
    assert back["entries"][1]["claims"][0]["epsilon_lower"] == float("inf")
    assert render_markdown(back) == render_markdown(sample_report)
    assert oct(paths["md"].stat().st_mode & 0o777) != "0o600"


def test_load_report_rejects_foreign_and_future_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_report(tmp_path)
    (tmp_path / "report.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_report(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps({"schema": "other"}))
    with pytest.raises(ValueError, match=r"is not a dpaudit.report"):
        load_report(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps({"schema": SCHEMA, "schema_version": 99}))
    with pytest.raises(ValueError, match="schema_version 99"):
        load_report(tmp_path)


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    atomic_write_text(target, "old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left behind


def test_markdown_has_one_table_per_algorithm(sample_report):
    md = render_markdown(sample_report)
    for alg in ("ftnl", "dist-dp-se", "anytime-lazy-ucb"):
        assert f"\n## {alg}\n" in md
    assert md.count("| entry[^col-entry] | observable[^col-observable] | claim[^col-claim] |") == 3
    summary = md.split("## All claims", 1)[1].split("\n## ", 1)[0]
    assert summary.count("\n| ftnl-rnm |") == 2 and summary.count("\n| ") == 5  # header + 4 claims
    assert "pure 2, pld 1.9" in md and r"5 \[4, 6\] at T=100" in md and "**Gate: PASS**" in md


def test_html_is_self_contained_and_escaped(sample_report):
    page = render_html(sample_report)
    assert page.count('<table class="claims">') == 3 and page.count('<table class="summary">') == 1
    imgs = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    alts = [a for a, _ in imgs]
    assert "claimed vs audited epsilon" in alts and "regret curves" in alts
    assert sum(a.startswith("trade-off curve") for a in alts) == 2
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched from outside
    assert "&lt;b&gt;audit&lt;/b&gt;" in page and "<b>audit</b>" not in page


def test_a_version_1_report_reads_with_the_event_bound_renamed(tmp_path, sample_report):
    """Version 1 named a user claim's Clopper-Pearson bound on its chosen event `epsilon_upper`, like the entry's
    sound bound; read back, it is `event_epsilon_upper` and the entry-level name keeps its meaning."""
    write_report(sample_report, tmp_path)
    raw = json.loads((tmp_path / "report.json").read_text())
    raw["schema_version"] = 1
    entry = raw["entries"][0]
    entry["claims"][0]["epsilon_upper"] = 0.7
    entry["epsilon_upper"] = 2.0
    (tmp_path / "report.json").write_text(json.dumps(raw))
    back = load_report(tmp_path)
    assert back["schema_version"] == SCHEMA_VERSION == 2
    claim = back["entries"][0]["claims"][0]
    assert claim["event_epsilon_upper"] == 0.7 and "epsilon_upper" not in claim
    assert back["entries"][0]["epsilon_upper"] == 2.0
