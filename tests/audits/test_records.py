"""The entry record: every runner writes only the keys `dpaudit.records` declares, with the required ones,
and a user's claim is the catalog's `Claim`."""

import dataclasses
import typing

import pytest

from dpaudit.entries import Claim, Entry, expect_of
from dpaudit.entry_runner import entry_seed, run_entry
from dpaudit.limits import MIN_SAMPLES
from dpaudit.records import AuditRecord, ClaimRecord, EntryRecord, lost_record
from dpaudit.registry import AUDITS
from dpaudit.user_audits import UserAuditEntry, UserClaim


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def _check(record, kind):
    keys = typing.get_type_hints(kind)
    assert set(record) <= set(keys), set(record) - set(keys)
    assert kind.__required_keys__ <= set(record), kind.__required_keys__ - set(record)


def _check_entry(record):
    _check(record, EntryRecord)
    assert {"ok", "seconds"} <= set(record)
    for a in record["audits"]:
        _check(a, AuditRecord)
    for c in record["claims"]:
        _check(c, ClaimRecord)


@pytest.fixture(scope="module")
def records():
    import dpaudit.audits  # noqa: F401  (registers the catalog)

    user = UserAuditEntry(
        name="user.laplace",
        target=laplace,
        d0=0.0,
        d1=1.0,
        claim=UserClaim(delta=0.0, epsilon=0.5),
        samples=2_000,
        algorithm="test",
    )
    out = {
        "builtin": run_entry(AUDITS.get("dp-se.epoch-sum"), samples=2_000, regret=False),
        "one-run": AUDITS.get("dp-se.one-run").run(regret=False),
        "user": user.run(seed=1),
    }
    out["baseline"] = user.run(
        seed=2, baseline_events={"user.laplace": {"declared": out["user"]["claims"][0]["event"]}}
    )
    out["lost"] = lost_record(user, "WorkerDied: test")
    return out


@pytest.mark.parametrize("kind", ["builtin", "one-run", "user", "baseline", "lost"])
def test_every_record_key_is_declared(records, kind):
    _check_entry(records[kind])


def test_the_three_shapes(records):
    assert "pin_note" in records["builtin"] and "origin" not in records["builtin"]
    assert records["one-run"]["mode"] == "one-run" and records["one-run"]["claims"][0]["num_canaries"] > 0
    user = records["user"]
    assert list(user)[:5] == ["name", "algorithm", "variant", "description", "target"]  # the order report.json keeps
    assert user["origin"] == "user" and "event_epsilon_upper" in user["claims"][0] and user["claims"][0]["event"]
    assert "baseline_event_counts" in records["baseline"]["claims"][0]
    assert list(records["lost"])[:2] == ["origin", "module"] and records["lost"]["ok"] is False


def test_both_kinds_of_entry_have_the_entry_interface():
    import dpaudit.audits  # noqa: F401  (registers the catalog)

    user = UserAuditEntry(
        name="u",
        target=laplace,
        d0=0.0,
        d1=1.0,
        claim=UserClaim(delta=0.0, epsilon=1.0),
        samples=MIN_SAMPLES,
        algorithm="test",
    )
    members = [n for n in dir(Entry) if not n.startswith("_")]
    assert {"name", "claims", "expect", "relations", "audit_calls", "run"} <= set(members)
    for entry in (AUDITS.get("dp-se.epoch-sum"), AUDITS.get("dp-se.one-run"), user):
        assert all(hasattr(entry, n) for n in members), [n for n in members if not hasattr(entry, n)]
    assert user.observable_description == user.observable and user.audit_calls() == 1


def test_entries_share_one_seed_derivation(records):
    assert records["user"]["seed"] == entry_seed(1, "user.laplace")
    assert records["builtin"]["seed"] == entry_seed(0, "dp-se.epoch-sum")
    assert entry_seed(0, "a") != entry_seed(0, "b") and entry_seed(0, "a") != entry_seed(1, "a")


def test_a_user_claim_is_a_claim():
    import dp_accounting

    stated = UserClaim(delta=1e-5, epsilon=2.0)
    assert isinstance(stated, Claim) and stated.label == "declared" and stated.value() == 2.0
    assert stated == UserClaim(1e-5, 2.0) and stated != Claim("declared", delta=1e-5, epsilon=2.0)  # kinds differ
    assert dataclasses.replace(stated, epsilon=3.0).value() == 3.0
    event = dp_accounting.LaplaceDpEvent(1.0)
    accounted = UserClaim(delta=0.0, event=event, accountant="pure")
    lazy = Claim("paper", accountant="pure", event=lambda: event)  # the catalog builds its events on use
    assert accounted.value() == lazy.value() == pytest.approx(1.0)
    assert accounted.by_accountant()["pure"] == pytest.approx(1.0)
    assert expect_of((stated, dataclasses.replace(stated, expect="violation"))) == "violation"
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        UserClaim(delta=0.0)
    assert MIN_SAMPLES == 10


def test_the_record_and_the_report_say_how_epsilon_was_bounded():
    """At delta = 0 and 2*10^5 runs the rare tail event of a Laplace release is bounded by the thinned ratio test
    (`dpaudit.audit.ratio`): the audit record says so, and the report's event note."""
    from dpaudit import audit
    from dpaudit.records import audit_record
    from dpaudit.report.model import _event_detail

    result = audit(laplace, 0.0, 1.0, claim_epsilon=1.0, samples=200_000, seed=3, float_check="off", progress=False)
    record = audit_record(
        result, delta=0.0, claim_epsilon=1.0, samples=200_000, confidence=0.95, seed=3, seconds=0.0, pair=0
    )
    _check(record, AuditRecord)
    assert record["bound"] == "ratio"
    assert "thinned ratio test" in (_event_detail({"audits": [record]}, {"pair": 0}) or "")
    record["bound"] = "clopper-pearson"
    assert "ratio" not in (_event_detail({"audits": [record]}, {"pair": 0}) or "")
