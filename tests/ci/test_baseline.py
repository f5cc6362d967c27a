"""`--baseline`: exit 1 only when a claim newly fails or the baseline's own event rose significantly
(`dpaudit.baseline`); a bad baseline, or one sharing no entry with the run, exits 2 before any audit."""

import json
import math
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from ci_modules import laplace_module

from dpaudit import user_audits
from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.baseline import check_baseline, check_report, compare, markdown_lines, same_event_test
from dpaudit.cli import main
from dpaudit.user_audits import UserAuditEntry, UserClaim

# --- compare on hand-made reports (exact) ------------------------------------------------------


def _event(k1=500, k2=200, n=1000, direction="d0>d1"):
    return {
        "state": "{}",
        "event": "identity > 1.0",
        "direction": direction,
        "count_first": k1,
        "count_second": k2,
        "nobs": n,
        "delta": 0.0,
    }


def _claim(ok=True, lower=0.5, upper=None, expect="consistent", event=None, counts=None):
    verdict = ("violation" if expect == "consistent" else "consistent") if not ok else expect
    c = {"label": "declared", "epsilon": 1.0, "epsilon_lower": lower, "verdict": verdict, "expect": expect, "ok": ok}
    if upper is not None:
        c["event_epsilon_upper"] = upper
    if event is not None:
        c["event"] = event
    if counts is not None:
        c["baseline_event_counts"] = counts
    return c


def _report(*claims, settings=None):
    """A report with one entry "e" per claim (None: no entry)."""
    settings = settings or {"samples": None, "confidence": 0.95, "catalog": "user", "seed": 0}
    return {
        "created": "then",
        "settings": settings,
        "entries": [{"name": "e", "claims": [c], "error": None} for c in claims if c is not None],
    }


SAME = {"count_first": 500, "count_second": 200, "nobs": 1000, "direction": "d0>d1"}  # the baseline's rates again
LEAKIER = {"count_first": 800, "count_second": 100, "nobs": 1000, "direction": "d0>d1"}  # log 8 against log 2.5


@pytest.mark.parametrize(
    "old, new, kind, gating",
    [
        (_claim(), _claim(ok=False, lower=1.2), "newly-failing", True),
        (None, _claim(ok=False, lower=1.2), "newly-failing", True),
        (_claim(ok=False, lower=1.2), _claim(ok=False, lower=1.3), "still-failing", False),
        (_claim(ok=False, lower=1.2), _claim(), "fixed", False),
        # the rule this module replaced gated here (0.8 above the baseline's epsilon_upper 0.7): different events
        (_claim(lower=0.5, upper=0.7), _claim(lower=0.8, upper=0.9), "rose-lower", False),
        (_claim(lower=0.5, event=_event()), _claim(lower=0.8, counts=SAME), "rose-lower", False),
        (_claim(lower=0.5, event=_event()), _claim(lower=0.8, counts=LEAKIER), "rose", True),
        # a known-broken twin grows with the samples: never gating, even for its own event
        (
            _claim(lower=0.5, expect="violation", event=_event()),
            _claim(lower=5.0, expect="violation", counts=LEAKIER),
            "rose-violation",
            False,
        ),
        (_claim(lower=0.5, event=_event()), _claim(lower=0.8, counts={"error": "no score"}), "rose-lower", False),
        (None, _claim(), "new", False),
        (_claim(), None, "gone", False),
    ],
)
def test_kinds_and_gating(old, new, kind, gating):
    result = compare(_report(old), _report(new), source="old/report.json")
    assert [c["kind"] for c in result["changes"]] == [kind]
    assert result["regressions"] == (["e:declared"] if gating else [])


def test_same_event_bounds_and_bonferroni():
    # exact: the bounds are the Clopper-Pearson ones at alpha/4 each, alpha = (1 - confidence) / m
    low, upp = same_event_test(_event(), LEAKIER, 0.05)
    level = 0.05 / 4
    assert low == pytest.approx(math.log(cp_lower(800, 1000, level)[()] / cp_upper(100, 1000, level)[()]), rel=1e-12)
    assert upp == pytest.approx(math.log(cp_upper(500, 1000, level)[()] / cp_lower(200, 1000, level)[()]), rel=1e-12)
    assert math.log(2.5) < upp < low < math.log(8)
    assert same_event_test(_event(k2=0), SAME, 0.05)[1] == math.inf  # the baseline never saw the second input there
    two = {
        "created": "then",
        "settings": {"confidence": 0.95},
        "entries": [{"name": n, "claims": [_claim(event=_event())]} for n in ("a", "b")],
    }
    new = {
        "settings": {"confidence": 0.95},
        "entries": [{"name": n, "claims": [_claim(counts=SAME)]} for n in ("a", "b")],
    }
    result = compare(two, new)
    assert result["tested"] == 2 and result["alpha"] == pytest.approx(0.025)


def test_settings_that_differ_are_warnings():
    old = _report(_claim())
    new = _report(_claim(), settings={"samples": 100000, "confidence": 0.95, "catalog": "user", "seed": 3})
    result = compare(old, new)
    assert result["warnings"] == [
        "samples differs: baseline each entry's, this run 100000",
        "seed differs: baseline 0, this run 3",
    ]
    assert "- seed differs: baseline 0, this run 3" in markdown_lines(result)
    assert compare(old, old)["warnings"] == [] and compare(old, old)["changes"] == []


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda r: r.pop("entries"), "'entries'"),
        (lambda r: r["entries"][0].pop("name"), "'name'"),
        (lambda r: r["entries"][0].pop("claims"), "'claims'"),
        (lambda r: r["entries"][0]["claims"][0].pop("epsilon_lower"), "'epsilon_lower'"),
        (lambda r: r["entries"][0]["claims"][0].pop("verdict"), "'verdict'"),
        (lambda r: r["entries"][0]["claims"][0]["event"].pop("nobs"), "'event.nobs'"),
    ],
)
def test_structural_check_names_the_missing_key(mutate, key):
    report = _report(_claim(event=_event()))
    check_report(report, "old.json")
    mutate(report)
    with pytest.raises(ValueError, match=f"old.json.*missing key {key}"):
        check_report(report, "old.json")


def test_no_shared_entry_is_an_error():
    with pytest.raises(ValueError, match="shares no entry with this run: baseline has e; this run x, y"):
        check_baseline(_report(_claim()), ["x", "y"], {})


# --- entries count the baseline's event again ---------------------------------------------------


def _entry(target, **options):
    return UserAuditEntry(
        name="e",
        target=target,
        d0=np.array([0.0]),
        d1=np.array([1.0]),
        claim=UserClaim(delta=0.0, epsilon=2.0),
        samples=3_000,
        algorithm="test",
        audit_options=options,
    )


def _scalar(data, rng, size):
    return data.sum() + rng.laplace(0.0, 1.0, size)


def test_entry_counts_the_baseline_event_on_fresh_runs(monkeypatch):
    monkeypatch.setattr(user_audits, "RECOUNT_CHUNK", 1_000)  # several chunks
    old = _entry(_scalar, score=lambda x: -x).run(seed=1)["claims"][0]
    assert json.loads(old["event"]["state"])["score"] == {"type": "user"}  # the user's score: the entry's option
    new = _entry(_scalar, score=lambda x: -x).run(
        seed=2, baseline_events={"e": {"declared": old["event"]}, "other": {"declared": None}}
    )
    counts = new["claims"][0]["baseline_event_counts"]
    assert counts["nobs"] == new["claims"][0]["event"]["nobs"] and counts["direction"] == old["event"]["direction"]
    again = _entry(_scalar, score=lambda x: -x).run(seed=2, baseline_events={"e": {"declared": old["event"]}})
    assert again["claims"][0]["baseline_event_counts"] == counts  # seeded
    assert "baseline_event_counts" not in _entry(_scalar).run(seed=2)["claims"][0]


def test_an_event_that_no_longer_applies_is_recorded_not_raised():
    old = _entry(_scalar).run(seed=1)["claims"][0]
    vector = lambda data, rng, size: data.sum() + rng.laplace(0.0, 1.0, (size, 2))  # noqa: E731
    new = _entry(vector).run(seed=2, baseline_events={"e": {"declared": old["event"]}})
    assert new["error"] is None and "does not apply" in new["claims"][0]["baseline_event_counts"]["error"]
    no_score = _entry(_scalar, score=lambda x: x).run(seed=1)["claims"][0]
    new = _entry(_scalar).run(seed=2, baseline_events={"e": {"declared": no_score["event"]}})
    assert "cannot be rebuilt" in new["claims"][0]["baseline_event_counts"]["error"]


# --- the command line (each audit a few seconds) -----------------------------------------------

GAUSSIAN = """
    import pathlib

    import dp_accounting
    import numpy as np
    import dpaudit

    D0, D1 = np.zeros(10), np.r_[1.0, np.zeros(9)]

    def make(sigma):
        def basket_sum(baskets, rng, size):
            with open(pathlib.Path(__file__).with_name("calls.txt"), "a") as f:  # the test sees every call
                f.write(".")
            return np.clip(baskets, 0.0, 1.0).sum() + rng.normal(0.0, sigma, size)
        return basket_sum

    dpaudit.register_audit(name="shop.basket-sum", claim=dp_accounting.GaussianDpEvent(2.0), claim_delta=1e-5,
                           d0=D0, d1=D1, samples=20_000)(make(2.0))
    dpaudit.register_audit(name="shop.basket-sum-bug", claim_epsilon=1.0, claim_delta=1e-5, d0=D0, d1=D1,
                           samples=4_000, expect="violation")(make(0.5))
"""


def _claims_of(path):
    report = json.loads(path.read_text())
    return {e["name"]: e["claims"][0] for e in report["entries"]}, report


def test_nightly_larger_run_on_unchanged_code_passes(project, capsys):
    # the documented nightly recipe: the release report at the entries' sizes, the nightly run at 10x
    project.config()
    project.write("shop_audits.py", textwrap.dedent(GAUSSIAN))
    assert main(["audit", "--out", "release"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "audit",
                "--out",
                "nightly",
                "--samples",
                "200000",
                "--baseline",
                "release/report.json",
                "--junit-xml",
                "junit.xml",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert "gate: PASS" in out and "warning: --baseline release/report.json: samples differs" in err
    suite = ET.parse(project.root / "junit.xml").getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "0")  # a rise that does not gate is nothing
    old, _ = _claims_of(project.root / "release" / "report.json")
    new, report = _claims_of(project.root / "nightly" / "report.json")
    # the premise: the rule this replaced (new epsilon_lower above the baseline's epsilon_upper) fails both
    assert all(new[n]["epsilon_lower"] > old[n]["event_epsilon_upper"] for n in new)
    assert report["baseline"]["regressions"] == [] and report["baseline"]["tested"] == 2
    kinds = {c["entry"]: c["kind"] for c in report["baseline"]["changes"]}
    assert kinds == {"shop.basket-sum": "rose-lower", "shop.basket-sum-bug": "rose-lower"}
    assert new["shop.basket-sum"]["baseline_event_counts"]["nobs"] == new["shop.basket-sum"]["event"]["nobs"]


def test_halved_noise_is_a_regression(project, capsys):
    # Laplace noise 1 -> 1/2 under the claim 3 (still consistent: true epsilon 2): the baseline's event leaks more
    project.config()
    project.write("shop_audits.py", laplace_module(eps=3.0, scale=1.0))
    assert main(["audit", "--out", "v1"]) == 0
    project.write("shop_audits.py", laplace_module(eps=3.0, scale=0.5))
    capsys.readouterr()
    assert main(["audit", "--out", "v2", "--baseline", "v1", "--junit-xml", "junit.xml"]) == 1
    out = capsys.readouterr().out
    assert "ROSE" in out and "baseline v1: 1 regression(s): shop.count:declared" in out and "gate: FAIL" in out
    new, report = _claims_of(project.root / "v2" / "report.json")
    assert new["shop.count"]["ok"] and [c["kind"] for c in report["baseline"]["changes"]] == ["rose"]
    md = (project.root / "v2" / "report.md").read_text()
    assert "The baseline's event: ε rose significantly" in md
    (fail,) = ET.parse(project.root / "junit.xml").getroot().iter("failure")
    assert fail.get("type") == "baseline-regression"
    assert main(["report", "v2"]) == 0 and (project.root / "v2" / "report.md").read_text() == md


def test_known_failure_prints_known_and_the_gate_passes(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module(eps=0.5, scale=1.0))
    assert main(["audit", "--out", "v1"]) == 1
    capsys.readouterr()
    assert main(["audit", "--out", "v2", "--baseline", "v1", "--junit-xml", "junit.xml"]) == 0
    out = capsys.readouterr().out
    assert " known" in out and "UNEXPECTED" not in out and "gate: PASS" in out
    suite = ET.parse(project.root / "junit.xml").getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    assert "Claims failing in the baseline too" in (project.root / "v2" / "report.md").read_text()


def _truncated(text):
    return text[: len(text) // 2]


def _without(*path):
    def edit(text):
        doc = json.loads(text)
        *parents, last = path
        node = doc
        for p in parents:
            node = node[p]
        del node[last]
        return json.dumps(doc)

    return edit


@pytest.mark.parametrize(
    "edit, message",
    [
        (None, "does not exist"),
        (lambda t: "{not json", "not valid JSON"),
        (_truncated, "not valid JSON"),
        (lambda t: '{"schema": "other"}', "not a dpaudit.report document"),
        (_without("entries"), "missing key 'entries'"),
        (_without("entries", 0, "claims", 0, "epsilon_lower"), "missing key 'epsilon_lower'"),
        (_without("entries", 0, "claims", 0, "ok"), "missing key 'ok'"),
        (_without("entries", 1, "name"), "missing key 'name'"),
        (_without("entries", 0, "claims", 0, "event", "count_first"), "missing key 'event.count_first'"),
    ],
)
def test_bad_baseline_exits_2_before_any_audit(project, capsys, edit, message):
    project.config()
    project.write("shop_audits.py", textwrap.dedent(GAUSSIAN))
    assert main(["audit", "--out", "v1", "--samples", "2000"]) == 0
    calls = project.root / "calls.txt"
    calls.unlink()
    if edit is not None:
        project.write("old.json", edit((project.root / "v1" / "report.json").read_text()))
    assert main(["audit", "--out", "v2", "--baseline", "old.json"]) == 2
    err = capsys.readouterr().err
    assert "--baseline" in err and "old.json" in err and message in err
    assert not calls.exists()  # rejected before the target ran


def test_baseline_sharing_no_entry_exits_2_before_any_audit(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    assert main(["audit", "--out", "v1"]) == 0
    project.write("shop_audits.py", textwrap.dedent(GAUSSIAN))
    assert main(["audit", "--out", "v2", "--baseline", "v1"]) == 2
    err = capsys.readouterr().err
    assert (
        "the baseline shares no entry with this run: baseline has shop.count; this run shop.basket-sum, "
        "shop.basket-sum-bug" in err
    )
    assert not (project.root / "calls.txt").exists()
