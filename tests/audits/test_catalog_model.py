"""The catalog's data model and building blocks: validation, expectations, claims, flip search (exact tests)."""

import dataclasses
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from dpaudit.audits.build import Observe, claims_from_privacy, flip_point
from dpaudit.entries import AuditEntry, Claim, LazyClaims, NeighbourPair, RegretRun


def _target():
    return lambda data, rng, size: data + rng.laplace(0.0, 1.0, size)


def _entry(**kw):
    base = dict(
        name="x.y",
        algorithm="dp-se",
        description="d",
        target=_target,
        pairs=(NeighbourPair("one-user", 0.0, 1.0, "0 vs 1"),),
        observable="white-box",
        observable_description="value",
        claims=(Claim("paper", epsilon=1.0),),
    )
    base.update(kw)
    return AuditEntry(**base)


def test_entry_expectation_and_summary():
    e = _entry(claims=(Claim("paper", epsilon=1.0, expect="violation"), Claim("corrected", epsilon=2.0)))
    assert e.expect == "violation"
    assert _entry().expect == "consistent"
    s = e.summary()
    assert {"name", "algorithm", "expect", "observable", "relations", "claims"} <= set(s)
    assert s["relations"] == ["one-user"] and [c["label"] for c in s["claims"]] == ["paper", "corrected"]


def test_audit_calls_count_pairs_times_deltas():
    pairs = (NeighbourPair("reward-only", 0, 1, "a"), NeighbourPair("context-only", 0, 2, "b"))
    claims = (
        Claim("paper", epsilon=1.0, delta=1e-5),
        Claim("corrected", epsilon=2.0, delta=1e-5),
        Claim("pure", epsilon=3.0),
    )
    assert _entry(pairs=pairs, claims=claims).audit_calls() == 4


@pytest.mark.parametrize(
    "kw, error, match",
    [
        ({"name": "has space"}, ValueError, "name"),
        ({"algorithm": ""}, ValueError, "algorithm"),
        ({"target": 3}, TypeError, "target"),
        ({"pairs": ()}, ValueError, "pairs"),
        ({"claims": ()}, ValueError, "claims"),
        ({"observable": "grey-box"}, ValueError, "observable"),
        ({"samples": 0}, ValueError, "samples"),
        ({"quick_samples": -1}, ValueError, "quick_samples"),
    ],
)
def test_entry_rejects_bad_fields(kw, error, match):
    with pytest.raises(error, match=match):
        _entry(**kw)


def test_pair_and_claim_validation():
    with pytest.raises(ValueError, match="relation"):
        NeighbourPair("sideways", 0, 1, "x")
    with pytest.raises(ValueError, match="description"):
        NeighbourPair("both", 0, 1, "")
    with pytest.raises(ValueError, match="exactly one"):
        Claim("paper")
    with pytest.raises(ValueError, match="exactly one"):
        Claim("paper", epsilon=1.0, event=lambda: None)
    with pytest.raises(ValueError, match="epsilon"):
        Claim("paper", epsilon=-1.0)
    with pytest.raises(ValueError, match="delta"):
        Claim("paper", epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="expect"):
        Claim("paper", epsilon=1.0, expect="maybe")
    with pytest.raises(ValueError, match="horizon"):
        RegretRun("dp-se", horizon=0, runs=1)
    assert Claim("paper", epsilon=1.5).value() == 1.5


@dataclasses.dataclass(frozen=True)
class _Guarantee:
    notion: str
    epsilon: float | None
    delta: float = 0.0
    source: str = ""
    rho: float | None = None


@dataclasses.dataclass(frozen=True)
class _Privacy:
    claim: _Guarantee
    corrected: _Guarantee | None
    event: object = None


def test_claims_from_privacy_keeps_finite_claims():
    claims = claims_from_privacy(
        _Privacy(_Guarantee("pure", 1.0, source="Thm 6"), _Guarantee("pure", 2.0)), paper_expect="violation"
    )
    assert [(c.label, c.value(), c.expect, c.source) for c in claims] == [
        ("paper", 1.0, "violation", "Thm 6"),
        ("corrected", 2.0, "consistent", ""),
    ]
    only = claims_from_privacy(_Privacy(_Guarantee("pure", 1.0), _Guarantee("pure", float("inf"))))
    assert [c.label for c in only] == ["paper"]
    with pytest.raises(ValueError, match="no finite"):
        claims_from_privacy(_Privacy(_Guarantee("zcdp", None), None))


def test_zcdp_claims_become_epsilon_delta_claims():
    import math

    (claim,) = claims_from_privacy(_Privacy(_Guarantee("zcdp", None, rho=0.5), None))
    assert claim.accountant == "zcdp" and claim.delta == 1e-5
    # rho-zCDP => (rho + 2 sqrt(rho log(1/delta)), delta)-DP (Bun & Steinke 2016, Prop. 1.3) is an upper bound
    assert 0.5 < claim.value() <= 0.5 + 2 * math.sqrt(0.5 * math.log(1e5))


def test_flip_point_finds_the_boundary():
    assert flip_point(lambda k: k >= 383, 0, 444) == 383
    assert flip_point(lambda k: k >= 1, 0, 1) == 1
    with pytest.raises(ValueError, match="no decision flip"):
        flip_point(lambda k: True, 0, 10)


@dataclasses.dataclass(frozen=True)
class _Algo:
    def target(self, horizon, observable):
        return lambda data, rng, size: np.tile(np.arange(6.0), (size, 1)) + data


def test_observe_projects_columns_and_pickles():
    obs = Observe(_Algo(), 10, "noisy_sums", (0, 4))
    out = obs(1.0, np.random.default_rng(0), 3)
    assert out.shape == (3, 2) and out[0].tolist() == [1.0, 5.0]
    assert pickle.loads(pickle.dumps(obs)) == obs


def test_a_module_that_fails_to_import_becomes_a_failing_entry(monkeypatch):
    import dpaudit.audits as catalog
    from dpaudit.entry_runner import run_entry
    from dpaudit.registry import AUDITS

    monkeypatch.setattr(AUDITS, "_entries", dict(AUDITS._entries))
    assert catalog.load(("no_such_module",)) == ["no_such_module"]
    entry = AUDITS.get("no_such_module.import-error")
    assert entry.quick  # the default suite, and so the gate, sees it
    rec = run_entry(entry, samples=1000, regret=False)
    assert not rec["ok"] and "dpaudit.audits.no_such_module failed to import" in rec["error"]


@dataclasses.dataclass(frozen=True)
class _NanAlgo:
    def target(self, horizon, observable):
        return lambda data, rng, size: np.tile([1.0, np.nan], (size, 1))


def test_observe_fill_gives_not_released_its_own_value():
    out = Observe(_NanAlgo(), 10, "noisy_sums", fill=-1.0)(None, np.random.default_rng(0), 2)
    assert out.tolist() == [[1.0, -1.0], [1.0, -1.0]]


def test_releases_runs_one_stream_per_run():
    from dpaudit.audits.build import Releases

    def release(rng, stream, epsilon, scale=1.0):
        return stream.cumsum(axis=1) * scale + epsilon

    obs = Releases(release, 0.5, (("scale", 2.0),), (0, 2))
    out = obs(np.array([1.0, 0.0, 1.0]), np.random.default_rng(0), 3)
    assert out.shape == (3, 2) and out[0].tolist() == [2.5, 4.5]


def test_lazy_claims_build_once_on_first_use():
    calls = []

    def build():
        calls.append(1)
        return (Claim("paper", epsilon=1.0, expect="violation"), Claim("corrected", epsilon=2.0))

    e = _entry(claims=LazyClaims(build, expect="violation"))
    assert e.expect == "violation" and e.relations == ("one-user",) and not e.claims.built and not calls
    assert [c.label for c in e.claims] == ["paper", "corrected"] and e.audit_calls() == 1
    assert len(e.claims) == 2 and e.claims[1].epsilon == 2.0 and calls == [1]


def test_lazy_claims_refuse_a_wrong_declared_expectation():
    e = _entry(claims=LazyClaims(lambda: (Claim("paper", epsilon=1.0),), expect="violation"))
    with pytest.raises(ValueError, match="expect='violation' was declared"):
        list(e.claims)
    with pytest.raises(ValueError, match="expect"):
        LazyClaims(lambda: (), expect="maybe")
    with pytest.raises(ValueError, match="at least one Claim"):
        list(LazyClaims(lambda: (), expect="consistent"))


def test_importing_the_catalog_builds_no_claims():
    """Regression: importing dpaudit.audits accounted every claim (seconds of exact binomial profiles)."""
    code = (
        "import json, dpaudit.audits\nfrom dpaudit.entries import LazyClaims\n"
        "from dpaudit.registry import AUDITS\nentries = [AUDITS.get(n) for n in AUDITS.names()]\n"
        "print(json.dumps({e.name: e.claims.built if isinstance(e.claims, LazyClaims) else None "
        "for e in entries}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    built = json.loads(out)
    assert not any(built.values())
    for name in ("linucb-sdp-vec.batch-sum", "linucb-sdp-amp.batch-sum", "dp-conse.rct-lengths", "ftnl.rnm"):
        assert built[name] is False  # declared lazily: accounted when audited, not when imported
