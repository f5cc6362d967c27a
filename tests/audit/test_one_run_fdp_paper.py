"""dpaudit's f-DP one-run test against the recursion as Mahloujifar, Melis, Chaudhuri print it ("Auditing
f-Differential Privacy in One Run", ICML 2025, Alg. 3 and the code of their appendix: mass tau c / m and
tau (c' - c) / m at c, h_i = max(h_{i+1}, fbar^-1(r_{i+1})), r_i = r_{i+1} + i / (c' - i) (h_i - h_{i+1}),
reject when r_0 + h_0 > c' / m), with the GDP curve fbar^-1(y) = Phi(Phi^-1(y) - mu).  Points: the paper's own
(App. B: sigma = 1, m = 10^5, c' = 1500, c = 1429, tau = 0.05) and two others.  Deterministic: no false
failures.  Twin: a Gaussian inverse off by 1% in mu fails the same check.  Under a second."""

import functools

import pytest
from scipy.special import ndtr, ndtri

from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.audit.one_run_fdp import fdp_mu_lower, fdp_rejects, gaussian_curve

TAU = 0.05
POINTS = ((100_000, 1500, 1429), (100_000, 894, 858), (1000, 200, 150))


def _paper_rejects(mu: float, m: int, k: int, c: int) -> bool:
    h, r = TAU * (k - c) / m, TAU * c / m
    for i in range(c - 1, -1, -1):
        h_next = max(h, float(ndtr(ndtri(r) - mu)))
        r += i / (k - i) * (h_next - h)
        h = h_next
    return r + h > k / m


@functools.cache
def _paper_mu_lower(m: int, k: int, c: int) -> float:
    """The largest GDP mu the printed recursion rejects (bisection to 5 / 2^40)."""
    lo, hi = 0.0, 5.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _paper_rejects(mid, m, k, c) else (lo, mid)
    return lo


def _agrees(curve_of, m: int, k: int, c: int) -> bool:
    """dpaudit rejects mu 0.1% below the printed recursion's boundary and not mu 0.1% above it."""
    mu = _paper_mu_lower(m, k, c)
    below = fdp_rejects(curve_of(mu * (1 - 1e-3)), m, k, c, TAU)[0]
    above = fdp_rejects(curve_of(mu * (1 + 1e-3)), m, k, c, TAU)[0]
    return bool(below) and not bool(above)


@pytest.mark.parametrize("m, k, c", POINTS)
def test_rejects_what_the_papers_recursion_rejects(m, k, c):
    assert _agrees(gaussian_curve, m, k, c)


@pytest.mark.parametrize("m, k, c", POINTS)
def test_mu_lower_is_the_papers_and_never_above_it(m, k, c):
    mu = _paper_mu_lower(m, k, c)
    assert mu * (1 - 1e-3) <= fdp_mu_lower(m, k, c, TAU)[1] <= mu + 1e-9


def test_the_papers_point_gives_epsilon_3_30():
    """At App. B's point the printed recursion gives mu = 0.7818, epsilon(1e-5) = 3.30 (the paper's Table 1 has
    3.61 for the best c' at sigma = 1, m = 10^5: benchmarks/figures/one_run_fdp_paper.txt)."""
    assert round(gaussian_epsilon(fdp_mu_lower(100_000, 1500, 1429, TAU)[1], 1e-5), 2) == 3.30


@pytest.mark.parametrize("m, k, c", POINTS)
def test_twin_an_inverse_off_by_one_percent_disagrees(m, k, c):
    assert not _agrees(lambda mu: gaussian_curve(1.01 * mu), m, k, c)
