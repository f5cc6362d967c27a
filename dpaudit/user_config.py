"""The `[tool.dpaudit]` table of a user's pyproject.toml: which modules declare audits, and loading them.

    [tool.dpaudit]
    modules = ["shop_audits"]   # imported in order; each registers entries with dpaudit.register_audit
    paths = ["."]               # optional: folders put on sys.path, relative to the file (default ".")
    catalog = "user"            # optional: "user" (default with modules), "builtin" or "all"
    float_check = "report"      # optional: every entry's floating-point check ("report", "gate", "off")
    time_budget = 60            # optional: seconds per audit, drawing runs until spent (dpaudit.audit.anytime)

The project is found as pytest finds its rootdir: the nearest pyproject.toml from the current
folder upward (`find_project_file`). A project whose file has no `[tool.dpaudit]` table declares no
audits: `dpaudit audit` refuses it (exit 2) rather than auditing something else; `catalog =
"builtin"` declares a project that audits the built-in catalog (dpaudit's own checkout does).

Loading imports every module afresh (entries it registered before are forgotten first), so a
module edited between two runs in one process is read again. Every problem (a missing table or
module, a module that raises on import, a bad `register_audit` call, a duplicate name) raises
`ConfigError` naming the file and the module or entry, before any audit runs.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import math
import pathlib
import sys
import tomllib
from typing import Any

from dpaudit._interrupt import is_interrupt

__all__ = [
    "CATALOGS",
    "CONFIG_FILE",
    "ConfigError",
    "UserConfig",
    "catalog_text",
    "default_option",
    "find_config",
    "find_project_file",
    "load_user_audits",
    "read_config",
]

CONFIG_FILE = "pyproject.toml"
CATALOGS = ("builtin", "user", "all")
_KEYS = ("modules", "paths", "catalog", "float_check", "time_budget")
_registered: dict[str, list[str]] = {}  # module name -> entry names its last import registered


class ConfigError(ValueError):
    """A problem with the user's audit declarations; the message names the file and the module or entry."""


@dataclasses.dataclass(frozen=True)
class UserConfig:
    """A parsed `[tool.dpaudit]` table: `file` it came from, `modules` to import, `paths` (absolute),
    the `catalog` it declares (builtin, user or all), `float_check` ("report", "gate" or "off"; None:
    the audit's default) and `time_budget` (seconds per audit, or None), given to every entry of the
    modules that does not set its own."""

    file: pathlib.Path
    modules: tuple[str, ...]
    paths: tuple[pathlib.Path, ...]
    catalog: str = "user"
    float_check: str | None = None
    time_budget: float | None = None


def _string_list(table: dict[str, Any], key: str, file: pathlib.Path) -> list[str]:
    value = table[key]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{file}: [tool.dpaudit] {key} must be a non-empty list of strings, got {value!r}")
    return value


def _load_toml(file: pathlib.Path) -> dict[str, Any]:
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc})") from None
    except OSError as exc:  # unreadable, a folder, a name too long
        raise ConfigError(f"{file}: cannot be read ({exc.strerror or exc})") from None


def _table(doc: dict[str, Any], file: pathlib.Path) -> dict[str, Any] | None:
    """The `[tool.dpaudit]` table of a parsed file, None when absent; an error when not a table."""
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{file}: `tool` must be a table ([tool.dpaudit]), got {tool!r}")
    table = tool.get("dpaudit")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{file}: `tool.dpaudit` must be a table ([tool.dpaudit]), got {table!r}")
    return table


def read_config(path: str | pathlib.Path) -> UserConfig:
    """Parse the `[tool.dpaudit]` table of the TOML file `path`."""
    file = pathlib.Path(path).absolute()
    try:
        is_file = file.is_file()
    except OSError as exc:  # e.g. a name longer than the system allows
        raise ConfigError(f"{str(file)[:200]}: cannot be read ({exc.strerror or exc})") from None
    if not is_file:
        raise ConfigError(f"{file}: no such file")
    table = _table(_load_toml(file), file)
    if table is None:
        raise ConfigError(f"{file}: no [tool.dpaudit] table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{file}: [tool.dpaudit] has unknown key(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}")
    catalog = table.get("catalog", "user")
    if catalog not in CATALOGS:
        raise ConfigError(f"{file}: [tool.dpaudit] catalog must be one of {', '.join(CATALOGS)}, got {catalog!r}")
    if "modules" not in table and catalog != "builtin":
        raise ConfigError(
            f'{file}: [tool.dpaudit] needs modules = ["your_audits", ...] '
            '(or catalog = "builtin" to audit dpaudit\'s built-in catalog)'
        )
    if "modules" in table and catalog == "builtin":
        raise ConfigError(
            f'{file}: [tool.dpaudit] catalog = "builtin" imports no modules; '
            'use catalog = "all" to run your modules beside the built-in catalog'
        )
    from dpaudit.audit.options import FLOAT_CHECKS

    float_check = table.get("float_check")
    if float_check is not None and float_check not in FLOAT_CHECKS:
        raise ConfigError(
            f"{file}: [tool.dpaudit] float_check must be one of {', '.join(FLOAT_CHECKS)}, got {float_check!r}"
        )
    time_budget = table.get("time_budget")
    if time_budget is not None and (
        isinstance(time_budget, bool) or not isinstance(time_budget, (int, float)) or not 0 < time_budget < math.inf
    ):
        raise ConfigError(
            f"{file}: [tool.dpaudit] time_budget must be a positive number of seconds, got {time_budget!r}"
        )
    modules = _string_list(table, "modules", file) if "modules" in table else []
    paths = _string_list(table, "paths", file) if "paths" in table else ["."]
    folders = []
    for p in paths:
        folder = (file.parent / p).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{file}: [tool.dpaudit] paths entry {p!r} is not a folder ({folder})")
        folders.append(folder)
    return UserConfig(
        file=file,
        modules=tuple(dict.fromkeys(modules)),
        paths=tuple(folders),
        catalog=catalog,
        float_check=float_check,
        time_budget=None if time_budget is None else float(time_budget),
    )


def find_project_file(start: str | pathlib.Path | None = None) -> pathlib.Path | None:
    """The nearest pyproject.toml from `start` (default: the current folder) upward, as pytest finds
    its rootdir; None outside any project."""
    folder = pathlib.Path.cwd() if start is None else pathlib.Path(start).absolute()
    for candidate in (folder, *folder.parents):
        file = candidate / CONFIG_FILE
        if file.is_file():
            return file
    return None


def find_config(path: str | pathlib.Path | None = None) -> UserConfig | None:
    """The config of `path` (an error if it has no `[tool.dpaudit]` table), or else of the project's
    pyproject.toml (`find_project_file`) when it has the table (an error if it is not valid TOML);
    None when neither applies."""
    if path is not None:
        return read_config(path)
    file = find_project_file()
    if file is None:
        return None
    # an unreadable file might declare audits: running the built-in catalog instead would pass CI silently
    if _table(_load_toml(file), file) is None:
        return None
    return read_config(file)


def _origin(module: str) -> str:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return module
    return spec.origin if spec is not None and spec.origin else module


def load_user_audits(config: UserConfig) -> list[str]:
    """Import the config's modules afresh; return the names of the entries they registered (by module,
    then by name)."""
    from dpaudit.registry import AUDITS

    for folder in reversed(config.paths):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    names: list[str] = []
    for module in config.modules:
        for name in _registered.pop(module, []):
            AUDITS.remove(name)
        sys.modules.pop(module, None)
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError) as exc:
            raise ConfigError(f"{config.file}: [tool.dpaudit] modules: cannot find module {module!r} ({exc})") from None
        if spec is None:
            searched = ", ".join(str(p) for p in config.paths)
            raise ConfigError(
                f"{config.file}: [tool.dpaudit] modules: no module named {module!r} "
                f"(searched {searched} and the installed packages)"
            )
        before = set(AUDITS.names())
        try:
            importlib.import_module(module)
        except BaseException as exc:  # sys.exit() at import too: a broken declaration, never a silent pass
            for name in set(AUDITS.names()) - before:  # a half-imported module leaves no entries behind
                AUDITS.remove(name)
            sys.modules.pop(module, None)
            if is_interrupt(exc):
                raise
            if isinstance(exc, ValueError):  # a bad register_audit call (it names the entry) or the module's own check
                raise ConfigError(f"{_origin(module)}: {exc}") from None
            raise ConfigError(
                f"{_origin(module)}: importing module {module!r} (listed in {config.file}) "
                f"raised {type(exc).__name__}: {exc}"
            ) from None
        mine = sorted(set(AUDITS.names()) - before)
        for key in ("float_check", "time_budget"):
            if getattr(config, key) is not None:
                for name in mine:
                    default_option(name, key, getattr(config, key))
        _registered[module] = mine
        names += mine
    if not names:
        raise ConfigError(
            f"{config.file}: the modules {', '.join(config.modules)} register no audit "
            "(decorate a target with @dpaudit.register_audit(...))"
        )
    return names


def default_option(name: str, key: str, value: Any, *, override: bool = False) -> None:
    """Give the user entry `name` the audit option `key` = `value` (the config's `float_check` or
    `time_budget`, or a command-line flag with `override`) unless its `register_audit` call set one."""
    from dpaudit.registry import AUDITS

    entry = AUDITS.get(name)
    options = getattr(entry, "audit_options", None)
    if options is None or (key in options and not override):
        return
    AUDITS.remove(name)
    AUDITS.register(name, dataclasses.replace(entry, audit_options={**options, key: value}))


def catalog_text(catalog: str, config: Any, quick: bool) -> str:
    """Which catalog a run audits, in words (the console and report say it)."""
    builtin = "built-in catalog" + ("'s quick suite" if quick else "")
    source = f" declared in {getattr(config, 'file', config)}" if config is not None else ""
    return {
        "builtin": builtin + (source if source else " (no project declares audits here)"),
        "user": f"user catalog{source}",
        "all": f"user catalog{source} and the {builtin}",
        "libraries": "libraries catalog (the DP libraries' primitives)",
    }[catalog]
