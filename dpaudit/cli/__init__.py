"""The `dpaudit` command: one entry point, one module per subcommand.

Each module in this package defines `NAME`, `HELP`, `add_arguments(parser)` and
`run(args) -> int`. Exit status: 0 success, 1 a finding (violation, failed gate), 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from typing import Sequence

__all__ = ["main", "build_parser"]


def _commands() -> list:
    mods = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return mods


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    from dpaudit import __version__

    parser = argparse.ArgumentParser(prog="dpaudit", description="Differential-privacy budgets, audits and reports for bandit algorithms.")
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers = {}
    for mod in _commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        handlers[mod.NAME] = mod.run
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handlers[args.command](args))
    except ValueError as exc:  # bad input that passed argparse: a usage error
        print(f"dpaudit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped early (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
