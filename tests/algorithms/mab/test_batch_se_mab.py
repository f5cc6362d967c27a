"""Chowdhury & Zhou's (ICLR 2023) batch SE (Alg. 1): protocol parameters, analyzer, batch vs user-by-user noise, bugs, regret."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import SuccessiveElimination
from dpaudit.algorithms.mab.environment import BernoulliArms, ClippedGaussianArms, RewardTable, cz_means
from dpaudit.mechanisms.secagg import SecAggParameters


@pytest.mark.parametrize("n, g, tau, m", [(16, 4, 59, 183), (1024, 32, 465, 33699), (65536, 256, 3715, 16784647)])
def test_dist_dp_parameters_match_the_checked_table(n, g, tau, m):
    """Chowdhury & Zhou (ICLR 2023), Thm 1's parameters worked out by hand: T = 10^6, eps = 1, p = 1/T."""
    assert BatchSE("dist-dp", 1.0).batch_params(n, 10**6) == SecAggParameters(n, g, tau, m)


def _two_sample_p(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square test of homogeneity on the integer values, tail bins pooled to >= 20 expected."""
    lo, hi = np.percentile(np.concatenate([a, b]), [1, 99])
    edges = np.unique(np.concatenate([[-np.inf], np.linspace(lo, hi + 1, 30).round(), [np.inf]]))
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    keep = (ca + cb) > 0
    return float(stats.chi2_contingency(np.stack([ca[keep], cb[keep]]))[1])


@pytest.mark.parametrize("protocol", ["dist-dp", "dist-rdp", "local"])
def test_batch_path_and_user_path_have_the_same_noise_law(protocol):
    """Fast path (one draw from the total's exact law) vs every share drawn and summed.
    Seeded chi-square homogeneity test at level 1e-3: a correct pair fails for 0.1% of seeds.
    Twin: the user path of the authors' inverted Pólya parameter must be rejected."""
    fast = BatchSE(protocol, 1.0, path="batch").noise_total(np.random.default_rng(1), 20_000, 64, 10**6)
    slow = BatchSE(protocol, 1.0, path="users").noise_total(np.random.default_rng(2), 20_000, 64, 10**6)
    assert _two_sample_p(fast, slow) > 1e-3
    if protocol == "dist-dp":
        buggy = BatchSE(protocol, 1.0, path="users", polya="inverted").noise_total(
            np.random.default_rng(3), 20_000, 64, 10**6
        )
        assert _two_sample_p(fast, buggy) < 1e-3


def test_noise_variances_match_the_central_mechanisms():
    """Var DLap(g/eps) = 2q/(1-q)^2 with q = e^{-eps/g}; Skellam total variance g^2/eps^2. Relative
    s.e. of a variance from 40k draws of these near-symmetric laws is < 2.5%: 15% bands fail < 1e-6."""
    rng = np.random.default_rng(4)
    bp = BatchSE("dist-dp", 1.0).batch_params(64, 10**6)
    q = math.exp(-1.0 / bp.g)
    v = BatchSE("dist-dp", 1.0).noise_total(rng, 40_000, 64, 10**6).var()
    assert abs(v / (2 * q / (1 - q) ** 2) - 1) < 0.15
    bps = BatchSE("dist-rdp", 1.0).batch_params(64, 10**6)
    vs = BatchSE("dist-rdp", 1.0).noise_total(rng, 40_000, 64, 10**6).var()
    assert abs(vs / bps.g**2 - 1) < 0.15
    vb = BatchSE("dist-dp", 1.0, polya="inverted").noise_total(rng, 40_000, 64, 10**6).var()
    assert (
        vb < 1.0
    )  # Pólya parameter inverted in the authors' code (Chowdhury & Zhou (ICLR 2023), Sec. 7 fn. 5): 0.30 instead of 127.8 at n = 64


def test_inverted_polya_and_per_batch_events():
    ev = BatchSE("dist-dp", 1.0).batch_event(64, 10**6)
    assert ev.noise_parameter * ev.sensitivity == pytest.approx(1.0)
    bug = BatchSE("dist-dp", 1.0, polya="inverted").batch_event(64, 10**6)
    assert bug.noise_parameter * bug.sensitivity == pytest.approx(17.1, abs=0.05)  # checked value: 17.1 at n = 64
    assert BatchSE("dist-dp", 1.0, polya="inverted").privacy(10**4).corrected.epsilon > 17
    sk = BatchSE("dist-rdp", 1.0, s=10).batch_event(16, 10**6)
    assert (sk.variance, sk.l1_sensitivity) == (40**2, 40)
    assert BatchSE("dist-cdp", 1.0).batch_event(16, 10**6).rho == pytest.approx(0.5)
    cdp = BatchSE("dist-cdp", 1.0, s=1).privacy(10**6).claim
    assert math.sqrt(2 * cdp.rho) == pytest.approx(1.0035, abs=2e-4)  # checked value: eps_hat(1) = 1.0035 at s=1, T=1e6
    ret = BatchSE("dist-dp", 1.0, returning=4).privacy(1000)
    assert ret.event.count == 4 and ret.event.event.events[0].noise_parameter * ret.event.event.events[
        0
    ].sensitivity == pytest.approx(0.25)
    assert BatchSE("local", 1.0).privacy(10**6).trust_model == "local"


def test_user_path_on_a_table_changes_only_through_one_release():
    """Audits change one user: with path='users' the released aggregates of a table are drawn
    share by share; the first aggregate (batch 1, arm 0) is the only one holding user 0."""
    table = RewardTable(np.zeros((200, 2)))
    out = BatchSE("dist-dp", 1.0, path="users", p=0.1).run(table, np.random.default_rng(5), 6)
    agg = out.statistics["aggregates"]
    assert agg.shape[0] == 6 and agg.shape[2] == 2 and np.all(np.isfinite(agg[:, 0, :]))
    assert np.all((agg[:, 0, :] >= 0) & (agg[:, 0, :] < BatchSE("dist-dp", 1.0, p=0.1).batch_params(2, 200).m))


def test_regret_orderings():
    """Private >= non-private on the same template; local pays the most; Gaussian and Bernoulli rewards run."""
    rng = np.random.default_rng(6)
    mu = cz_means(rng, "easy", 40)
    T, cp = 200_000, np.array([200_000])
    env = BernoulliArms(mu)
    se = SuccessiveElimination(beta=0.1).run(env, np.random.default_rng(7), 40, T).regret(mu, cp).mean()
    dp = BatchSE("dist-dp", 0.5, p=0.1).run(env, np.random.default_rng(8), 40, T).regret(mu, cp).mean()
    ldp = BatchSE("local", 0.5, p=0.1).run(env, np.random.default_rng(9), 40, T).regret(mu, cp).mean()
    cdp = (
        BatchSE("central", 0.5, p=0.1)
        .run(ClippedGaussianArms(mu), np.random.default_rng(10), 40, T)
        .regret(mu, cp)
        .mean()
    )
    assert ldp > dp > se and ldp > cdp


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"protocol": "secagg"}, "protocol"),
        ({"epsilon": 0}, "epsilon"),
        ({"p": 1.5}, "p"),
        ({"base": 1}, "base"),
        ({"returning": 0}, "returning"),
        ({"s": 0.5}, "s"),
        ({"path": "fast"}, "path"),
        ({"c": -1.0}, "c"),
        ({"protocol": "dist-rdp", "polya": "inverted"}, "polya"),
    ],
)
def test_validation(kw, name):
    with pytest.raises(ValueError, match=name):
        BatchSE(**kw)


def test_paper_statements_of_dist_rdp_and_dist_cdp():
    """Chowdhury & Zhou (ICLR 2023), Thm 2 as printed and Thm 4 as stated (dpaudit.algorithms.mab.claims)."""
    from dpaudit.algorithms.mab.claims import dist_cdp_paper_event, skellam_paper_rdp

    assert skellam_paper_rdp(2, 1.0, 10.0) == pytest.approx(1.0 + min(3 / 400 + 3 / 2000, 3 / 20))
    with pytest.raises(ValueError, match="alpha"):
        skellam_paper_rdp(1, 1.0, 10.0)
    # s large: xi vanishes, eps_hat = eps, rho = eps^2/2
    assert dist_cdp_paper_event(0.5, 10.0, 10**6).rho == pytest.approx(0.125, rel=1e-12)
    assert dist_cdp_paper_event(0.5, 0.3, 10**4).rho > 0.125  # small s: the uniform xi adds to eps
    with pytest.raises(ValueError, match="horizon"):
        dist_cdp_paper_event(0.5, 10.0, 1)
