"""`dpaudit budget --plan FILE`: several releases one user takes part in, composed into one epsilon per user."""

import json

import dp_accounting
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import accounting, budgets
from dpaudit.cli import main
from dpaudit.registry import ALGORITHMS, load_plugins

load_plugins()

PLAN = """
[[releases]]
algorithm = "dp-se"
horizon = 1000
count = 3
params = { epsilon = 0.5 }

[[releases]]
label = "weekly dashboard"
mechanism = "laplace"
count = 4
params = { scale = 2.0 }
"""


def test_plan_composes_releases_sequentially(tmp_path, capsys):
    """Pure accountant by hand (Dwork & Roth 2014, Thm 3.16): 3 runs of 0.5-DP DP-SE + 4 Laplace(2) = 1.5 + 2."""
    path = tmp_path / "plan.toml"
    path.write_text(PLAN)
    assert main(["budget", "--plan", str(path), "--at-delta", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["accountant"]: r for r in out["results"]}
    assert rows["pure"]["epsilon"] == pytest.approx(3.5, rel=1e-12)
    assert [r["label"] for r in out["releases"]] == ["dp-se T=1000", "weekly dashboard"]
    assert out["releases"][0]["best"]["epsilon"] == pytest.approx(1.5)


def test_plan_json_equals_the_composed_event_under_every_accountant(tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps(
            {
                "releases": [
                    {"algorithm": "dist-cdp-se", "horizon": 2000, "count": 2},
                    {"mechanism": "gaussian", "params": {"sigma": 5.0}, "count": 10},
                ]
            }
        )
    )
    assert main(["budget", "--plan", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    event = dp_accounting.ComposedDpEvent(
        [
            dp_accounting.SelfComposedDpEvent(ALGORITHMS.get("dist-cdp-se").privacy(horizon=2000).event, 2),
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(5.0), 10),
        ]
    )
    assert out["delta"] == 1e-5
    for row in out["results"]:
        if row["supported"]:
            assert row["epsilon"] == accounting.epsilon(event, 1e-5, row["accountant"])
    assert main(["budget", "--plan", str(path)]) == 0
    assert "2 x dist-cdp-se T=2000" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text,needle",
    [
        ("[[releases]]\nalgorithm = 'nope'\nhorizon = 10\n", "unknown algorithm"),
        ("[[releases]]\nalgorithm = 'dp-se'\n", "horizon"),
        ("[[releases]]\nmechanism = 'gaussian'\ncount = 0\nparams = { sigma = 1.0 }\n", "count"),
        ("[[releases]]\nmechanism = 'gaussian'\nalgorithm = 'dp-se'\n", "exactly one"),
        ("releases = []\n", "non-empty"),
        ("not toml = = 1\n", "TOML"),
        ("[[releases]]\nalgorithm = 'dp-se'\nhorizon = 100\nparams = { dim = 3 }\n", "--dim"),
    ],
)
def test_bad_plan_exits_2_naming_the_flag(tmp_path, text, needle, capsys):
    path = tmp_path / "plan.toml"
    path.write_text(text)
    assert main(["budget", "--plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--plan" in err and needle in err


def test_missing_plan_file_exits_2(tmp_path, capsys):
    assert main(["budget", "--plan", str(tmp_path / "none.toml")]) == 2
    assert "--plan" in capsys.readouterr().err


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(st.floats(0.05, 20.0), st.integers(1, 1000)), min_size=1, max_size=4))
def test_plan_of_laplace_releases_is_the_sum_under_the_pure_accountant(parts):
    """Exact: Laplace(b) at sensitivity 1 is 1/b-DP; k-fold sequential composition adds (Dwork & Roth 2014, Thm 3.16)."""
    releases = [budgets.Release(f"laplace {b}", dp_accounting.LaplaceDpEvent(b), k) for b, k in parts]
    (pure,) = budgets.accountant_rows(budgets.plan_event(releases), 0.0, None, accountants=["pure"])
    assert pure["epsilon"] == pytest.approx(sum(k / b for b, k in parts), rel=1e-9)
