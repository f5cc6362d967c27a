"""Registries the plugins fill: algorithms (for `dpaudit regret`) and audit entries.

Core never imports `dpaudit.algorithms` or `dpaudit.audits`; `load_plugins()` imports the
modules declared under the `dpaudit.plugins` entry-point group (see pyproject.toml), and
importing them registers their entries here. Third-party packages can register the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any, Generic, TypeVar

__all__ = ["ALGORITHMS", "AUDITS", "AlgorithmEntry", "Param", "Registry", "load_plugins"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Param:
    """One command-line parameter of an algorithm: `--name VALUE`."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None


@dataclasses.dataclass(frozen=True)
class AlgorithmEntry:
    """An algorithm that `dpaudit regret NAME` can simulate.

    `simulate(horizon=T, runs=R, seed=S, **params)` returns a `dpaudit.regret.RegretCurves`.
    `params` names the keyword parameters it accepts beyond horizon, runs and seed.
    `privacy(horizon=T, **params)`, when given, returns the declared `Privacy` of a run without
    simulating it (`dpaudit budget`); `tuned` names the parameter `dpaudit calibrate` searches
    (an epsilon input: the guarantee weakens as it grows).
    """

    name: str
    summary: str
    simulate: Callable[..., Any]
    params: tuple[Param, ...] = ()
    privacy: Callable[..., Any] | None = None
    tuned: str | None = None


class Registry(Generic[T]):
    """A name -> entry mapping that refuses duplicates and names what it knows on a miss."""

    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        """Register `entry` under `name` and return it; ValueError if another entry has that name."""
        if name in self._entries and self._entries[name] is not entry:
            raise ValueError(f"{self._kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Forget `name` (no error if it is unknown); used when a user's audit module is imported afresh."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The entry registered under `name`; ValueError naming the known ones if there is none."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise ValueError(f"unknown {self._kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)


ALGORITHMS: Registry[AlgorithmEntry] = Registry("algorithm")
AUDITS: Registry[Any] = Registry("audit entry")

_loaded = False


def catalog_modules() -> dict[str, str]:
    """The catalogs of their own (`dpaudit audit --catalog NAME`): NAME -> the module that registers their
    entries, from the `dpaudit.catalogs` entry-point group (pyproject.toml)."""
    return {ep.name: ep.value for ep in metadata.entry_points(group="dpaudit.catalogs")}


def load_plugins() -> None:
    """Import every module of the `dpaudit.plugins` entry-point group once."""
    global _loaded
    if _loaded:
        return
    for ep in metadata.entry_points(group="dpaudit.plugins"):
        ep.load()
    _loaded = True
