"""The front door: `import dpaudit` gives the documented names and nothing else, and moved names keep
working with a DeprecationWarning."""

import importlib
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dpaudit

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("dpaudit", "mechanisms", "algorithms", "audits")


def _documented() -> set[str]:
    section = (ROOT / "docs" / "reference" / "index.md").read_text().split("## One import", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return {name for line in table for name in re.findall(r"`(\w+)`", line.split("|")[2])}


def test_the_documented_names_are_the_front_door():
    assert _documented() == set(dpaudit.__all__) - {"__version__"}


@pytest.mark.parametrize("name", sorted(set(dpaudit.__all__) - {"__version__"}))
def test_every_front_door_name_resolves(name):
    assert getattr(dpaudit, name) is not None and name in dir(dpaudit)


def test_import_stays_cheap_and_unknown_names_fail():
    code = "import sys, dpaudit; print(sorted(m for m in ('numpy', 'scipy', 'dp_accounting') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    with pytest.raises(AttributeError, match="no attribute 'auditt'"):
        dpaudit.auditt  # noqa: B018


def test_audit_is_both_the_function_and_its_package():
    result = dpaudit.audit(
        lambda d, rng, n: d.sum() + rng.laplace(0.0, 1.0, n),
        np.array([0]),
        np.array([1]),
        claim_epsilon=1.0,
        samples=2000,
    )
    assert isinstance(result, dpaudit.AuditResult)
    bounds = importlib.import_module("dpaudit.audit.bounds")
    assert dpaudit.audit.bounds is bounds and callable(dpaudit.audit.audit)


@pytest.mark.parametrize(
    "old, new, name",
    [
        ("dpaudit.algorithms.privacy", "dpaudit.privacy", "Privacy"),
        ("dpaudit.algorithms.privacy", "dpaudit.privacy", "Guarantee"),
        ("dpaudit.algorithms.interface", "dpaudit.interface", "PrivateAlgorithm"),
    ],
)
def test_moved_names_warn_and_still_work(old, new, name):
    with pytest.warns(DeprecationWarning, match=f"moved to {new}.{name}"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name) is getattr(dpaudit, name)


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = (("dpaudit",) if package != "dpaudit" else ()) + path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


@pytest.mark.parametrize("module, path", list(_modules()), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_every_module_declares_its_public_names(module, path):
    assert re.search(r"^__all__\b", path.read_text(), re.M), f"{path} has no __all__"
    if module in ("dpaudit.__main__",):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mod = importlib.import_module(module)
        missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{module}.__all__ names what it does not define: {missing}"
