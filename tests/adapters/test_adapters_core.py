"""dpaudit.adapters without the libraries: importing it imports neither, a missing library names its extra, and
the shared target checks its inputs and states zCDP claims soundly (exact properties, no sampling)."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm

from dpaudit.accounting.guarantees import ApproxDp, PureDp, Zcdp, zcdp_epsilon
from dpaudit.adapters import (
    LibraryTarget,
    audit_target,
    diffprivlib_laplace,
    opendp_gaussian,
    opendp_laplace,
)
from dpaudit.adapters.target import point_claim

PURE = PureDp(1.0)


def test_importing_adapters_imports_no_library():
    code = "import sys, dpaudit.adapters; print(sorted({'opendp', 'diffprivlib', 'sklearn'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "build, extra",
    [
        (lambda: opendp_laplace(1.0), "opendp"),
        (lambda: opendp_gaussian(1.0), "opendp"),
        (lambda: diffprivlib_laplace(1.0), "diffprivlib"),
    ],
)
def test_a_missing_library_names_its_extra(monkeypatch, build, extra):
    for module in (extra, f"{extra}.prelude", f"{extra}.mechanisms", f"{extra}.mechanisms.base"):
        monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    with pytest.raises(ImportError, match=rf"pip install 'dpaudit\[{extra}\]'"):
        build()


def _target(claim: PureDp | Zcdp = PURE):
    def sampler(data, rng, size):
        return rng.laplace(data, 1.0, size)

    epsilon, delta = point_claim(claim, 1e-6 if isinstance(claim, Zcdp) else None)
    return LibraryTarget(
        name="numpy laplace",
        library="numpy",
        version=np.__version__,
        claim=claim,
        claim_epsilon=epsilon,
        claim_delta=delta,
        neighbours=(0.0, 1.0),
        reproducible=True,
        sampler=sampler,
    )


def test_target_checks_size_and_rng():
    target = _target()
    rng = np.random.default_rng(0)
    assert target(0.0, rng, 0).shape == (0,) and target(0.0, rng, 3).shape == (3,)
    with pytest.raises(ValueError, match="size"):
        target(0.0, rng, -1)
    with pytest.raises(TypeError, match="size"):
        target(0.0, rng, 2.5)
    with pytest.raises(TypeError, match="rng"):
        target(0.0, np.random.RandomState(0), 3)
    with pytest.raises(TypeError, match="target"):
        audit_target(lambda data, rng, size: rng.laplace(data, 1.0, size))


def test_point_claims():
    assert point_claim(PureDp(1.5), None) == (1.5, 0.0)
    assert point_claim(ApproxDp(1.0, 1e-5), None) == (1.0, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        point_claim(PureDp(1.0), 1e-6)
    with pytest.raises(ValueError, match="delta"):
        point_claim(Zcdp(0.5), None)
    # rho-zCDP at delta: never below the Gaussian's exact epsilon (sigma = 1: rho = 1/2), never above the
    # closed form rho + 2 sqrt(rho log(1/delta)) (Bun, Steinke 2016, Prop. 1.3)
    eps, delta = point_claim(Zcdp(0.5), 1e-6)
    exact_delta = norm.cdf(0.5 - eps) - np.exp(eps) * norm.cdf(-0.5 - eps)  # Balle, Wang (ICML 2018), Thm 8
    assert delta == 1e-6 and eps == zcdp_epsilon(0.5, 1e-6)
    assert exact_delta <= 1e-6 and eps <= 0.5 + 2 * np.sqrt(0.5 * np.log(1e6))


def test_audit_target_uses_the_claim_and_pair():
    result = audit_target(_target(), samples=5_000, seed=1, executor="serial", progress=False)
    assert result.verdict == "consistent" and 0.0 < result.epsilon_lower <= 1.0
