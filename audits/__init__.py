"""dpaudit.audits: the catalog pairing each algorithm with accountants, neighbours and an auditor.

Importing this package registers every catalog entry in `dpaudit.registry.AUDITS`
(the entry model is core's `dpaudit.entries`, shared with the user's entries, and `dpaudit.entry_runner`
runs an entry; `build` has shared building blocks; each algorithm family's entries are in
`<family>.entries`, mirroring `dpaudit.algorithms`: `mab`, `linear`, `glm`, `conse`). A module that fails to import registers one entry `<module>.import-error`
instead, whose audit fails with that error: the rest of the catalog still runs, and the gate fails.
Not to be confused with `dpaudit.audit` (singular, core): the auditor these entries call.
"""

import importlib

from dpaudit.entries import AuditEntry, Claim, NeighbourPair
from dpaudit.registry import AUDITS

__all__ = ["CATALOG_MODULES", "AuditEntry", "Claim", "NeighbourPair", "load"]

CATALOG_MODULES = (
    "mab.entries",
    "conse.entries",
    "linear.entries",
    "glm.entries",
    "mab.one_run_entries",
    "linear.one_run_entries",
)


def _failing_target(module: str, error: str):
    def build():
        raise ImportError(f"dpaudit.audits.{module} failed to import: {error}")

    return build


def load(modules=CATALOG_MODULES) -> list[str]:
    """Import the catalog modules (registering their entries); return the names of those that failed."""
    failed = []
    for module in modules:
        try:
            importlib.import_module(f"dpaudit.audits.{module}")
        except Exception as exc:  # noqa: BLE001  (a failing entry: one broken module cannot hide the others)
            error = f"{type(exc).__name__}: {exc}"
            name = f"{module}.import-error"
            if name not in AUDITS:
                AUDITS.register(
                    name,
                    AuditEntry(
                        name=name,
                        algorithm="import-error",
                        description=f"The catalog module dpaudit.audits.{module} failed to import.",
                        target=_failing_target(module, error),
                        pairs=(NeighbourPair("one-user", None, None, "none: the module did not load"),),
                        observable="white-box",
                        observable_description="none",
                        claims=(Claim("none", epsilon=1.0),),
                        quick=True,
                        source=error,
                    ),
                )
            failed.append(module)
    return failed


load()
