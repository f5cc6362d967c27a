"""The one-run bound at delta > 0 at the ends of its grid scan: the first grid step and a chunk's last point.

Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023, Theorem 3.1, with
the grid-prefix rule of `dpaudit.audit.one_run_bound`: eps_lower = (J - 1) h for J the first grid index
(eps_j = j h, h = EPSILON_GRID_STEP) whose p-value exceeds the level.  With the level set to the p-value at
1.5 h (recomputed independently from scipy's binomial pmf), grid points 0 and h pass and 2 h fails, so
the bound is exactly h, the smallest positive value the rule can report.  With v = 2000 correct guesses
the scan evaluates 1000 grid points per vectorised chunk (`_CHUNK_CELLS` pmf cells); a level crossed
between 1.999 and 2.0 makes the bound the last point of the second chunk, 1.999.  Exact, no statistics:
the p-values of the grid points are at least 2.5e-4 (relative) from the level, the library rounds by
about 1e-9.  The scan reports no grid point beyond the limit it is given, and pairs with equal bounds report
the first one (visited in a stable order).
"""

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

from dpaudit.audit.one_run_bound import EPSILON_GRID_STEP, _grid_prefix_epsilon, best_one_run_epsilon, one_run_epsilon

H = EPSILON_GRID_STEP


def p_value(m, r, v, eps, delta):
    """Theorem 3.1's bound at each eps (1 below v = (r + 1) q), from the binomial pmf (windows by cumulative sums)."""
    q = expit(np.asarray(eps, dtype=float))
    pmf = binom.pmf(np.arange(r + 1)[None, :], r, q[:, None])
    cum = np.concatenate([np.zeros((len(q), 1)), np.cumsum(pmf, axis=1)], axis=1)
    i = np.arange(1, v + 1)
    window = np.max((cum[:, v : v + 1] - cum[:, v - i]) / i, axis=1)
    p = np.minimum(1.0, pmf[:, v:].sum(axis=1) + 2 * m * delta * window)
    return np.where(v >= (r + 1) * q, p, 1.0)


@pytest.mark.parametrize(
    ("m", "r", "v", "delta"), [(20, 20, 18, 1e-3), (50, 30, 27, 1e-4), (100, 40, 36, 1e-5), (10, 10, 10, 1e-2)]
)
def test_a_crossing_between_h_and_2h_gives_the_bound_h(m, r, v, delta):
    p0, p1, level, p2 = p_value(m, r, v, np.array([0.0, 1.0, 1.5, 2.0]) * H, delta)
    assert p0 < p1 < level * (1 - 2.5e-4) and p2 > level * (1 + 2.5e-4)  # grid points 0, h pass; 2 h fails
    assert float(one_run_epsilon(m, r, v, delta, level)[0]) == H
    assert best_one_run_epsilon(m, [r, r], [v - 1, v], delta, level) == (1, H)


@pytest.mark.parametrize(("m", "r", "v", "delta"), [(5000, 2200, 2000, 1e-5), (4000, 2100, 2000, 1e-4)])
def test_a_crossing_after_the_second_chunk_gives_its_last_grid_point(m, r, v, delta):
    (level,) = p_value(m, r, v, [1.9995], delta)
    p = p_value(m, r, v, np.arange(2001) * H, delta)
    assert np.all(p[:2000] < level * (1 - 2.5e-4)) and p[2000] > level * (1 + 2.5e-4)  # 0 .. 1.999 pass, 2.0 fails
    assert float(one_run_epsilon(m, r, v, delta, level)[0]) == 1999 * H


@pytest.mark.parametrize("limit", [0.5, 0.5 + H / 2, 1.0])
def test_the_scan_stops_at_its_limit(limit):
    # 95 of 100 right, m = 1000, delta = 1e-5: every grid point up to 2.1 is rejected, so the scan's limit decides
    assert one_run_epsilon(1000, 100, 95, 1e-5, 0.05)[0] > 2.0
    got = _grid_prefix_epsilon(1000, 100, 95, 1e-5, 0.05, limit)
    assert got == pytest.approx(np.floor(limit / H + 1e-9) * H, abs=1e-12)
    assert got <= limit


def test_pairs_with_equal_bounds_report_the_first_index():
    # 53 pairs of three kinds, the best kind first at index 8: numpy's default (unstable) argsort of this pattern
    # puts index 13 first, the stable one index 8
    kinds = "11000000212112211120220121022200201001110000211012112"
    pairs = {"0": (50, 30), "1": (100, 80), "2": (100, 95)}
    r = [pairs[k][0] for k in kinds]
    v = [pairs[k][1] for k in kinds]
    assert kinds.index("2") == 8
    for delta in (1e-5, 0.0):
        index, _ = best_one_run_epsilon(1000, r, v, delta, 0.05)
        assert index == 8
