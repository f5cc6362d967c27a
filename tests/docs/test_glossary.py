"""The site's glossary (docs/concepts/glossary.md) defines every label a report prints (`dpaudit.report.glossary`)."""

from __future__ import annotations

import itertools
import pathlib
import re

import pytest

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "concepts" / "glossary.md"


def defined_terms(text: str) -> set[str]:
    """The `code` terms of a Markdown definition list: each term line is followed by a ":   definition" line."""
    lines = text.splitlines()
    return {
        term
        for line, after in itertools.pairwise(lines)
        if after.startswith(":   ")
        for term in re.findall(r"`([^`]+)`", line)
    }


def test_every_report_label_is_defined_on_the_glossary_page():
    glossary = pytest.importorskip("dpaudit.report.glossary", reason="this dpaudit's reports print no glossary")
    assert sorted(set(glossary.TERMS) - defined_terms(PAGE.read_text(encoding="utf-8"))) == []


def test_the_term_reader_reads_definition_lists():  # the twin: the check above can fail
    text = "Intro with `code`.\n\n`pin`\n:   a ratio\n\n`(pure)`, `(pld)`\n:   accountants\n\n`loose`\nnot a term\n"
    assert defined_terms(text) == {"pin", "(pure)", "(pld)"}
