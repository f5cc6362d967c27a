"""The "One run beside many runs" section: per algorithm audited in both modes and per claim (ε, δ) both modes
expect to hold, the one-run ε_lower beside the best many-run ε_lower and each one's ratio to a sound ε_upper.

Synthetic records only (no auditing), so the tests are exact."""

import copy

import pytest

from dpaudit.report import build_report, render_html, render_markdown
from dpaudit.report.model import ONE_RUN_TITLE, one_run_rows, one_run_section, one_run_unpaired


@pytest.fixture
def one_run(make_entry):
    """one_run(name, alg, claims, variant=""): a one-run entry record (T = 10^6, 5000 canaries, 5 s)."""

    def build(name, alg, claims, variant=""):
        e = make_entry(name, alg, claims, variant=variant, tradeoff=False)
        e.update(mode="one-run", one_run={"horizon": 1_000_000, "num_canaries": 5000}, seconds=5.0)
        for c in e["claims"]:
            c.update(mode="one-run", num_canaries=5000, guesses=3418, correct=2496, analysis="epsilon")
        e["audits"] = [
            {
                **e["audits"][0],
                "samples": "one run",
                "mode": "one-run",
                "horizon": 1_000_000,
                "num_canaries": 5000,
                "guesses": 3418,
                "correct": 2496,
                "analysis": "epsilon",
            }
        ]
        return e

    return build


def _at(claim, delta):
    return {**claim, "delta": delta}


@pytest.fixture
def entries(make_entry, make_claim, one_run):
    """alg-a in both modes (two many-run entries, one that failed to run), alg-b in many runs only, a twin of
    alg-a in both modes with different corrected claims, and a one-run-only twin."""
    paper = make_claim("paper", 1.0, 0.9, "consistent")
    stat = make_entry("alg-a.stat", "alg-a", [make_claim("paper", 1.0, 0.95, "consistent")])
    broken = make_entry("alg-a.broken", "alg-a", [make_claim("paper", 1.0, 0.99, "consistent")])
    broken["error"] = "RuntimeError: boom"
    return [
        one_run(
            "alg-a.one-run",
            "alg-a",
            [paper, {**paper, "label": "accounted"}, _at(make_claim("paper", 2.0, 1.2, "consistent"), 1e-5)],
        ),
        make_entry("alg-a.actions", "alg-a", [make_claim("paper", 1.0, 0.7, "consistent")]),
        stat,
        broken,
        make_entry("alg-b.stat", "alg-b", [make_claim("paper", 1.0, 0.97, "consistent")]),
        one_run(
            "alg-a.one-run-bug",
            "alg-a",
            [make_claim("paper", 1.0, 1.4, "violation"), make_claim("corrected", 3.0, 1.4, "consistent")],
            variant="bug",
        ),
        make_entry(
            "alg-a.bug",
            "alg-a",
            [make_claim("paper", 1.0, 1.6, "violation"), make_claim("corrected", 2.0, 1.6, "consistent")],
            variant="bug",
        ),
        one_run("alg-b.one-run-bug", "alg-b", [make_claim("corrected", 2.0, 1.0, "consistent")], variant="bug"),
    ]


def test_one_row_per_claim_both_modes_hold(entries):
    (row,) = one_run_rows(entries)  # alg-a at (1, 0) only: δ = 1e-5 has no many-run claim, alg-b no one-run entry
    assert (row["algorithm"], row["variant"], row["epsilon"], row["delta"]) == ("alg-a", "", 1.0, 0.0)
    assert row["claims"] == ["paper", "accounted"]
    assert (row["epsilon_upper"], row["upper_claim"], row["upper_accountant"]) == (1.0, "paper", "stated")
    one, many = row["one_run"], row["many_run"]
    assert one == {
        "entry": "alg-a.one-run",
        "epsilon_lower": 0.9,
        "ratio": 0.9,
        "confidence": 0.975,
        "observable": "black-box",
        "relation": "one-user",
        "seconds": 5.0,
        "analysis": "epsilon",
        "horizon": 1_000_000,
        "num_canaries": 5000,
        "guesses": 3418,
        "correct": 2496,
    }
    # the best of the many-run entries that ran (alg-a.broken's 0.99 is not a result)
    assert (many["entry"], many["epsilon_lower"], many["ratio"], many["samples"]) == ("alg-a.stat", 0.95, 0.95, 1000)


def test_twin_with_no_common_claim_is_named_not_compared(entries):
    (note,) = one_run_unpaired(entries)  # alg-b's twin has no many-run twin: not named
    assert note.startswith("alg-a (bug): the two modes expect no claim (ε, δ) in common")
    assert "alg-a.one-run-bug: ε = 3 at δ = 0" in note and "alg-a.bug: ε = 2 at δ = 0" in note


def test_upper_is_the_smallest_claim_proven_for_both_views(make_entry, make_claim, one_run):
    """A tighter claim only one entry's view has does not bound the other view: ε_upper stays the shared
    claim (either way round); a tighter claim both have is taken for every row at that δ."""
    paper, view = make_claim("paper", 1.0, 0.9, "consistent"), make_claim("view", 0.96, 0.9, "consistent")
    for one_claims, many_claims in (([paper], [paper, view]), ([paper, view], [paper])):
        pair = [one_run("a.one-run", "a", one_claims), make_entry("a.stat", "a", copy.deepcopy(many_claims))]
        (row,) = one_run_rows(pair)
        assert (row["epsilon"], row["epsilon_upper"], row["upper_claim"], row["one_run"]["ratio"]) == (
            1,
            1,
            "paper",
            0.9,
        )
    rows = one_run_rows([one_run("a.one-run", "a", [paper, view]), make_entry("a.stat", "a", [paper, view])])
    assert [(r["epsilon"], r["epsilon_upper"], r["upper_claim"]) for r in rows] == [
        (1.0, 0.96, "view"),
        (0.96, 0.96, "view"),
    ]
    assert rows[0]["one_run"]["ratio"] == pytest.approx(0.9 / 0.96)


def test_corrected_paper_claim_is_no_upper_bound(make_entry, make_claim, one_run):
    """Where a corrected claim exists the paper's is not proven: it gets a row, but its ε_upper is the corrected one."""
    claims = [make_claim("paper", 1.0, 0.3, "consistent"), make_claim("corrected", 0.5, 0.3, "consistent")]
    rows = one_run_rows([one_run("x.one-run", "x", claims), make_entry("x.stat", "x", copy.deepcopy(claims))])
    assert [(r["epsilon"], r["epsilon_upper"], r["upper_claim"]) for r in rows] == [
        (1.0, 0.5, "corrected"),
        (0.5, 0.5, "corrected"),
    ]


def test_pages_show_the_section(entries, sample_report):
    report = build_report(entries, settings=sample_report["settings"])
    assert report["one_run_pairs"] == {"rows": one_run_rows(entries), "unpaired": one_run_unpaired(entries)}
    md = render_markdown(report)
    section = md[md.index(f"## {ONE_RUN_TITLE}") : md.index("## alg-a\n")]
    assert md.index("## Intervals") < md.index(f"## {ONE_RUN_TITLE}")
    assert "| alg-a | ε = 1 at δ = 0 (paper, accounted) | 1 (paper, stated) | 0.9 @97.5% | 0.9 |" in section
    assert "alg-a.one-run: one run, T = 1,000,000, 5,000 canaries, 3,418 guesses (2,496 correct)" in section
    assert "| 0.95 @97.5% | 0.95 | alg-a.stat: 1,000 runs per side; black-box, one-user; 0.2 s |" in section
    assert "- alg-a (bug): the two modes expect no claim" in section and "alg-b" not in section
    page = render_html(report)
    assert f'<h2 id="one-run">{ONE_RUN_TITLE}</h2>' in page and '<table class="one-run">' in page
    assert '<td class="or_many_run">alg-a.stat: 1,000 runs per side; black-box, one-user; 0.2 s</td>' in page
    old = {k: v for k, v in report.items() if k != "one_run_pairs"}  # a document written before the section
    assert one_run_section(old) == one_run_section(report) and render_markdown(old) == md


def test_no_section_without_both_modes(entries, sample_report):
    only_many = [e for e in entries if e["algorithm"] == "alg-b" and e.get("mode") != "one-run"]
    report = build_report(only_many, settings=sample_report["settings"])
    assert report["one_run_pairs"] == {"rows": [], "unpaired": []}
    assert ONE_RUN_TITLE not in render_markdown(report) and ONE_RUN_TITLE not in render_html(report)
    assert ONE_RUN_TITLE not in render_markdown(sample_report)
