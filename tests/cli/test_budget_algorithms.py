"""`dpaudit budget ALGORITHM --horizon T`: every registered algorithm's budget is its declared event under
each accountant; hand computations from the papers for two algorithms per family; bad input exits 2."""

import json
import math

import pytest
from scipy import stats

from dpaudit import accounting
from dpaudit.cli import main
from dpaudit.registry import ALGORITHMS, load_plugins

load_plugins()
T = 1000


def _budget(capsys, *argv):
    assert main(["budget", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _rows(out):
    return {r["accountant"]: r for r in out["results"]}


def _value(x):
    return math.inf if x == "inf" else x


@pytest.mark.parametrize("name", ALGORITHMS.names())
def test_budget_is_the_declared_event_under_every_accountant(name, capsys):
    privacy = ALGORITHMS.get(name).privacy(horizon=T)
    out = _budget(capsys, name, "--horizon", str(T))
    assert out["trust_model"] == privacy.trust_model and out["relation"] == privacy.relation
    assert out["claim"] == privacy.claim.to_json()
    assert (out["corrected"] is None) == (privacy.corrected is None)
    assert (out["reason"] is None) == (privacy.corrected is None)
    delta = privacy.claim.delta if privacy.claim.notion in ("pure", "approx") else 1e-5
    assert out["delta"] == delta
    event = privacy.event if privacy.event is not None else __import__("dp_accounting").NonPrivateDpEvent()
    rows = _rows(out)
    assert set(rows) == set(accounting.ACCOUNTANTS)
    for acct, row in rows.items():
        if row["supported"]:
            assert _value(row["epsilon"]) == accounting.epsilon(event, delta, acct), acct
        else:
            assert acct not in accounting.supporting_accountants(event) or row.get("failed"), acct


def test_budget_table_states_trust_model_relation_claim_and_why(capsys):
    assert main(["budget", "hybrid-ucb", "--horizon", "5000", "--epsilon", "0.5"]) == 0
    out = capsys.readouterr().out
    for text in (
        "trust model: central",
        "neighbours:  round-vector",
        "paper claim: ε = 0.5 (pure DP)",
        "corrected:   ε = 0.75 (pure DP), looser than the paper's claim",
        "why:",
        "Hu, Huang, Mehta",
        "best: epsilon 0.75 (pure): the smallest valid answer across the accountants",
    ):
        assert text in out, text


# --- hand computations from the papers -------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_mab_hybrid_ucb_hand(eps, capsys):
    """Hu, Huang, Mehta (arXiv 2021) Alg. 4: array sums Lap(1/(0.5 eps)) plus tree r nodes Lap(r/(0.5 eps));
    a leaf of tree r lies in r+1 nodes: 0.5 eps + 0.5 eps (r+1)/r, worst at r = 1: 1.5 eps (claim: eps)."""
    out = _budget(capsys, "hybrid-ucb", "--horizon", "4096", "--epsilon", str(eps))
    assert out["claim"]["epsilon"] == eps
    assert _rows(out)["pure"]["epsilon"] == pytest.approx(1.5 * eps, rel=1e-12)


@pytest.mark.parametrize("eps", [0.2, 1.0])
def test_mab_ftnl_and_dp_se_hand(eps, capsys):
    """FTNL (Hu, Huang, Mehta, Alg. 2-3): Report Noisy Max with Lap(1/eps) over sums that may move in opposite
    directions is 2 eps-DP (Dwork & Roth 2014, Claim 3.9 at sensitivity 2). DP-SE (Sajed & Sheffet, ICML 2019):
    each reward enters one epoch sum with Lap(1/eps): eps by parallel composition."""
    assert _rows(_budget(capsys, "ftnl", "--horizon", "1000", "--epsilon", str(eps)))["pure"][
        "epsilon"
    ] == pytest.approx(2 * eps, rel=1e-12)
    assert _rows(_budget(capsys, "dp-se", "--horizon", "1000", "--epsilon", str(eps)))["pure"][
        "epsilon"
    ] == pytest.approx(eps, rel=1e-12)


def _analytic_gaussian_delta(z: float, eps: float) -> float:
    """delta(eps) of a Gaussian mechanism with noise multiplier z (Balle & Wang, "Improving the Gaussian
    Mechanism", ICML 2018, Thm 8): Phi(1/(2z) - eps z) - e^eps Phi(-1/(2z) - eps z)."""
    return stats.norm.cdf(0.5 / z - eps * z) - math.exp(eps) * stats.norm.cdf(-0.5 / z - eps * z)


@pytest.mark.parametrize("eps,delta", [(0.5, 0.01), (1.0, 0.1)])
def test_linear_ldp_hand(eps, delta, capsys):
    """Locally private LinUCB (Chowdhury & Zhou, ICML 2022, Prop. F.1): sigma = 4 sqrt(2 ln(2.5/delta))/eps on
    the vector (L2 sensitivity 2) and the upper triangle (sqrt 2): one Gaussian of sensitivity sqrt 6."""
    z = 4 * math.sqrt(2 * math.log(2.5 / delta)) / eps / math.sqrt(6)
    at = 0.05
    out = _budget(
        capsys, "linucb-ldp", "--horizon", "500", "--epsilon", str(eps), "--delta", str(delta), "--at-epsilon", str(at)
    )
    exact = _analytic_gaussian_delta(z, at)
    assert out["epsilon"] == at
    pld = _rows(out)["pld"]["delta"]
    assert pld == pytest.approx(exact, rel=1e-6)  # the PLD accountant uses the exact Gaussian curve


def test_linear_non_private_linucb_has_no_guarantee(capsys):
    """LinUCB / OFUL (Abbasi-Yadkori et al., NeurIPS 2011) releases its actions unperturbed: no finite epsilon."""
    out = _budget(capsys, "linucb", "--horizon", "100")
    assert out["claim"]["notion"] == "none" and out["trust_model"] == "none"
    assert all(r["epsilon"] == "inf" for r in out["results"] if r["supported"])


@pytest.mark.parametrize("name,theorem", [("shuffle-glm", "Theorem 5.1"), ("private-glm", "Theorem 6.2")])
def test_glm_claims_hand(name, theorem, capsys):
    """Sarmasarkar (shuffle/joint DP GLM bandits): both claim (eps, delta) as given (Thm 5.1, Thm 6.2).
    ShuffleGLM's own split (Thm 5.1): (eps/2, delta/2) for the covariance sums plus (eps/2, delta/2) for P_GD
    per batch, batches on disjoint users: basic composition gives exactly (eps, delta)."""
    eps, delta = 2.0, 0.02
    out = _budget(capsys, name, "--horizon", "600", "--epsilon", str(eps), "--delta", str(delta))
    assert (out["claim"]["epsilon"], out["claim"]["delta"]) == (eps, delta) and theorem in out["claim"]["source"]
    assert out["trust_model"] == ("shuffle" if name == "shuffle-glm" else "joint")
    if name == "shuffle-glm":
        privacy = ALGORITHMS.get(name).privacy(horizon=600, epsilon=eps, delta=delta)
        # the approx accountant composes optimally (Kairouz, Oh, Viswanath, ICML 2015): at most the basic sum
        assert 0.99 * eps <= accounting.epsilon(privacy.paper_event, delta, "approx") <= eps * (1 + 1e-12)


def test_conse_hand(capsys):
    """DP-ConSE (Li, Shi, Simchi-Levi, ICML 2024, Thm 3.5) claims (eps, 1/n) over n units; ConSE (Alg. 1)
    is not private."""
    out = _budget(capsys, "dp-conse", "--horizon", "2000", "--epsilon", "0.7")
    assert (out["claim"]["epsilon"], out["claim"]["delta"]) == (0.7, 1 / 2000) and out["relation"] == "unit"
    assert out["corrected"]["epsilon"] > 0.7 and "Li, Shi, Simchi-Levi" in out["reason"]
    out = _budget(capsys, "conse", "--horizon", "2000")
    assert out["claim"]["notion"] == "none"


def test_budget_delta_at_epsilon_for_an_algorithm(capsys):
    out = _budget(capsys, "dist-cdp-se", "--horizon", "2000", "--at-epsilon", "3")
    assert out["epsilon"] == 3.0 and all(0 <= r["delta"] <= 1 for r in out["results"] if r["supported"])


def test_returning_users_change_the_relation(capsys):
    unique = _budget(capsys, "linucb-sdp-amp", "--horizon", "400", "--epsilon", "0.2", "--delta", "0.1")
    ret = _budget(
        capsys, "linucb-sdp-amp", "--horizon", "400", "--epsilon", "0.2", "--delta", "0.1", "--users", "returning"
    )
    assert unique["relation"] == "user" and ret["relation"] == "returning-user"


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["budget", "no-such-algorithm", "--horizon", "10"], "MECHANISM|ALGORITHM"),
        (["budget", "dp-se"], "--horizon"),
        (["budget", "dp-se", "--horizon", "3"], "--horizon"),  # below the K = 5 arms of the default instance
        (["budget", "dp-se", "--horizon", "100", "--dim", "3"], "--dim"),
        (["budget", "dp-se", "--horizon", "100", "--sigma", "3"], "--sigma"),
        (["budget", "dp-se", "--horizon", "100", "--noise", "bogus"], "--noise"),
        (["budget", "dp-se", "--horizon", "100", "--count", "3"], "--count"),
        (["budget", "gaussian", "--sigma", "1", "--at-delta", "1e-5"], "--at-delta"),
        (["budget", "gaussian", "--sigma", "1", "--horizon", "5"], "--horizon"),
        (["budget", "gaussian", "--sigma", "1", "--users", "unique"], "--users"),
        (["budget", "hybrid-ucb", "--horizon", "100", "--at-delta", "2"], "--at-delta"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(argv, flag, capsys):
    assert main(argv) == 2
    assert flag in capsys.readouterr().err


def test_python_api_matches_the_cli(capsys):
    from dpaudit import budgets

    out = _budget(capsys, "ftnl", "--horizon", "700", "--epsilon", "0.3")
    assert budgets.json_number(budgets.algorithm_budget("ftnl", 700, {"epsilon": 0.3})) == out
