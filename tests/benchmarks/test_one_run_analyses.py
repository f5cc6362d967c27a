"""benchmarks/one_run_analyses.py on stub entries (each canary's bit plus Lap(1/2), 2-DP per canary, 1000 canaries,
one fixed guess pair): the three analyses read one run, the pairing with many-run entries, and a row for every
one-run entry of the catalog.  Exact checks on seeded runs (no false-failure rate); about 2 seconds, no catalog run."""

import dataclasses
import json

import pytest

from benchmarks import one_run_analyses as ora
from dpaudit.algorithms.mab.canaries import OneRunTarget
from dpaudit.cli._catalog import builtin_names
from dpaudit.entries import AuditEntry, Claim, NeighbourPair, OneRunEntry
from dpaudit.registry import AUDITS

CANARIES = 1_000
CALLS = []


def _laplace(inclusion, rng):
    CALLS.append(1)
    return inclusion + rng.laplace(0.0, 0.5, inclusion.size)


def _score(output):
    return output


def _one_run(name, claims, variant=""):
    return OneRunEntry(
        name=name,
        algorithm="laplace",
        description="each canary's bit released with Lap(1/2)",
        target=lambda: OneRunTarget(_laplace, CANARIES, _score),
        pairs=(NeighbourPair("one-user", None, None, "1000 canaries, each included by a fair coin"),),
        observable="white-box",
        observable_description="the released bits",
        claims=claims,
        horizon=1,
        num_canaries=CANARIES,
        guesses=((200, 200),),
        variant=variant,
    )


def _many_run(name, claims, variant=""):
    return AuditEntry(
        name=name,
        algorithm="laplace",
        description="one bit released with Lap(1/2)",
        target=lambda: lambda data, rng, size: data + rng.laplace(0.0, 0.5, size),
        pairs=(NeighbourPair("one-user", 0.0, 1.0, "0 vs 1"),),
        observable="white-box",
        observable_description="the released bit",
        claims=claims,
        samples=20_000,
        variant=variant,
    )


CORRECT = (Claim("pure", epsilon=3.0), Claim("approx", delta=1e-4, epsilon=3.0))
TWIN = (Claim("paper", epsilon=1.0, expect="violation"), Claim("corrected", epsilon=3.0))


def test_the_analyses_read_one_run_and_the_catalog_analysis_is_the_record_s():
    CALLS.clear()
    m = ora.measure_one_run(_one_run("laplace.one-run", CORRECT))
    assert len(CALLS) == 1 and m["canaries"] == CANARIES
    pure, approx = m["audits"]
    assert (pure["audit"]["delta"], approx["audit"]["delta"]) == (0.0, 1e-4)
    a = pure["analyses"]
    assert all(a[x]["bound"] for x in ora.ANALYSES) and pure["audit"]["analysis"] == "epsilon"
    assert a["epsilon"]["epsilon_lower"] == pure["audit"]["epsilon_lower"] > 1.0
    # a pure claim: the order-statistics law is one atom, Steinke et al.'s binomial bound (its bisection stops a
    # little below: 16 steps)
    order, eps = a["order-statistics"]["epsilon_lower"], a["epsilon"]["epsilon_lower"]
    assert eps * (1 - 1e-4) <= order <= eps
    b = approx["analyses"]
    assert b["fdp"]["epsilon_lower"] == approx["audit"]["epsilon_lower"] and b["fdp"]["mu_lower"] > 0
    assert not b["order-statistics"]["bound"] and "interfering" in b["order-statistics"]["reason"]


def test_pairing_follows_the_report_and_a_twin_s_claim_its_own_variant():
    one = [
        ora.measure_one_run(_one_run("laplace.one-run", CORRECT)),
        ora.measure_one_run(_one_run("laplace.twin", TWIN, "twin")),
    ]
    many = [
        _many_run("laplace.sum", (Claim("pure", epsilon=3.0),)).run(seed=0, regret=False),
        _many_run("laplace.twin-sum", (Claim("paper", epsilon=1.0, expect="violation"),), "twin").run(
            seed=0, regret=False
        ),
    ]
    rows, notes = ora.compare(one, many)
    by = {(r["entry"], r["delta"]): r for r in rows}
    assert set(by) == {("laplace.one-run", 0.0), ("laplace.one-run", 1e-4), ("laplace.twin", 0.0)}
    pure = by[("laplace.one-run", 0.0)]
    assert pure["pairing"] == "report" and pure["many_run"]["entry"] == "laplace.sum" and pure["epsilon_upper"] == 3.0
    assert pure["ratios"]["epsilon"] == pytest.approx(pure["analyses"]["epsilon"]["epsilon_lower"] / 3.0)
    approx = by[("laplace.one-run", 1e-4)]
    assert approx["many_run"] is None and approx["epsilon_upper"] == 3.0  # no many-run claim at delta = 1e-4
    twin = by[("laplace.twin", 0.0)]
    assert twin["pairing"] == "same claim" and twin["many_run"]["entry"] == "laplace.twin-sum"
    assert twin["claim_epsilon"] == 1.0 and twin["epsilon_upper"] == 3.0 and twin["upper_claim"] == "corrected"
    assert not [n for n in notes if "RED FLAG" in n]
    text = "\n".join(ora.table_lines(rows, notes, many))
    assert all(name in text for name in ("laplace.one-run", "laplace.twin", "laplace.sum", "laplace.twin-sum"))


def test_a_bound_above_a_proven_upper_is_flagged():
    wrong = (Claim("pure", epsilon=1.0),)  # the mechanism is 2-DP: this "proven" claim is false
    rows, notes = ora.compare([ora.measure_one_run(_one_run("laplace.one-run", wrong))], [])
    assert rows[0]["pairing"] == "no many-run entry of this algorithm and variant"
    assert any(n.startswith("RED FLAG laplace.one-run at delta = 0: the epsilon bound") for n in notes)


def test_every_one_run_entry_of_the_catalog_gets_a_row(monkeypatch, capsys, tmp_path):
    names = ora.one_run_names()
    assert names == [n for n in builtin_names() if isinstance(AUDITS.get(n), OneRunEntry)]
    assert {"dp-se.one-run", "dist-dp-se.one-run-inverted-polya", "linucb-sdp-amp.one-run-low-noise"} <= set(names)
    many = ora.many_run_names(names)
    assert {"dp-se.shared-noise", "dist-dp-se.inverted-polya", "linucb-sdp-amp.batch-sum"} <= set(many)
    assert not set(many) & set(names) and "ftnl.rnm" not in many
    stub = _one_run("stub", CORRECT[:1])
    real = ora.measure_one_run
    monkeypatch.setattr(
        ora, "measure_one_run", lambda e: real(dataclasses.replace(stub, name=e.name, algorithm=e.algorithm))
    )
    monkeypatch.setattr(ora, "run_many", lambda names: [])
    out = tmp_path / "figure.txt"
    assert ora.main(["--json", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["entry"] for r in rows[:-1]] == names and "notes" in rows[-1]
    assert all(f"\n{name} " in out.read_text() for name in names)


def test_an_unknown_entry_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        ora.main(["--entries", "dp-se.decisions"])
    assert exc.value.code == 2 and "not one-run entries of the catalog: dp-se.decisions" in capsys.readouterr().err


def test_an_analysis_above_the_catalog_s_is_noted_not_taken():
    notes = ora._above_catalog("x", 1e-6, "fdp", {"epsilon": 0.009, "fdp": 0.008785, "many-run": 1.0})
    want = "the epsilon analysis gives 0.009, 2.4% above the catalog's fdp analysis (0.008785) on the same run"
    assert notes == [f"x at delta = 1e-06: {want}"]
    assert ora._above_catalog("x", 0.0, "epsilon", {"epsilon": 0.932, "order-statistics": 0.93199}) == []
