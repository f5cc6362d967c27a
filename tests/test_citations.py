"""Users never saw dpaudit's internal reading notes: code, docs and reports cite papers, not note labels."""

import ast
import io
import pathlib
import re
import subprocess
import tokenize

ROOT = pathlib.Path(__file__).resolve().parents[1]
LABEL = re.compile(r"\b[Dd]igest 00\d|\b[Ss]eed[ -]00\d|\d{3}_\w+\.md")


def _tracked(*paths: str) -> list[pathlib.Path]:
    out = subprocess.run(["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split()]


def test_no_internal_note_labels_in_shipped_files():
    files = _tracked("dpaudit", "mechanisms", "algorithms", "audits", "README.md", "docs", "examples")
    assert files, "git ls-files found nothing: run from a checkout"
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in files
        if p.suffix in (".py", ".md", ".toml")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if LABEL.search(line)
    ]
    assert hits == []


def test_the_label_pattern_catches_labels():  # the twin: the check above can fail
    assert LABEL.search("(digest 003 §2.6)") and LABEL.search("seed 001 Thm 6") and not LABEL.search("hexdigest()")
    assert LABEL.search("the authors' seed-004 code")


# A docstring or comment that names one of the five papers says where in it: the theorem, algorithm,
# lemma, definition, equation, table, figure, section, appendix or footnote (for the authors' code).
AUTHORS = re.compile(r"Li, Shi|Hu, Huang|Sarmasarkar|Chowdhury")
LOCATOR = re.compile(
    r"\b(Thms?|Theorems?|Algs?|Algorithms?|Lemmas?|Defs?|Definitions?|Props?|Propositions?|Cor|"
    r"Corollary|Remarks?|Assumptions?|Facts?|Tables?|Figs?|Figures?|[Ee]qs?|[Ee]quations?|Sec|Section|"
    r"App|Appendix|footnote|fn)\b\.?|§"
)


def _docstrings_and_comments(source: str):
    """(line, text) of every docstring and of every block of consecutive comment lines."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc
    block: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        if block and tok.start[0] != block[-1][0] + 1:
            yield block[0][0], " ".join(text for _, text in block)
            block = []
        block.append((tok.start[0], tok.string))
    if block:
        yield block[0][0], " ".join(text for _, text in block)


def _unlocated(text: str) -> list[str]:
    """The citations of the five papers in `text` with no locator within 60 characters before or 160 after."""
    return [
        text[m.start() : m.end() + 60]
        for m in AUTHORS.finditer(text)
        if not LOCATOR.search(text[max(0, m.start() - 60) : m.end() + 160])
    ]


def test_every_paper_citation_in_docstrings_and_comments_says_where():
    files = [
        p
        for p in _tracked("dpaudit", "mechanisms", "algorithms", "audits", "tests", "benchmarks", "examples")
        if p.suffix == ".py"
    ]
    assert files, "git ls-files found nothing: run from a checkout"
    hits = [
        f"{p.relative_to(ROOT)}:{line}: {bad!r}"
        for p in files
        for line, text in _docstrings_and_comments(p.read_text(encoding="utf-8"))
        for bad in _unlocated(text)
    ]
    assert hits == []


def test_the_locator_check_can_fail():  # the twin
    assert _unlocated("as in Chowdhury & Zhou (ICML 2022), who batch the users")
    assert not _unlocated("as in Chowdhury & Zhou (ICML 2022), Thm 3.5, who batch the users")
    assert not _unlocated("the public code of Chowdhury & Zhou (ICLR 2023), Sec. 7 footnote 5")
    source = 'def f():\n    """Hu, Huang, Mehta did it."""\n    # Sarmasarkar, Alg. 2\n    return 1\n'
    units = list(_docstrings_and_comments(source))
    assert [bool(_unlocated(text)) for _, text in units] == [True, False]


def test_every_catalog_source_that_cites_a_paper_says_where():
    """A catalog entry's `source` is shown in every report: naming one of the five papers, it says where."""
    from dpaudit.registry import AUDITS, load_plugins

    load_plugins()
    sources = {name: AUDITS.get(name).source for name in AUDITS.names()}
    assert sources
    assert [f"{name}: {s}" for name, s in sources.items() if AUTHORS.search(s) and not LOCATOR.search(s)] == []
