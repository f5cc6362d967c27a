"""`--junit-xml`: one testcase per claim, <failure> with the numbers, <error> for an entry that could not run."""

import xml.etree.ElementTree as ET

from ci_modules import laplace_module
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.cli import main
from dpaudit.junit import junit_xml


def _claim(label="declared", verdict="consistent", expect="consistent", lower=0.5, upper=0.9):
    return {
        "label": label,
        "epsilon": 1.0,
        "delta": 0.0,
        "accountant": "stated",
        "epsilon_lower": lower,
        "event_epsilon_upper": upper,
        "confidence": 0.95,
        "verdict": verdict,
        "expect": expect,
        "ok": verdict == expect,
    }


def _entry(name, claims=(), error=None):
    return {
        "name": name,
        "algorithm": "shop_audits",
        "seed": 1,
        "seconds": 0.5,
        "claims": list(claims),
        "error": error,
        "traceback": "Traceback ...\nRuntimeError: x" if error else None,
    }


def test_cli_writes_one_testcase_per_claim(project, capsys):
    project.config()
    project.write(
        "shop_audits.py",
        laplace_module(scale=0.25)
        + (
            "\ndef broken(data, rng, size):\n    raise RuntimeError('no database')\n"
            "dpaudit.register_audit(name='shop.broken', claim_epsilon=1.0, d0=D0, d1=D1)(broken)\n"
        ),
    )
    assert main(["audit", "--out", "rep", "--junit-xml", "ci/junit/dpaudit.xml"]) == 3
    root = ET.parse(project.root / "ci" / "junit" / "dpaudit.xml").getroot()
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["shop.count[declared]"].find("failure")
    assert failure.get("type") == "unexpected-violation"
    assert "claim ε = 1 at δ = 0" in failure.get("message") and "ε_lower = " in failure.get("message")
    error = cases["shop.broken"].find("error")
    assert error.get("message") == "RuntimeError: no database" and error.get("type") == "RuntimeError"


def test_junit_xml_flag_that_names_a_folder_exits_2(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    (project.root / "out.xml").mkdir()
    assert main(["audit", "--out", "rep", "--junit-xml", "out.xml"]) == 2
    assert "--junit-xml" in capsys.readouterr().err


def test_baseline_known_failures_are_skipped_and_rises_fail():
    report = {
        "entries": [_entry("a", [_claim(verdict="violation")]), _entry("b", [_claim(lower=2.0, upper=3.0)])],
        "baseline": {
            "changes": [
                {"kind": "still-failing", "entry": "a", "claim": "declared", "text": "t"},
                {"kind": "rose", "entry": "b", "claim": "declared", "text": "rose 0.5 → 2"},
            ]
        },
    }
    suite = ET.fromstring(junit_xml(report).split("?>", 1)[1]).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    (fail,) = suite.iter("failure")
    assert fail.get("type") == "baseline-regression" and "rose 0.5 → 2" in fail.get("message")


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)  # control characters too


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(_text, st.sampled_from(["ok", "fail", "error"])), max_size=6, unique_by=lambda t: t[0]))
def test_counts_and_escaping(entries):
    # exact property: any names and messages (control characters too) give well-formed XML whose counts match
    records = [
        _entry(
            name,
            [] if kind == "error" else [_claim(label=name, verdict="violation" if kind == "fail" else "consistent")],
            error=f"ValueError: <{name}> & more" if kind == "error" else None,
        )
        for name, kind in entries
    ]
    suite = ET.fromstring(junit_xml({"entries": records}).encode()).find("testsuite")
    kinds = [k for _, k in entries]
    assert int(suite.get("tests")) == len(entries) == len(suite.findall("testcase"))
    assert int(suite.get("failures")) == kinds.count("fail") and int(suite.get("errors")) == kinds.count("error")
    assert [c.get("classname") for c in suite.iter("testcase")] == ["shop_audits"] * len(entries)
