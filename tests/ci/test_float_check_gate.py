"""`float_check` in a project: `[tool.dpaudit] float_check` for every entry, `register_audit(float_check=...)` for
one; "gate" turns the floating-point violation of numpy's float Laplace into a failed gate (exit 1), "report"
prints it and passes."""

import json

import pytest

from dpaudit.cli import main
from dpaudit.registry import AUDITS
from dpaudit.user_config import ConfigError, read_config

TWO_ENTRIES = """
    import numpy as np
    import dpaudit

    def count(data, rng, size):
        return data + rng.laplace(0.0, 1.0, size)   # numpy's float Laplace: epsilon = 1 over the reals only

    dpaudit.register_audit(name="shop.float", claim_epsilon=1.0, d0=0.0, d1=1.0, samples=20_000)(count)
    dpaudit.register_audit(name="shop.float-off", claim_epsilon=1.0, d0=0.0, d1=1.0, samples=20_000,
                           float_check="off")(count)
"""


def _audit(capsys, *argv):
    code = main(["audit", "--json", "--out", "report", *argv])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_the_config_default_reaches_every_entry_that_sets_none(project):
    project.config(extra='float_check = "gate"\n')
    project.write("shop_audits.py", TWO_ENTRIES)
    assert read_config("pyproject.toml").float_check == "gate"
    main(["list"])
    assert AUDITS.get("shop.float").audit_options == {"float_check": "gate"}
    assert AUDITS.get("shop.float-off").audit_options == {"float_check": "off"}


@pytest.mark.parametrize("mode, code, ok", [("gate", 1, False), ("report", 0, True)])
def test_gate_fails_on_the_float_leak_and_report_passes(project, capsys, mode, code, ok):
    project.config(extra=f'float_check = "{mode}"\n')
    project.write("shop_audits.py", TWO_ENTRIES)
    got, out = _audit(capsys)
    assert got == code
    by_name = {e["name"]: e for e in out["entries"]}
    (claim,) = by_name["shop.float"]["claims"]
    fp = claim["floating_point"]
    assert fp["verdict"] == "violation" and fp["epsilon_lower"] > 2.0 and fp["gate"] is (mode == "gate")
    assert claim["verdict"] == ("violation" if mode == "gate" else "consistent") and claim["ok"] is ok
    (off,) = by_name["shop.float-off"]["claims"]
    assert "floating_point" not in off and off["ok"]


def test_bad_float_check_in_the_config_names_the_key(project):
    project.config(extra='float_check = "sometimes"\n')
    with pytest.raises(ConfigError, match="float_check"):
        read_config("pyproject.toml")
