"""One-run catalog entries: registration, the runner's record, the report rows.

The quick one-run entries' verdicts are checked with the rest of the quick suite
(tests/audits/test_catalog_entries.py, 5% false-failure rate per consistent claim, fixed seeds).
Here a small copy of an entry (T = 2 10^5) checks the record; its twin must fail its gate.
The CDP-SE copy (95% confidence: false-failure rate <= 5% for the sound one, fixed seed) checks
that a correct central algorithm passes because its score reads the analyzer's noisy release.
A tiny Laplace entry (2-DP per canary, claims of 2: 95% confidence, false-failure rate <= 5% per claim,
fixed seed) checks that the analysis follows the claimed delta: the epsilon analysis (Steinke, Nasr,
Jagielski, NeurIPS 2023, Thm 3.1) at delta = 0, the f-DP analysis (Mahloujifar, Melis, Chaudhuri, ICML
2025, Alg. 3) at delta > 0; each record must equal a direct `one_run` call with that analysis and
differ from one with the other (the twin: a runner that ignores the rule fails it).
"""

import dataclasses
import functools
import math

import pytest

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.canaries import OneRunTarget, one_run_target, released_block_count, tail_guesses
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.audit import one_run
from dpaudit.entries import Claim, NeighbourPair, OneRunEntry
from dpaudit.entry_runner import one_run_analysis, run_entry
from dpaudit.registry import AUDITS, load_plugins
from dpaudit.report.model import claim_rows, one_run_note

load_plugins()  # the catalog registers its entries on import: this file must not rely on another test's import

ONE_RUN = [n for n in AUDITS.names() if getattr(AUDITS.get(n), "mode", None) == "one-run"]


def test_the_four_algorithms_have_one_run_entries_at_the_deployment_horizon():
    algorithms = {AUDITS.get(n).algorithm for n in ONE_RUN}
    assert {"dp-se", "dist-dp-se", "anytime-lazy-ucb", "linucb-sdp-amp"} <= algorithms
    for name in ONE_RUN:
        entry = AUDITS.get(name)
        assert entry.horizon in (1_000_000, 10_000_000) and 1_000 <= entry.num_canaries <= 100_000
        assert entry.summary()["mode"] == "one-run"
    assert AUDITS.get("dp-se.one-run").quick  # next to the many-run dp-se entries in the default report
    assert {AUDITS.get(n).expect for n in ONE_RUN} == {"consistent", "violation"}


@pytest.mark.parametrize(
    "name", [n for n in ONE_RUN if AUDITS.get(n).algorithm in ("dp-se", "dist-dp-se", "anytime-lazy-ucb")]
)
def test_each_canary_of_a_multi_armed_entry_has_a_release_of_its_own(name):
    # two canaries in one released sum each see the other's bit as noise: at most one canary per release
    entry = AUDITS.get(name)
    algo, horizon, canaries = entry.target.args
    assert canaries == entry.num_canaries <= released_block_count(algo, horizon, entry.target.keywords["n_arms"])


@pytest.mark.parametrize(
    "m, epsilon, k", [(5_000, 1.0, 1709), (8_000, 1.0, 2735), (4, 1.0, 1), (1, 50.0, 1), (1000, 0.01, 497)]
)
def test_tail_guesses_take_the_canaries_of_the_laplace_tails(m, epsilon, k):
    # k = floor(m (1 + e^-eps) / 4) per side, at least 1: the canaries whose likelihood ratio is e^eps
    assert tail_guesses(m, epsilon) == ((k, k),)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "1"])
def test_tail_guesses_name_a_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        tail_guesses(100, bad)


@pytest.mark.parametrize(
    "args, error, name",
    [
        ((DPSE(1.0, 0.5), 0, 10), ValueError, "horizon"),
        ((DPSE(1.0, 0.5), 1000, 1), ValueError, "n_arms"),
        ((DPSE(1.0, 0.5), 1000.5, 10), TypeError, "horizon"),
        (("dp-se", 1000, 10), TypeError, "algorithm"),
    ],
)
def test_released_block_count_names_a_bad_argument(args, error, name):
    with pytest.raises(error, match=name):
        released_block_count(*args)


def test_the_multi_armed_entries_fix_their_guesses_from_the_claim():
    for name in ONE_RUN:
        entry = AUDITS.get(name)
        if entry.algorithm in ("dp-se", "dist-dp-se", "anytime-lazy-ucb"):
            assert entry.guesses == tail_guesses(entry.num_canaries, 1.0)


def _small(name: str, algo: DPSE, claims=None) -> OneRunEntry:
    entry = AUDITS.get(name)
    return dataclasses.replace(
        entry,
        target=functools.partial(one_run_target, algo, 200_000, 300, n_arms=100),
        horizon=200_000,
        num_canaries=300,
        guesses=None,
        **({"claims": claims} if claims else {}),
    )


def test_record_has_one_run_fields_and_report_rows_say_one_run():
    claims = (Claim("paper", epsilon=1.0), Claim("loose", delta=1e-6, epsilon=1.0))
    rec = run_entry(_small("dp-se.one-run", DPSE(1.0, 0.5), claims), confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    assert rec["mode"] == "one-run" and rec["one_run"] == {"horizon": 200_000, "num_canaries": 300}
    assert [a["delta"] for a in rec["audits"]] == [0.0, 1e-6]
    for c in rec["claims"]:
        assert c["num_canaries"] == 300 and 0 < c["correct"] <= c["guesses"] <= 300
    assert rec["ok"]
    rows = claim_rows(rec)
    assert all(
        "one run: 300 canaries" in r["lower"] and f"{rec['claims'][0]['guesses']} guesses" in rows[0]["lower"]
        for r in rows
    )


def test_both_deltas_are_judged_on_one_run():
    calls = []
    target = one_run_target(DPSE(1.0, 0.5), 200_000, 300, n_arms=100)

    def counted():
        def mechanism(inclusion, rng):
            calls.append(1)
            return target.mechanism(inclusion, rng)

        return target._replace(mechanism=mechanism)

    entry = dataclasses.replace(
        _small("dp-se.one-run", DPSE(1.0, 0.5)),
        target=counted,
        claims=(Claim("paper", epsilon=1.0), Claim("other", delta=1e-6, epsilon=1.0)),
    )
    assert run_entry(entry, regret=False)["error"] is None
    assert len(calls) == 1


def test_twin_fails_the_gate():
    rec = run_entry(
        _small("dp-se.one-run", DPSE(1.0, 0.5, noise="shared"), (Claim("paper", epsilon=1.0),)),
        confidence=0.95,
        seed=0,
        regret=False,
    )
    (claim,) = rec["claims"]
    assert claim["verdict"] == "violation" and not rec["ok"]


@pytest.mark.parametrize("field, value", [("horizon", 0), ("num_canaries", -1)])
def test_bad_entry_fields_are_named(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(AUDITS.get("dp-se.one-run"), **{field: value})


_DEEP_TARGET = functools.partial(one_run_target, DPSE(1.0, 0.5), 200_000, 300, n_arms=100)


@pytest.mark.parametrize(
    "deep, error, says",
    [
        ("more canaries", TypeError, "deep must be a mapping"),
        ({"num_canaries": 30_000}, ValueError, "deep must set target and num_canaries"),
        ({"target": _DEEP_TARGET}, ValueError, "missing num_canaries"),
        ({"target": _DEEP_TARGET, "num_canaries": 30_000, "name": "other"}, ValueError, "deep may set only"),
        ({"target": _DEEP_TARGET, "num_canaries": 30_000, "claims": ()}, ValueError, "got claims"),
        ({"target": _DEEP_TARGET, "num_canaries": 5_000}, ValueError, "more canaries than num_canaries = 5000"),
        ({"target": _DEEP_TARGET, "num_canaries": 0}, ValueError, "deep: num_canaries"),
        ({"target": _DEEP_TARGET, "num_canaries": "many"}, TypeError, "deep: num_canaries"),
        ({"target": _DEEP_TARGET, "num_canaries": 30_000, "horizon": -1}, ValueError, "deep: horizon"),
        ({"target": "run", "num_canaries": 30_000}, TypeError, "deep: target"),
    ],
)
def test_a_bad_deep_size_is_named(deep, error, says):
    with pytest.raises(error, match=says):
        dataclasses.replace(AUDITS.get("dp-se.one-run"), deep=deep)


def test_a_one_run_entry_takes_no_deep_samples():
    with pytest.raises(ValueError, match="deep_samples must be None for a one-run entry"):
        dataclasses.replace(AUDITS.get("dp-se.one-run"), deep_samples=10**6)


def test_the_deep_run_is_the_same_entry_with_more_canaries():
    entry = AUDITS.get("dp-se.one-run")
    claims = (Claim("paper", epsilon=2.0),)
    changed = dataclasses.replace(entry, claims=claims, num_canaries=300)  # the deep run follows the entry
    deep = changed.at_deep_size()
    assert (deep.name, deep.claims, deep.num_canaries, deep.deep) == (entry.name, claims, 29_000, None)
    assert deep.at_deep_size() is deep and changed.deep_size == {"horizon": 50_000_000, "num_canaries": 29_000}
    twin = AUDITS.get("dp-se.one-run-shared-noise")
    assert twin.deep is None and twin.at_deep_size() is twin and twin.deep_size is None
    assert entry.summary()["deep_size"] == entry.deep_size and twin.summary()["deep_size"] is None


def test_an_entry_s_fixed_guess_grid_is_the_one_searched():
    grid = ((50, 50), (100, 25))
    entry = dataclasses.replace(_small("dp-se.one-run", DPSE(1.0, 0.5), (Claim("paper", epsilon=1.0),)), guesses=grid)
    rec = run_entry(entry, confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    (audit,) = rec["audits"]
    assert (audit["k_plus"], audit["k_minus"]) in grid
    linucb = [AUDITS.get(n) for n in ONE_RUN if AUDITS.get(n).algorithm == "linucb-sdp-amp"]
    assert linucb and all(e.guesses == ((e.num_canaries // 4, e.num_canaries // 4),) for e in linucb)


@pytest.mark.parametrize("epsilon, verdict", [(1.0, "consistent"), (10.0, "violation")])
def test_cdp_se_entry_scores_the_noisy_release(epsilon, verdict):
    # eps = 1: scoring the trusted server's exact sum reported a violation (every guess right);
    # eps = 10 is the twin (a tenth of the noise) against the same claim eps = 1
    small = _small("dist-dp-se.one-run", BatchSE("central", epsilon), (Claim("paper", epsilon=1.0),))
    entry = dataclasses.replace(small, algorithm="cdp-se")
    rec = run_entry(entry, confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    (claim,) = rec["claims"]
    assert claim["verdict"] == verdict and rec["ok"] == (verdict == "consistent"), claim


LAPLACE_CANARIES = 1_000


def _laplace(inclusion, rng):  # each canary's bit plus Lap(1/2): 2-DP per canary
    return inclusion + rng.laplace(0.0, 0.5, inclusion.size)


def _score(output):
    return output


def _laplace_entry(claims) -> OneRunEntry:
    return OneRunEntry(
        name="laplace.one-run",
        algorithm="laplace",
        description="each canary's bit released with Lap(1/2)",
        target=lambda: OneRunTarget(_laplace, LAPLACE_CANARIES, _score),
        pairs=(NeighbourPair("one-user", None, None, "1000 canaries, each included by a fair coin"),),
        observable="white-box",
        observable_description="the released bits",
        claims=claims,
        horizon=1,
        num_canaries=LAPLACE_CANARIES,
    )


def test_the_analysis_follows_the_claimed_delta():
    claims = (Claim("pure", epsilon=2.0), Claim("approx", delta=1e-4, epsilon=2.0))
    rec = run_entry(_laplace_entry(claims), confidence=0.95, seed=0, regret=False)
    assert rec["error"] is None, rec.get("traceback")
    pure, approx = rec["audits"]
    assert (pure["delta"], pure["analysis"], approx["delta"], approx["analysis"]) == (0.0, "epsilon", 1e-4, "fdp")
    assert "mu_lower" not in pure and approx["mu_lower"] > 0
    for audit, other in ((pure, "fdp"), (approx, "epsilon")):
        direct = {
            analysis: one_run(
                _laplace,
                LAPLACE_CANARIES,
                _score,
                claim_epsilon=audit["claim_epsilon"],
                claim_delta=audit["delta"],
                confidence=audit["confidence"],
                seed=audit["seed"],
                analysis=analysis,
            )
            for analysis in ("epsilon", "fdp")
        }
        assert audit["epsilon_lower"] == direct[audit["analysis"]].epsilon_lower
        assert audit["epsilon_lower"] != direct[other].epsilon_lower
    # at m delta = 0.1 the epsilon analysis' 2 m delta term leaves nothing; the f-DP analysis has none
    assert approx["epsilon_lower"] > 1.0 and one_run_analysis(1e-4) == "fdp" and one_run_analysis(0.0) == "epsilon"
    assert [c["analysis"] for c in rec["claims"]] == ["epsilon", "fdp"] and rec["ok"]


def test_the_report_names_the_one_run_analysis():
    claims = (Claim("pure", epsilon=2.0), Claim("approx", delta=1e-4, epsilon=2.0))
    rows = claim_rows(run_entry(_laplace_entry(claims), confidence=0.95, seed=0, regret=False))
    assert "ε analysis (Steinke, Nasr, Jagielski 2023)" in rows[0]["lower"]
    assert "f-DP analysis (Mahloujifar, Melis, Chaudhuri 2025)" in rows[1]["lower"]
    old = {"mode": "one-run", "num_canaries": 10, "guesses": 4, "correct": 3}  # a record from before the field
    assert one_run_note(old) == " (one run: 10 canaries, 4 guesses, 3 correct)"
