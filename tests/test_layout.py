"""The package list in pyproject.toml matches the folders, and the sub-packages import."""

import importlib
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    mapping = cfg["package-dir"]
    found = set()
    for top, pkg in [("dpaudit", "dpaudit"), ("mechanisms", "dpaudit.mechanisms"), ("algorithms", "dpaudit.algorithms"), ("audits", "dpaudit.audits")]:
        assert mapping[pkg] == top
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((pkg, *rel)))
    assert found == listed


def test_subpackages_import():
    for name in ("dpaudit.mechanisms", "dpaudit.algorithms", "dpaudit.audits", "dpaudit.accounting"):
        importlib.import_module(name)
