"""dpaudit.audits.libraries: the libraries catalog, `dpaudit audit --catalog libraries` (and `dpaudit list`).

For each installed DP library it audits the primitives a bandit is built from (Laplace, Gaussian,
geometric / discrete Laplace, the exponential mechanism and report noisy max, snapping: whichever the library
has), each at its worst-case neighbouring pair against the claim the library states, with both verdicts of
`dpaudit.audit.audit(..., float_check="report")`: the algorithmic one and the floating-point one
(`entry.LibraryEntry`).  The entries are OpenDP's (`opendp_entries`), diffprivlib's
(`diffprivlib_entries`), PipelineDP's (`pipelinedp_entries`) and python-dp's (`pydp_entries`), built with
`dpaudit.adapters`; the bandits that take their noise from a library (`bandits`, when present) join them.

Importing this package registers the entries of every installed library in `dpaudit.registry.AUDITS` and
lists their names in `NAMES`; a library that is not installed (or fails to import) is skipped, and `SKIPPED`
says which and why.  The package is not part of the built-in catalog (`dpaudit.audits.CATALOG_MODULES`), so
`dpaudit audit` imports it only for `--catalog libraries`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from dpaudit.adapters.target import distribution_version, require
from dpaudit.audits import load as load_modules
from dpaudit.audits.libraries import diffprivlib_entries, opendp_entries, pipelinedp_entries, pydp_entries
from dpaudit.audits.libraries.entry import LibraryEntry
from dpaudit.registry import AUDITS

__all__ = ["LIBRARIES", "NAMES", "SKIPPED", "LibraryEntry"]

#: library (its distribution and extra name) -> (the module its adapters import, its entries for a version)
LIBRARIES: dict[str, tuple[str, Callable[[str], list[LibraryEntry]]]] = {
    opendp_entries.LIBRARY: ("opendp.prelude", opendp_entries.entries),
    diffprivlib_entries.LIBRARY: ("diffprivlib.mechanisms", diffprivlib_entries.entries),
    pipelinedp_entries.LIBRARY: ("pipeline_dp.dp_computations", pipelinedp_entries.entries),
    pydp_entries.LIBRARY: ("pydp.algorithms.numerical_mechanisms", pydp_entries.entries),
}

#: a library whose distribution is not named as its extra
DISTRIBUTIONS = {pipelinedp_entries.LIBRARY: "pipeline-dp", pydp_entries.LIBRARY: "python-dp"}

BANDITS = "libraries.bandits"

NAMES: list[str] = []
"""The names of this catalog's entries, in the order they run."""

SKIPPED: list[str] = []
"""One note per library that is not audited: its name, and why (not installed, or failing to import)."""


def _register() -> None:
    for library, (module, entries) in LIBRARIES.items():
        try:
            require(module, library)
        except ImportError as exc:
            SKIPPED.append(f"{library} ({exc})")
            continue
        for entry in entries(distribution_version(DISTRIBUTIONS.get(library, library))):
            NAMES.append(AUDITS.register(entry.name, entry).name)
    if importlib.util.find_spec(f"dpaudit.audits.{BANDITS}") is not None:
        before = set(AUDITS.names())
        load_modules((BANDITS,))  # a failing import registers its import-error entry, which fails the gate
        NAMES.extend(sorted(set(AUDITS.names()) - before, key=lambda n: (AUDITS.get(n).algorithm, n)))


_register()
