"""Every field of a report is text, never markup: in report.html (escaped), in report.md (escaped, one
line, one table cell) and in the figures (no mathtext, no TeX)."""

import copy
import json
import re
from html.parser import HTMLParser

import matplotlib
import pytest

import dpaudit.report.plots as plots
from dpaudit.cli import main
from dpaudit.report import (
    COLUMNS,
    FILES,
    INTERVAL_COLUMNS,
    SUMMARY_COLUMNS,
    build_report,
    render_html,
    render_markdown,
    write_report,
)

PAYLOADS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>')
KEEP = {"schema", "kind", "catalog"}  # values the readers select on (the document, a finding's list, the wording)
PRINTED_NUMBERS = {
    "seed",
    "seconds",
    "samples",
    "entries",
    "claims",
    "audit_calls",
    "horizon",
    "runs",
    "tightness",
    "final_mean",
}  # numbers the pages only print: a crafted report.json may hold text there
TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "ul",
    "ol",
    "li",
    "p",
    "strong",
    "code",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "img",
    "figcaption",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
}


def _craft(value, key=None, counter=None):
    """`value` with every string, and every number the pages only print, replaced by a payload."""
    counter = counter if counter is not None else [0]
    if isinstance(value, dict):
        return {k: _craft(v, k, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_craft(v, key, counter) for v in value]
    textual = isinstance(value, str) or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and key in PRINTED_NUMBERS
    )
    if textual and key not in KEEP:
        counter[0] += 1
        return PAYLOADS[counter[0] % 2]
    return value


@pytest.fixture
def crafted(sample_report):
    """The sample report with a payload in every field a page shows, including where numbers belong."""
    rep = copy.deepcopy(sample_report)
    rep["settings"].update(catalog="user", config="cfg", incomplete=True, not_run=["x"])
    rep["baseline"] = {
        "baseline": "b",
        "baseline_created": "c",
        "regressions": ["r"],
        "warnings": ["w"],
        "changes": [{"kind": "newly-failing", "entry": "e", "claim": "c", "text": "t"}],
    }
    rep = _craft(rep)
    for e in rep["entries"]:
        for c in e["claims"]:
            c["by_accountant"] = {PAYLOADS[0]: 2.0, PAYLOADS[1]: 1.5}
    rep["entries"][2]["error"] = "Traceback (most recent call last):\n  " + PAYLOADS[1]
    rep["summary"]["missed_violations"] = PAYLOADS[0]  # text where a list belongs
    return rep


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = set(), set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)

    def handle_data(self, data):
        self.text.append(data)


def _assert_inert(page):
    """No markup of the payloads' in `page`, and their text shown as text."""
    assert "<script" not in page.lower() and "<img src=x" not in page
    tags = _Tags()
    tags.feed(page)
    assert tags.tags <= TAGS and tags.attrs <= {
        "lang",
        "charset",
        "name",
        "content",
        "id",
        "class",
        "alt",
        "src",
        "title",
    }
    figures = re.findall(r'<img alt="[^"<>]*" src="data:image/png;base64,[A-Za-z0-9+/=]+">', page)
    assert page.count("<img") == len(figures) > 0
    shown = "".join(tags.text)
    assert PAYLOADS[0] in shown and PAYLOADS[1] in shown


def test_html_shows_every_field_as_text(crafted):
    page = render_html(crafted)
    _assert_inert(page)
    text = _text_of(page)
    for before in (
        "Run: seed ",
        "— ",
        "command: ",
        "Missed violations: ",
    ):  # the entry's seed, the summary's count, ...
        assert any(before + p in text for p in PAYLOADS), before
    assert "Changes since the baseline" in text and "Traceback (most recent call last):" in text


def _text_of(page):
    tags = _Tags()
    tags.feed(page)
    return "".join(tags.text)


def test_a_crafted_report_json_through_dpaudit_report(tmp_path, crafted, capsys):
    (tmp_path / "report.json").write_text(json.dumps(crafted))
    assert main(["report", str(tmp_path)]) == 0, capsys.readouterr().err
    _assert_inert((tmp_path / "report.html").read_text())
    md = (tmp_path / "report.md").read_text()
    _assert_inert_markdown(md)
    assert PAYLOADS[0].replace("<", "\\<").replace(">", "\\>") in md


def _assert_inert_markdown(md):
    """Outside code spans (shown as written) every `<` of `md` is escaped; the set id comment ends it."""
    body, stamp = md.rstrip("\n").rsplit("\n", 1)
    assert stamp.startswith("<!-- dpaudit-report-set: ")
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", body)
    assert not re.search(r"(?<!\\)<", outside)


def _cells(line):
    """The cells of a Markdown table row (a `\\|` is part of a cell)."""
    return re.split(r"(?<!\\)\|", line)[1:-1]


def test_markdown_keeps_every_field_in_its_line_and_cell(sample_report, make_entry, make_claim):
    name = "a|b\nc `d` <e> | f\r\ng"
    entries = [
        make_entry(
            name,
            "alg|x\nnext",
            [make_claim("paper\n|", 1.0, 1.52, "violation"), make_claim("corrected", 2.0, 1.52, "consistent")],
        )
    ]
    entries[0]["description"] = "line one\n## not a heading\n- not an item"
    rep = build_report(entries, settings=sample_report["settings"], command=["dpaudit", "audit", "x\ny`z"])
    md = render_markdown(rep)
    lines = md.splitlines()
    assert not any(line.startswith(("c ", "g", "next", "## not", "- not", "y`z")) for line in lines)
    _assert_inert_markdown(md + "<!-- dpaudit-report-set: x -->\n")
    # - 1, - 2: no regret column and/or no floating-point column
    widths = {len(SUMMARY_COLUMNS), len(COLUMNS), len(COLUMNS) - 1, len(COLUMNS) - 2, len(INTERVAL_COLUMNS)}
    rows = [line for line in lines if line.startswith("| ")]
    assert rows and all(len(_cells(line)) in widths for line in rows)
    assert len([line for line in rows if line.startswith(r"| a\|b")]) == 5  # 2 claims twice, 1 interval
    assert r"| a\|b c \`d\` \<e\> \| f g |" in md and "\n## alg\\|x next\n" in md
    assert "- command: ``dpaudit audit x y`z``" in md
    assert "- ``a|b c `d` <e> | f g``: line one \\#\\# not a heading - not an item" in md


NAMES = ("shop.$x^2$-sum", "a$b$c", r"x$\notacommand$y", "p_{1}^%", "back\\slash $", "50% {x}_y^z &")


def test_figures_label_names_as_written(tmp_path, make_entry, make_claim, sample_report, monkeypatch):
    regret = dict(sample_report["entries"][0]["regret"], algorithm=NAMES[0])
    entries = [
        make_entry(n, n, [make_claim("paper $", 1.0, 0.5 + i / 10, "consistent")], regret=regret, tradeoff=i == 2)
        for i, n in enumerate(NAMES)
    ]
    rep = build_report(entries, settings=sample_report["settings"])
    texts = []
    real = plots._png

    def record(fig):
        fig.canvas.draw()  # tick labels are made while drawing
        found = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
        assert all(not t.get_parse_math() and not t.get_usetex() for t in found)
        texts.extend(t.get_text() for t in found)
        return real(fig)

    monkeypatch.setattr(plots, "_png", record)
    with matplotlib.rc_context({"text.usetex": True}):  # a user's TeX setting does not apply either
        for png in (
            plots.epsilon_png(rep["entries"]),
            plots.interval_png(rep["entries"]),
            plots.regret_png(rep["entries"]),
            plots.tradeoff_png(rep["entries"][2]),
        ):
            assert png is not None and png.startswith(b"\x89PNG")
    for name in NAMES:
        assert any(name in t for t in texts), name
    monkeypatch.undo()
    write_report(rep, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
