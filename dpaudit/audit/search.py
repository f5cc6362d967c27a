"""Neighbour search: audit the most revealing of several input pairs, without a correction for the search.

    from dpaudit.audit.search import audit_pairs, statdp_patterns
    found = audit_pairs(target, statdp_patterns(10), claim_epsilon=0.1, samples=10**6, seed=0)
    found.result.epsilon_lower, found.pair_index, found.pilot_lower

Each candidate pair (d0, d1) gets a pilot audit on its own runs (`pilot_samples` per side, seeds
disjoint from the final audit's); the pair whose pilot gives the highest bound (ties: the highest
point estimate) is audited once more with `samples` fresh runs.  The final bound is a function of
those fresh runs and of a choice made on independent runs, so it holds at the stated confidence with
no multiple-testing correction: the search, like the auditor's own event selection, costs runs, not
confidence.  (A correction would be needed only if the pilots' counts were reused: they are not.)

`statdp_patterns(n)` are the input patterns of StatDP (Ding, Wang, Wang, Zhang, Kifer, "Detecting
Violations of Differential Privacy", ACM CCS 2018, Sec. 5.1), as DP-Sniper uses them (Bichsel,
Steffen, Bogunovic, Vechev, IEEE S&P 2021): from d0 = (1, ..., 1), one above, one below, one above
rest below, one below rest above, half-half, all above, all below, and the x shape; each also swapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.auditor import audit
from dpaudit.audit.result import AuditResult
from dpaudit.validation import check_int_at_least

__all__ = ["PairSearch", "audit_pairs", "statdp_patterns"]

#: Seeds of the pilot audits are offset by this from the final audit's seed (disjoint runs).
_PILOT_SEED_OFFSET = 1_000_003


def statdp_patterns(dimensions: int, componentwise: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
    """StatDP's neighbouring input pairs for `dimensions` queries of sensitivity 1, each also swapped.

    With `componentwise=False` only "one above" and "one below" (inputs differing in one entry).
    """
    n = check_int_at_least(dimensions, 1, "dimensions")
    ones = np.ones(n)
    half = n // 2
    raw = [(ones, np.array([0.0] + [1.0] * (n - 1))), (ones, np.array([2.0] + [1.0] * (n - 1)))]
    if componentwise:
        raw += [
            (ones, np.array([2.0] + [0.0] * (n - 1))),
            (ones, np.array([0.0] + [2.0] * (n - 1))),
            (ones, np.array([2.0] * half + [0.0] * (n - half))),
            (ones, np.full(n, 2.0)),
            (ones, np.zeros(n)),
            (np.array([1.0] * half + [0.0] * (n - half)), np.array([0.0] * half + [1.0] * (n - half))),
        ]
    out = []
    for a, b in raw:
        out += [(a.copy(), b.copy()), (b.copy(), a.copy())]
    return out


@dataclass(frozen=True)
class PairSearch:
    """The chosen pair, its final audit, and every pilot's bound and point estimate (in pair order)."""

    pair_index: int
    d0: Any
    d1: Any
    result: AuditResult
    pilot_lower: tuple[float, ...]
    pilot_point: tuple[float, ...]
    pilot_samples: int


def audit_pairs(
    target: Callable,
    pairs: Sequence[tuple[Any, Any]],
    claim_epsilon: float,
    samples: int = 100_000,
    pilot_samples: int | None = None,
    seed: int = 0,
    **options: Any,
) -> PairSearch:
    """Pilot-audit every pair, then audit the best one on fresh runs (see the module docstring).

    `pilot_samples` defaults to samples // 10; `options` go to every `audit` call (confidence,
    claim_delta, executor, crossfit, ...).
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one (d0, d1) pair")
    samples = check_int_at_least(samples, 10, "samples")
    pilot = check_int_at_least(samples // 10 if pilot_samples is None else pilot_samples, 10, "pilot_samples")
    seed = check_int_at_least(seed, 0, "seed")
    lows, points = [], []
    for i, (d0, d1) in enumerate(pairs):
        r = audit(
            target,
            d0,
            d1,
            claim_epsilon=claim_epsilon,
            samples=pilot,
            seed=seed + _PILOT_SEED_OFFSET * (i + 1),
            **options,
        )
        lows.append(float(r.epsilon_lower))
        points.append(max(float(d.epsilon_point) for d in r.directions))
    best = max(range(len(pairs)), key=lambda i: (lows[i], points[i]))
    d0, d1 = pairs[best]
    final = audit(target, d0, d1, claim_epsilon=claim_epsilon, samples=samples, seed=seed, **options)
    return PairSearch(best, d0, d1, final, tuple(lows), tuple(points), pilot)
