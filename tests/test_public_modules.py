"""The public modules are the ones docs/reference/index.md lists; the README, the docs and the example project
import only from them, and each public module's `__all__` names what it defines."""

from __future__ import annotations

import importlib
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^\s*(?:from\s+(dpaudit(?:\.\w+)*)\s+import|import\s+(dpaudit(?:\.\w+)*))", re.M)


def public_modules() -> set[str]:
    """The modules of the reference's "Public and internal modules" table (`.linear` after a full path is that
    path's sibling)."""
    section = (ROOT / "docs" / "reference" / "index.md").read_text().split("## Public and internal modules", 1)[1]
    rows = [line for line in section.split("\n## ", 1)[0].splitlines() if line.startswith("| `")]
    modules: set[str] = set()
    for line in rows:
        last = ""
        for name in re.findall(r"`([\w.]+)`", line.split("|")[1]):
            last = last.rsplit(".", 1)[0] + name if name.startswith(".") else name
            modules.add(last)
    return modules


def imported_modules(text: str) -> set[str]:
    """The dpaudit modules a text imports from (`from M import ...` and `import M`)."""
    return {a or b for a, b in IMPORT.findall(text)}


def _user_facing() -> list[pathlib.Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".py", ".md", ".toml")),
    ]


def test_the_table_lists_the_expected_modules():
    assert {"dpaudit", "dpaudit.audit", "dpaudit.accounting", "dpaudit.algorithms.conse"} <= public_modules()
    assert "dpaudit.audit.bounds" not in public_modules()


@pytest.mark.parametrize("module", sorted(public_modules()))
def test_every_public_module_exports_what_it_defines(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mod = importlib.import_module(module)
    assert mod.__all__, f"{module} exports nothing"
    assert all(hasattr(mod, name) for name in mod.__all__)


@pytest.mark.parametrize("path", _user_facing(), ids=lambda p: str(p.relative_to(ROOT)))
def test_user_facing_text_imports_only_public_modules(path):
    internal = imported_modules(path.read_text()) - public_modules()
    assert not internal, f"{path.relative_to(ROOT)} imports internal modules: {sorted(internal)}"


def test_the_import_check_can_fail():
    text = "from dpaudit.audit.bounds import cp_lower\nimport dpaudit.accounting.leaves\nfrom dpaudit import audit\n"
    assert imported_modules(text) - public_modules() == {"dpaudit.audit.bounds", "dpaudit.accounting.leaves"}
