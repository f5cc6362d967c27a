"""Users never saw dpaudit's internal reading notes: code, docs and reports cite papers, not note labels."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
LABEL = re.compile(r"\b[Dd]igest 00\d|\b[Ss]eed 00\d|\d{3}_\w+\.md")


def _tracked(*paths: str) -> list[pathlib.Path]:
    out = subprocess.run(["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split()]


def test_no_internal_note_labels_in_shipped_files():
    files = _tracked("dpaudit", "mechanisms", "algorithms", "audits", "README.md", "docs", "examples")
    assert files, "git ls-files found nothing: run from a checkout"
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in files if p.suffix in (".py", ".md", ".toml")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if LABEL.search(line)]
    assert hits == []


def test_the_label_pattern_catches_labels():  # the twin: the check above can fail
    assert LABEL.search("(digest 003 §2.6)") and LABEL.search("seed 001 Thm 6") and not LABEL.search("hexdigest()")
