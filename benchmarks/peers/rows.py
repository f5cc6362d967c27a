"""The rows of the benchmark: each algorithm with its input pair, claim, the peers' published bounds and the
exact loss and oracle of the pair where they are known."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from benchmarks.peers.exact import (
    geo_pmf,
    lap_cdf,
    noisy_max_pmf,
    numerical_svt_loss,
    numerical_svt_oracle,
    pair_loss,
    rappor_loss,
    rappor_types,
    snapping_pmf,
    svt3_cells,
    svt3_loss,
    svt34_llr,
    svt34_loss_lower,
    svt_pmf,
)
from benchmarks.peers.inputs import ABOVE_BELOW, HALF, HALF_R, ONES5, ONES10
from benchmarks.peers.mechanisms import (
    EPS,
    laplace,
    laplace_parallel,
    noisy_hist,
    noisy_max,
    numerical_svt,
    prefix_sum,
    rappor,
    snapping,
    svt,
    svt34_parallel,
    truncated_geometric,
)
from benchmarks.peers.oracle import laplace_llr, oracle_cells, oracle_discrete, oracle_from_rates, oracle_llr_iw


@dataclass
class Row:
    name: str
    make: Callable[[], Callable]
    d0: object
    d1: object
    claim: float
    known_violation: bool
    statdp: float | None
    dpsniper: float | None
    exact: Callable[[], float] | None = None
    oracle: Callable[[int, float], float] | None = None
    options: dict = field(default_factory=dict)
    note: str = ""
    #: `exact` / `oracle` give lower bounds only (printed with ">="; no ratio to exact in the summary).
    exact_lower: bool = False
    oracle_lower: bool = False


def _disc_oracle(pmf0, pmf1):
    return lambda n, level: oracle_discrete(pmf0(), pmf1(), n, level)


def rows() -> list[Row]:
    lap_b = 1 / EPS
    return [
        Row(
            "ReportNoisyMax1",
            lambda: noisy_max("laplace", False),
            ONES5,
            [0.0, 2, 2, 2, 2],
            EPS,
            False,
            0.0921,
            0.0925,
            exact=lambda: pair_loss(noisy_max_pmf(ONES5, "laplace"), noisy_max_pmf([0, 2, 2, 2, 2], "laplace")),
            oracle=_disc_oracle(
                lambda: noisy_max_pmf(ONES5, "laplace"), lambda: noisy_max_pmf([0, 2, 2, 2, 2], "laplace")
            ),
        ),
        Row(
            "ReportNoisyMax2",
            lambda: noisy_max("exponential", False),
            ONES5,
            [0.0, 2, 2, 2, 2],
            EPS,
            False,
            0.0997,
            0.0979,
            exact=lambda: pair_loss(noisy_max_pmf(ONES5, "exp"), noisy_max_pmf([0, 2, 2, 2, 2], "exp")),
            oracle=_disc_oracle(lambda: noisy_max_pmf(ONES5, "exp"), lambda: noisy_max_pmf([0, 2, 2, 2, 2], "exp")),
        ),
        Row(
            "ReportNoisyMax3",
            lambda: noisy_max("laplace", True),
            ONES5,
            [2.0] * 5,
            EPS,
            True,
            0.1991,
            0.2488,
            exact=lambda: 5 / (2 / EPS),
            oracle=lambda n, lv: _max_oracle(n, lv),
            note="max of 5 Laplace(20) shifted by 1: 5/20",
        ),
        Row(
            "ReportNoisyMax4",
            lambda: noisy_max("exponential", True),
            ONES5,
            [2.0] * 5,
            EPS,
            True,
            0.1988,
            0.3534,
            exact=lambda: math.inf,
            note="outputs in [1, 2) impossible on d1",
        ),
        Row(
            "SVT1",
            lambda: svt(1, c=1, t=0.5),
            HALF,
            HALF_R,
            EPS,
            False,
            0.0298,
            0.0858,
            exact=lambda: pair_loss(svt_pmf(HALF, 1, t=0.5)[1], svt_pmf(HALF_R, 1, t=0.5)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(HALF, 1, t=0.5)[1], lambda: svt_pmf(HALF_R, 1, t=0.5)[1]),
        ),
        Row(
            "SVT2",
            lambda: svt(2, c=1, t=1.0),
            HALF,
            HALF_R,
            EPS,
            False,
            0.0407,
            0.0859,
            exact=lambda: pair_loss(svt_pmf(HALF, 2)[1], svt_pmf(HALF_R, 2)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(HALF, 2)[1], lambda: svt_pmf(HALF_R, 2)[1]),
        ),
        Row(
            "SVT3",
            lambda: svt(3, c=1, t=1.0),
            ONES10,
            ABOVE_BELOW,
            EPS,
            True,
            0.1793,
            0.1822,
            exact=lambda: svt3_loss(ONES10, ABOVE_BELOW),
            oracle=lambda n, lv: oracle_cells(svt3_cells(ONES10), svt3_cells(ABOVE_BELOW), n, lv),
            note="oracle: level sets of the exact log ratio over (first 'above' k, value v), v in cells of 0.006",
        ),
        Row(
            "SVT4",
            lambda: svt(4, c=1, t=1.0),
            ONES10,
            ABOVE_BELOW,
            EPS,
            True,
            0.1719,
            0.1696,
            exact=lambda: pair_loss(svt_pmf(ONES10, 4)[1], svt_pmf(ABOVE_BELOW, 4)[1]),
            oracle=_disc_oracle(lambda: svt_pmf(ONES10, 4)[1], lambda: svt_pmf(ABOVE_BELOW, 4)[1]),
        ),
        Row(
            "SVT5",
            lambda: svt(5, c=1, t=1.0),
            ONES10,
            ABOVE_BELOW,
            EPS,
            True,
            14.3143,
            1.7612,
            exact=lambda: math.inf,
            note="d1 gives half-above patterns, d0 never",
        ),
        Row(
            "SVT6",
            lambda: svt(6, c=1, t=1.0),
            HALF,
            HALF_R,
            EPS,
            True,
            0.3220,
            0.2720,
            exact=lambda: _svt6_loss(),
            oracle=lambda n, level: _svt6_oracle(n, level),
        ),
        Row(
            "NumericalSVT",
            lambda: numerical_svt(c=2, t=1.0),
            [2.0] * 10,
            ONES10,
            EPS,
            False,
            None,
            0.0345,
            exact=lambda: numerical_svt_loss(2.0, 1.0),
            oracle=lambda n, lv: numerical_svt_oracle(2.0, 1.0, n, lv),
            note="exact: pattern types (m aboves, nb belows) by quadrature + m/60 for the values",
        ),
        Row(
            "NoisyHist1",
            lambda: noisy_hist(1 / EPS),
            [0.0, 1, 1, 1, 1],
            ONES5,
            EPS,
            False,
            0.0994,
            0.0978,
            exact=lambda: 1 / lap_b,
            oracle=lambda n, lv: oracle_llr_iw(
                laplace_llr([0.0, 1, 1, 1, 1], ONES5, lap_b), noisy_hist(lap_b), [0.0, 1, 1, 1, 1], ONES5, n, lv
            ),
        ),
        Row(
            "NoisyHist2",
            lambda: noisy_hist(EPS),
            [0.0, 1, 1, 1, 1],
            ONES5,
            EPS,
            True,
            10.0022,
            4.6020,
            exact=lambda: 1 / EPS,
            oracle=lambda n, lv: oracle_llr_iw(
                laplace_llr([0.0, 1, 1, 1, 1], ONES5, EPS), noisy_hist(EPS), [0.0, 1, 1, 1, 1], ONES5, n, lv
            ),
        ),
        Row(
            "Rappor",
            lambda: rappor(0.75, 0.45, 0.55),
            [1],
            [0],
            8 * math.log(0.625 / 0.375),
            False,
            0.2416,
            0.3008,
            exact=lambda: rappor_loss(0.75, 0.45, 0.55, 1, 0),
            oracle=lambda n, lv: oracle_discrete(*rappor_types(0.75, 0.45, 0.55, 1, 0), n, lv),
            note="claim: RAPPOR's eps_inf = 2h ln((1 - f/2)/(f/2)), h = 4 (Erlingsson et al. Sec. 4)",
        ),
        Row(
            "OneTimeRappor",
            lambda: rappor(0.95, None, None),
            [1],
            [0],
            8 * math.log(0.525 / 0.475),
            False,
            0.0602,
            0.5999,
            exact=lambda: rappor_loss(0.95, None, None, 1, 0),
            oracle=lambda n, lv: oracle_discrete(*rappor_types(0.95, None, None, 1, 0), n, lv),
        ),
        Row(
            "Laplace",
            lambda: laplace(),
            [1.0],
            [2.0],
            EPS,
            False,
            0.0998,
            0.0976,
            exact=lambda: EPS,
            oracle=lambda n, lv: oracle_llr_iw(laplace_llr([1.0], [2.0], lap_b), laplace(), [1.0], [2.0], n, lv),
        ),
        Row(
            "TruncatedGeometric",
            lambda: truncated_geometric(),
            [1],
            [2],
            math.log(1 + 2.0**-3),
            False,
            0.1169,
            0.1156,
            exact=lambda: pair_loss(geo_pmf(1), geo_pmf(2)),
            oracle=_disc_oracle(lambda: geo_pmf(1), lambda: geo_pmf(2)),
            note="claim: ln(1 + 2^-ceil(ln(2/eps))) (Balcer, Vadhan Thm. 4.7)",
        ),
        Row(
            "LaplaceParallel",
            lambda: laplace_parallel(),
            [1.0],
            [0.0],
            20 * 0.005,
            False,
            0.0135,
            0.0350,
            exact=lambda: 20 * 0.005,
            oracle=lambda n, lv: oracle_llr_iw(
                laplace_llr([1.0] * 20, [0.0] * 20, 200.0), laplace_parallel(), [1.0], [0.0], n, lv
            ),
        ),
        Row(
            "SVT34Parallel",
            lambda: svt34_parallel(),
            ONES10,
            ABOVE_BELOW,
            2 * EPS,
            True,
            0.1963,
            0.2616,
            exact=svt34_loss_lower,
            exact_lower=True,
            oracle=lambda n, lv: oracle_llr_iw(svt34_llr(), svt34_parallel(), ONES10, ABOVE_BELOW, n, lv),
            note="exact >=: the two halves' 'above' patterns (svt34_loss_lower); oracle: importance-weighted "
            "Monte Carlo of the exact log ratio (oracle_llr_iw; patterns only: svt34_oracle_lower 0.239)",
        ),
        Row(
            "PrefixSum",
            lambda: prefix_sum(),
            ONES10,
            [0.0] * 10,
            10 * EPS,
            False,
            0.3516,
            0.5774,
            exact=lambda: 10 * EPS,
            oracle=lambda n, lv: oracle_llr_iw(
                lambda x: laplace_llr(ONES10, [0.0] * 10, lap_b)(np.diff(x, axis=1, prepend=0)),
                prefix_sum(),
                ONES10,
                [0.0] * 10,
                n,
                lv,
            ),
            note="claim: 10 queries of sensitivity 1 each (component-wise neighbours), 10 eps",
        ),
        Row(
            "FloatLaplace",
            lambda: laplace(),
            [0.0],
            [1.0],
            EPS,
            True,
            None,
            0.2521,
            exact=lambda: math.inf,
            options={"float_bits": True},
            note="numpy's float sampler, bit features on (Mironov CCS 2012)",
        ),
        Row(
            "Snapping",
            lambda: snapping(),
            [0.0],
            [1.0],
            EPS,
            False,
            None,
            0.0979,
            exact=lambda: pair_loss(snapping_pmf(0.0), snapping_pmf(1.0)),
            oracle=_disc_oracle(lambda: snapping_pmf(0.0), lambda: snapping_pmf(1.0)),
            options={"float_bits": True},
            note="Mironov's fix, bit features on; exact and oracle in real arithmetic",
        ),
    ]


def _max_oracle(n: int, level: float) -> float:
    """ReportNoisyMax3 on 1 vs 2 everywhere: the max shifts by 1, its likelihood ratio is monotone, so
    the events {max < t} and {max > t} are the Neyman-Pearson ones; CDF F_Lap(t - q)^5."""
    t = np.linspace(-400.0, 500.0, 200_001)
    g0, g1 = lap_cdf(t - 1, 2 / EPS) ** 5, lap_cdf(t - 2, 2 / EPS) ** 5
    return max(oracle_from_rates(g0, g1, n, level), oracle_from_rates(1 - g0, 1 - g1, n, level))


def _svt6_loss() -> float:
    _, p0 = svt_pmf(HALF, 6)
    _, p1 = svt_pmf(HALF_R, 6)
    return pair_loss(p0, p1)


def _svt6_oracle(n: int, level: float) -> float:
    # Types (a, b) = 'above' counts in the two blocks; the Neyman-Pearson sets are unions of types.
    return oracle_discrete(svt_pmf(HALF, 6)[1], svt_pmf(HALF_R, 6)[1], n, level)
