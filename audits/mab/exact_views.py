"""Exact laws of the distributed protocols' released views (Chowdhury & Zhou, "Distributed Differential
Privacy in Multi-Armed Bandits", ICLR 2023, Alg. 1 with the protocols of Thms 2, 3, 4, 6), for exact
accounting of what the server sees and for Neyman-Pearson audit scores.

One release of n users: the server sees y = (x̂ + N) mod m, x̂ the encoded sum, N the sum of the users'
noise shares. Its pmf on Z_m is computed by convolving the shares' pmfs on a truncated window and folding
mod m; every pmf is rounded down (normalised by an upper bound on the normaliser), and the mass it misses
(tails beyond the window) is carried as `slack` for `dpaudit.accounting.pmf`, which adds it on the safe
side (and a relative round-off margin). One user moves x̂ by at most g (randomized rounding makes x̂ a mixture of
shifts in 0..g; by joint convexity of the hockey-stick divergence the worst fixed shift bounds every
mixture), and the other users' encodings only rotate y on Z_m, so the exact ε(δ) of the view over all
neighbouring inputs is the maximum over shifts 1..g.

Shuffle-SE (Thm 3, mechanisms.ShuffleSum) releases the count C of ones among the shuffled unary randomized-response
bits: C = Bin(S, 1 - f) + Bin(k d - S, f) with S = Σ_i y_i over the integers and y_i = (x̂_i + η_i) mod m per user.
S's pmf is the convolution of the users' wrapped-share pmfs; C is a post-processing of S (flips independent of the
input given S), so the pure ε of S bounds the count's. That mathematics is the budget's too and lives in
`dpaudit.algorithms.mab.shuffle_view` (re-exported here: `polya_difference_pmf`, `fold`, `shuffle_sum_pmf`, and
`shuffle_count_epsilon`, its enumeration over every input); this module adds the analyzer's view and the audit
scores. The analyzer's decoded sum ŷ = round((C - k d f)/(1 - 2f)) mod m = (S + F) mod m (F = net flips, its law
depends on S) is computed with the flips' pmf truncated at `_FLIPS` per direction (the rest is slack). Here the
other users' encodings x̂_i in 0..g matter (each wraps on its own), so the maximum runs over every multiset of them
and every pair of the changed user's encodings.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from dpaudit.accounting.pmf import pmf_delta, pmf_epsilon, pmf_gaussian_mu, pmf_is_gaussian_dp, pmf_pure_epsilon
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.shuffle_view import (
    fold,
    polya_difference_pmf,
    shuffle_sum_enumerated_epsilon,
    shuffle_sum_pmf,
    worst_over_inputs,
)
from dpaudit.audit.describe import describe_target

__all__ = [
    "LogRatioScore",
    "ViewLaw",
    "discrete_gaussian_pmf",
    "discrete_laplace_pmf",
    "fold",
    "polya_difference_pmf",
    "release_law",
    "release_llr_table",
    "release_view_epsilon",
    "release_view_mu",
    "shuffle_count_epsilon",
    "shuffle_count_llr_table",
    "shuffle_decoded_epsilon",
    "shuffle_decoded_llr_table",
    "shuffle_decoded_pmf",
    "shuffle_sum_pmf",
    "skellam_pmf",
]

_TINY = 1e-300  # a positive missing mass that underflows is carried as this (rounded up)
_FLIPS = 8  # flips per direction kept in the shuffle count's kernel: P(more) <= (k d f)^9/9! < 10^-24 here


def _window_slack(log_tail: float) -> float:
    """Missing mass exp(log_tail), rounded up (never below `_TINY` when the true value is positive)."""
    return max(math.exp(log_tail) * (1 + 1e-9), _TINY) if log_tail > -math.inf else 0.0


def discrete_gaussian_pmf(sigma: float, width: int) -> tuple[np.ndarray, float]:
    """pmf of N_Z(0, σ²) on -width..width (∝ exp(-x²/(2σ²)), Canonne, Kamath, Steinke, NeurIPS 2020),
    normalised by an upper bound on Σ_Z (window sum + 2 Σ_{x>w} e^{-x²/2σ²} <= 2 e^{-(w+1)²/2σ²}/(1 - e^{-(w+1)/σ²})),
    and the mass it misses."""
    x = np.arange(-width, width + 1, dtype=float)
    w = np.exp(-x * x / (2 * sigma * sigma))
    log_tail = math.log(2) - (width + 1) ** 2 / (2 * sigma * sigma) - math.log(-math.expm1(-(width + 1) / sigma**2))
    z = math.fsum(w) + math.exp(log_tail)  # >= the normaliser Σ_Z: the pmf is rounded down
    return w / z, _window_slack(log_tail - math.log(z))


def skellam_pmf(variance: float, width: int) -> tuple[np.ndarray, float]:
    """pmf of Sk(var/2, var/2) on -width..width, e^{-var} I_|x|(var) (Skellam 1946; scipy's ive), and the
    mass beyond the window by the Chernoff bound 2 exp(var(cosh t - 1) - t(w+1)), t = asinh((w+1)/var)."""
    x = np.arange(-width, width + 1)
    pmf = special.ive(np.abs(x), variance) * (1 - 1e-13)  # round-off of ive: round the pmf down
    t = math.asinh((width + 1) / variance)
    log_tail = math.log(2) + variance * (math.cosh(t) - 1) - t * (width + 1)
    return pmf, _window_slack(log_tail)


def discrete_laplace_pmf(scale: float, width: int) -> tuple[np.ndarray, float]:
    """pmf of DLap(λ), (1 - q)/(1 + q) q^|x| with q = e^{-1/λ}, on -width..width; tail 2 q^{w+1}/(1 + q)."""
    q = math.exp(-1.0 / scale)
    x = np.arange(-width, width + 1)
    pmf = (1 - q) / (1 + q) * np.exp(-np.abs(x) / scale) * (1 - 1e-14)
    return pmf, _window_slack(math.log(2) + (width + 1) * math.log(q) - math.log1p(q))


@dataclasses.dataclass(frozen=True)
class ViewLaw:
    """The pmf of (N mod m) on Z_m for one release's total noise N (the view at x̂ = 0), and its slack."""

    pmf: np.ndarray
    slack: float
    g: int
    m: int

    def shifted(self, shift: int) -> np.ndarray:
        """The pmf of (shift + N) mod m."""
        return np.roll(self.pmf, shift)


@functools.lru_cache(maxsize=32)
def release_law(algorithm: BatchSE, n: int, horizon: int) -> ViewLaw:
    """The law of one release's server view for the distributed protocols (module docstring):
    'dist-cdp' (n discrete Gaussian shares, Thm 4), 'dist-rdp' (Skellam total, Thm 2), 'local' (n DLap shares, Thm 6)."""
    proto = algorithm.secagg(n, horizon)
    g, m = proto.params.g, proto.params.m
    if algorithm.protocol == "dist-cdp":
        share, slack = discrete_gaussian_pmf(proto.sigma, math.ceil(40 * proto.sigma) + 40)
        total, width = np.array([1.0]), share.size // 2
        for _ in range(n):
            total = np.convolve(total, share)
        return ViewLaw(fold(total, -n * width, m), n * slack, g, m)
    if algorithm.protocol == "dist-rdp":
        var = n * proto.user_variance
        width = math.ceil(40 * math.sqrt(var)) + 40
        pmf, slack = skellam_pmf(var, width)
        return ViewLaw(fold(pmf, -width, m), slack, g, m)
    if algorithm.protocol == "local":
        scale = float(proto.scale)
        share, slack = discrete_laplace_pmf(scale, math.ceil(200 * scale) + 40)
        total, width = np.array([1.0]), share.size // 2
        for _ in range(n):
            total = np.convolve(total, share)
        return ViewLaw(fold(total, -n * width, m), n * slack, g, m)
    raise ValueError(f"protocol must be 'dist-cdp', 'dist-rdp' or 'local' for release_law, got {algorithm.protocol!r}")


@functools.lru_cache(maxsize=64)
def release_view_epsilon(algorithm: BatchSE, n: int, horizon: int, delta: float) -> float:
    """Exact ε(δ) (rounded up) of one release's server view over every one-user change: the maximum over
    shifts 1..g of the wrapped pair ((N mod m), (s + N) mod m) (module docstring); pure ε at δ = 0."""
    law = release_law(algorithm, n, horizon)
    if delta == 0:
        return max(pmf_pure_epsilon(law.pmf, law.shifted(s), law.slack) for s in range(1, law.g + 1))
    # the largest shift g is the worst in practice: its ε is computed, every other shift is checked at it
    eps = pmf_epsilon(law.pmf, law.shifted(law.g), delta, law.slack)
    for s in range(1, law.g):
        if pmf_delta(law.pmf, law.shifted(s), eps, law.slack) > delta:
            eps = max(eps, pmf_epsilon(law.pmf, law.shifted(s), delta, law.slack))
    return eps


@functools.lru_cache(maxsize=32)
def release_view_mu(algorithm: BatchSE, n: int, horizon: int) -> float:
    """Gaussian-DP μ (rounded up) of one release's server view over every one-user change: the maximum
    over shifts 1..g of `dpaudit.accounting.pmf.pmf_gaussian_mu` (Dong, Roth, Su, JRSS-B 2022, Cor. 2.13)."""
    law = release_law(algorithm, n, horizon)
    mu = pmf_gaussian_mu(law.pmf, law.shifted(law.g), law.slack)  # shift g, then every other shift checked at it
    for s in range(1, law.g):
        if not pmf_is_gaussian_dp(law.pmf, law.shifted(s), mu, law.slack):
            mu = max(mu, pmf_gaussian_mu(law.pmf, law.shifted(s), law.slack))
    return mu


# ---------------------------------------------------------------------------- Shuffle-SE

shuffle_count_epsilon = shuffle_sum_enumerated_epsilon
"""Pure ε (rounded up) of Shuffle-SE's server count C for one release, over every one-user change: the pure ε
of S = Σ_i y_i (C is a post-processing of S), maximised over the inputs (module docstring)."""


@functools.lru_cache(maxsize=8)
def _flip_kernel(proto, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """K[s, j] = P(F = j - _FLIPS | S = s), F = Bin(k d - s, f) - Bin(s, f) the net flips of the count,
    each binomial truncated at _FLIPS; the decoded value of each count s + j - _FLIPS; and the kernel's
    missing mass (both truncated tails)."""
    kd, f = k * proto.d, proto.flip
    s = np.arange(kd + 1)[:, None]
    j = np.arange(_FLIPS + 1)[None, :]
    down = stats.binom.pmf(j, s, f) * (1 - 1e-13)  # ones flipped to zero
    up = stats.binom.pmf(j, kd - s, f) * (1 - 1e-13)  # zeros flipped to one
    kern = np.zeros((kd + 1, 2 * _FLIPS + 1))
    for a in range(_FLIPS + 1):
        for b in range(_FLIPS + 1):
            kern[:, b - a + _FLIPS] += down[:, a] * up[:, b]
    missing = 2 * float(stats.binom.sf(_FLIPS, kd, f))
    counts = np.arange(kd + 1)[:, None] + np.arange(-_FLIPS, _FLIPS + 1)[None, :]
    decoded = proto.decode(np.clip(counts, 0, kd), k)  # counts outside 0..kd have probability 0 in kern
    return kern, decoded, max(missing, _TINY)


def shuffle_decoded_pmf(proto, s_pmf: np.ndarray) -> tuple[np.ndarray, float]:
    """pmf of the decoded sum ŷ = (S + F) mod m on Z_m given S's pmf on 0..k d (flip-free counts decode
    exactly: |k d f| < 1/2 and 1 - 2f rounds back, mechanisms.ShuffleSum.decode), and its extra slack."""
    kd = s_pmf.size - 1
    k = kd // proto.d
    kern, decoded, missing = _flip_kernel(proto, k)
    out = np.bincount(decoded.ravel(), weights=(s_pmf[:, None] * kern).ravel(), minlength=proto.params.m)
    return out, missing


@functools.lru_cache(maxsize=8)
def shuffle_decoded_epsilon(proto) -> float:
    """Pure ε (rounded up) of Shuffle-SE's decoded sum ŷ for one release over every one-user change."""

    def view(pa, pb, slack):
        da, extra = shuffle_decoded_pmf(proto, pa)
        db, _ = shuffle_decoded_pmf(proto, pb)
        return pmf_pure_epsilon(da, db, slack + extra)

    return worst_over_inputs(proto, view)


# ---------------------------------------------------------------------------- Neyman-Pearson scores


@dataclasses.dataclass(frozen=True)
class LogRatioScore:
    """score(out) = table[v], the exact log p1(v)/p0(v) of the observed integer v in column 0 of `out`
    (0 for values outside the table, e.g. the -1 of a release that did not happen, which has the same
    probability under both inputs): the Neyman-Pearson statistic of the pair. `table` is a zero-argument
    callable (a partial of a cached builder below), so the score is cheap to build, print and pickle."""

    table: Callable[[], np.ndarray]

    def __repr__(self) -> str:  # no memory addresses: the auditor records and hashes the score's description
        return f"LogRatioScore({describe_target(self.table)})"

    def __call__(self, out: np.ndarray) -> np.ndarray:
        table = self.table()
        v = np.asarray(out, dtype=float).reshape(len(out), -1)[:, 0]
        idx = np.rint(v).astype(np.int64)
        inside = (idx >= 0) & (idx < table.size)
        return np.where(inside, table[np.clip(idx, 0, table.size - 1)], 0.0)


def _llr(p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(p1) - np.log(p0)
    return np.nan_to_num(out, nan=0.0, posinf=50.0, neginf=-50.0)


@functools.lru_cache(maxsize=16)
def release_llr_table(algorithm: BatchSE, n: int, horizon: int, shift: int) -> np.ndarray:
    """log-likelihood ratio on Z_m of the view (shift + N) mod m against N mod m (shift = the pair's change of x̂)."""
    law = release_law(algorithm, n, horizon)
    return _llr(law.pmf, law.shifted(shift))


@functools.lru_cache(maxsize=8)
def shuffle_count_llr_table(proto, shift: int) -> np.ndarray:
    """log-likelihood ratio of the flip-free count S (every encoding 0 vs user 1's `shift`), indexed by
    the observed count C (= S but for flips, probability < k d f)."""
    n = proto.params.n
    p0, _ = shuffle_sum_pmf(proto, (0,) * n)
    p1, _ = shuffle_sum_pmf(proto, (shift,) + (0,) * (n - 1))
    return _llr(p0, p1)


@functools.lru_cache(maxsize=8)
def shuffle_decoded_llr_table(proto, shift: int) -> np.ndarray:
    """The exact log-likelihood ratio on Z_m of the decoded sum ŷ (every encoding 0 vs user 1's `shift`)."""
    n = proto.params.n
    p0, _ = shuffle_decoded_pmf(proto, shuffle_sum_pmf(proto, (0,) * n)[0])
    p1, _ = shuffle_decoded_pmf(proto, shuffle_sum_pmf(proto, (shift,) + (0,) * (n - 1))[0])
    return _llr(p0, p1)
