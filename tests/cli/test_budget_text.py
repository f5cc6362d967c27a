"""What budget, calibrate and tradeoff print explains itself: no bare inf at delta 0 (the reason instead, and the
PLD's own answer where it has one), "best" defined, the sensitivity named, a plan's lines beside its total, a
corrected guarantee compared in words, no guarantee kind the table contradicts, numbers to 6 digits, calibrate
skipping accountants that cannot answer, and tradeoff saying when its curve is flat (exact tests)."""

import math
import re

import dp_accounting
import pytest

from dpaudit import accounting
from dpaudit.cli import main
from dpaudit.cli.budget_text import comparison, num, short_numbers
from dpaudit.cli.tradeoff import flat_reason


def _run(capsys, *argv):
    assert main(list(argv)) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    return captured.out, captured.err


def _rows(out):
    """{accountant: (value, note)} of a printed accountant table."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(pure|approx|rdp|zcdp|pld|shuffle)\s+(\S+)\s*(.*)$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_delta_zero_says_why_instead_of_inf(capsys):
    out, _ = _run(capsys, "budget", "laplace", "--scale", "1", "--delta", "0")
    rows = _rows(out)
    assert rows["pure"][0] == "1" and rows["pld"][0] == "1"  # dp-accounting's PLD: exactly the Laplace's 1/b
    for acct in ("rdp", "zcdp"):
        assert rows[acct][0] == "-" and rows[acct][1].startswith("no answer at δ = 0: ")
    assert "inf" not in out
    assert "sensitivity: l1 sensitivity 1 (the default; --sensitivity to change)" in out
    assert "best: epsilon 1 (pure): the smallest valid answer across the accountants" in out


@pytest.mark.parametrize("scale", [1.0, 3.0, 4.0, 7.0, 0.9, 1.1, 1e4, 0.5])
def test_pld_at_delta_zero_is_sound_for_one_release(scale):
    """One Laplace release: the pessimistic PLD's largest loss (1e-4 is its discretisation step), never below the
    true 1/b, not even by the ulp its doubles lose (scale 4 read 0.24999999999999992 without the margin); inf
    where the PLD keeps mass at infinity (small scales)."""
    eps = accounting.epsilon(dp_accounting.LaplaceDpEvent(scale), 0.0, "pld")
    assert 1.0 / scale <= eps and (eps <= 1.0 / scale + 2e-4 or (scale < 1 and math.isinf(eps)))
    composed = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(scale), 3)
    assert math.isinf(accounting.epsilon(composed, 0.0, "pld"))  # FFT round-off: no answer at delta 0


def test_no_accountant_answers_says_so(capsys):
    out, _ = _run(capsys, "budget", "gaussian", "--sigma", "1", "--delta", "0")
    assert "best: none: no accountant gives a finite epsilon at delta = 0" in out and "inf" not in out


def test_corrected_guarantee_is_compared_not_blamed(capsys):
    out, _ = _run(capsys, "budget", "linucb-sdp-vec", "--horizon", "1000")
    assert re.search(r"corrected: +ε = 1e-12 at δ = 0\.1, tighter than the paper's claim", out)
    assert "basis:" in out and "why:" not in out
    out, _ = _run(capsys, "budget", "hybrid-ucb", "--horizon", "1000")
    assert "looser than the paper's claim" in out and "why:" in out
    assert (
        comparison({"notion": "pure", "epsilon": 1.0}, {"notion": "approx", "epsilon": 0.5, "delta": 0.1})
        == "different"
    )


@pytest.mark.parametrize("algorithm", ["shuffle-se", "dp-se", "hybrid-ucb"])
def test_no_guarantee_kind_the_table_contradicts(algorithm, capsys):
    """A guarantee printed as pure DP has a pure accountant row with a number; where the pure accountant cannot
    derive it, the guarantee is printed as ε at δ = 0 and the pure row says so."""
    out, _ = _run(capsys, "budget", algorithm, "--horizon", "1000")
    pure = _rows(out)["pure"]
    if "(pure DP)" in out:
        assert pure[0] != "-"
    if pure[0] == "-":
        assert "(pure DP)" not in out and "not pure DP" not in pure[1]


def test_plan_shows_each_line_beside_the_total(tmp_path, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[[releases]]\nmechanism = "laplace"\nparams = {scale = 2.0}\ncount = 3\n\n'
        '[[releases]]\nmechanism = "laplace"\nparams = {scale = 4.0}\nlabel = "weekly"\n'
    )
    out, _ = _run(capsys, "budget", "--plan", str(plan), "--at-delta", "0")
    lines = out.splitlines()
    assert re.match(r"^  3 x laplace +1\.5 \(pure\)$", lines[2]) and re.match(
        r"^  1 x weekly +0\.25 \(pure\)$", lines[3]
    )
    assert lines[4].startswith("all lines together") and _rows(out)["pure"][0] == "1.75"


def test_numbers_have_at_most_six_digits(capsys):
    out, _ = _run(capsys, "budget", "shuffle", "--epsilon0", "0.0017748617036597958", "--users", "1000")
    numbers = re.findall(r"(?<![\w.])\d+\.\d+", out)
    assert "0.00177486" in out and numbers and all(len(n.replace(".", "").lstrip("0")) <= 6 for n in numbers)
    assert short_numbers("eps0 = 0.0017748617036597958, n = 10") == "eps0 = 0.00177486, n = 10"
    assert num(118089.0) == "118089" and num(math.inf) == "inf" and num(7) == "7"


def test_calibrate_skips_accountants_that_cannot_answer(capsys):
    out, err = _run(capsys, "calibrate", "laplace", "--delta", "0")
    rows = _rows(out)
    assert rows["rdp"][1].startswith("skipped: no answer at δ = 0") and rows["zcdp"][1].startswith("skipped:")
    assert "calibrating under rdp" not in err and "calibrating under pure" in err
    assert rows["pure"][0] == "1" and "best: scale 1 (pure): the smallest value any accountant certifies" in out


def test_tradeoff_says_when_the_curve_is_flat(capsys):
    out, _ = _run(capsys, "tradeoff", "dp-se", "--epsilons", "0.5,2", "--horizon", "100000", "--runs", "2")
    assert "dp-se: flat: " in out and "longer --horizon" in out


def _point(mean, lo, hi):
    return {"tuned": "epsilon", "final_mean": mean, "final_ci": [lo, hi]}


def test_flat_reason_rules():
    assert flat_reason([_point(10, 8, 12), _point(11, 9, 13)]) is not None  # intervals overlap
    assert flat_reason([_point(1000, 1000, 1000), _point(1005, 1005, 1005)]) is not None  # 0.5% apart, width 0
    assert flat_reason([_point(6000, 5400, 6600), _point(3000, 2700, 3300)]) is None  # the trade-off shows
    assert flat_reason([_point(10, 8, 12)]) is None  # one point: no curve
