"""A user's project in a temporary folder: pyproject.toml with [tool.dpaudit] and audit modules.

The user entries a test registers, sys.path, the project's modules and the loader's memory are
removed after each test, so they do not leak into others (the built-in catalog, once loaded, stays).
"""

import sys
import textwrap

import pytest
from ci_modules import laplace_module as _laplace_module

import dpaudit.registry
import dpaudit.user_config
from dpaudit.user_audits import UserAuditEntry


class Project:
    def __init__(self, root):
        self.root = root

    def write(self, name: str, text: str):
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def config(self, modules=("shop_audits",), extra: str = ""):
        listed = ", ".join(f'"{m}"' for m in modules)
        return self.write(
            "pyproject.toml", f'[project]\nname = "shop"\n\n[tool.dpaudit]\nmodules = [{listed}]\n{extra}'
        )


@pytest.fixture
def laplace_module():
    return _laplace_module


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    before = set(dpaudit.registry.AUDITS.names())
    monkeypatch.setattr(dpaudit.user_config, "_registered", {})
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield Project(root)
    for name in set(dpaudit.registry.AUDITS.names()) - before:  # the user's entries; the catalog, once loaded, stays
        if isinstance(dpaudit.registry.AUDITS.get(name), UserAuditEntry):
            dpaudit.registry.AUDITS.remove(name)
    for name, module in list(sys.modules.items()):  # the project's own modules only
        if str(getattr(module, "__file__", None) or "").startswith(str(root)):
            sys.modules.pop(name, None)
