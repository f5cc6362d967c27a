"""The exit-code contract of `dpaudit audit`: 0 pass, 1 a claim failed, 2 usage error, 3 internal error.

(The console script's process status: tests/ci/test_example_project.py.)
"""

import json

from ci_modules import laplace_module

import dpaudit.report
from dpaudit.cli import main


def _audit(*argv):
    return main(["audit", "--out", "rep", *argv])


def test_0_when_every_claim_holds(project, capsys):
    # Laplace(1) is exactly 1-DP: fails with probability <= 1 - confidence = 5% (fixed seed: never)
    project.config()
    project.write("shop_audits.py", laplace_module(eps=1.0, scale=1.0))
    assert _audit("--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_status"] == 0 and doc["ok"] and doc["entries"][0]["claims"][0]["verdict"] == "consistent"


def test_1_when_the_noise_is_perturbed(project, capsys):
    # the twin of the test above: a quarter of the noise (4-DP) against the same claim must fail
    project.config()
    project.write("shop_audits.py", laplace_module(eps=1.0, scale=0.25))
    assert _audit() == 1
    assert "gate: FAIL" in capsys.readouterr().out
    assert json.loads((project.root / "rep" / "report.json").read_text())["summary"]["unexpected_violations"] == [
        "shop.count:declared"
    ]


def test_2_on_a_usage_error(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    assert _audit("--samples", "3") == 2
    assert "--samples" in capsys.readouterr().err


def test_3_when_an_audit_cannot_run(project, capsys):
    project.config()
    project.write(
        "shop_audits.py",
        laplace_module()
        + (
            "\ndef broken(data, rng, size):\n    raise RuntimeError('no database')\n"
            "dpaudit.register_audit(name='shop.broken', claim_epsilon=1.0, d0=D0, d1=D1)(broken)\n"
        ),
    )
    assert _audit() == 3
    out = capsys.readouterr().out
    assert "shop.broken" in out and "RuntimeError: no database" in out and "gate: ERROR" in out
    report = json.loads((project.root / "rep" / "report.json").read_text())
    assert report["summary"]["errors"] == ["shop.broken"] and report["entries"][1]["claims"][0]["ok"]


def test_3_on_a_crash_inside_dpaudit(project, capsys, monkeypatch):
    project.config()
    project.write("shop_audits.py", laplace_module())

    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(dpaudit.report, "write_report", crash)
    assert _audit() == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: disk on fire" in err and "Traceback" in err
