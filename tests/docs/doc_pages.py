"""Reading and running the site's pages as written (used by test_tutorials.py), and bringing their shown output
up to date after dpaudit's output changes:

    python -P tests/docs/doc_pages.py --refresh [PAGE ...]     # e.g. tutorials/budget.md; default: every page

A page is read from the top, in a fresh folder of its own:

- a fenced block with a `title="NAME"` (```` ```toml title="pyproject.toml" ````) is written to the file NAME;
- every other ```` ```python ```` block is executed, all blocks of a page in one namespace;
- every `$ dpaudit ...` line of a ```` ```console ```` block is run in this process through `dpaudit.cli.main`, with
  the audit registry as a new process has it (plus what the page's Python registered); it must exit 0, or the
  status its trailing `# exit N` comment gives, and each output line shown under it, spaces aside, must be a
  line of what it printed (a line holding "…" stands for lines left out).

Blocks in other languages (```` ```bash ````, ```` ```py ````, ```` ```yaml ````) are shown, not run: commands that
install, start servers or change files outside the page's folder.

`--refresh` runs the pages the same way and replaces each shown output line that is no longer printed by the
printed line that starts with the same words (the first two, else the first), keeping the page's choice of
lines and its "…"; a line with no such counterpart is reported for a person to rewrite. Review the diff.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
PAGES = [
    "getting-started.md",
    "tutorials/budget.md",
    "tutorials/ci.md",
    "tutorials/report.md",
    *sorted(str(p.relative_to(DOCS)) for p in (DOCS / "how-to").glob("*.md")),
    "concepts/accountants.md",
]
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>[^`]*)$")
TITLE = re.compile(r'title="(?P<name>[^"]+)"')
EXIT = re.compile(r"#\s*exit\s+(?P<code>\d+)\s*$")
ELLIPSIS = "…"


def blocks(text: str) -> list[tuple[int, str, str | None, str]]:
    """(first content line, 0-based; language; title; content dedented) of every fenced block of a page, in order."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m["info"].strip():
            i += 1
            continue
        indent, info, start = m["indent"], m["info"].strip(), i + 1
        i += 1
        while i < len(lines) and lines[i].rstrip() != f"{indent}```":
            i += 1
        body = "\n".join(line[len(indent) :] for line in lines[start:i]) + "\n"
        title = TITLE.search(info)
        out.append((start, info.split()[0], title["name"] if title else None, body))
        i += 1
    return out


def commands(console: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out and line.strip():
            out[-1][1].append(line)
    return out


def squeeze(line: str) -> str:
    return " ".join(line.split())


def missing_lines(shown: list[str], printed: str) -> list[str]:
    """The shown output lines (other than "…" lines) that are not lines of the printed output."""
    have = {squeeze(line) for line in printed.splitlines()}
    return [line for line in shown if ELLIPSIS not in line and squeeze(line) not in have]


def counterpart(line: str, printed: str) -> str | None:
    """The printed line that starts with the same two words as `line` (else the same first word), if one does."""
    words = line.split()
    for n in (2, 1):
        if len(words) >= n:
            for candidate in printed.splitlines():
                if candidate.split()[:n] == words[:n]:
                    return candidate.rstrip()
    return None


def run_command(command: str, catalog: dict[str, Any]) -> tuple[int, int, str]:
    """Run one `dpaudit ...` command line with the audit registry holding `catalog` only, as in a new process:
    (exit status, expected status, everything it printed, stdout then stderr)."""
    from dpaudit.cli import main
    from dpaudit.registry import AUDITS

    expected = EXIT.search(command)
    argv = shlex.split(command, comments=True)
    if not argv or argv[0] != "dpaudit":
        raise ValueError(f"only dpaudit commands run on the pages, got {command!r}")
    AUDITS._entries = dict(catalog)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv[1:])
    return status, int(expected["code"]) if expected else 0, out.getvalue() + err.getvalue()


@contextlib.contextmanager
def page_folder(folder: pathlib.Path) -> Iterator[pathlib.Path]:
    """Work in `folder` (on sys.path); the audit registry, sys.path, the working folder, MPLBACKEND and the
    modules imported from `folder` are restored afterwards."""
    from dpaudit.registry import AUDITS, load_plugins

    load_plugins()  # the built-in catalog, as every process has it
    saved = (os.getcwd(), list(sys.path), dict(AUDITS._entries), os.environ.get("MPLBACKEND"), set(sys.modules))
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    os.environ["MPLBACKEND"] = "Agg"
    try:
        yield folder
    finally:
        cwd, path, entries, backend, modules = saved
        os.chdir(cwd)
        sys.path[:] = path
        AUDITS._entries = entries
        if backend is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = backend
        for name in set(sys.modules) - modules:
            if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(folder)):
                del sys.modules[name]


Check = Callable[[str, int, str, list[str], int, int, str], None]
"""check(where, first line of the block, command, shown lines, status, expected status, printed)."""


def run_page(page: str, folder: pathlib.Path, check: Check) -> int:
    """Run `page` in `folder` (see the module docstring), calling `check` after each command; the number of
    Python blocks and commands run."""
    shadowed: dict[str, Any] = {}
    with page_folder(folder):
        try:
            return _run_blocks(page, folder, check, shadowed)
        finally:
            sys.modules.update({name: module for name, module in shadowed.items() if module is not None})


def _run_blocks(page: str, folder: pathlib.Path, check: Check, shadowed: dict[str, Any]) -> int:
    """The blocks of `page` in order (`run_page`); modules the page writes are popped into `shadowed`."""
    from dpaudit.registry import AUDITS

    catalog = dict(AUDITS._entries)
    namespace: dict[str, Any] = {"__name__": "docs_" + re.sub(r"\W", "_", page)}
    ran = 0
    for start, language, title, body in blocks((DOCS / page).read_text(encoding="utf-8")):
        where = f"{page}:{start + 1}"
        if title is not None:
            target = folder / title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
            if target.suffix == ".py":  # a module of the suite with the same name must not answer its import
                shadowed.setdefault(target.stem, sys.modules.pop(target.stem, None))
        elif language == "python":
            exec(compile(body, where, "exec"), namespace)  # the page's own code
            catalog = dict(AUDITS._entries)  # entries the page registers in Python, as a plugin would
            ran += 1
        elif language == "console":
            for command, shown in commands(body):
                check(where, start, command, shown, *run_command(command, catalog))
                ran += 1
    return ran


def refresh(page: str) -> list[str]:
    """Rewrite the shown output of `page`'s console blocks from what the commands print now; the lines that
    found no counterpart (left as they are)."""
    path = DOCS / page
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    unmatched: list[str] = []

    def update(
        where: str, start: int, command: str, shown: list[str], status: int, expected: int, printed: str
    ) -> None:
        if status != expected:
            unmatched.append(f"{where}: `{command}` exited {status}, not {expected}")
        i = next(k for k in range(start, len(lines)) if lines[k].strip() == f"$ {command}")
        for k in range(i + 1, len(lines)):
            text = lines[k].rstrip("\n")
            if text.strip().startswith("$ ") or text.strip() == "```":
                break
            if not text.strip() or ELLIPSIS in text or squeeze(text) in {squeeze(p) for p in printed.splitlines()}:
                continue
            new = counterpart(text.strip(), printed)
            if new is None:
                unmatched.append(f"{page}:{k + 1}: {text.strip()}")
            else:
                lines[k] = text[: len(text) - len(text.lstrip())] + new + "\n"

    with tempfile.TemporaryDirectory() as folder:
        run_page(page, pathlib.Path(folder), update)
    path.write_text("".join(lines), encoding="utf-8")
    return unmatched


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "--refresh":
        sys.exit(__doc__)
    left = [line for page in args[1:] or PAGES for line in refresh(page)]
    print("\n".join(["lines to rewrite by hand:", *left]) if left else "every shown line is printed")
    sys.exit(1 if left else 0)
