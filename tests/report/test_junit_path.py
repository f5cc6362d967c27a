"""`--junit-xml` may not name a file of the report set in `--out`: exit 2 before any audit runs."""

import os

import pytest

import dpaudit.registry
from dpaudit.cli import main
from dpaudit.cli.audit import _junit_path
from dpaudit.report.files import report_set_member


@pytest.fixture
def no_work(monkeypatch, tmp_path):
    """Fail the test if an audit starts; run in tmp_path with an output folder `rep` and a link to it."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started despite a bad --junit-xml")

    monkeypatch.setattr(dpaudit.registry, "load_plugins", refuse)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rep").mkdir()
    os.symlink(tmp_path / "rep", tmp_path / "link")


@pytest.mark.parametrize(
    "junit",
    [
        "rep/report.json",
        "./rep/report.html",
        "rep/../rep/report.md",
        "link/intervals.png",
        "{tmp}/rep/report.json",
        "rep/.dpaudit.lock",
        "rep/.dpaudit-staging-x1/junit.xml",
        "link/.dpaudit-swap-x1/report.json",
    ],
)
def test_junit_xml_inside_the_report_set_exits_2(no_work, tmp_path, capsys, junit):
    junit = junit.format(tmp=tmp_path)
    assert main(["audit", "dp-se.epoch-sum", "--no-regret", "--out", "rep", "--junit-xml", junit]) == 2
    err = capsys.readouterr().err
    assert "--junit-xml" in err and "is a file of the report set in --out 'rep'" in err and "give another name" in err
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == []


def test_junit_xml_beside_the_report_set_is_fine(tmp_path):
    out = tmp_path / "rep"
    for name in ("junit.xml", "report.json.xml", "dpaudit-report/report.json", ".dpaudit-lock"):
        assert not report_set_member(out / name, out), name
    assert _junit_path(str(out / "junit.xml"), str(out)) == out / "junit.xml"
    assert report_set_member(tmp_path / "rep", out)  # the folder itself is no file name either
    assert not report_set_member(tmp_path / "report.json", out)
