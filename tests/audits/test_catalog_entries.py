"""Every catalog entry is well-formed, and the quick suite's entries come out as the catalog expects.

Statistical tests with fixed seeds. For an entry expected "consistent", the auditor's bound exceeds
a correct claim with probability at most 1 - confidence (5% here, per claim); an expected violation
is missed only when the audit lacks power, which the entries' sample sizes were chosen against
(each expected violation clears its claim by a wide margin in the recorded runs). The twin test
makes a sound entry fail by claiming half its epsilon.
"""

import dataclasses

import pytest

from dpaudit.cli._catalog import builtin_names
from dpaudit.entries import AuditEntry, Claim
from dpaudit.entry_runner import run_entry
from dpaudit.registry import ALGORITHMS, AUDITS, load_plugins

load_plugins()
NAMES = builtin_names()  # not the libraries catalog's entries, which its own tests check
QUICK = [n for n in NAMES if AUDITS.get(n).quick]


def test_catalog_is_populated_and_has_a_quick_suite():
    assert len(NAMES) >= 3 and QUICK
    assert any(AUDITS.get(n).expect == "violation" for n in QUICK)  # the quick suite shows a catch


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_well_formed(name):
    entry = AUDITS.get(name)
    assert isinstance(entry, AuditEntry) and entry.name == name
    assert entry.algorithm in ALGORITHMS, f"{entry.algorithm!r} is not a `dpaudit regret` name"
    if entry.regret is not None:
        assert entry.regret.algorithm in ALGORITHMS
    labels = [c.label for c in entry.claims]
    assert len(labels) == len(set(labels))
    for claim in entry.claims:
        # 0 is a real claim at a large delta ((0, delta)-DP); only an accountant may answer inf
        # (it cannot bound the declared event at that delta), never a stated claim
        assert 0 <= claim.value() < float("inf") or claim.label == "accounted"
    if entry.variant:
        assert entry.expect == "violation", "a known-buggy variant must be expected to violate its claim"


@pytest.mark.parametrize("name", QUICK)
def test_quick_entry_meets_its_expectation(name):
    rec = run_entry(AUDITS.get(name), quick=True, confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    for c in rec["claims"]:
        assert c["ok"], (name, c["label"], c["epsilon"], c["epsilon_lower"], c["expect"])


def test_twin_half_the_claim_is_a_violation():
    entry = AUDITS.get("dp-se.epoch-sum")
    halved = dataclasses.replace(entry, claims=(Claim("paper", epsilon=0.5),))
    rec = run_entry(halved, samples=50_000, confidence=0.95, seed=0, regret=False)
    (claim,) = rec["claims"]
    assert claim["verdict"] == "violation" and not claim["ok"] and not rec["ok"]
    assert claim["epsilon_lower"] > 0.5


def test_runner_records_errors_instead_of_raising():
    entry = AUDITS.get("dp-se.epoch-sum")

    def broken():
        raise RuntimeError("target cannot be built")

    rec = run_entry(dataclasses.replace(entry, target=broken), samples=1000, regret=False)
    assert not rec["ok"] and rec["error"] == "RuntimeError: target cannot be built"


@pytest.mark.slow
def test_full_catalog_gate(tmp_path):
    """`dpaudit audit --all`: every entry at its full sample size, family-wise confidence 0.95 (tens of minutes)."""
    from dpaudit.cli import main

    assert main(["audit", "--all", "--out", str(tmp_path), "--no-regret"]) == 0
