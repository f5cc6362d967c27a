"""The noise sources backed by OpenDP and diffprivlib: their laws (goodness of fit, each with a twin at the wrong
scale that must fail), values added by the library, DP-SE and Dist-DP-SE run end to end on them, and the
catalog's library-bandit entries.  Each library's tests skip when it is not installed.

False-failure rates: each goodness-of-fit test rejects at level 10^-3.  diffprivlib draws from the seeded
generator, so its tests are deterministic (a fresh seed would fail one with probability 10^-3); OpenDP cannot
be seeded, so each of its fit tests fails falsely with probability 10^-3 per run.  A twin passes wrongly (the
wrong scale not rejected) with probability below 10^-6: at 20 000 draws and a scale 1.2 times too large the
Kolmogorov-Smirnov distance is 0.034 against a critical value of 0.014, and the chi-square statistic is
about 10^3 against a critical value of 50.
"""

import sys

import numpy as np
import pytest
from scipy import stats

from dpaudit.adapters import DiffprivlibNoise, OpenDPNoise
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.environment import BernoulliArms
from dpaudit.algorithms.mab.outcome import checkpoint_grid
from dpaudit.mechanisms.noise_source import DPAUDIT_NOISE, NoiseSource

LEVEL = 1e-3
N = 20_000
SCALE = 2.0
DSCALE = 7 / 3
WRONG = 1.2  # the twins' scale factor

LIBRARIES = {"opendp": ("opendp.prelude", OpenDPNoise), "diffprivlib": ("diffprivlib.mechanisms", DiffprivlibNoise)}


@pytest.fixture(params=sorted(LIBRARIES))
def source(request):
    module, cls = LIBRARIES[request.param]
    pytest.importorskip(module)
    return cls()


def laplace_p(draws: np.ndarray, scale: float) -> float:
    return float(stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue)


def dlaplace_p(draws: np.ndarray, scale: float) -> float:
    """Chi-square p-value of integer draws against DLap(scale) on the cells ..., -K-1 | -K, ..., K | K+1, ...."""
    k = 12
    law = stats.dlaplace(1.0 / scale)
    inner = np.arange(-k, k + 1)
    expected = np.concatenate([[law.cdf(-k - 1)], law.pmf(inner), [law.sf(k)]]) * draws.size
    observed = np.concatenate([[np.sum(draws < -k)], [np.sum(draws == v) for v in inner], [np.sum(draws > k)]])
    return float(stats.chisquare(observed, expected).pvalue)


def test_sources_have_the_protocol(source):
    assert isinstance(source, NoiseSource) and source.name in LIBRARIES
    assert source.reproducible is (source.name == "diffprivlib")


def test_laplace_has_the_law_and_its_twin_fails(source):
    draws = source.laplace(np.random.default_rng(1), np.zeros(N), SCALE)
    assert draws.shape == (N,) and draws.dtype == np.float64
    assert laplace_p(draws, SCALE) > LEVEL
    assert laplace_p(draws, WRONG * SCALE) < LEVEL


def test_discrete_laplace_has_the_law_and_its_twin_fails(source):
    draws = source.discrete_laplace(np.random.default_rng(2), np.zeros(N, dtype=np.int64), DSCALE)
    assert draws.shape == (N,) and draws.dtype == np.int64
    assert dlaplace_p(draws, DSCALE) > LEVEL
    assert dlaplace_p(draws, WRONG * DSCALE) < LEVEL


def test_the_library_adds_the_noise_to_the_values(source):
    rng = np.random.default_rng(3)
    values = np.array([[0.0, 1.0], [1e3, -2.5]])
    out = source.laplace(rng, values, 1e-6)  # noise far below the values' spacing
    assert out.shape == (2, 2) and np.allclose(out, values, atol=1e-3)
    big = np.array([10**12, -(10**12), 5], dtype=np.int64)
    out = source.discrete_laplace(rng, big, 0.01)  # DLap(0.01) is 0 but with probability 2e-43
    assert np.array_equal(out, big)


def test_a_bad_scale_is_named(source):
    for bad in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="scale"):
            source.laplace(np.random.default_rng(0), np.zeros(3), bad)
    with pytest.raises(TypeError, match="scale"):
        source.discrete_laplace(np.random.default_rng(0), np.zeros(3, dtype=np.int64), "1")


def test_diffprivlib_is_reproducible_from_the_seed():
    pytest.importorskip("diffprivlib.mechanisms")
    a, b = (DiffprivlibNoise().laplace(np.random.default_rng(5), np.zeros(50), 1.0) for _ in range(2))
    assert np.array_equal(a, b)


def test_opendp_chunks_give_one_draw_per_value():
    pytest.importorskip("opendp.prelude")
    out = OpenDPNoise(chunk=7).discrete_laplace(np.random.default_rng(0), np.arange(30).reshape(5, 6), 0.01)
    assert np.array_equal(out, np.arange(30).reshape(5, 6))
    with pytest.raises(ValueError, match="chunk"):
        OpenDPNoise(chunk=0)


def test_a_missing_library_names_its_extra(monkeypatch):
    for module in ("opendp", "opendp.prelude", "diffprivlib", "diffprivlib.mechanisms"):
        monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    with pytest.raises(ImportError, match=r"dpaudit\[opendp\]"):
        OpenDPNoise().laplace(np.random.default_rng(0), np.zeros(2), 3.25)  # a scale no other test builds
    with pytest.raises(ImportError, match=r"dpaudit\[diffprivlib\]"):
        DiffprivlibNoise().laplace(np.random.default_rng(0), np.zeros(2), 1.0)


def mean_regret(algo, runs: int = 10, horizon: int = 20_000) -> float:
    env = BernoulliArms(np.array([0.9, 0.6, 0.5]))
    out = algo.run(env, np.random.default_rng(11), runs, horizon)
    return float(out.regret(env.means, checkpoint_grid(horizon, 2))[:, -1].mean())


def test_dpse_runs_end_to_end_on_the_librarys_noise(source):
    """Regret at T = 20 000 on means (0.9, 0.6, 0.5): DP-SE's regret is set by its epoch lengths, which the
    noise hardly moves, so the library's is within 25% of dpaudit's and far below T times the largest gap."""
    default, library = (mean_regret(DPSE(1.0, noise_source=s)) for s in (DPAUDIT_NOISE, source))
    assert 0 < library < 0.2 * 20_000 * 0.4
    assert abs(library - default) <= 0.25 * default


def test_dist_dp_se_runs_end_to_end_on_the_librarys_noise(source):
    default, library = (mean_regret(BatchSE("dist-dp", 1.0, noise_source=s)) for s in (DPAUDIT_NOISE, source))
    assert 0 < library < 0.2 * 20_000 * 0.4
    assert abs(library - default) <= 0.25 * default


def test_the_catalog_lists_one_entry_per_installed_library_and_algorithm():
    from dpaudit.audits.libraries import bandits

    installed = {lib for lib, (module, _) in LIBRARIES.items() if _imports(module)}
    names = {e.name for e in bandits.bandit_entries()}
    assert names == {f"libraries.{lib}.{algo}" for lib in installed for algo in ("dp-se", "dist-dp-se")}
    assert bandits.bandit_entries() is bandits.bandit_entries()  # the same entries: registering again is harmless


def test_a_library_not_installed_gets_no_entry(monkeypatch):
    from dpaudit.audits.libraries import bandits

    for module in ("opendp", "opendp.prelude", "diffprivlib", "diffprivlib.mechanisms"):
        monkeypatch.setitem(sys.modules, module, None)
    assert bandits.installed_sources() == {}


def test_the_entries_targets_release_what_their_claims_are_about(source):
    from dpaudit.audits.libraries import bandits

    entries = {e.algorithm: e for e in bandits.bandit_entries() if e.name.startswith(f"libraries.{source.name}.")}
    assert set(entries) == {"dp-se", "dist-dp-se"}
    for algo, entry in entries.items():
        pair = entry.pairs[0]
        target = entry.target()
        out0, out1 = (target(d, np.random.default_rng(0), 50) for d in (pair.d0, pair.d1))
        assert out0.shape == out1.shape == (50,)
        assert out0.dtype == (np.float64 if algo == "dp-se" else np.int64)
        assert entry.audit_options == {"float_check": "report"}
        assert next((c.label, c.epsilon) for c in entry.claims) == ("paper", 1.0)
    dpse = entries["dp-se"].target()
    assert dpse.algorithm.noise_source == source and dpse.horizon == bandits.HORIZON


def test_an_entry_reports_both_verdicts():
    pytest.importorskip("diffprivlib.mechanisms")
    from dpaudit.audits.libraries import bandits

    entry = next(e for e in bandits.bandit_entries() if e.name == "libraries.diffprivlib.dp-se")
    record = entry.run(samples=5_000, regret=False)
    assert record.get("error") is None
    claim = record["claims"][0]
    assert claim["label"] == "paper" and "floating_point" in claim


def _imports(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True
