"""`python -m benchmarks list` names every benchmark; `python -m benchmarks run NAME [ARGS]` runs one, ARGS going to
its own options (`run NAME --help` lists them).  Run from the root of a checkout with dpaudit installed
(`pip install -e .[dev]`): the benchmarks package is not installed, the working folder makes it importable."""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys

from benchmarks.registry import BENCHMARKS, find

PROG = "python -m benchmarks"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True, metavar="{list,run}")
    sub.add_parser("list", help="name every benchmark and what it measures")
    run = sub.add_parser("run", help="run one benchmark: run NAME [ARGS] (ARGS: see run NAME --help)")
    run.add_argument("name", help="a name printed by `list`")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the benchmark's own options")
    return ap


def list_text() -> str:
    """One line per benchmark, name and summary, then how to run one."""
    width = max(len(b.name) for b in BENCHMARKS)
    lines = [f"{b.name:<{width}}  {b.summary}" for b in BENCHMARKS]
    lines.append(f"\n{PROG} run NAME --help: the options of NAME")
    return "\n".join(lines)


def run(name: str, args: list[str]) -> int:
    """Import the benchmark's module and call its `main(args)`; its argparse prog reads `python -m benchmarks run
    NAME` (sys.argv[0], restored afterwards)."""
    bench = find(name)
    if bench is None:
        raise KeyError(name)
    module = importlib.import_module(bench.module)
    saved = sys.argv
    sys.argv = [f"{PROG} run {name}", *args]
    try:
        return int(module.main(args) or 0)
    finally:
        sys.argv = saved


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    ns = ap.parse_args(argv)
    if ns.command == "list":
        print(list_text())
        return 0
    if find(ns.name) is None:
        close = difflib.get_close_matches(ns.name, [b.name for b in BENCHMARKS], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; `{PROG} list` names them"
        ap.error(f"run: unknown benchmark {ns.name!r}{hint}")
    return run(ns.name, ns.args)
