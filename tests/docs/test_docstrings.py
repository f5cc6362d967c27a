"""Every public definition of dpaudit has a docstring: the API reference (mkdocstrings) shows none empty.

Public: every module of dpaudit, dpaudit.mechanisms, dpaudit.algorithms and dpaudit.audits with no `_` in its
path; in each, the classes and functions it defines (its `__all__`, else its names without `_`), and every
public method, property, staticmethod and classmethod a public class defines itself. A docstring counts as
`inspect.getdoc` finds it, so an override inherits the docstring of the base (or Protocol) method it overrides.

The packages are walked through their `__path__`, never the checkout's folders, so under `python -P -m pytest`
the installed package is checked. Nothing here is statistical.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
import warnings
from collections.abc import Iterator

PACKAGES = ("dpaudit", "dpaudit.mechanisms", "dpaudit.algorithms", "dpaudit.audits")


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def public_modules() -> list[types.ModuleType]:
    """The public modules of `PACKAGES` (the packages themselves included), sorted by name."""
    names = set()
    for package in PACKAGES:
        names.add(package)
        path = importlib.import_module(package).__path__
        names.update(info.name for info in pkgutil.walk_packages(path, package + "."))
    return [importlib.import_module(name) for name in sorted(names) if _public(name)]


def definitions(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    """(qualified name, object) of every public definition of `module`: its classes and functions, and the
    methods and properties its public classes define themselves (the object is what `inspect.getdoc` reads)."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        value = getattr(module, name, None)
        if not (inspect.isclass(value) or inspect.isfunction(value)) or value.__module__ != module.__name__:
            continue  # a constant, or a name imported from elsewhere (documented where it is defined)
        yield f"{module.__name__}.{name}", value
        if inspect.isclass(value):
            for attr, member in vars(value).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member) or isinstance(member, property):
                    yield f"{module.__name__}.{name}.{attr}", getattr(value, attr)


def undocumented(module: types.ModuleType) -> list[str]:
    """Qualified names of the public definitions of `module` without a docstring (inherited ones count)."""
    return [name for name, value in definitions(module) if not inspect.getdoc(value)]


def test_every_public_definition_has_a_docstring():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # names that moved warn when read from their old home
        modules = public_modules()
        walked = [name for module in modules for name, _ in definitions(module)]
        missing = [name for module in modules for name in undocumented(module)]
    # the walk reaches every package (a walk that found nothing would pass vacuously)
    assert {m.__name__ for m in modules} >= {
        "dpaudit.accounting.guarantees",
        "dpaudit.mechanisms.mechanism",
        "dpaudit.algorithms.linear.linucb",
        "dpaudit.audits.libraries.entry",
    }
    assert len(walked) > 500, f"only {len(walked)} public definitions found"
    assert not missing, f"{len(missing)} of {len(walked)} public definitions have no docstring:\n" + "\n".join(missing)


SYNTHETIC = '''
def documented():
    """Documented."""


def bare():
    pass


class Base:
    """Documented class."""

    def shared(self):
        """Documented once, on the base."""


class Override(Base):
    """Documented class."""

    def shared(self):  # inherits Base.shared's docstring
        pass


class Bare:
    def method(self):
        pass

    @property
    def size(self):
        return 0

    @staticmethod
    def helper():
        pass

    @classmethod
    def build(cls):
        """Documented."""

    def _private(self):
        pass


def _private():
    pass
'''


def test_the_check_reports_exactly_the_undocumented_definitions(monkeypatch):  # the twin: the check can fail
    module = types.ModuleType("synthetic_docstrings")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # where inspect.getdoc finds an override's class
    exec(compile(SYNTHETIC, "<synthetic>", "exec"), module.__dict__)
    assert undocumented(module) == [
        "synthetic_docstrings.bare",
        "synthetic_docstrings.Bare",
        "synthetic_docstrings.Bare.method",
        "synthetic_docstrings.Bare.size",
        "synthetic_docstrings.Bare.helper",
    ]
    module.__all__ = ["Override", "bare"]  # an `__all__` decides what is public
    assert undocumented(module) == ["synthetic_docstrings.bare"]
