"""Results name the target without memory addresses: two runs of one audit give identical JSON."""

import dataclasses
import functools
import json
import re

import numpy as np

from dpaudit.audit import AuditResult, audit, describe_target


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def _scaled(scale, data, rng, size):
    return data + rng.laplace(0.0, scale, size)


@dataclasses.dataclass(frozen=True)
class Observe:
    noise: object
    weights: np.ndarray

    def __call__(self, data, rng, size):
        return data + self.noise(rng, size)


def _noise(rng, size):
    return rng.laplace(0.0, 1.0, size)


OPTS = dict(claim_epsilon=1.0, samples=2_000, executor="serial", seed=2)


def test_descriptions_have_no_addresses():
    target = Observe(_noise, np.arange(3.0))
    text = describe_target(target)
    assert "0x" not in text
    assert text.startswith(f"{__name__}.Observe(noise={__name__}._noise, weights=array(shape=(3,)")
    assert describe_target(functools.partial(_scaled, 2.0)) == f"partial({__name__}._scaled, 2.0)"
    assert describe_target(laplace) == f"{__name__}.laplace"
    assert "0x" not in describe_target(lambda d, r, s: d)
    assert "0x" not in describe_target(object())
    assert describe_target(laplace, "my mechanism") == "my mechanism"


def test_two_runs_of_one_audit_give_byte_identical_json():
    # each run builds a fresh target object (a new address each time): the old repr differed
    first = audit(Observe(_noise, np.arange(3.0)), 1.0, 0.0, **OPTS)
    second = audit(Observe(_noise, np.arange(3.0)), 1.0, 0.0, **OPTS)
    assert first.to_json() == second.to_json()
    assert not re.search(r" at 0x[0-9a-fA-F]+", first.to_json())  # no object address (base64 arrays may hold "0x")
    assert AuditResult.from_json(first.to_json()) == first


def test_target_name_is_used():
    assert audit(laplace, 1.0, 0.0, target_name="laplace-1", **OPTS).target == "laplace-1"


def test_schema_1_results_read_back():
    data = json.loads(audit(laplace, 1.0, 0.0, **OPTS).to_json())
    del data["target"]
    data["schema"] = 1
    assert AuditResult.from_dict(data).target == ""


def test_catalog_targets_are_described_without_addresses():
    # the UCB catalog targets (dataclasses holding release functions) put "<function ... at 0x...>"
    # into report.json's `target` field through repr
    import dpaudit.audits  # noqa: F401  (registers the catalog)
    from dpaudit.registry import AUDITS

    names = [name for name in AUDITS if "ucb" in name]
    assert names
    for name in names:
        assert "0x" not in describe_target(AUDITS.get(name).target()), name
