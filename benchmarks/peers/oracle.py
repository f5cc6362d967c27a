"""The finite-sample ceiling of an event-based audit: the bound the exact likelihood-ratio events would give at their
expected counts (`oracle_*`), and the largest bound of any event (`any_event_ceiling`).  Each event's bound is the
larger of two, as the auditor would choose between them: Clopper-Pearson bounds at a one-sided level per proportion
(`dpaudit.audit.bounds`), and the thinned ratio test at the confidence of both (`dpaudit.audit.ratio`), at the
expected counts of the runs it keeps."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpaudit.audit.bounds import cp_lower, cp_upper
from dpaudit.audit.ratio import log_ratio_from_counts, thinning_mean

#: One-sided level of each Clopper-Pearson bound of the `ceiling` column: one event, both proportions
#: from independent samples, (1 - level)^2 = 0.95.
CEILING_LEVEL = 1.0 - math.sqrt(0.95)


def oracle_from_rates(p0: np.ndarray, p1: np.ndarray, n: int, level: float) -> float:
    """max over events, both directions, of the better of log(CP_low(n p0) / CP_up(n p1)) and the ratio test at
    the confidence of both, 1 - (1 - level)^2, on the expected counts m p0, m p1 of the m runs it keeps."""
    best = 0.0
    m = thinning_mean(n)
    for a, b in ((p0, p1), (p1, p0)):
        k0 = np.clip(np.round(a * n), 0, n)
        k1 = np.clip(np.round(b * n), 0, n)
        lo, up = cp_lower(k0, n, level), cp_upper(k1, n, level)
        with np.errstate(divide="ignore"):
            v = np.where(lo > 0, np.log(np.maximum(lo, 1e-300)) - np.log(up), 0.0)
        r = log_ratio_from_counts(np.round(np.asarray(a) * m), np.round(np.asarray(b) * m), 1.0 - (1.0 - level) ** 2)
        best = max(best, float(v.max()), float(r.max()))
    return best


def oracle_discrete(p0: np.ndarray, p1: np.ndarray, n: int, level: float) -> float:
    """Neyman-Pearson sets (outcomes sorted by likelihood ratio, cumulated) of a finite outcome space."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    best = 0.0
    for a, b in ((p0, p1), (p1, p0)):
        with np.errstate(divide="ignore"):
            order = np.argsort(-(np.log(a) - np.log(b)))
        best = max(best, oracle_from_rates(np.cumsum(a[order]), np.cumsum(b[order]), n, level))
    return best


def oracle_cells(p0: np.ndarray, p1: np.ndarray, n: int, level: float, levels: int = 8001) -> float:
    """`oracle_discrete` for many cells (a fine grid of a continuous outcome): the Neyman-Pearson sets
    {log p0/p1 > t} and {log p0/p1 < t} evaluated at ~`levels` cumulative masses (geometric in the tails)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    keep = (p0 > 0) | (p1 > 0)
    p0, p1 = p0[keep], p1[keep]
    with np.errstate(divide="ignore"):
        order = np.argsort(-(np.log(p0) - np.log(p1)), kind="stable")
    c0, c1 = np.cumsum(p0[order]), np.cumsum(p1[order])
    marks = np.concatenate([np.geomspace(1e-9, 2.0, levels - levels // 4), np.linspace(0.0, 2.0, levels // 4)])
    idx = np.unique(np.clip(np.searchsorted(c0 + c1, marks), 0, len(c0) - 1))
    # prefixes {llr > t} (first returned by oracle_from_rates in both directions) and suffixes {llr < t}
    s0 = c0[-1] - np.concatenate([[0.0], c0])[idx]
    s1 = c1[-1] - np.concatenate([[0.0], c1])[idx]
    return max(oracle_from_rates(c0[idx], c1[idx], n, level), oracle_from_rates(s0, s1, n, level))


def oracle_llr_iw(
    llr: Callable[[np.ndarray], np.ndarray],
    target,
    d0,
    d1,
    n: int,
    level: float,
    draws: int = 500_000,
    seed: int = 12345,
    levels: int = 4001,
) -> float:
    """Monte Carlo oracle of the exact log-likelihood ratio `llr`, with importance weights: the events
    {llr >= l} are counted on `draws` runs of d0, P0 by their fraction and P1 = E0[exp(-llr) 1{llr >= l}]
    (exact when llr is the exact log ratio), and the events {llr <= l} likewise on runs of d1.  The ratio
    P0/P1 of an event is then nearly free of Monte Carlo noise, which plain fractions' maximum over
    thresholds turns into an upward bias (SVT3: 0.180 with 2e6 plain draws against 0.160 from
    `svt3_cells`, 0.161 here with 1e6; Laplace: 0.0970 plain against the closed form's 0.0950 here)."""
    rng = np.random.default_rng(seed)
    marks = np.concatenate([np.geomspace(1e-6, 1.0, levels), np.linspace(0.0, 1.0, levels // 4)])
    best = 0.0
    for sign, data in ((1.0, d0), (-1.0, d1)):
        v = np.sort(sign * llr(target(data, rng, draws)))[::-1]  # events {sign * llr >= v[i]}: prefixes
        own = np.arange(1, draws + 1) / draws
        other = np.cumsum(np.exp(-np.clip(v, -700.0, 700.0))) / draws
        idx = np.unique(np.clip(np.ceil(marks * draws).astype(np.int64) - 1, 0, draws - 1))
        best = max(best, oracle_from_rates(own[idx], other[idx], n, level))
    return best


def laplace_llr(d0, d1, b):
    m0, m1 = np.asarray(d0, float), np.asarray(d1, float)

    def llr(x):
        x = np.asarray(x, float).reshape(len(x), -1)
        # rounded: float noise in |x - m| would split the atoms at +-|m0 - m1|/b into spurious events
        return np.round(((np.abs(x - m1) - np.abs(x - m0)) / b).sum(axis=1), 9)

    return llr


def any_event_ceiling(samples: int) -> float:
    """The largest bound any event-based audit can give at `samples` runs per side (the `ceiling`
    column's levels): an event with every run of one input and none of the other,
    log(CP_lower(n of n) / CP_upper(0 of n)), or the ratio test's on the m runs it keeps, m of m against 0."""
    split = math.log(cp_lower(samples, samples, CEILING_LEVEL) / cp_upper(0, samples, CEILING_LEVEL))
    m = round(thinning_mean(samples))
    return max(split, float(log_ratio_from_counts(m, 0, 1.0 - (1.0 - CEILING_LEVEL) ** 2)))
