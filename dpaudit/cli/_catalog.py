"""Which audit entries a command sees: the user's own (a `[tool.dpaudit]` config), the built-in catalog, or both;
or a catalog of its own (`--catalog libraries`: the DP libraries' primitives).

Shared by `dpaudit audit` and `dpaudit list`. Without `--catalog` the user's entries are used when
a config is found (./pyproject.toml with the table, or `--config FILE`), else the built-in catalog.
The built-in catalog is loaded before the user's modules, so a user entry reusing a catalog name
is reported as a duplicate.  A catalog of `EXTRA_CATALOGS` is the module that registers its entries when
imported (an entry point of the `dpaudit.catalogs` group, as plugins are) and lists their names in `NAMES` and what it
skipped, with the reason, in `SKIPPED` (`catalog_skips`); its entries never join the built-in listing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from dpaudit.cli._types import FlagError
from dpaudit.registry import catalog_modules

__all__ = ["CATALOGS", "EXTRA_CATALOGS", "add_catalog_arguments", "builtin_names", "catalog_skips", "load_entries"]

#: catalog name -> the module that registers its entries (`NAMES`) and says what it skipped (`SKIPPED`):
#: the `dpaudit.catalogs` entry points, so core names no audit module
EXTRA_CATALOGS = catalog_modules()

CATALOGS = ("builtin", "user", "all", *EXTRA_CATALOGS)


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a TOML file with a [tool.dpaudit] table (default: ./pyproject.toml if it has one)",
    )
    parser.add_argument(
        "--catalog",
        choices=CATALOGS,
        default=None,
        help="whose entries: builtin, user (yours, from the config), all, or libraries (the DP "
        "libraries' primitives: OpenDP, diffprivlib) (default: user with a config, else builtin)",
    )


def load_entries(args: argparse.Namespace, *, whole_catalog: bool = False) -> tuple[str, Any, list[str], list[str]]:
    """(catalog, config or None, built-in entry names, user entry names), the user's modules imported.

    The catalog is `--catalog`, else the config's (`[tool.dpaudit] catalog`, "user" with modules;
    "all" with `whole_catalog`, audit's --all), else, outside any project, the built-in one. Inside a
    project whose pyproject.toml declares no audits nothing is guessed: ConfigError. Raises
    FlagError / ConfigError (exit 2) before any audit runs.  For a catalog of `EXTRA_CATALOGS` the
    "built-in" names are that catalog's (its module imported) and there are no user entries.
    """
    from dpaudit.registry import load_plugins
    from dpaudit.user_config import ConfigError, find_config, find_project_file, load_user_audits

    try:
        config = find_config(args.config)
    except ConfigError as exc:
        raise (FlagError("--config", str(exc)) if args.config is not None else exc) from None
    catalog = args.catalog
    if catalog in EXTRA_CATALOGS:
        load_plugins()
        return catalog, config, list(importlib.import_module(EXTRA_CATALOGS[catalog]).NAMES), []
    if config is None and catalog != "builtin":
        project = find_project_file()
        if project is not None:
            raise ConfigError(
                f"{project}: this project declares no audits (its pyproject.toml has no [tool.dpaudit] table). "
                'Declare yours there: [tool.dpaudit] modules = ["your_audits"], or audit dpaudit\'s built-in '
                'catalog: --catalog builtin (or catalog = "builtin" in that table)'
            )
    if catalog is None:
        catalog = "builtin" if config is None else config.catalog
        if whole_catalog and catalog == "user":
            catalog = "all"
    if whole_catalog and catalog == "user":
        raise FlagError("--all", "runs the whole built-in catalog; use it with --catalog builtin or all")
    if catalog != "builtin" and (config is None or not config.modules):
        where = f"{config.file} declares no modules" if config is not None else "no config was found"
        raise FlagError(
            "--catalog",
            f"{catalog} needs your audits declared in a [tool.dpaudit] table (modules = "
            f"[...]) of the project's pyproject.toml or of the file given with --config; {where}",
        )
    builtin = builtin_names() if catalog != "user" else []
    user = load_user_audits(config) if catalog != "builtin" and config is not None else []
    return catalog, config, builtin, user


def builtin_names() -> list[str]:
    """The built-in catalog's entry names (plugins loaded): every registered audit but the user's and those of the
    catalogs of their own (`EXTRA_CATALOGS`, when imported)."""
    from dpaudit.registry import AUDITS, load_plugins
    from dpaudit.user_audits import UserAuditEntry

    load_plugins()
    extra = {n for module in EXTRA_CATALOGS.values() if module in sys.modules for n in sys.modules[module].NAMES}
    return [n for n in AUDITS.names() if not isinstance(AUDITS.get(n), UserAuditEntry) and n not in extra]


def catalog_skips(catalog: str) -> list[str]:
    """What a catalog of `EXTRA_CATALOGS` did not audit and why (its `SKIPPED`; empty for the other catalogs)."""
    module = EXTRA_CATALOGS.get(catalog)
    return list(importlib.import_module(module).SKIPPED) if module is not None else []
