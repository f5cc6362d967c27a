"""The interval [ε_lower, ε_upper] each report entry leaves for the true ε (exact tests, no sampling
except one seeded catalog audit)."""

import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.report import (
    FILES,
    PIN_TARGET,
    build_report,
    interval,
    interval_png,
    load_report,
    render_html,
    render_markdown,
    write_report,
)


def _settings(entries):
    return {
        "seed": 0,
        "samples": None,
        "quick": True,
        "confidence": 0.95,
        "per_audit_confidence": 0.95,
        "audit_calls": len(entries),
        "executor": "local",
        "regret": False,
        "names": [e["name"] for e in entries],
    }


def test_report_json_carries_epsilon_upper_and_pin_per_entry(tmp_path, sample_report):
    paths = write_report(sample_report, tmp_path)
    raw = json.loads(paths["json"].read_text())
    ftnl, polya, lazy = raw["entries"]
    # every existing field is kept
    assert {"claims", "audits", "pairs", "seed", "ok"} <= set(ftnl)
    # ftnl-rnm: the paper's 1 is known to be wrong, the corrected 2 is the smallest proven bound
    assert ftnl["epsilon_upper"] == 2.0 and ftnl["pin"] == pytest.approx(1.52 / 2.0)
    assert ftnl["interval"]["claim"] == "corrected" and ftnl["interval"]["tight"] == "unknown"
    # no claim expected to hold: no interval, but the fields are there
    assert polya["epsilon_upper"] is None and polya["pin"] is None
    assert lazy["epsilon_upper"] == 1.0 and lazy["pin"] == pytest.approx(0.93) and lazy["interval"]["tight"] == "both"
    assert lazy["interval"]["reason"] is None
    back = load_report(tmp_path)
    assert back["entries"][0]["pin"] == pytest.approx(0.76)


def test_reason_present_whenever_pin_below_target(sample_report):
    for e in sample_report["entries"]:
        iv = e["interval"]
        if iv is not None and iv["epsilon_upper"] is not None and (iv["pin"] is None or iv["pin"] < PIN_TARGET):
            assert iv["reason"], e["name"]
    md = render_markdown(sample_report)
    section = md.split("## Intervals", 1)[1].split("\n## ", 1)[0]
    assert "| ftnl-rnm |" in section and "no analysis of the gap yet" in section
    assert "1 of 2 entries pinned within 10%" in section and "![intervals](intervals.png)" in section


def test_declared_note_gives_reason_and_tight_side(make_claim, make_entry):
    _claim, _entry = make_claim, make_entry
    e = _entry("ftnl-fixed", "ftnl", [_claim("paper", 1.0, 0.68, "consistent")])
    e["pin_note"] = {"loose": "audit", "reason": "RNM's loss reaches ε only in the noise tail"}
    iv = interval(e)
    assert iv["tight"] == "upper" and iv["reason"] == "RNM's loss reaches ε only in the noise tail"
    e["claims"][0]["epsilon_lower"] = 0.95
    iv = interval(e)
    assert iv["tight"] == "both" and iv["reason"] is None


def test_paper_claim_is_not_an_upper_bound_where_corrected(make_claim, make_entry):
    _claim, _entry = make_claim, make_entry
    """A paper claim that dpaudit's analysis corrects is not a proven bound, even where the audit cannot refute it."""
    e = _entry(
        "conse-cate",
        "dp-conse",
        [_claim("paper", 1.0, 0.81, "consistent"), _claim("corrected", 50.0, 0.81, "consistent")],
    )
    iv = interval(e)
    assert iv["epsilon_upper"] == 50.0 and iv["pin"] == pytest.approx(0.81 / 50)


def test_mu_pin_for_large_delta_claims(make_claim, make_entry):
    _claim, _entry = make_claim, make_entry
    """At δ = 0.1 every proven claim is ε = 0: the interval is pinned on the Gaussian-DP μ instead."""
    c = _claim("accounted", 1e-12, 0.0, "consistent")
    c["delta"] = 0.1
    e = _entry("linucb-ldp", "linucb-ldp", [c])
    e["audits"][0]["mu_lower"] = 0.184
    iv = interval(e)
    assert iv["pin"] is None and "ε = 0 at δ = 0.1" in iv["reason"]
    e["mu_upper"] = 0.2
    iv = interval(e)
    assert iv["pin_kind"] == "mu" and iv["pin"] == pytest.approx(0.92) and iv["tight"] == "both"
    assert iv["epsilon_upper"] == 1e-12 and iv["mu_upper"] == 0.2


def test_violated_sound_claim_is_flagged(make_claim, make_entry):
    _claim, _entry = make_claim, make_entry
    e = _entry("broken", "dp-se", [_claim("paper", 1.0, 1.4, "consistent")])
    iv = interval(e)
    assert iv["tight"] == "violated" and not iv["sound"] and iv["reason"] is None


@given(
    claims=st.lists(
        st.tuples(
            st.sampled_from(["paper", "corrected", "accounted", "paper-proof"]), st.floats(1e-6, 1e3), st.booleans()
        ),
        min_size=1,
        max_size=5,
    ),
    lower=st.floats(0.0, 1e3),
)
def test_upper_never_below_lower_on_sound_entries(claims, lower):
    """Exact property: wherever every proven claim is consistent with the audit, ε_upper >= ε_lower."""
    built = [
        {
            "label": label,
            "epsilon": eps,
            "delta": 0.0,
            "accountant": "stated",
            "expect": expect,
            "epsilon_lower": lower,
            "verdict": "violation" if lower > eps else "consistent",
        }
        for label, eps, ok in claims
        for expect in ["consistent" if ok else "violation"]
    ]
    iv = interval({"name": "e", "claims": built, "audits": [], "error": None})
    if iv["epsilon_upper"] is not None and iv["sound"]:
        assert iv["epsilon_upper"] >= iv["epsilon_lower"]
        assert iv["pin"] is None or 0.0 <= iv["pin"] <= 1.0


def test_catalog_entry_interval_is_sound():
    """One seeded catalog audit (dp-se.epoch-sum, Laplace, pure ε = 1): its interval holds and is tight."""
    import dpaudit.audits  # noqa: F401  (registers the catalog)
    from dpaudit.entry_runner import run_entry
    from dpaudit.registry import AUDITS

    record = run_entry(AUDITS.get("dp-se.epoch-sum"), samples=20_000, seed=0, regret=False)
    report = build_report([record], settings=_settings([record]))
    e = report["entries"][0]
    assert e["epsilon_upper"] == pytest.approx(1.0) and e["epsilon_upper"] >= e["interval"]["epsilon_lower"]
    assert e["pin"] > 0.5 and e["interval"]["claim"] in ("paper", "accounted")


def test_interval_plot_and_html_table(sample_report):
    png = interval_png(sample_report["entries"])
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    page = render_html(sample_report)
    assert '<table class="intervals">' in page and 'alt="epsilon intervals"' in page
    assert re.search(r'<tr class="tight-both"><td class="entry">anytime-lazy-ucb</td>', page)
    assert interval_png([]) is None


def test_report_files_written_as_one_set(tmp_path, sample_report, monkeypatch):
    """write_report commits the whole set (the interval plot too) before moving any file: a failure
    while moving leaves a pending set that says so, report.json last, and the next write completes it."""
    from dpaudit.report.files import check_report_set

    write_report(sample_report, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
    replaced = []
    real = os.replace

    def flaky(src, dst):
        if str(dst).endswith("intervals.png"):
            raise OSError("disk full")
        replaced.append(os.path.basename(dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    changed = dict(sample_report, entries=[dict(e, name=e["name"] + "-2") for e in sample_report["entries"]])
    with pytest.raises(OSError, match="disk full"):
        write_report(changed, tmp_path)
    assert replaced == []  # the plot moves first; report.json, moved last, is still the old one
    assert any("interrupted write" in p for p in check_report_set(tmp_path))
    assert load_report(tmp_path)["entries"][0]["name"] == "ftnl-rnm-2"  # the committed report
    monkeypatch.setattr(os, "replace", real)
    write_report(changed, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES) and check_report_set(tmp_path) == []
