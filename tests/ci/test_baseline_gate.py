"""The baseline gate's level and the claims it may test (`dpaudit.baseline.compare`), exact.

The gate tests each of the m claims whose baseline event was counted again at alpha = (1 - confidence) / m
(Bonferroni over claims), with confidence from the new report's settings (0.95 when it has none); a claim is
testable only when both the baseline's event and the new counts are well-formed (integer counts in
[0, nobs], nobs >= 1, the same direction, a numeric delta).  "rose" needs the fresh lower bound strictly
above the baseline's upper bound: two bounds clamped at 0 prove nothing.  Every change record carries the
old and new numbers it states.  No statistics: hand-made reports (as in `test_baseline.py`).
"""

import math

import pytest

from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.baseline import compare, same_event_test
from dpaudit.report.model import fmt


def event(k1=500, k2=200, n=1000, direction="d0>d1", delta=0.0):
    return {
        "state": "{}",
        "event": "identity > 1.0",
        "direction": direction,
        "count_first": k1,
        "count_second": k2,
        "nobs": n,
        "delta": delta,
    }


def counts(k1=500, k2=200, n=1000, direction="d0>d1"):
    return {"count_first": k1, "count_second": k2, "nobs": n, "direction": direction}


def claim(ok=True, lower=0.5, epsilon=1.0, expect="consistent", label="declared", **extra):
    verdict = expect if ok else ("violation" if expect == "consistent" else "consistent")
    return {
        "label": label,
        "epsilon": epsilon,
        "epsilon_lower": lower,
        "verdict": verdict,
        "expect": expect,
        "ok": ok,
        **extra,
    }


def report(*entries, confidence=0.95, settings=True):
    """entries: (name, [claims]) or (name, [claims], error)."""
    doc = {
        "created": "then",
        "entries": [{"name": e[0], "claims": e[1], "error": e[2] if len(e) > 2 else None} for e in entries],
    }
    if settings:
        doc["settings"] = {"confidence": confidence}
    return doc


def kinds(result):
    return [(c["entry"], c["kind"]) for c in result["changes"]]


@pytest.mark.parametrize("m", [1, 2, 3])
@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_gate_level_is_one_minus_confidence_over_the_claims_tested(m, confidence):
    names = [f"e{i}" for i in range(m)]
    old = report(*[(n, [claim(event=event())]) for n in names], confidence=confidence)
    new = report(
        *[(n, [claim(baseline_event_counts=counts())]) for n in names] + [("extra", [claim()])], confidence=confidence
    )
    result = compare(old, new)
    assert result["tested"] == m
    assert result["alpha"] == pytest.approx((1 - confidence) / m, rel=1e-15)


def test_gate_level_without_settings_is_that_of_confidence_0_95():
    old = report(("e", [claim(event=event())]))
    for new in (
        report(("e", [claim(baseline_event_counts=counts())]), settings=False),
        {**report(("e", [claim(baseline_event_counts=counts())])), "settings": None},
        {**report(("e", [claim(baseline_event_counts=counts())])), "settings": {"seed": 3}},
    ):
        assert compare(old, new)["alpha"] == pytest.approx(0.05, rel=1e-15)


def test_rise_is_tested_at_the_gate_level():
    # LEAKIER-like counts: the fresh lower bound at alpha / 4 per proportion against the baseline's upper one
    old = report(("e", [claim(event=event())]), confidence=0.9)
    new = report(("e", [claim(lower=0.8, baseline_event_counts=counts(800, 100))]), confidence=0.9)
    result = compare(old, new)
    change = result["changes"][0]
    low, upp = same_event_test(event(), counts(800, 100), 0.1)
    assert change["kind"] == "rose" and change["alpha"] == pytest.approx(0.1)
    assert (change["event_lower"], change["event_upper_old"]) == (low, upp)
    # each side at level alpha / 2: two one-sided Clopper-Pearson bounds at alpha / 4 each (recomputed here)
    level = change["alpha"] / 4
    assert low == pytest.approx(math.log(cp_lower(800, 1000, level)[()] / cp_upper(100, 1000, level)[()]), rel=1e-13)
    assert upp == pytest.approx(math.log(cp_upper(500, 1000, level)[()] / cp_lower(200, 1000, level)[()]), rel=1e-13)


@pytest.mark.parametrize(
    "bad_event, bad_counts",
    [
        (event(), {**counts(), "error": "no score"}),
        ("identity > 1.0", counts()),
        (event(), [500, 200, 1000]),
        (event(), counts(direction="d1>d0")),
        ({**event(), "delta": None}, counts()),
        ({**event(), "delta": "0"}, counts()),
        (event(), {**counts(), "count_first": True}),
        (event(), {**counts(), "nobs": 1000.0}),
        (event(k1=1001), counts()),
        (event(), counts(k2=-1)),
        (event(), counts(k1=0, k2=0, n=0)),
    ],
)
def test_malformed_events_or_counts_are_not_tested(bad_event, bad_counts):
    old = report(("e", [claim(event=bad_event)]))
    new = report(("e", [claim(lower=0.8, baseline_event_counts=bad_counts)]))
    result = compare(old, new)
    assert result["tested"] == 0 and result["alpha"] == pytest.approx(0.05)
    assert kinds(result) == [("e", "rose-lower")]  # only epsilon_lower rose: not a test of change


@pytest.mark.parametrize(
    "old_event, new_counts",
    [
        (event(k1=1, k2=0, n=1), counts(k1=1, k2=0, n=1)),  # nobs = 1, counts at both ends
        (event(k1=1000, k2=0), counts(k1=1000, k2=0)),
        (event(k1=0, k2=1000), counts(k1=0, k2=1000)),
    ],
)
def test_counts_at_the_ends_of_their_range_are_tested(old_event, new_counts):
    result = compare(report(("e", [claim(event=old_event)])), report(("e", [claim(baseline_event_counts=new_counts)])))
    assert result["tested"] == 1


def test_two_bounds_clamped_at_zero_are_no_rise():
    # the baseline's event never told the inputs apart (upper bound 0) and neither do the fresh counts (lower 0)
    old, new = event(k1=0, k2=1000), counts(k1=0, k2=1000)
    assert same_event_test(old, new, 0.05) == (0.0, 0.0)
    result = compare(
        report(("e", [claim(lower=0.0, event=old)])), report(("e", [claim(lower=0.1, baseline_event_counts=new)]))
    )
    assert kinds(result) == [("e", "rose-lower")] and result["regressions"] == []


def test_entries_with_an_error_are_not_compared():
    old = report(("e", [claim(event=event())]), ("broken", [claim()], "ImportError: x"))
    new = report(("e", [claim(baseline_event_counts=counts())]), ("broken", [claim(ok=False, lower=9.0)], "boom"))
    result = compare(old, new)
    assert result["tested"] == 1 and kinds(result) == []


def test_reports_without_entries_or_claims_compare_as_empty():
    assert compare({"settings": {}}, {"settings": {}})["changes"] == []
    assert compare(report(("e", [claim()])), {"entries": [{"name": "e"}]})["changes"][0]["kind"] == "gone"


def test_every_claim_after_a_new_one_is_still_compared():
    old = report(("b", [claim()]))
    new = report(("a", [claim()]), ("b", [claim(ok=False, lower=1.2)]))
    assert kinds(compare(old, new)) == [("a", "new"), ("b", "newly-failing")]
    assert compare(old, new)["regressions"] == ["b:declared"]


def test_an_unknown_claimed_epsilon_on_both_sides_is_no_claim_change():
    nan = float("nan")
    result = compare(report(("e", [claim(epsilon=nan)])), report(("e", [claim(epsilon=nan)])))
    assert kinds(result) == []
    assert kinds(compare(report(("e", [claim(epsilon=nan)])), report(("e", [claim(epsilon=2.0)])))) == [
        ("e", "claim-changed")
    ]


def test_change_records_carry_the_numbers_they_state():
    old_claim = claim(lower=0.5, epsilon=1.0, event=event(), event_epsilon_upper=0.7)
    cases = {
        "rose": claim(lower=0.8, baseline_event_counts=counts(800, 100)),
        "rose-lower": claim(lower=0.8, baseline_event_counts=counts()),
        "newly-failing": claim(ok=False, lower=1.2),
    }
    for kind, new_claim in cases.items():
        change = compare(report(("e", [old_claim])), report(("e", [new_claim])))["changes"][0]
        assert change["kind"] == kind and (change["entry"], change["claim"]) == ("e", "declared")
        assert (change["old_epsilon_lower"], change["old_epsilon_upper"], change["old_ok"]) == (0.5, 0.7, True)
        assert (change["epsilon_lower"], change["ok"]) == (new_claim["epsilon_lower"], new_claim["ok"])
        assert f"{fmt(0.5)} → {fmt(new_claim['epsilon_lower'])}" in change["text"]
        if kind != "newly-failing":
            assert change["alpha"] == pytest.approx(0.05, rel=1e-14)
            low, upp = same_event_test(event(), new_claim["baseline_event_counts"], change["alpha"])
            assert (change["event_lower"], change["event_upper_old"]) == (low, upp)
            assert fmt(low) in change["text"] and fmt(upp) in change["text"]
    rose = compare(report(("e", [old_claim])), report(("e", [cases["rose"]])))["changes"][0]
    assert "identity > 1.0" in rose["text"] and "each bound at level 0.025" in rose["text"]
    plain = compare(report(("e", [claim(lower=0.5)])), report(("e", [claim(lower=0.8)])))["changes"][0]
    assert plain["text"] == (
        f"ε_lower {fmt(0.5)} → {fmt(0.8)} (no event of the baseline counted again: not a test of change)"
    )
    assert plain["old_epsilon_lower"] == 0.5 and plain["epsilon_lower"] == 0.8 and plain["old_ok"] is True
    fixed = compare(report(("e", [claim(ok=False, lower=1.2)])), report(("e", [claim()])))["changes"][0]
    assert (fixed["kind"], fixed["old_ok"], fixed["ok"], fixed["text"]) == (
        "fixed",
        False,
        True,
        "violation → consistent, as expected",
    )
    changed = compare(report(("e", [claim()])), report(("e", [claim(epsilon=2.0)])))
    assert changed["changes"][0]["text"] == f"claimed ε {fmt(1.0)} → {fmt(2.0)}"
    assert changed["changes"][0]["old_ok"] is True and changed["changes"][0]["ok"] is True
    gone = compare(report(("e", [claim()])), report())
    assert gone["changes"][0]["text"] == f"in the baseline (consistent, ε_lower = {fmt(0.5)}), not in this run"
    assert gone["changes"][0]["old_epsilon_lower"] == 0.5 and gone["changes"][0]["ok"] is None
    assert compare(report(("e", [claim()])), report(("e", [claim()])))["baseline_created"] == "then"
    failing = compare(report(("e", [claim()])), report(("e", [claim(ok=False, lower=1.2)])))["changes"][0]
    assert failing["text"] == (
        f"consistent → violation (expected consistent); ε_lower {fmt(0.5)} → {fmt(1.2)} "
        f"against the claim ε = {fmt(1.0)}"
    )


def test_new_claims_and_unnamed_events_are_reported_as_they_are():
    result = compare(report(), report(("e", [claim(lower=0.5)])))
    assert result["baseline"] == ""  # no source given
    new = result["changes"][0]
    assert (new["kind"], new["epsilon_lower"], new["ok"], new["old_ok"]) == ("new", 0.5, True, None)
    assert new["text"] == f"not in the baseline; now consistent (expected consistent), ε_lower = {fmt(0.5)}"
    unnamed = {k: v for k, v in event().items() if k != "event"}
    rose = compare(
        report(("e", [claim(event=unnamed)])), report(("e", [claim(lower=0.8, baseline_event_counts=counts(800, 100))]))
    )["changes"][0]
    assert rose["kind"] == "rose" and rose["text"].startswith("the baseline's event : ε ≥ ")
