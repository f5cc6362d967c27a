"""The `dpaudit` command: one entry point, one module per subcommand.

Each module in this package defines `NAME`, `HELP`, `add_arguments(parser)` and
`run(args) -> int`, and imports nothing heavy at module level. A subcommand's arguments are
added only when that subcommand is parsed (or its help printed), so `dpaudit --help` loads no
accountant, catalog or plugin. Exit status: 0 success, 1 a finding (violation, failed gate),
2 usage error (argparse's, or a `ValueError` raised by a command, reworded here to name flags; a
`dpaudit.user_config.ConfigError` names its file and entry and is printed as it is), 3 internal error
(any other exception, `SystemExit` from code a command calls included: printed with its traceback),
130 interrupted (Ctrl-C; `dpaudit audit` first writes the entries that finished, marked incomplete).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from dpaudit._interrupt import EXIT_INTERRUPTED, sigint_stops
from dpaudit.cli._types import help_text

__all__ = ["build_parser", "main"]

# internal parameter names that reach error messages, and the flag a user gave for each
PARAMETER_FLAGS = {
    "num_users": "--users",
    "local_epsilon": "--epsilon0",
    "local_delta": "--delta0",
    "num_buckets": "--buckets",
    "l1_sensitivity": "--l1",
    "l2_sensitivity": "--l2",
    "target_epsilon": "--epsilon",
    "target_delta": "--delta",
}

EPILOG = (
    "Negative numbers and exponents are accepted as values (--delta -1e-5 is read as --delta=-1e-5) "
    "and then checked. Run `dpaudit COMMAND --help` for a command's options."
)


class _CommandParser(argparse.ArgumentParser):
    """A subcommand's parser that adds its arguments on first use (parse or help)."""

    def __init__(
        self, *args: Any, add_arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._pending = add_arguments

    def populate(self) -> _CommandParser:
        if self._pending is not None:
            add, self._pending = self._pending, None
            add(self)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.populate()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.populate()
        return super().format_usage()

    def format_help(self) -> str:
        self.populate()
        return super().format_help()


def _commands() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return mods


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The top-level parser and {command name: run function}; subcommand arguments are added lazily."""
    parser, handlers, _ = _build()
    return parser, handlers


def _build() -> tuple[argparse.ArgumentParser, dict, dict[str, _CommandParser]]:
    from dpaudit import __version__

    parser = argparse.ArgumentParser(
        prog="dpaudit",
        epilog=EPILOG,
        description="Differential-privacy budgets, audits and reports for bandit algorithms.",
    )
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    handlers, subparsers = {}, {}
    for mod in _commands():
        subparsers[mod.NAME] = sub.add_parser(
            mod.NAME, help=help_text(mod.HELP), description=mod.HELP, epilog=EPILOG, add_arguments=mod.add_arguments
        )
        handlers[mod.NAME] = mod.run
    return parser, handlers, subparsers


_NUMBER = re.compile(r"^-(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?(,.*)?$|^-(inf|nan)$", re.IGNORECASE)


def join_negative_values(argv: Sequence[str]) -> list[str]:
    """`--delta -1e-5` -> `--delta=-1e-5`: argparse reads a value that starts with '-' and is not a
    plain decimal as an option; joined to its flag it is parsed and then checked like any value."""
    out: list[str] = []
    for token in argv:
        if out and _NUMBER.match(token) and out[-1].startswith("--") and "=" not in out[-1] and out[-1] != "--":
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def name_flags(message: str, parser: argparse.ArgumentParser | None) -> str:
    """Replace parameter names in an error message by the flags that set them (`delta must ...` ->
    `--delta must ...`, `num_users must ...` -> `--users must ...`)."""
    flags = dict(PARAMETER_FLAGS)
    if parser is not None:
        for action in parser._actions:  # the parser's own options: dest and flag name -> first long flag
            longs = [s for s in action.option_strings if s.startswith("--")]
            if longs:
                for name in (action.dest, longs[0][2:].replace("-", "_")):
                    flags.setdefault(name, longs[0])
    for name, flag in sorted(flags.items(), key=lambda kv: -len(kv[0])):
        message = re.sub(
            rf"(?<![-\w.]){re.escape(name)}(?=(?: \([^)]*\))? (?:must|should|needs|is)\b| =)", flag, message
        )
        message = re.sub(rf"\bunknown {re.escape(name)}\b", f"unknown {flag}", message)
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `dpaudit` command on `argv` (default: `sys.argv[1:]`) and return its exit code: the
    subcommand's, 2 for a usage error, 3 for an internal error, `EXIT_INTERRUPTED` on Ctrl-C.
    """
    parser, handlers, subparsers = _build()
    try:
        args = parser.parse_args(join_negative_values(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help, --version (0) or an argparse usage error (2), already printed
        return 0 if exc.code is None else int(exc.code)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        with sigint_stops():
            return int(handlers[args.command](args))
    except KeyboardInterrupt:  # Ctrl-C (a command that reports on it, as audit does, has already)
        print(f"dpaudit {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ValueError as exc:  # bad input that passed argparse: a usage error
        from dpaudit.user_config import ConfigError

        message = str(exc) if isinstance(exc, ConfigError) else name_flags(str(exc), subparsers[args.command])
        print(f"dpaudit {args.command}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped early (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except BaseException as exc:  # noqa: BLE001  (a bug, or sys.exit() in a user's code: exit 3, traceback)
        traceback.print_exc(file=sys.stderr)
        print(f"dpaudit {args.command}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
