"""Names of the auditor's score families, and the `families` option that restricts the candidates.

Every candidate score the auditor fits (`dpaudit.audit.scores`, `dpaudit.audit.features`,
`dpaudit.audit.classifier`, `dpaudit.audit.chain`,
`dpaudit.audit.masked`, `dpaudit.audit.grouped`) belongs to one family; a family's variants share its name as a prefix
("coordinate-3" is of the family "coordinate", "atom-pattern-log-ratio-4" of "atom-pattern-log-ratio",
"logistic-regression-pooled" of "logistic-regression").  `audit(..., families=("coordinate-log-ratio",))`
keeps only that family's candidates: for measuring one family's coverage (benchmarks/power_coverage.py)
or power alone.  Restricting the candidates changes which event is chosen on the selection split, never
the validity of the estimation split's bounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["FAMILIES", "check_families", "family_of", "keep_families"]

#: Every family the auditor can fit, in no particular order.
FAMILIES: tuple[str, ...] = (
    "identity",
    "difference-of-means",
    "fisher-discriminant",
    "coordinate",
    "gaussian-log-ratio",
    "category-log-ratio",
    "group-count-log-ratio",
    "coordinate-log-ratio",
    "whitened-coordinate-log-ratio",
    "atom-pattern-log-ratio",
    "pattern-value-log-ratio",
    "float-bit-log-ratio",
    "logistic-regression",
    "chain-log-ratio",
    "masked-value-log-ratio",
)


def family_of(name: str) -> str | None:
    """The family of a score name: the longest family F with name == F or name starting with F + '-'."""
    best = None
    for f in FAMILIES:
        if (name == f or name.startswith(f + "-")) and (best is None or len(f) > len(best)):
            best = f
    return best


def check_families(value: Any) -> tuple[str, ...] | None:
    """`families` validated: None (every family) or a non-empty tuple of known family names."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(
            f"families must be None or a sequence of family names such as ('coordinate-log-ratio',), got {value!r}"
        )
    names = tuple(value)
    if not names:
        raise ValueError("families must name at least one family (None: all of them)")
    unknown = [n for n in names if not isinstance(n, str) or n not in FAMILIES]
    if unknown:
        raise ValueError(f"families: unknown family name(s) {unknown!r}; the known families are {', '.join(FAMILIES)}")
    return tuple(dict.fromkeys(names))


def keep_families(scores: Sequence[Any], families: tuple[str, ...] | None) -> list[Any]:
    """The scores whose family is in `families` (all of them for None)."""
    if families is None:
        return list(scores)
    return [s for s in scores if family_of(s.name) in families]
