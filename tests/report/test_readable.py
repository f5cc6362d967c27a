"""A report an engineer can read: findings one line first with their details folded, a glossary of every
label, column headers that explain themselves, the user's own audits read as theirs, pins shown without
rounding across the target, the sample counts named, and no legend over the data (exact tests)."""

import re

import matplotlib
import pytest

import dpaudit.report.plots as plots
from dpaudit.junit import junit_xml
from dpaudit.report import build_report, render_html, render_markdown
from dpaudit.report.glossary import COLUMN_HELP, TERMS, glossary, readable_target
from dpaudit.report.model import INTERVAL_COLUMNS, SUMMARY_COLUMNS, claim_columns, pin_text


def test_findings_are_one_line_with_details_folded(sample_report):
    page, md = render_html(sample_report), render_markdown(sample_report)
    first = sample_report["findings"][0]
    assert re.search(r"<li><details><summary>[^<]*1\.52× the claim[^<]*</summary><ul><li><strong>audit</strong>", page)
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("1. ftnl, audit ftnl-rnm: paper claim"))
    assert "97.5% confidence" in lines[at]
    details = lines[at + 1 : at + 1 + len(first["details"])]
    assert [d.split(":", 1)[0] for d in details] == [f"   - {d['label']}" for d in first["details"]]


def _labels(report):
    """Every label the pages print in a table cell or a note: claim labels, (accountants), observables,
    relations, verdicts, tight sides."""
    out = set()
    for e in report["entries"]:
        out |= {e["observable"], *(p["relation"] for p in e["pairs"])}
        for c in e["claims"]:
            out |= {c["label"], f"({c['accountant']})", c["verdict"], c["expect"]}
            out |= {k for k, v in c["by_accountant"].items() if v is not None}
    return out


def test_glossary_explains_every_label_and_every_column(sample_report, make_entry, make_claim):
    entries = [
        make_entry(
            "a",
            "alg",
            [
                make_claim("paper-proof-phase-2", 1.0, 1.5, "violation"),
                make_claim("view", 2.0, 1.5, "consistent", {"pure": 2.0, "pld": 1.9}),
            ],
        )
    ]
    entries[0]["claims"][1]["accountant"] = "exact-view"
    for report in (sample_report, build_report(entries, settings=sample_report["settings"])):
        terms = dict(glossary(report))
        for label in _labels(report):
            assert label in terms or any(label.startswith(t + "-") for t in terms), label
        assert {"pin", "(μ)", "tight side", "sound ε_upper", "ε_lower", "confidence"} <= set(terms)
        md, page = render_markdown(report), render_html(report)
        heads = re.findall(r"<th( title=\"[^\"]+\")?>", page)
        assert heads and all(heads), "every HTML column header carries its explanation"
        for key, head in SUMMARY_COLUMNS + INTERVAL_COLUMNS + claim_columns(report["entries"]):
            assert f"{head}[^col-{key}]" in md and f"\n[^col-{key}]: " in md, key
        assert "## Glossary" in md and '<dl class="glossary">' in page
    assert set(COLUMN_HELP) >= {k for k, _ in SUMMARY_COLUMNS + INTERVAL_COLUMNS}
    assert "both" in TERMS and "pinned" in TERMS["both"]


def _user_report(make_entry, make_claim, settings):
    good = make_entry("shop.count", "shop_audits", [make_claim("declared", 1.0, 0.93, "consistent")])
    bad = make_entry(
        "shop.twin",
        "shop_audits",
        [make_claim("declared", 1.0, 7.0, "violation")],
        variant="noise scaled per hundred customers",
    )
    for e, relation in ((good, "add-remove"), (bad, "one-user")):
        e.update(
            origin="user",
            description="shop_audits.make.<locals>.count",
            observable="output",
            observable_description="output",
        )
        e["pairs"] = [{"relation": relation, "description": "d0 vs d1 as declared"}]
    bad["claims"][0].update(
        event_epsilon_upper=9.8,
        event={
            "event": "-identity > -5.218827537282939",
            "direction": "d0>d1",
            "count_first": 16989,
            "count_second": 5,
            "nobs": 18000,
        },
    )
    return build_report([good, bad], settings=settings)


def test_user_audits_read_as_the_users(sample_report, make_entry, make_claim):
    report = _user_report(make_entry, make_claim, sample_report["settings"])
    md, page = render_markdown(report), render_html(report)
    for text in (md, page):
        assert "paper claims" not in text and "Known-buggy variants" not in text
        assert "Findings: your claims the audits contradict" in text and "declared with expect=" in text
        assert "regret at T" not in text  # no regret run: no empty column
        assert "<locals>" not in text and "&lt;locals&gt;" not in text
        assert "count (made by shop_audits.make)" in text.replace("\\_", "_")
        assert "relation add-remove" in text and "relation one-user" in text
    twin = report["findings"][0]
    details = {d["label"]: d["text"] for d in twin["details"]}
    assert "-identity > -5.219" in details["event"] and "event ε_upper" in details["event"]  # the CP bound, named
    assert "event ε_upper" in dict(glossary(report)) and "sound ε_upper" in dict(glossary(report))


@pytest.mark.parametrize(
    "pin,shown,pinned",
    [
        (0.8999, "0.899", False),
        (0.89512, "0.895", False),
        (0.9, "0.9", True),
        (0.951, "0.951", True),
        (0.00059, "0.00059", False),
    ],
)
def test_pin_never_shown_at_the_target_when_below_it(pin, shown, pinned, sample_report, make_entry, make_claim):
    assert pin_text(pin) == shown
    entry = make_entry("e", "alg", [make_claim("paper", 1.0, pin, "consistent")])
    report = build_report([entry], settings=sample_report["settings"])
    assert report["entries"][0]["interval"]["tight"] == ("both" if pinned else "unknown")
    row = next(line for line in render_markdown(report).splitlines() if line.startswith("| e | 0 | \\["))
    assert f"| {shown} |" in row


def test_samples_and_wall_time_say_what_they_are(sample_report):
    md = render_markdown(sample_report)
    assert "samples 1000 per side (each entry's own)" in md and "entry default" not in md
    assert "wall time 1.5 s (the command's" in md
    xml = junit_xml(sample_report)
    assert 'name="samples" value="1000 per side (each entry\'s own)"' in xml and 'value="None"' not in xml
    given = dict(sample_report, settings=dict(sample_report["settings"], samples=5000))
    assert 'name="samples" value="5000"' in junit_xml(given) and "samples 5000 per side (--samples)" in render_markdown(
        given
    )


def test_readable_target_names_closures():
    assert readable_target("shop_audits.make_scaled.<locals>.count") == "count (made by shop_audits.make_scaled)"
    assert readable_target("shop.metrics.buyers_count") == "shop.metrics.buyers_count"


def test_no_legend_covers_the_data(sample_report, monkeypatch):
    """Every figure's legend lies outside its axes (its drawn box does not overlap the axes' box)."""
    checked = []
    real = plots._png

    def check(fig):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is not None:
                box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
                assert box.x0 >= area.x1 or box.x1 <= area.x0 or box.y0 >= area.y1 or box.y1 <= area.y0
                checked.append(ax)
        return real(fig)

    monkeypatch.setattr(plots, "_png", check)
    entries = sample_report["entries"]
    with matplotlib.rc_context({"figure.dpi": 90}):
        for png in (
            plots.epsilon_png(entries),
            plots.interval_png(entries),
            plots.regret_png(entries),
            plots.tradeoff_png(entries[0]),
        ):
            assert png is not None
    assert len(checked) == 4
