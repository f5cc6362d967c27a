"""A time budget in a project: `[tool.dpaudit] time_budget` for every entry that sets none, `--time-budget` for
all of them; the report and JSON say which runs the audit reached."""

import json

import pytest

from dpaudit.cli import main
from dpaudit.registry import AUDITS
from dpaudit.user_config import ConfigError, read_config

ENTRIES = """
    import numpy as np
    import dpaudit

    def count(data, rng, size):
        return data + rng.laplace(0.0, 1.0, size)

    dpaudit.register_audit(name="shop.count", claim_epsilon=1.0, d0=0.0, d1=1.0, samples=2_000,
                           float_check="off")(count)
    dpaudit.register_audit(name="shop.count-fixed", claim_epsilon=1.0, d0=0.0, d1=1.0, samples=2_000,
                           float_check="off", time_budget=0.2)(count)
"""


def test_the_config_default_reaches_every_entry_that_sets_none(project):
    project.config(extra="time_budget = 30\n")
    project.write("shop_audits.py", ENTRIES)
    assert read_config("pyproject.toml").time_budget == 30.0
    main(["list"])
    assert AUDITS.get("shop.count").audit_options == {"float_check": "off", "time_budget": 30.0}
    assert AUDITS.get("shop.count-fixed").audit_options == {"float_check": "off", "time_budget": 0.2}


@pytest.mark.parametrize("value", ["0", "-1", '"60"', "true", "inf"])
def test_a_bad_time_budget_in_the_config_names_the_key(project, value):
    project.config(extra=f"time_budget = {value}\n")
    with pytest.raises(ConfigError, match="time_budget"):
        read_config("pyproject.toml")


def test_the_flag_times_every_audit_and_the_report_says_what_it_reached(project, capsys):
    project.config()
    project.write("shop_audits.py", ENTRIES)
    assert main(["audit", "--out", "report", "--time-budget", "0.5"]) == 0
    report = json.loads((project.root / "report" / "report.json").read_text())
    for entry in report["entries"]:
        (audit,) = entry["audits"]
        box = audit["time_box"]
        assert box["budget"] == 0.5 and box["stopped"] == "budget" and box["stage_samples"][0] == 2_000
        assert audit["samples"] == box["stage_samples"][box["best_stage"]]
        assert box["samples_drawn"] == sum(box["stage_samples"])
    markdown = (project.root / "report" / "report.md").read_text()
    assert "time budget 0.5 s:" in markdown and "stopped by the budget" in markdown


def test_the_flag_needs_audits_of_yours(project, capsys):
    project.config(extra="")
    project.write("shop_audits.py", ENTRIES)
    assert main(["audit", "--catalog", "builtin", "--time-budget", "5", "--out", "report"]) == 2
    assert "--time-budget" in capsys.readouterr().err
