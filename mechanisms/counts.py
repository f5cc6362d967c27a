"""Exact, vectorised samplers of count laws: Poisson and Pólya (negative binomial, real shape).

Both are drawn by inversion, X = min{k : U < F(k)}, against a per-law table of certified bounds
on the cdf F, with the same notion of exactness as `dpaudit.mechanisms.discrete`: the output law
is exactly the stated pmf for the parameters at their exact rational value (a float is the binary
number it stores; pass an int or a `Fraction` for a decimal value), given that the bit generator's
53-bit uniforms are uniform. Nothing else is assumed (no accuracy claim about libm).

The table (built once per law, cached) covers the support where the pmf is not negligible:
  - the pmf at anchors 1024 apart (at most 1024 anchors) is bracketed by `log_gamma_interval`
    (Stirling's series with its rigorous remainder, decimal interval arithmetic), then rounded;
  - between anchors, p(j) = p(anchor) * prod of float ratios p(i)/p(i-1) (Poisson lam/i,
    Pólya (i-1+r) theta/i), each ratio within 2.5 ulp, each product within 1/2 ulp;
  - F(k) = P(X <= k) below the mode and G(k) = P(X > k) from the mode up are summed in blocks
    (relative error gamma_(M+B) of a blocked sum of positive terms), plus rigorous geometric
    bounds on the mass outside the table.
So every table entry carries a relative error bound E (about 2^-40 for tables up to 10^6
entries), and the float decision for a uniform U = w + 2^-53 V (w the float draw, V its
unrevealed digits) is taken only when U lies certainly between two table bounds. Otherwise
(measured: 4e-12 of the draws for Poisson(5), 4e-10 for Poisson(5e4), 2e-9 for Pólya(1024,
e^-1/32); also beyond the table) the comparison U < F(k) is decided exactly: U is revealed lazily
and F(k) is bracketed in decimal interval arithmetic by `cdf_bounds` (the pmf at k from log-gamma
brackets, its neighbours through exact rational ratios with directed rounding, the rest of the
tail by a geometric bound), refined until the two separate. Laws wider than one table are drawn
as sums of i.i.d. parts (`sample_law`). The table search reads a bucket guide (2^12..2^22
buckets of the uniform's top bits) and binary-searches only the buckets that hold a boundary.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpaudit.mechanisms.discrete import _last_true, exact_rational
from dpaudit.mechanisms.exact import (
    Bounds,
    Interval,
    LazyUniform,
    frac_interval,
    iv_add,
    iv_exp,
    iv_ln,
    iv_mul,
    iv_sub,
    log_gamma_interval,
)

__all__ = ["CountLaw", "cdf_bounds", "poisson_law", "polya_law", "sample_law"]

_U = 2.0**-53
_GRID = 2.0**53
_ANCHOR = 1024
_BLOCK = 1024
_TAIL = 2.0**-64  # mass left outside the table, per side (then handled by the exact path)
_MAX_TABLE = 4_000_000
_SPLIT_TABLE = 2_000_000  # wider laws are drawn as sums of K i.i.d. parts (infinite divisibility)
_CHECK = 32  # the walks of `cdf_bounds` test their tail bound every _CHECK terms
_SLACK = 0.0  # extra relative error on the table bounds; tests raise it to force the exact path


@dataclass(frozen=True)
class CountLaw:
    """Poisson(lam) (kind 'poisson') or Pólya(r, theta) (kind 'polya') at exact rationals.

    Poisson: p(k) = e^-lam lam^k / k!.
    Pólya:   p(k) = Gamma(k+r) / (k! Gamma(r)) theta^k (1-theta)^r (Chowdhury & Zhou (ICLR 2023), Fact 1), the negative
             binomial NB(r, 1-theta) with mean r theta/(1-theta).
    """

    kind: str
    a: Fraction  # lam, or r
    theta: Fraction = Fraction(0)

    # ---- exact rational structure
    def ratio(self, k: int) -> Fraction:
        """p(k) / p(k-1) for k >= 1."""
        num, den = self.ratio_terms(k)
        return Fraction(num, den)

    def ratio_terms(self, k: int) -> tuple[int, int]:
        """(numerator, denominator) integers of p(k) / p(k-1), not reduced (fast path of the walks)."""
        a, b = self.a.numerator, self.a.denominator
        if self.kind == "poisson":
            return a, b * k
        c, d = self.theta.numerator, self.theta.denominator
        return ((k - 1) * b + a) * c, k * b * d

    @functools.cached_property
    def mode(self) -> int:
        """Largest k with p(k) >= p(k-1) (0 if none): ratios are <= 1 from mode+1 on, >= 1 up to it."""
        if self.kind == "poisson":
            return math.floor(self.a)
        if self.a <= 1:
            return 0
        return math.floor((self.a - 1) * self.theta / (1 - self.theta))

    def up_ratio(self, j: int) -> Fraction:
        """sup_{i > j} p(i)/p(i-1), for j >= mode."""
        if self.kind == "poisson":
            return self.a / (j + 1)
        if self.a >= 1:
            return (j + self.a) * self.theta / (j + 1)
        return self.theta

    def down_ratio(self, j: int) -> Fraction:
        """sup_{1 <= i <= j} p(i-1)/p(i) = p(j-1)/p(j), for 1 <= j <= mode (increasing in i)."""
        return 1 / self.ratio(j)

    def log_pmf_interval(self, k: int, digits: int) -> Interval:
        """Bracket of ln p(k), absolute width about 10^-digits."""
        big = max(k, math.ceil(self.a), 1)
        prec = digits + 2 * len(str(big)) + 10
        lg_k1 = log_gamma_interval(Fraction(k + 1), prec)
        if self.kind == "poisson":
            lam = frac_interval(self.a, prec)
            out = iv_mul(frac_interval(Fraction(k), prec), iv_ln(lam, prec), prec)
            out = iv_sub(out, lam, prec)
            return iv_sub(out, lg_k1, prec)
        r = frac_interval(self.a, prec)
        out = iv_mul(r, iv_ln(frac_interval(1 - self.theta, prec), prec), prec)
        if k:
            out = iv_add(
                out, iv_mul(frac_interval(Fraction(k), prec), iv_ln(frac_interval(self.theta, prec), prec), prec), prec
            )
            out = iv_add(out, log_gamma_interval(k + self.a, prec), prec)
            out = iv_sub(out, log_gamma_interval(self.a, prec), prec)
            out = iv_sub(out, lg_k1, prec)
        return out

    def pmf_interval(self, k: int, digits: int) -> Interval:
        """Bracket of p(k) with relative width about 10^-digits."""
        return iv_exp(self.log_pmf_interval(k, digits), digits + 10)

    # ---- float summaries (table sizing only)
    @property
    def mean(self) -> float:
        """Mean as a float: lam (Poisson) or r theta / (1 - theta) (Pólya)."""
        if self.kind == "poisson":
            return float(self.a)
        return float(self.a * self.theta / (1 - self.theta))

    @property
    def sd(self) -> float:
        """Standard deviation as a float: sqrt(lam) (Poisson) or sqrt(r theta) / (1 - theta) (Pólya)."""
        if self.kind == "poisson":
            return math.sqrt(float(self.a))
        return math.sqrt(float(self.a * self.theta)) / float(1 - self.theta)


def poisson_law(lam: Any) -> CountLaw:
    """The Poisson(lam) law at the exact rational value of `lam`."""
    return CountLaw("poisson", exact_rational(lam, "lam"))


def polya_law(r: Any, theta: Any) -> CountLaw:
    """The Pólya(r, theta) law at the exact rational values of `r` and `theta` (theta in [0, 1))."""
    th = Fraction(0) if theta == 0 else exact_rational(theta, "theta")
    if th >= 1:
        raise ValueError(f"theta must lie in [0, 1), got {theta!r}")
    return CountLaw("polya", exact_rational(r, "r"), th)


# ---------------------------------------------------------------------------- exact cdf brackets


class _Walker:
    """Running bracket of a sum of positive terms t_j, each t_j = t_(j-1) * num_j / den_j, in
    binary fixed point (integers times 2^-shift, `bits` bits below the first term): every product
    is rounded down in the lower bound and up in the upper bound, so both stay rigorous."""

    def __init__(self, start: Interval, digits: int) -> None:
        lo, hi = Fraction(start[0]), Fraction(start[1])
        bits = math.ceil(digits * 3.33) + 64
        self.shift = bits - (hi.numerator.bit_length() - hi.denominator.bit_length())  # ~ -log2(hi)
        scale = 2**self.shift if self.shift >= 0 else Fraction(1, 2**-self.shift)
        self.t_lo = math.floor(lo * scale)
        self.t_hi = math.ceil(hi * scale)
        self.s_lo, self.s_hi = self.t_lo, self.t_hi

    def _value(self, units: int) -> Fraction:
        return Fraction(units, 2**self.shift) if self.shift >= 0 else Fraction(units * 2**-self.shift)

    def sum_bounds(self) -> Bounds:
        return self._value(self.s_lo), self._value(self.s_hi)

    def tail_small(self, rho: Fraction, digits: int) -> bool:
        """Whether rho < 1 and the geometric tail bound t_hi rho/(1-rho) is <= 10^-digits * sum."""
        if rho >= 1:
            return False
        return self.t_hi * rho.numerator * 10**digits <= self.s_lo * (rho.denominator - rho.numerator)

    def tail(self, rho: Fraction) -> Fraction:
        """The bound t_hi rho/(1-rho), exactly."""
        return self._value(self.t_hi) * rho / (1 - rho)


@functools.lru_cache(maxsize=4096)
def cdf_bounds(law: CountLaw, k: int, prec: int) -> Bounds:
    """Rational (lo, hi) with lo <= F(k) = P(X <= k) <= hi, relative width about 10^-prec.

    Deterministic in its arguments, hence cached. Below the mode F(k) is summed downwards from k,
    above it G(k) = 1 - F(k) upwards from k+1; the terms come from the bracket of p at the start
    and exact rational ratios (directed rounding); the sum stops when the geometric bound
    p(j) rho/(1-rho) on the remaining tail (rho the largest remaining ratio, < 1 past the mode)
    is below 10^-prec of the partial sum (tested every _CHECK terms).
    """
    if k < 0:
        return Fraction(0), Fraction(0)
    digits = prec + 5
    if k < law.mode:
        walk, j = _Walker(law.pmf_interval(k, digits), digits), k
        while j > 0 and not walk.tail_small(law.down_ratio(j), digits):
            j = _run(walk, law, j, max(j - _CHECK, 0), -1)
        tail = walk.tail(law.down_ratio(j)) if j > 0 else Fraction(0)
        lo, hi = walk.sum_bounds()
        return lo, hi + tail
    j = k + 1
    walk = _Walker(law.pmf_interval(j, digits), digits)
    while not walk.tail_small(law.up_ratio(j), digits):
        j = _run(walk, law, j, j + _CHECK, 1)
    lo, hi = walk.sum_bounds()
    return 1 - hi - walk.tail(law.up_ratio(j)), 1 - lo


def _run(walk: _Walker, law: CountLaw, j: int, stop: int, direction: int) -> int:
    """Walk from the term at j to the term at `stop` (direction +1: t_i = t_(i-1) p(i)/p(i-1);
    -1: t_(i-1) = t_i p(i-1)/p(i)), the ratios of `ratio_terms` inlined for speed."""
    a, b = law.a.numerator, law.a.denominator
    c, d = (law.theta.numerator, law.theta.denominator) if law.kind == "polya" else (1, 1)
    poisson_kind = law.kind == "poisson"
    t_lo, t_hi, s_lo, s_hi = walk.t_lo, walk.t_hi, walk.s_lo, walk.s_hi
    while j != stop:
        i = j + 1 if direction > 0 else j  # the ratio p(i)/p(i-1) used by this step
        if poisson_kind:
            num, den = a, b * i
        else:
            num, den = ((i - 1) * b + a) * c, i * b * d
        if direction < 0:
            num, den = den, num
        t_lo = t_lo * num // den
        t_hi = -(-t_hi * num // den)
        s_lo += t_lo
        s_hi += t_hi
        j += direction
    walk.t_lo, walk.t_hi, walk.s_lo, walk.s_hi = t_lo, t_hi, s_lo, s_hi
    return j


# ---------------------------------------------------------------------------- float table


def _blocked_cumsum(x: np.ndarray) -> np.ndarray:
    """Inclusive prefix sums in blocks of _BLOCK: every entry is a sum with at most
    _BLOCK + len/_BLOCK + 1 roundings (numpy's accumulate is sequential)."""
    n = x.size
    nb = -(-n // _BLOCK)
    pad = np.zeros(nb * _BLOCK)
    pad[:n] = x
    rows = np.cumsum(pad.reshape(nb, _BLOCK), axis=1)
    offsets = np.concatenate([[0.0], np.cumsum(rows[:-1, -1])])
    return (rows + offsets[:, None]).ravel()[:n]


def _anchor_spacing(n: int) -> int:
    """Distance between exactly computed pmf values: 1024, or wider so that there are <= 1024."""
    return max(_ANCHOR, -(-n // 1024))


def _table_pmf(law: CountLaw, lo: int, hi: int) -> np.ndarray:
    """p(j) for j = lo..hi in float64, relative error <= (3 spacing + 2) ulp: each anchor within
    1 ulp (a 25-digit bracket rounded), each float ratio within 2.5 ulp, each product 1/2 ulp."""
    n = hi - lo + 1
    step = _anchor_spacing(n)
    na = -(-n // step)
    j = lo + np.arange(na * step, dtype=np.float64).reshape(na, step)
    with np.errstate(divide="ignore", invalid="ignore"):  # j = 0: an anchor, ratio replaced by 1
        ratios = float(law.a) / j if law.kind == "poisson" else (j - 1.0 + float(law.a)) * float(law.theta) / j
    ratios[:, 0] = 1.0
    anchors = np.empty(na)
    for i in range(na):
        p_lo, p_hi = law.pmf_interval(lo + i * step, 25)
        anchors[i] = float((p_lo + p_hi) / 2)
    return (np.cumprod(ratios, axis=1) * anchors[:, None]).ravel()[:n]


@dataclass(frozen=True)
class _Table:
    lo: int
    below: np.ndarray  # A[t]: w_int <= A[t] implies U < F(lo + t)
    above: np.ndarray  # B[t+1]: w_int >= B[t+1] implies U >= F(lo + t); B[0] for F(lo - 1)
    guide: np.ndarray  # first index with A >= the start of each of 2^bits buckets of w_int (and end)
    bits: int

    def search(self, w: np.ndarray) -> np.ndarray:
        """searchsorted(A, w, 'left'): read from the bucket guide where no A falls inside w's
        bucket, by binary search for the rest."""
        b = (w * 2.0 ** (self.bits - 53)).astype(np.int64)
        idx = self.guide[b]
        mixed = np.flatnonzero(self.guide[b + 1] != idx)
        idx[mixed] = np.searchsorted(self.below, w[mixed], side="left")
        return idx


def _tail_bounds(law: CountLaw, lo: int, hi: int, p_lo: float, p_hi: float) -> tuple[float, float]:
    """Upper bounds on P(X < lo) and P(X > hi) from the pmf at the table ends (x2 for rounding)."""
    left = 0.0
    if lo > 0:
        rho = float(law.down_ratio(lo))
        left = math.inf if rho >= 1 else 2.0 * p_lo * rho / (1 - rho)
    rho = float(law.up_ratio(hi))
    right = math.inf if rho >= 1 else 2.0 * p_hi * rho / (1 - rho)
    return left, right


@functools.lru_cache(maxsize=8)
def _table(law: CountLaw) -> _Table:
    m0, sd = law.mode, law.sd
    geo = 40.0 / float(1 - law.theta) if law.kind == "polya" else 0.0
    lo = max(0, math.floor(min(law.mean, m0) - 12 * sd - 10))
    hi = max(m0, math.ceil(law.mean + 12 * sd + 20 + geo))
    while True:
        if hi - lo + 1 > _MAX_TABLE:
            raise ValueError(
                f"the law {law.kind} with parameters {float(law.a)!r}, {float(law.theta)!r} is too "
                f"wide for the exact sampler (table of {hi - lo + 1} > {_MAX_TABLE} entries)"
            )
        p = _table_pmf(law, lo, hi)
        left, right = _tail_bounds(law, lo, hi, float(p[0]), float(p[-1]))
        if left <= _TAIL and right <= _TAIL:
            break
        if left > _TAIL:
            lo = max(0, lo - max(m0 - lo, 16))
        if right > _TAIL:
            hi = hi + max(hi - m0, 16)
    n = hi - lo + 1
    gamma = (2 * _BLOCK + n // _BLOCK + 4) * _U
    err = 1.001 * ((3 * _anchor_spacing(n) + 2) * _U + gamma) + 4 * _U + _SLACK
    split = m0 - lo  # entries t < split hold F (below the mode), t >= split hold G
    f_hat = _blocked_cumsum(p[:split])
    g_hat = _blocked_cumsum(p[::-1])[::-1]
    g_hat = np.concatenate([g_hat[1:], [0.0]])[split:]  # G(j) = sum_{i > j} p(i)
    below = np.empty(n)
    above = np.empty(n + 1)
    f_lo = f_hat * (1 - err)
    f_hi = f_hat * (1 + err) + left * (1 + err)
    below[:split] = np.floor(f_lo * _GRID) - 1
    above[1 : split + 1] = np.ceil(f_hi * _GRID)
    g_lo = g_hat * (1 - err)
    g_hi = g_hat * (1 + err) + right * (1 + err)
    below[split:] = _GRID - 1 - np.ceil(g_hi * _GRID)
    above[split + 1 :] = _GRID - np.floor(g_lo * _GRID)
    above[0] = np.ceil(left * (1 + err) * _GRID) if lo > 0 else 0.0
    below = np.minimum.accumulate(below[::-1])[::-1]
    below.setflags(write=False)
    above.setflags(write=False)
    bits = int(min(22, max(12, math.ceil(math.log2(8 * n)))))
    starts = np.arange(2**bits + 1, dtype=np.float64) * 2.0 ** (53 - bits)
    guide = np.searchsorted(below, starts, side="left")
    guide.setflags(write=False)
    return _Table(lo, below, above, guide, bits)


# ---------------------------------------------------------------------------- sampling


def _width(law: CountLaw) -> float:
    """Rough table length: 20 sd, plus the geometric right tail of a Pólya law."""
    return 20 * law.sd + (40.0 / float(1 - law.theta) if law.kind == "polya" else 0.0) + 40


def sample_law(rng: np.random.Generator, law: CountLaw, shape: tuple[int, ...]) -> np.ndarray:
    """Exact draws of `law` by inversion (module docstring), int64 array of `shape`.

    A law too wide for one table is drawn as the sum of K i.i.d. draws of the law with parameter
    a/K: Poisson(lam) = sum of K Poisson(lam/K), Pólya(r, θ) = sum of K Pólya(r/K, θ) (both laws
    are infinitely divisible; the sum of exact draws is exact), K chosen so the table fits.
    """
    if law.kind == "polya" and law.theta == 0:
        return np.zeros(shape, dtype=np.int64)
    width = _width(law)
    if width > _SPLIT_TABLE:
        parts = math.ceil((width / _SPLIT_TABLE) ** 2)
        part = CountLaw(law.kind, law.a / parts, law.theta)
        while _width(part) > _SPLIT_TABLE:
            parts *= 2
            part = CountLaw(law.kind, law.a / parts, law.theta)
        out = np.zeros(shape, dtype=np.int64)
        for _ in range(parts):
            out += sample_law(rng, part, shape)
        return out
    tab = _table(law)
    w = rng.random(shape) * _GRID
    idx = tab.search(w.ravel()).reshape(shape)
    inside = idx < tab.below.size
    ok = inside & (w >= tab.above[np.minimum(idx, tab.below.size)])
    out = (idx + tab.lo).astype(np.int64)
    for i in np.flatnonzero(~ok):
        out.flat[i] = _exact_draw(rng, law, tab, float(w.flat[i]), int(out.flat[i]))
    return out


def _exact_draw(rng: np.random.Generator, law: CountLaw, tab: _Table, w: float, start: int) -> int:
    """X = max{k : U >= F(k-1)} for U in [w, w+1) / 2^53, using table bounds where they decide."""
    u = LazyUniform(w * _U, _U, rng)
    size = tab.below.size

    def pred(k: int) -> bool:
        if k == 0:
            return True
        t = k - 1 - tab.lo
        if t < 0 and w >= tab.above[0]:
            return True
        if 0 <= t < size:
            if w >= tab.above[t + 1]:
                return True
            if w <= tab.below[t]:
                return False
        return not u.below(lambda prec: cdf_bounds(law, k - 1, prec))

    return _last_true(pred, max(start, 0))
