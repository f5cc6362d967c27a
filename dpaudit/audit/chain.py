"""Chain-rule log ratio of sequential discrete outputs (the sparse vector technique's patterns).

The output of a sparse-vector-style algorithm is a short sequence of states per query: 'above'
(a flag, or the released noisy value), 'below', 'aborted'.  Its likelihood ratio is a ratio of
pattern probabilities, and with c > 1 'above' answers the patterns are many and rare (56 for
c = 2 over 10 queries, most of probability ~0.002): a per-pattern estimate (the joint category or
atom-pattern families) on the selection split has standard errors of the order of the privacy
loss itself.  By the chain rule, log P(x) = sum_j log P(x_j | x_1..x_{j-1}); `ChainLogRatio`
estimates each conditional with the history summarised by the position j and the number of times
each state occurred so far:

    score(x) = sum_j [log P0(s_j | j, h_j) - log P1(s_j | j, h_j)],   h_j = counts of each state in s_1..s_{j-1},

where s_j is the state of coordinate j (the index of its atom value, the atom alphabet shared by all
coordinates; continuous entries one state).  Each conditional is estimated from all runs reaching
(j, h_j), not only from the runs with the same whole pattern, so the terms are well populated.  For
the sparse vector technique with c = 1 (history: 'no above yet') this is the pattern likelihood
ratio itself; with larger c it is exact when all queries are equal (the counts are then a
sufficient history) and an approximation otherwise: for SVT4 with c = 2 on ten queries, 1s
against 2s then 0s, the family fitted on 10^6 runs gives at best 0.224 (best threshold, 9 * 10^5 runs),
the exact pattern ratio 0.226 (oracle; SVT34Parallel's SVT4 half in benchmarks/peers/).  The
algorithms: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy"
(PVLDB 2017), Algs. 1-6.

Fitted log ratios are add-1/2 smoothed and soft-thresholded by half a standard error (the other
engineered families of `dpaudit.audit.features` take one; the terms here are many and each small.
SVT34Parallel of benchmarks/peers/ at 10^6 runs, seeds 0/1: one s.e. 0.215/0.180, half 0.205/0.199,
a quarter 0.228/0.182: within the seed-to-seed noise, half kept).  A history never seen in the fit
rows adds 0.  The score is one more candidate of the selection step: it is fitted on the selection
split only, so the estimation split's Clopper-Pearson bounds stay valid whatever it learns.  It
estimates log P0/P1, so its thresholds are chosen on importance-weighted rates as well as plain ones
(`estimates_log_ratio`, dpaudit.audit.selection._mixed_rates): on SVT34Parallel at 10^6 runs the
expected bound of the chosen event rose from 0.191 to 0.202 (mean over 30 selection splits, exact
pattern probabilities; benchmark seeds 0/1 0.205/0.199 -> 0.214/0.220).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.features import FitRows, atoms_of
from dpaudit.audit.scores import Score

__all__ = ["ChainLogRatio", "column_groups", "fit_chain_score", "fit_chain_scores"]

#: At most this many coordinates (the history key packs position and counts into one int64).
_MAX_WIDTH = 64
#: At most this many states (distinct atom values shared by the coordinates, plus 'continuous').
_MAX_STATES = 6
#: The family is fitted only when at most this many distinct (position, history) keys occur.
_MAX_HISTORIES = 1 << 14
#: Standard errors subtracted from each fitted conditional log ratio (soft thresholding).
_SHRINK_Z = 0.5


@dataclass(frozen=True, eq=False)
class ChainLogRatio(Score):
    """sum_j lr[(j, h_j, s_j)] (see the module docstring); states from the sorted `alphabet` of atom
    values, any other value the 'continuous' state len(alphabet)."""

    alphabet: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: Group of each coordinate (`column_groups`): histories count states within a group only.
    groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: Sorted int64 keys of (position, history, state) cells and their fitted log ratios (named `cells`,
    #: not `keys`: they are well populated, so the auditor refits this family like the few-category ones).
    cells: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "chain-log-ratio"
    learned: bool = True
    #: Events chosen among at most 64 thresholds (dpaudit.audit.selection._coarse_candidates).
    coarse_thresholds: bool = True
    #: The score estimates log P0/P1: its events' rates are also estimated by importance weights
    #: (dpaudit.audit.selection._mixed_rates).
    estimates_log_ratio: bool = True

    def states(self, outputs: np.ndarray) -> np.ndarray:
        """(n, width) state index of every entry."""
        x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        pos = np.minimum(np.searchsorted(self.alphabet, x), len(self.alphabet) - 1)
        return np.where(self.alphabet[pos] == x, pos, len(self.alphabet)).astype(np.int64)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        total = np.zeros(len(outputs))
        if len(self.cells) == 0:
            return total
        for key in _cell_keys(self.states(outputs), len(self.alphabet) + 1, self.groups):
            pos = np.minimum(np.searchsorted(self.cells, key), len(self.cells) - 1)
            total += np.where(self.cells[pos] == key, self.values[pos], 0.0)
        return total

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "states": len(self.alphabet) + 1,
            "cells": len(self.cells),
            "groups": len(np.unique(self.groups)),
        }


def _cell_keys(states: np.ndarray, n_states: int, groups: np.ndarray):
    """Yield, per coordinate j, the int64 key of (j, counts of each state before j in j's group, state at j).

    Key = ((j * (w + 1)^n_states + sum_s count_s (w + 1)^s) * n_states + state), w the width; it fits
    in int64 for w <= 64 and n_states <= 6 (64 * 65^6 * 6 < 2^63)."""
    width = len(groups)
    radix = width + 1
    weights = radix ** np.arange(n_states, dtype=np.int64)
    history = {g: np.zeros(len(states), dtype=np.int64) for g in np.unique(groups)}
    base = radix**n_states
    for j in range(width):
        s = states[:, j]
        yield (j * base + history[groups[j]]) * n_states + s
        history[groups[j]] = history[groups[j]] + weights[s]


def column_groups(atom_sets: list[np.ndarray]) -> np.ndarray:
    """Group of each coordinate: connected components of the coordinates whose atom values overlap
    (the sparse vector technique's 'below'/'aborted' codes tie its queries together; two algorithms
    run side by side with different codes fall in two groups, whose histories are kept apart)."""
    d = len(atom_sets)
    parent = list(range(d))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[float, int] = {}
    for j, atoms in enumerate(atom_sets):
        for a in atoms.tolist():
            if a in owner:
                parent[find(j)] = find(owner[a])
            else:
                owner[a] = j
    return np.array([find(j) for j in range(d)], dtype=np.int64)


def fit_chain_score(x0: np.ndarray, x1: np.ndarray, atom_sets: list[np.ndarray]) -> ChainLogRatio | None:
    """Fit `ChainLogRatio` on rows x0 (first input) and x1 (second) given each coordinate's atom values.

    Per cell (j, h, s): lr = log((c0 + 1/2) / (m0 + 1/2)) - log((c1 + 1/2) / (m1 + 1/2)), c the runs in
    the cell and m those reaching (j, h), soft-thresholded by sqrt(1/(c0+1/2) + 1/(c1+1/2)).  None when
    the outputs are too wide, have too many states or too many histories to estimate."""
    width = x0.shape[1]
    alphabet = np.unique(np.concatenate(atom_sets)) if atom_sets else np.zeros(0)
    n_states = len(alphabet) + 1
    if width > _MAX_WIDTH or n_states > _MAX_STATES or len(alphabet) == 0 or width < 2:
        return None
    groups = column_groups(atom_sets)
    probe = ChainLogRatio(alphabet=alphabet, groups=groups)
    k0 = np.stack(list(_cell_keys(probe.states(x0), n_states, groups)), axis=1).ravel()
    k1 = np.stack(list(_cell_keys(probe.states(x1), n_states, groups)), axis=1).ravel()
    keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    if len(keys) > _MAX_HISTORIES * n_states:
        return None
    c0 = np.bincount(inverse[: len(k0)], minlength=len(keys)).astype(np.float64)
    c1 = np.bincount(inverse[len(k0) :], minlength=len(keys)).astype(np.float64)
    hist = keys // n_states  # cells of one history are adjacent in the sorted keys
    starts = np.flatnonzero(np.concatenate([[True], hist[1:] != hist[:-1]]))
    m0 = np.repeat(np.add.reduceat(c0, starts), np.diff(np.append(starts, len(keys))))
    m1 = np.repeat(np.add.reduceat(c1, starts), np.diff(np.append(starts, len(keys))))
    lr = np.log((c0 + 0.5) / (m0 + 0.5)) - np.log((c1 + 0.5) / (m1 + 0.5))
    se = np.sqrt(1.0 / (c0 + 0.5) + 1.0 / (c1 + 0.5))
    values = np.sign(lr) * np.maximum(np.abs(lr) - _SHRINK_Z * se, 0.0)
    keep = values != 0
    if not np.any(keep):
        return None
    return ChainLogRatio(alphabet=alphabet, groups=groups, cells=keys[keep], values=values[keep])


def fit_chain_scores(sel0: np.ndarray, sel1: np.ndarray, shared: FitRows | None = None) -> list[Score]:
    """The chain family for vector outputs with a halting state (`_halts`; [] otherwise), fitted on
    these rows (`shared`: their `FitRows`, whose atoms other families use too).

    The auditor fits it on the *whole* selection split and chooses its event there (its cells are
    few and well populated, so the in-sample threshold choice costs little, while halving the rows
    costs much: on SVT34Parallel at 10^6 runs the family fitted on half the selection split and
    thresholded on the other half lost the comparison with the projections, 0.12-0.15 vs 0.21-0.28
    when fitted and thresholded on all of it).  The estimation split is untouched either way."""
    if sel0.ndim < 2 or len(sel0) < 4 or len(sel1) < 4:
        return []
    if sel0[0].size > _MAX_WIDTH:
        return []
    # float64 rows are read as they are (a copy of the whole selection split is its size again)
    x0 = np.asarray(sel0.reshape(len(sel0), -1), dtype=np.float64)
    x1 = np.asarray(sel1.reshape(len(sel1), -1), dtype=np.float64)
    atom_sets = [atoms_of(x0[:, j], x1[:, j]) for j in range(x0.shape[1])] if shared is None else shared.atoms
    if not any(len(a) for a in atom_sets):
        return []
    if not _halts(x0, atom_sets) or not _halts(x1, atom_sets):
        return []
    chain = fit_chain_score(x0, x1, atom_sets)
    return [] if chain is None else [chain]


def _halts(x: np.ndarray, atom_sets: list[np.ndarray]) -> bool:
    """True when some atom value is absorbing in these rows: it occurs before the last coordinate,
    and wherever coordinate j holds it so does every later coordinate that has it among its atoms
    (the sparse vector technique's 'aborted' code).  Outputs without such a halting state (vectors
    of independent bits: RAPPOR, SVT5/6) have no order for the chain rule to exploit; there the
    family only added selection noise (one-time RAPPOR at 10^6 runs: 0.580 -> 0.551)."""
    d = x.shape[1]
    for value in np.unique(np.concatenate(atom_sets)):
        cols = [j for j in range(d) if np.any(atom_sets[j] == value)]
        if len(cols) < 2:
            continue
        held = x[:, cols] == value
        if not np.any(held[:, :-1]):
            continue
        # absorbing: once held, held at every later column of `cols`
        if np.array_equal(np.logical_or.accumulate(held, axis=1), held):
            return True
    return False
