"""[tool.dpaudit] configs: discovery, `dpaudit list`, and bad declarations (exit 2 naming the file and the
entry or module, before any audit runs)."""

import json

import pytest
from ci_modules import laplace_module

import dpaudit.audit
from dpaudit.cli import main
from dpaudit.user_config import ConfigError, find_config, read_config


@pytest.fixture
def no_audit(monkeypatch):
    """Fail the test if an audit starts."""

    def refuse(*args, **kwargs):
        raise AssertionError("an audit ran before the bad declaration was rejected")

    monkeypatch.setattr(dpaudit.audit, "audit", refuse)


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_config_found_in_the_current_folder_and_listed(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    config = find_config()
    assert config.modules == ("shop_audits",) and config.paths == (project.root.resolve(),)
    code, out, _ = _run(capsys, "list", "--json", "--claims")
    assert code == 0
    (row,) = json.loads(out)
    assert row["name"] == "shop.count" and row["origin"] == "user" and row["algorithm"] == "shop_audits"
    assert row["claims"] == [
        {"label": "declared", "epsilon": 1.0, "delta": 0.0, "accountant": "stated", "expect": "consistent"}
    ]


def test_list_all_shows_both_catalogs(project, capsys):
    project.config()
    project.write("shop_audits.py", laplace_module())
    code, out, _ = _run(capsys, "list", "--catalog", "all")
    assert code == 0 and "shop.count" in out and "dp-se.epoch-sum" in out and " user" in out


def test_a_project_pyproject_without_the_table_is_not_a_config(project):
    project.write("pyproject.toml", '[project]\nname = "x"\n')
    assert find_config() is None


def test_config_file_flag_and_paths(project, capsys):
    project.write("ci/audits.toml", '[tool.dpaudit]\nmodules = ["shop_audits"]\npaths = ["../src"]\n')
    project.write("src/shop_audits.py", laplace_module())
    code, out, _ = _run(capsys, "list", "--config", "ci/audits.toml")
    assert code == 0 and "shop.count" in out


def test_a_module_is_read_afresh_on_each_load(project, capsys, no_audit):
    project.config()
    project.write("shop_audits.py", laplace_module())
    assert _run(capsys, "list")[0] == 0
    project.write("shop_audits.py", laplace_module().replace("shop.count", "shop.count2"))
    code, out, _ = _run(capsys, "list")
    assert code == 0 and "shop.count2" in out and "shop.count " not in out


@pytest.mark.parametrize(
    "files, needles",
    [
        (
            {"pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_missing"]\n'},
            ["pyproject.toml", "no module named 'shop_missing'"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n',
                "shop_audits.py": "import dpaudit\ndpaudit.register_audit(name='shop.x', claim_epsilon=1.0, d0=0, d1=1)(42)\n",
            },
            ["shop_audits.py", "entry 'shop.x'", "target must be callable"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits", "more_audits"]\n',
                "shop_audits.py": laplace_module(),
                "more_audits.py": laplace_module(eps=2.0),
            },
            ["more_audits.py", "entry 'shop.count'", "registered twice"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n',
                "shop_audits.py": laplace_module(eps=0.0),
            },
            ["shop_audits.py", "entry 'shop.count'", "claim_epsilon must be positive"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n',
                "shop_audits.py": laplace_module(eps=-1.0),
            },
            ["shop_audits.py", "entry 'shop.count'", "claim_epsilon must be positive"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n',
                "shop_audits.py": laplace_module(samples=3),
            },
            ["shop_audits.py", "entry 'shop.count'", "samples must be an integer >= 10"],
        ),
        (
            {
                "pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n',
                "shop_audits.py": "raise RuntimeError('boom')\n",
            },
            ["shop_audits.py", "importing module 'shop_audits'", "RuntimeError: boom"],
        ),
        (
            {"pyproject.toml": '[tool.dpaudit]\nmodules = ["shop_audits"]\n', "shop_audits.py": "x = 1\n"},
            ["pyproject.toml", "register no audit"],
        ),
        ({"pyproject.toml": '[tool.dpaudit]\nmodule = ["shop_audits"]\n'}, ["pyproject.toml", "unknown key(s) module"]),
        (
            {"pyproject.toml": '[tool.dpaudit]\nmodules = "shop_audits"\n'},
            ["pyproject.toml", "modules must be a non-empty list"],
        ),
        (
            {"pyproject.toml": '[tool.dpaudit]\nmodules = ["a"]\npaths = ["nope"]\n'},
            ["pyproject.toml", "'nope' is not a folder"],
        ),
        ({"pyproject.toml": "[tool.dpaudit\n"}, ["pyproject.toml", "not valid TOML"]),
    ],
)
def test_bad_declarations_exit_2_before_any_audit(project, capsys, no_audit, files, needles):
    for name, text in files.items():
        project.write(name, text)
    for argv in (["audit", "--out", "rep"], ["list"]):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == ""
        for needle in needles:
            assert needle in err, err
    assert not (project.root / "rep" / "report.json").exists()


def test_a_user_entry_reusing_a_catalog_name_is_a_duplicate(project, capsys, no_audit):
    project.config()
    project.write("shop_audits.py", laplace_module().replace("shop.count", "dp-se.epoch-sum"))
    code, _, err = _run(capsys, "audit", "--catalog", "all", "--out", "rep")
    assert code == 2 and "shop_audits.py" in err and "entry 'dp-se.epoch-sum': is registered twice" in err


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["audit", "--config", "missing.toml"], ["--config", "missing.toml", "no such file"]),
        (["audit", "--config", "pyproject.toml"], ["--config", "no [tool.dpaudit] table"]),
        (["audit", "--catalog", "user"], ["--catalog", "[tool.dpaudit]"]),
        (["list", "--catalog", "all"], ["--catalog", "[tool.dpaudit]"]),
    ],
)
def test_config_flags_exit_2(project, capsys, no_audit, argv, needles):
    project.write("pyproject.toml", '[project]\nname = "x"\n')
    code, _, err = _run(capsys, *argv, *(["--out", "rep"] if argv[0] == "audit" else []))
    assert code == 2
    for needle in needles:
        assert needle in err, err


def test_names_select_and_unknown_names_exit_2(project, capsys, no_audit):
    project.config()
    project.write("shop_audits.py", laplace_module())
    code, _, err = _run(capsys, "audit", "dp-se.epoch-sum", "--out", "rep")
    assert code == 2 and "unknown audit entry 'dp-se.epoch-sum'" in err and "--catalog builtin" in err
    assert "shop.count" in err
    code, _, err = _run(capsys, "audit", "--all", "--catalog", "user", "--out", "rep")
    assert code == 2 and "--all" in err


def test_read_config_errors_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_config(tmp_path / "none.toml")
