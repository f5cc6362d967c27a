"""The front door's docstrings: their examples run as written, and every public name documents what a
practitioner needs (numpydoc sections for functions; a formula's source or an example for classes).

The modules are imported by name, so under `python -P -m pytest` the examples run against the installed
package. The examples are exact (rounded or formatted floats, seeded randomness): nothing here is statistical.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import types

import pytest

import dpaudit

MODULES = (
    "dpaudit.accounting",
    "dpaudit.accounting.accountants",
    "dpaudit.accounting.calibration",
    "dpaudit.accounting.errors",
    "dpaudit.accounting.events",
    "dpaudit.accounting.guarantees",
    "dpaudit.accounting.privacy_accountant",
    "dpaudit.audit",
    "dpaudit.audit.auditor",
    "dpaudit.audit.one_run",
    "dpaudit.audit.result",
    "dpaudit.budgets",
    "dpaudit.interface",
    "dpaudit.privacy",
    "dpaudit.user_audits",
)
"""The modules that hold the front door's names (`dpaudit._FRONT_DOOR`) and define its objects."""

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _public(name: str) -> object:
    """The object documented under `name`: `dpaudit.audit` (a callable package) stands for its `audit`."""
    value = getattr(dpaudit, name)
    return getattr(value, name) if isinstance(value, types.ModuleType) else value


def _section(doc: str, title: str) -> bool:
    return re.search(rf"^{title}\n-{{{len(title)}}}\s*$", doc, re.M) is not None


def _front_door(kind: str) -> list[str]:
    """The front door's functions ("function") or classes ("class"), by name."""
    names = sorted(n for n in dpaudit._FRONT_DOOR if callable(getattr(dpaudit, n)))
    return [n for n in names if inspect.isclass(_public(n)) == (kind == "class")]


def test_the_doctested_modules_cover_the_front_door():
    defining = {inspect.getmodule(_public(n)).__name__ for n in _front_door("function") + _front_door("class")}
    assert defining | set(dpaudit._FRONT_DOOR.values()) <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run_as_written(module):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(importlib.import_module(module)):
        runner.run(test, out=report.append)
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples of {module} failed:\n" + "".join(report)


@pytest.mark.parametrize("name", _front_door("function"))
def test_every_function_documents_parameters_returns_and_an_example(name):
    doc = inspect.getdoc(_public(name)) or ""
    missing = [s for s in ("Parameters", "Returns", "Raises", "Examples") if not _section(doc, s)]
    assert not missing, f"dpaudit.{name}'s docstring has no {', '.join(missing)} section"
    assert ">>> " in doc, f"dpaudit.{name}'s Examples section has no doctest"


@pytest.mark.parametrize("name", _front_door("class"))
def test_every_class_cites_its_source_or_shows_an_example(name):
    doc = inspect.getdoc(_public(name)) or ""
    cited = re.search(r"\b(19|20)\d\d\b", doc)  # a source: authors, title, venue and year
    assert cited or ">>> " in doc, f"dpaudit.{name}'s docstring neither cites a source nor shows an example"


def test_the_checks_catch_a_missing_section_and_a_failing_example():  # the twin: the checks above can fail
    doc = "Summary.\n\nParameters\n----------\nx : int\n    A value.\n\nReturn\n------\nint\n"
    assert _section(doc, "Parameters") and not _section(doc, "Returns")
    broken = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n", {}, "broken", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(broken, out=lambda _: None)
    assert runner.failures == 1
