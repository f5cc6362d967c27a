"""Which audit entries a command sees: the user's own (a `[tool.dpaudit]` config), the built-in catalog, or both.

Shared by `dpaudit audit` and `dpaudit list`. Without `--catalog` the user's entries are used when
a config is found (./pyproject.toml with the table, or `--config FILE`), else the built-in catalog.
The built-in catalog is loaded before the user's modules, so a user entry reusing a catalog name
is reported as a duplicate.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.cli._types import FlagError

__all__ = ["CATALOGS", "add_catalog_arguments", "load_entries"]

CATALOGS = ("builtin", "user", "all")


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="a TOML file with a [tool.dpaudit] table (default: ./pyproject.toml if it has one)")
    parser.add_argument("--catalog", choices=CATALOGS, default=None,
                        help="whose entries: builtin, user (yours, from the config) or all "
                             "(default: user with a config, else builtin)")


def load_entries(args: argparse.Namespace, *, whole_catalog: bool = False) -> tuple[str, Any, list[str], list[str]]:
    """(catalog, config or None, built-in entry names, user entry names), the user's modules imported.

    The catalog is `--catalog`, else the config's (`[tool.dpaudit] catalog`, "user" with modules;
    "all" with `whole_catalog`, audit's --all), else, outside any project, the built-in one. Inside a
    project whose pyproject.toml declares no audits nothing is guessed: ConfigError. Raises
    FlagError / ConfigError (exit 2) before any audit runs.
    """
    from dpaudit.registry import AUDITS, load_plugins
    from dpaudit.user_audits import UserAuditEntry
    from dpaudit.user_config import ConfigError, find_config, find_project_file, load_user_audits

    try:
        config = find_config(args.config)
    except ConfigError as exc:
        raise (FlagError("--config", str(exc)) if args.config is not None else exc) from None
    catalog = args.catalog
    if config is None and catalog != "builtin":
        project = find_project_file()
        if project is not None:
            raise ConfigError(
                f"{project}: this project declares no audits (its pyproject.toml has no [tool.dpaudit] table). "
                "Declare yours there: [tool.dpaudit] modules = [\"your_audits\"], or audit dpaudit's built-in "
                "catalog: --catalog builtin (or catalog = \"builtin\" in that table)")
    if catalog is None:
        catalog = "builtin" if config is None else config.catalog
        if whole_catalog and catalog == "user":
            catalog = "all"
    if whole_catalog and catalog == "user":
        raise FlagError("--all", "runs the whole built-in catalog; use it with --catalog builtin or all")
    if catalog != "builtin" and (config is None or not config.modules):
        where = f"{config.file} declares no modules" if config is not None else "no config was found"
        raise FlagError("--catalog", f"{catalog} needs your audits declared in a [tool.dpaudit] table (modules = "
                                     f"[...]) of the project's pyproject.toml or of the file given with --config; {where}")
    builtin: list[str] = []
    if catalog != "user":
        load_plugins()
        builtin = [n for n in AUDITS.names() if not isinstance(AUDITS.get(n), UserAuditEntry)]
    user = load_user_audits(config) if catalog != "builtin" and config is not None else []
    return catalog, config, builtin, user
