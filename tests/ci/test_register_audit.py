"""`dpaudit.register_audit`: the entries it registers, their records, and bad arguments (ValueError naming the entry)."""

import math

import dp_accounting
import numpy as np
import pytest

import dpaudit
from dpaudit.accounting import epsilon as account
from dpaudit.registry import AUDITS
from dpaudit.user_audits import UserAuditEntry

D0, D1 = np.array([0, 1, 1]), np.array([1, 1, 1])


def laplace(scale):
    def count(data, rng, size):
        return data.sum() + rng.laplace(0.0, scale, size)

    return count


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(AUDITS, "_entries", {})
    return AUDITS


def test_function_target_record(registry):
    target = laplace(1.0)
    assert dpaudit.register_audit(name="t.count", claim_epsilon=1.0, d0=D0, d1=D1, samples=4000)(target) is target
    entry = registry.get("t.count")
    assert isinstance(entry, UserAuditEntry) and entry.module == __name__ and entry.file == __file__
    assert entry.audit_calls() == 1 and entry.quick and entry.expect == "consistent"
    # Laplace(1) is exactly 1-DP: the 95% lower bound exceeds 1 with probability <= 5% (fixed seed)
    rec = entry.run(seed=0, confidence=0.95)
    assert rec["ok"] and rec["error"] is None, rec.get("traceback")
    (claim,) = rec["claims"]
    assert claim["verdict"] == "consistent" and claim["epsilon"] == 1.0 and claim["delta"] == 0.0
    assert 0.0 <= claim["epsilon_lower"] <= claim["event_epsilon_upper"]
    assert rec["audits"][0]["samples"] == 4000
    assert entry.run(seed=0, confidence=0.95)["claims"] == rec["claims"]  # seeded: identical


def test_perturbed_noise_twin_is_caught(registry):
    # the same count with a quarter of the noise is 4-DP, so the claim 1 must fail
    dpaudit.register_audit(name="t.count", claim_epsilon=1.0, d0=D0, d1=D1, samples=4000)(laplace(0.25))
    rec = registry.get("t.count").run(seed=0)
    assert not rec["ok"] and rec["claims"][0]["verdict"] == "violation"
    assert rec["claims"][0]["epsilon_lower"] > 1.0


def test_dp_event_claim_uses_the_accountant(registry):
    event = dp_accounting.GaussianDpEvent(2.0)
    dpaudit.register_audit(
        name="t.gauss",
        claim=event,
        claim_delta=1e-5,
        claim_accountant="pld",
        d0=np.zeros(3),
        d1=np.r_[1.0, 0.0, 0.0],
        samples=1000,
    )(lambda d, rng, n: d.sum() + rng.normal(0, 2.0, n))
    entry = registry.get("t.gauss")
    assert entry.claim.value() == pytest.approx(account(event, 1e-5, accountant="pld"))
    rec = entry.run(samples=1000)
    assert rec["claims"][0]["accountant"] == "pld" and rec["claims"][0]["by_accountant"]["pld"] is not None


class _Algorithm:
    """The algorithm interface: a target(horizon=, observable=) audit hook."""

    def target(self, horizon=None, observable="actions"):
        def target(data, rng, size):
            return (data.sum() + rng.laplace(0.0, 1.0, size) > horizon).astype(int)

        return target


def test_algorithm_object_through_its_hook(registry):
    dpaudit.register_audit(
        name="t.algo", claim_epsilon=1.0, d0=D0, d1=D1, samples=1000, observable="actions", target_args={"horizon": 2}
    )(_Algorithm())
    dpaudit.register_audit(
        name="t.algo-class",
        claim_epsilon=1.0,
        d0=D0,
        d1=D1,
        samples=1000,
        observable="actions",
        target_args={"horizon": 2},
    )(_Algorithm)
    for name in ("t.algo", "t.algo-class"):
        entry = registry.get(name)
        assert entry.observable == "actions"
        assert set(np.unique(entry.target(D0, np.random.default_rng(0), 50))) <= {0, 1}
        assert entry.run(samples=1000)["error"] is None


@pytest.mark.parametrize(
    "kwargs, target, message",
    [
        (dict(claim_epsilon=1.0), 42, "target must be callable"),
        (dict(claim_epsilon=0.0), laplace(1.0), "claim_epsilon must be positive"),
        (dict(claim_epsilon=-1.0), laplace(1.0), "claim_epsilon must be positive"),
        (dict(claim_epsilon=math.inf), laplace(1.0), "claim_epsilon must be positive and finite"),
        (dict(), laplace(1.0), "exactly one of claim_epsilon"),
        (
            dict(claim_epsilon=1.0, claim=dp_accounting.LaplaceDpEvent(1.0)),
            laplace(1.0),
            "exactly one of claim_epsilon",
        ),
        (dict(claim="eps=1"), laplace(1.0), "claim must be a dp_accounting.DpEvent"),
        (dict(claim=dp_accounting.GaussianDpEvent(1.0)), laplace(1.0), "an audit needs a positive, finite claim"),
        (dict(claim_epsilon=1.0, claim_delta=1.0), laplace(1.0), "claim_delta must lie in [0, 1)"),
        (dict(claim_epsilon=1.0, samples=5), laplace(1.0), "samples"),
        (dict(claim_epsilon=1.0, expect="maybe"), laplace(1.0), "expect"),
        (dict(claim_epsilon=1.0, observable="actions"), laplace(1.0), "algorithm objects only"),
        (dict(claim_epsilon=1.0, target_args={"dimension": 3}), _Algorithm(), "_Algorithm.target(dimension) failed"),
    ],
)
def test_bad_arguments_name_the_entry(registry, kwargs, target, message):
    with pytest.raises(ValueError, match=r"entry 't.bad'") as err:
        dpaudit.register_audit(name="t.bad", d0=D0, d1=D1, **kwargs)(target)
    assert message in str(err.value)
    assert "t.bad" not in registry


def test_duplicate_name_is_refused(registry):
    dpaudit.register_audit(name="t.count", claim_epsilon=1.0, d0=D0, d1=D1)(laplace(1.0))
    with pytest.raises(ValueError, match=r"entry 't.count': is registered twice"):
        dpaudit.register_audit(name="t.count", claim_epsilon=2.0, d0=D0, d1=D1)(laplace(1.0))


def test_a_raising_target_is_an_error_record(registry):
    def broken(data, rng, size):
        raise RuntimeError("no database")

    dpaudit.register_audit(name="t.broken", claim_epsilon=1.0, d0=D0, d1=D1)(broken)
    rec = registry.get("t.broken").run()
    assert not rec["ok"] and rec["error"] == "RuntimeError: no database" and rec["claims"] == []


def test_import_dpaudit_stays_cheap():
    import subprocess
    import sys

    code = "import sys, dpaudit; assert 'numpy' not in sys.modules; dpaudit.register_audit; print('ok')"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "ok", res.stderr


def test_a_catalog_algorithm_through_the_interface(registry):
    # a dpaudit.interface.PrivateAlgorithm (DP-SE), its actions audited against its own pure claim
    from dpaudit.algorithms.mab.elimination import DPSE
    from dpaudit.algorithms.mab.environment import RewardTable
    from dpaudit.interface import PrivateAlgorithm

    algorithm = DPSE(1.0)
    assert isinstance(algorithm, PrivateAlgorithm)
    rewards = np.zeros((8, 2))
    d1 = rewards.copy()
    d1[0, 0] = 1.0
    dpaudit.register_audit(
        name="t.dpse", claim_epsilon=1.0, d0=RewardTable(rewards), d1=RewardTable(d1), samples=200, observable="actions"
    )(algorithm)
    rec = registry.get("t.dpse").run(samples=200)
    assert rec["error"] is None, rec.get("traceback")
    assert rec["target"].startswith("dpaudit.algorithms")


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(bogus=1), "unknown audit option bogus"),
        (dict(selection_fracton=0.2), "did you mean selection_fraction?"),
        (dict(confidence=0.9), "confidence= is not an entry's: it is set by the suite (`dpaudit audit --confidence`"),
        (dict(seed=3), "seed= is not an entry's: it is set by the suite (`dpaudit audit --seed`"),
        (dict(selection_fraction=2.0), "selection_fraction must lie in (0, 1), got 2.0"),
        (dict(chunk_size=-5), "chunk_size must be an integer >= 1"),
        (dict(chunk_size=1), None),
        (dict(grid_size=1), "grid_size must be an integer >= 2"),
        (dict(direction_share=0.2), "direction_share must be a number in [0.5, 1)"),
        (dict(score=3), "score must be a function"),
        (dict(families=["nope"]), "unknown family name"),
        (dict(executor="nowhere"), "unknown executor 'nowhere'"),
        (dict(crossfit=True, selection_extension=0.1), "selection_extension > 0 cannot be combined with crossfit=True"),
    ],
)
def test_audit_options_are_checked_at_registration(registry, options, message):
    """Every option `dpaudit.audit.audit` would refuse at run time is refused when the entry is registered."""

    def register():
        dpaudit.register_audit(name="t.opts", claim_epsilon=1.0, d0=D0, d1=D1, samples=20_000, **options)(laplace(1.0))

    if message is None:  # 20 000 runs in chunks of 1: accepted (2**20 chunks at most)
        register()
        assert "t.opts" in registry
        return
    with pytest.raises(ValueError, match=r"entry 't.opts'") as err:
        register()
    assert message in str(err.value)
    assert "t.opts" not in registry


def test_unknown_audit_option_lists_the_known_ones(registry):
    with pytest.raises(ValueError, match="bogus") as err:
        dpaudit.register_audit(name="t.opts", claim_epsilon=1.0, d0=D0, d1=D1, bogus=1)
    text = str(err.value)
    assert "selection_fraction" in text and "chunk_size" in text and "score" in text
    assert "claim_epsilon" not in text and "confidence" not in text  # register_audit's own, and the suite's


def test_chunk_size_is_checked_against_the_entrys_samples(registry):
    # 2 * 10**6 runs in chunks of 1 exceed the auditor's 2**20 chunks
    with pytest.raises(ValueError, match=r"entry 't.opts'.*chunk_size=1 splits samples=2000000"):
        dpaudit.register_audit(name="t.opts", claim_epsilon=1.0, d0=D0, d1=D1, samples=2 * 10**6, chunk_size=1)
