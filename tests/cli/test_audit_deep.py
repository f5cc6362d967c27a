"""`dpaudit audit --deep`: each run-limited entry at the runs its pin note names (`deep_samples`), each one-run
entry with a deep size at its deep run (`deep`: more canaries).

The one-run test audits each canary's bit released with Lap(1/2) (2-DP per canary) against the claim 2 at 95%
confidence, fixed seed: false-failure rate <= 5%; it checks the size audited, not the bound.
"""

import dataclasses
import functools
import json

import numpy as np
import pytest

from dpaudit.algorithms.mab.canaries import OneRunTarget, tail_guesses
from dpaudit.cli import main
from dpaudit.entries import AuditEntry, Claim, NeighbourPair, OneRunEntry
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
    assert deep["linucb-sdp-amp.batch-sum"] == 10**7 and deep["linucb-jdp.tree"] == 5 * 10**6
    assert deep["ldp-se.aggregate"] == 10**8 and deep["linucb-sdp-amp.returning"] == 4 * 10**7
    assert "dist-rdp-se.aggregate" not in deep and "dist-cdp-se.aggregate" not in deep  # pinned on μ at full size
    assert not {"dp-se.decisions", "cdp-se.decisions", "dist-dp-se.decisions"} & set(deep)  # pinned at full size
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


def _laplace(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # each canary's bit + Lap(1/2)
    return inclusion + rng.laplace(0.0, 0.5, inclusion.size)


def _laplace_target(num_canaries: int) -> OneRunTarget:
    return OneRunTarget(_laplace, num_canaries, lambda output: output)


def _one_run_entry(**kw) -> OneRunEntry:
    return OneRunEntry(
        name="test.deep-one-run",
        algorithm="laplace",
        description="each canary's bit released with Lap(1/2)",
        target=functools.partial(_laplace_target, 500),
        pairs=(NeighbourPair("one-user", None, None, "canaries, each included by a fair coin"),),
        observable="white-box",
        observable_description="the released bits",
        claims=(Claim("pure", epsilon=2.0),),
        horizon=1,
        num_canaries=500,
        deep={"target": functools.partial(_laplace_target, 2_000), "num_canaries": 2_000, "horizon": 4},
        **kw,
    )


@pytest.mark.parametrize("deep, canaries, horizon", [(True, 2_000, 4), (False, 500, 1)])
def test_a_deep_run_audits_a_one_run_entry_at_its_deep_size(deep, canaries, horizon, tmp_path, monkeypatch):
    entry = _one_run_entry()
    monkeypatch.setitem(AUDITS._entries, entry.name, entry)
    assert main(["audit", entry.name, *(["--deep"] if deep else []), "--out", str(tmp_path), "--no-regret"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    (record,) = report["entries"]
    assert report["settings"]["deep"] is deep and record["name"] == entry.name
    assert record["one_run"] == {"horizon": horizon, "num_canaries": canaries}
    assert [c["num_canaries"] for c in record["claims"]] == [canaries]


def test_list_json_shows_the_deep_sizes(monkeypatch, capsys):
    entry = _one_run_entry()
    monkeypatch.setitem(AUDITS._entries, entry.name, entry)
    assert main(["list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["dp-se.one-run"]["deep_size"] == {"horizon": 50_000_000, "num_canaries": 29_000}
    assert rows["dp-se.one-run"]["deep_samples"] is None and rows["linucb-sdp-amp.batch-sum"]["deep_samples"] == 10**7
    assert (
        rows["linucb-sdp-amp.batch-sum"]["deep_size"] is None
        and rows["dp-se.one-run-shared-noise"]["deep_size"] is None
    )
    assert entry.summary()["deep_size"] == {"horizon": 4, "num_canaries": 2_000}


def test_the_pure_one_run_entries_name_their_deep_sizes():
    # (horizon, arms, canaries): one canary per release of the deep run's placement (29000, 30000, 40855
    # releases; counted by the dry run, 5-20 s each, so not here), guesses fixed from the claim for those canaries
    sizes = {
        "dp-se.one-run": (50_000_000, 29_000, 29_000),
        "dist-dp-se.one-run": (1_000_000, 5_000, 30_000),
        "anytime-lazy-ucb.one-run": (1_000_000, 5_500, 40_000),
    }
    one_run = [n for n in AUDITS.names() if isinstance(AUDITS.get(n), OneRunEntry)]
    assert {n for n in one_run if AUDITS.get(n).deep is not None} == set(sizes)
    for name, (horizon, arms, canaries) in sizes.items():
        entry, deep = AUDITS.get(name), AUDITS.get(name).at_deep_size()
        assert deep.target.args[1:] == (horizon, canaries) and deep.target.keywords == {"n_arms": arms}
        assert (deep.horizon, deep.num_canaries, deep.guesses) == (horizon, canaries, tail_guesses(canaries, 1.0))
        assert f"{canaries} canaries on {arms} arms" in deep.pairs[0].description
        assert f"with {canaries} canaries" in deep.description
        assert (deep.name, deep.claims, deep.pin_note, deep.deep) == (entry.name, entry.claims, entry.pin_note, None)
        assert deep.target.args[0] is entry.target.args[0]  # the same algorithm
