"""`--baseline`: exit 1 only when a claim newly fails or epsilon_lower rose beyond the baseline's interval."""

import json

import pytest

from dpaudit.baseline import compare
from dpaudit.cli import main

from ci_modules import laplace_module


def _report(*claims):
    """A report with one entry per (name, ok, epsilon_lower, epsilon_upper or None)."""
    entries = []
    for name, ok, lower, upper in claims:
        c = {"label": "declared", "epsilon": 1.0, "epsilon_lower": lower, "verdict": "consistent" if ok else "violation",
             "expect": "consistent", "ok": ok}
        if upper is not None:
            c["epsilon_upper"] = upper
        entries.append({"name": name, "claims": [c], "error": None})
    return {"created": "then", "entries": entries}


@pytest.mark.parametrize("old, new, kind, gating", [
    (("e", True, 0.5, 0.9), ("e", False, 1.2, 1.5), "newly-failing", True),
    (None, ("e", False, 1.2, 1.5), "newly-failing", True),
    (("e", False, 1.2, 1.5), ("e", False, 1.3, 1.6), "still-failing", False),
    (("e", False, 1.2, 1.5), ("e", True, 0.5, 0.9), "fixed", False),
    (("e", True, 0.5, 0.7), ("e", True, 0.8, 0.9), "rose", True),
    (("e", True, 0.5, 0.9), ("e", True, 0.8, 0.95), "rose-within", False),
    (("e", True, 0.5, None), ("e", True, 0.8, 0.95), "rose-within", False),  # the baseline has no interval
    (None, ("e", True, 0.5, 0.9), "new", False),
    (("e", True, 0.5, 0.9), None, "gone", False),
])
def test_kinds_and_gating(old, new, kind, gating):
    result = compare(_report(*[old] if old else []), _report(*[new] if new else []), source="old/report.json")
    assert [c["kind"] for c in result["changes"]] == [kind]
    assert result["regressions"] == (["e:declared"] if gating else [])


def test_no_change_no_regression():
    same = _report(("e", True, 0.5, 0.9))
    assert compare(same, same) == {"baseline": "", "baseline_created": "then", "changes": [], "regressions": []}


def test_cli_against_a_baseline(project, capsys):
    project.config()
    # Laplace(1) against claim 2: consistent; the fixed seed makes a rerun identical (no change)
    project.write("shop_audits.py", laplace_module(eps=2.0, scale=1.0))
    assert main(["audit", "--out", "v1"]) == 0
    capsys.readouterr()
    assert main(["audit", "--out", "v2", "--baseline", "v1/report.json", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressions"] == []
    # a claim failing in the baseline too is known: exit 0 with the baseline, 1 without it
    project.write("shop_audits.py", laplace_module(eps=0.5, scale=1.0))
    assert main(["audit", "--out", "v3"]) == 1
    assert main(["audit", "--out", "v4", "--baseline", "v3"]) == 0
    assert "Claims failing in the baseline too" in (project.root / "v4" / "report.md").read_text()
    # less noise (still within the claim 2, epsilon 1.25): epsilon_lower rises beyond v1's interval
    project.write("shop_audits.py", laplace_module(eps=2.0, scale=0.8))
    assert main(["audit", "--out", "v5", "--baseline", "v1"]) == 1
    md = (project.root / "v5" / "report.md").read_text()
    assert "## Changes since the baseline" in md and "rose beyond the baseline's confidence interval" in md
    assert "baseline v1: 1 regression(s): shop.count:declared" in capsys.readouterr().out
    report = json.loads((project.root / "v5" / "report.json").read_text())
    assert report["entries"][0]["claims"][0]["ok"] and report["baseline"]["regressions"] == ["shop.count:declared"]
    assert main(["report", "v5"]) == 0 and (project.root / "v5" / "report.md").read_text() == md


@pytest.mark.parametrize("content", [None, "{not json", '{"schema": "other"}'])
def test_bad_baseline_exits_2(project, capsys, content):
    project.config()
    project.write("shop_audits.py", laplace_module())
    if content is not None:
        project.write("old.json", content)
    assert main(["audit", "--out", "rep", "--baseline", "old.json"]) == 2
    assert "--baseline" in capsys.readouterr().err
