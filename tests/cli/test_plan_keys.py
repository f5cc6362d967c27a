"""`dpaudit budget --plan FILE`: a key no table of the plan takes is an error at every level (exit 2),
naming the file, the table and the key, with a close match and the keys the table takes."""

import json

import pytest

from dpaudit import budgets
from dpaudit.cli import main


@pytest.mark.parametrize(
    "text, needles",
    [
        (
            "[[releases]]\nmechanism = 'gaussian'\ncount = 2\nparams = { sigma = 1, sensitivity = 1, sensitivty = 100 }\n",
            [
                "unknown key 'sensitivty' in releases[0].params (mechanism 'gaussian')",
                "did you mean 'sensitivity'?",
                "its keys: sensitivity, sigma",
            ],
        ),
        (
            "relases = 1\n[[releases]]\nmechanism = 'gaussian'\nparams = { sigma = 1 }\n",
            ["unknown key 'relases' in the top level", "did you mean 'releases'?", "its keys: releases"],
        ),
        (
            "[[releases]]\nmechanism = 'laplace'\ncout = 3\nparams = { scale = 1 }\n",
            [
                "unknown key 'cout' in releases[0]",
                "did you mean 'count'?",
                "its keys: algorithm, count, horizon, label, mechanism, params",
            ],
        ),
        (
            (
                "[[releases]]\nmechanism = 'laplace'\nparams = { scale = 1 }\n[[releases]]\nmechanism = 'rr'\n"
                "params = { epsilon0 = 1, bukets = 4 }\n"
            ),
            ["unknown key 'bukets' in releases[1].params (mechanism 'rr')", "did you mean 'buckets'?"],
        ),
        (
            "[[releases]]\nalgorithm = 'dp-se'\nhorizon = 100\nparams = { epsilom = 1 }\n",
            ["releases[0]", "dp-se does not take --epsilom (did you mean --epsilon?)"],
        ),
    ],
)
def test_unknown_plan_keys_exit_2(tmp_path, text, needles, capsys):
    path = tmp_path / "plan.toml"
    path.write_text(text)
    assert main(["budget", "--plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--plan" in err and str(path) in err
    for needle in needles:
        assert needle in err


def test_unknown_keys_of_a_json_plan(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps({"releases": [{"mechanism": "gaussian", "params": {"sigma": 2.0, "sigm": 1.0}}], "version": 1})
    )
    with pytest.raises(ValueError, match="unknown key 'version' in the top level"):
        budgets.load_plan(path)
    path.write_text(json.dumps({"releases": [{"mechanism": "gaussian", "params": {"sigma": 2.0, "sigm": 1.0}}]}))
    with pytest.raises(ValueError, match=r"unknown key 'sigm' in releases\[0\]\.params"):
        budgets.load_plan(path)


def test_a_plan_of_known_keys_still_loads(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text(
        "[[releases]]\nlabel = 'daily'\nmechanism = 'gaussian'\ncount = 3\n"
        "params = { sigma = 2.0, sensitivity = 1.0 }\n"
    )
    (release,) = budgets.load_plan(path)
    assert (release.label, release.count) == ("daily", 3)
