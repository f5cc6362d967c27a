"""examples/ci/shop end to end: its audits run through the installed console script, as its workflow runs them."""

import json
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ci" / "shop"
WORKFLOW = EXAMPLE / ".github" / "workflows" / "dpaudit.yml"


def _dpaudit() -> list[str]:
    script = pathlib.Path(sys.executable).with_name("dpaudit")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dpaudit"]


def test_example_project_audits_pass(tmp_path):
    # Every claim holds or its twin is caught: a sound claim fails with probability <= 1 - confidence = 5%
    # (fixed seed 0, so the outcome is fixed); the buggy twin's noise is 10x too small and must fail.
    project = shutil.copytree(EXAMPLE, tmp_path / "shop")
    res = subprocess.run(
        _dpaudit() + ["audit", "--out", "dpaudit-report", "--junit-xml", "dpaudit-report/junit.xml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads((project / "dpaudit-report" / "report.json").read_text())
    assert report["settings"]["catalog"] == "user" and report["settings"]["config"] == str(project / "pyproject.toml")
    verdicts = {e["name"]: e["claims"][0]["verdict"] for e in report["entries"]}
    assert verdicts == {
        "shop.basket-sum": "consistent",
        "shop.buyers-count": "consistent",
        "shop.buyers-count-bug": "violation",
    }
    suite = ET.parse(project / "dpaudit-report" / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")


def test_workflow_and_hook_run_the_audit():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["audit"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert "pip install" in runs and "dpaudit audit" in runs and "--junit-xml" in runs and "--baseline" in runs
    (hook,) = yaml.safe_load((EXAMPLE / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert hook["entry"].startswith("dpaudit audit")


def test_dpaudit_is_installed_from_its_repository_not_by_name():
    # dpaudit is not on PyPI: a bare "dpaudit" would install nothing, or someone else's package. Both the
    # workflow and the hook name one source (a git URL at a tag, the README's placeholder OWNER).
    from packaging.requirements import Requirement

    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    install = next(s["run"] for s in workflow["jobs"]["audit"]["steps"] if "pip install" in s.get("run", ""))
    assert install.strip() == 'python -m pip install "$DPAUDIT"'
    in_ci = Requirement(workflow["env"]["DPAUDIT"])
    (hook,) = yaml.safe_load((EXAMPLE / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    (in_hook,) = [Requirement(d) for d in hook["additional_dependencies"] if d.startswith("dpaudit")]
    assert in_ci.name == in_hook.name == "dpaudit" and in_ci.extras == {"dask"}
    assert in_ci.url == in_hook.url and in_ci.url.startswith("git+https://github.com/OWNER/dpaudit@v")
    readme = (EXAMPLE.parent / "README.md").read_text()
    assert workflow["env"]["DPAUDIT"] in readme and hook["additional_dependencies"][0] in readme


def test_readme_steps_run(project, capsys):
    # the README's step 1 module and step 2 table, audited in process (Laplace(1) is exactly 1-DP: fails
    # with probability <= 5%, fixed seed)
    import re
    import textwrap

    from dpaudit.cli import main

    readme = (EXAMPLE.parents[2] / "README.md").read_text().split("## Audit your own mechanism in CI", 1)[1]
    module = textwrap.dedent(re.search(r"```python\n(.*?)```", readme, re.S).group(1))
    table = textwrap.dedent(re.search(r"```toml\n(.*?)```", readme, re.S).group(1))
    project.write("shop_audits.py", module)
    project.write("pyproject.toml", table)
    assert main(["audit", "--out", "rep", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"][0]["name"] == "shop.buyers-count"
