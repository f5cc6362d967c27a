"""The site's pages run as written: getting started, the three tutorials, the how-to guides and the code of the
concept pages (how a page is read and run: `doc_pages`).

The audits on these pages are seeded, so their numbers are reproducible. A page whose shown output is no longer
what dpaudit prints fails here; `python -P tests/docs/doc_pages.py --refresh` brings it up to date (review the
diff: the text around a number may need rewriting too).
"""

from __future__ import annotations

import pytest
from doc_pages import DOCS, EXIT, PAGES, blocks, commands, counterpart, missing_lines, run_page


def _check(where, start, command, shown, status, expected, printed):
    assert status == expected, f"{where}: `{command}` exited {status}, not {expected}:\n{printed}"
    missing = missing_lines(shown, printed)
    assert not missing, (
        f"{where}: `{command}` no longer prints\n" + "\n".join(missing) + f"\n--- it printed:\n"
        f"{printed}\n--- `python -P tests/docs/doc_pages.py --refresh {where.split(':')[0]}` "
        "updates the page"
    )


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, tmp_path):
    assert run_page(page, tmp_path, _check), f"{page} has no block to run"


def test_the_parser_reads_titles_languages_and_outputs():  # the twin: the checks above can fail
    page = (
        'Text\n\n```toml title="plan.toml"\n[a]\n```\n\n  ```python\n  x = 1\n  ```\n\n'
        "```console\n$ dpaudit budget  # exit 2\nline one\n…\n$ dpaudit list\n```\n"
    )
    found = blocks(page)
    assert [(lang, title) for _, lang, title, _ in found] == [
        ("toml", "plan.toml"),
        ("python", None),
        ("console", None),
    ]
    assert found[1][3] == "x = 1\n"
    (first, shown), (_, none) = commands(found[2][3])
    assert EXIT.search(first)["code"] == "2" and shown == ["line one", "…"] and none == []
    assert missing_lines(["a  b", "…"], "a b\nc") == [] and missing_lines(["a c"], "a b\nc") == ["a c"]
    assert counterpart("best: pld (epsilon 1)", "x\nbest: epsilon 1 (pld)") == "best: epsilon 1 (pld)"
    assert counterpart("rdp  inf", "rdp   35.1\npld 2") == "rdp   35.1" and counterpart("zz 1", "a b") is None


def test_the_pages_hold_only_runnable_commands():
    """A `$ ` line of a console block is a dpaudit command (others go in ```bash blocks, shown only)."""
    bad = [
        f"{page}:{line}: {command}"
        for page in PAGES
        for line, language, _, body in blocks((DOCS / page).read_text())
        if language == "console"
        for command, _ in commands(body)
        if not command.startswith("dpaudit ")
    ]
    assert bad == []
