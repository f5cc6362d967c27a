"""Exact comparisons of a uniform variable with transcendental thresholds.

The exact samplers of `dpaudit.mechanisms.discrete` decide events of the form U < T, where U is
uniform on [0, 1) and T is exp(-x) (x rational) or a product of such numbers. Floating point
decides almost every comparison; the rare ones closer than a safety margin are decided here by
arbitrary-precision arithmetic: U is revealed bit by bit (`LazyUniform`) and T is bracketed by
rigorous decimal bounds (`exp_neg_bounds`), both refined until they separate. This is the
"lazy digits" idea behind the exact samplers of Canonne, Kamath, Steinke, "The Discrete
Gaussian for Differential Privacy" (NeurIPS 2020), Section 5.
The exact Poisson and Pólya samplers (`dpaudit.mechanisms.counts`) bracket pmfs and cdfs with the
outward-rounded decimal interval arithmetic below and a rigorous log-gamma (`log_gamma_interval`).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

__all__ = [
    "LazyUniform",
    "exp_neg_bounds",
    "frac_interval",
    "iv_add",
    "iv_exp",
    "iv_ln",
    "iv_mul",
    "iv_sub",
    "log_gamma_interval",
    "ratio_power_bounds",
]

Bounds = tuple[Fraction, Fraction]

_START_DIGITS = 40
_STEP_DIGITS = 20
_STEP_BITS = 32


def _context(prec: int, rounding: str) -> decimal.Context:
    return decimal.Context(prec=prec, rounding=rounding, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX)


def _quotient(x: Fraction, prec: int, rounding: str) -> decimal.Decimal:
    return _context(prec, rounding).divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))


def exp_neg_bounds(x: Fraction, prec: int) -> Bounds:
    """Rational (lo, hi) with lo <= exp(-x) <= hi, relative width about (1 + x) 10^(1-prec).

    x is rounded down and up to `prec` digits (directed rounding); decimal's exp is correctly
    rounded (Python `decimal` documentation), and one extra unit in the last place is added on
    each side, so the bracket holds whatever the rounding of the last digit.
    """
    lo_x = _quotient(x, prec, decimal.ROUND_FLOOR)
    hi_x = _quotient(x, prec, decimal.ROUND_CEILING)
    ctx = _context(prec, decimal.ROUND_HALF_EVEN)
    slack = Fraction(1, 10 ** (prec - 1))
    lo = Fraction(ctx.exp(hi_x.copy_negate())) * (1 - slack)
    hi = Fraction(ctx.exp(lo_x.copy_negate())) * (1 + slack)
    return lo, hi


def ratio_power_bounds(ratio: Fraction, k: int, prec: int) -> Bounds:
    """Rational (lo, hi) with lo <= ratio**k <= hi for a rational ratio in (0, 1].

    Square-and-multiply with every product rounded down (lower bound) or up (upper bound).
    """
    out = []
    for rounding in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
        ctx = _context(prec, rounding)
        base = _quotient(ratio, prec, rounding)
        acc = decimal.Decimal(1)
        e = k
        while e:
            if e & 1:
                acc = ctx.multiply(acc, base)
            base = ctx.multiply(base, base)
            e >>= 1
        out.append(Fraction(acc))
    return out[0], out[1]


class LazyUniform:
    """A uniform U on [0, 1) of which only the interval [lo, lo + width) is known so far.

    Built from a float draw (`lo` a multiple of `width`, e.g. numpy's 53-bit `Generator.random`):
    U = lo + width * V with V uniform on [0, 1) and independent of the draw, so revealing V's
    bits with fresh random integers keeps U exactly uniform.
    """

    def __init__(self, lo: float, width: float, rng: np.random.Generator) -> None:
        self.lo = Fraction(lo)
        self.width = Fraction(width)
        self._rng = rng

    def refine(self) -> None:
        """Reveal `_STEP_BITS` more binary digits of U."""
        self.width /= 2**_STEP_BITS
        self.lo += int(self._rng.integers(0, 2**_STEP_BITS)) * self.width

    def below(self, bounds: Callable[[int], Bounds]) -> bool:
        """Exactly decide U < T, where bounds(prec) brackets T ever tighter as prec grows."""
        prec = _START_DIGITS
        while True:
            lo, hi = bounds(prec)
            if self.lo + self.width <= lo:
                return True
            if self.lo >= hi:
                return False
            self.refine()
            prec += _STEP_DIGITS


# ---------------------------------------------------------------------------- interval arithmetic
# Closed intervals [lo, hi] of Decimals at a working precision: + - x / round outward (decimal's
# directed rounding modes are exact IEEE 854 roundings); ln and exp are correctly rounded to
# nearest (Python `decimal` documentation), so one step outward (next_minus / next_plus) bounds
# them. Used for the log-gamma and log-pmf brackets of the exact Poisson and Pólya samplers.

Interval = tuple[decimal.Decimal, decimal.Decimal]


def frac_interval(x: Fraction, prec: int) -> Interval:
    """[x rounded down, x rounded up] to `prec` digits."""
    return _quotient(x, prec, decimal.ROUND_FLOOR), _quotient(x, prec, decimal.ROUND_CEILING)


def iv_add(a: Interval, b: Interval, prec: int) -> Interval:
    """[a_lo + b_lo, a_hi + b_hi], rounded outward to `prec` digits."""
    return (_context(prec, decimal.ROUND_FLOOR).add(a[0], b[0]), _context(prec, decimal.ROUND_CEILING).add(a[1], b[1]))


def iv_sub(a: Interval, b: Interval, prec: int) -> Interval:
    """[a_lo - b_hi, a_hi - b_lo], rounded outward to `prec` digits."""
    return (
        _context(prec, decimal.ROUND_FLOOR).subtract(a[0], b[1]),
        _context(prec, decimal.ROUND_CEILING).subtract(a[1], b[0]),
    )


def iv_mul(a: Interval, b: Interval, prec: int) -> Interval:
    """[min, max] of the four products of endpoints, rounded outward to `prec` digits."""
    down, up = _context(prec, decimal.ROUND_FLOOR), _context(prec, decimal.ROUND_CEILING)
    pairs = [(x, y) for x in a for y in b]
    return min(down.multiply(x, y) for x, y in pairs), max(up.multiply(x, y) for x, y in pairs)


def iv_ln(a: Interval, prec: int) -> Interval:
    """[ln a_lo, ln a_hi], one step outward at `prec` digits; ValueError unless a_lo > 0."""
    if a[0] <= 0:
        raise ValueError("log of an interval that is not positive")
    ctx = _context(prec, decimal.ROUND_HALF_EVEN)
    return ctx.next_minus(ctx.ln(a[0])), ctx.next_plus(ctx.ln(a[1]))


def iv_exp(a: Interval, prec: int) -> Interval:
    """[exp a_lo, exp a_hi], one step outward at `prec` digits."""
    ctx = _context(prec, decimal.ROUND_HALF_EVEN)
    return ctx.next_minus(ctx.exp(a[0])), ctx.next_plus(ctx.exp(a[1]))


@functools.lru_cache(maxsize=16)
def _pi_bounds(digits: int) -> Bounds:
    """pi = 16 atan(1/5) - 4 atan(1/239) (Machin); each alternating atan series is stopped after a
    term below 10^-(digits+2), so consecutive partial sums bracket it."""

    def atan_inv(x: int) -> Bounds:
        total, k, sign = Fraction(0), 0, 1
        tol = Fraction(1, 10 ** (digits + 2))
        while True:
            term = Fraction(1, (2 * k + 1) * x ** (2 * k + 1))
            nxt = total + sign * term
            if term < tol:
                return min(total, nxt), max(total, nxt)
            total, k, sign = nxt, k + 1, -sign

    a_lo, a_hi = atan_inv(5)
    b_lo, b_hi = atan_inv(239)
    return 16 * a_lo - 4 * b_hi, 16 * a_hi - 4 * b_lo


_BERNOULLI: list[Fraction] = [Fraction(1)]


def _bernoulli(k: int) -> Fraction:
    """B_k (B_1 = -1/2 convention) from sum_{j<=m} C(m+1, j) B_j = 0, cached."""
    while len(_BERNOULLI) <= k:
        m = len(_BERNOULLI)
        acc = sum((math.comb(m + 1, j) * _BERNOULLI[j] for j in range(m)), Fraction(0))
        _BERNOULLI.append(-acc / (m + 1))
    return _BERNOULLI[k]


@functools.lru_cache(maxsize=4096)
def log_gamma_interval(z: Fraction, digits: int) -> Interval:
    """Rigorous bracket of ln Gamma(z), z > 0 rational, absolute width about 10^-digits.

    Stirling's series ln Gamma(w) = (w - 1/2) ln w - w + ln(2 pi)/2
    + sum_{k=1}^{K} B_2k / (2k (2k-1) w^(2k-1)) + R_K with |R_K| below the first omitted term
    for real w > 0 (DLMF 5.11.ii); small z are shifted up by ln Gamma(z) = ln Gamma(z + s)
    - ln(z (z+1) ... (z+s-1)) so that w >= digits/2 + 10, where the series reaches 10^-digits.
    """
    if z <= 0:
        raise ValueError(f"z must be positive, got {z!r}")
    wmin = digits // 2 + 10
    shift = max(0, math.ceil(wmin - z))
    w = z + shift
    prec = digits + len(str(math.ceil(w))) + 10
    tol = Fraction(1, 10 ** (digits + 3))
    series, k = Fraction(0), 1
    while True:
        term = _bernoulli(2 * k) / (2 * k * (2 * k - 1) * w ** (2 * k - 1))
        if abs(term) < tol:
            break
        series += term
        k += 1
    # |R| <= |term| (the first omitted term)
    out = iv_mul(frac_interval(w - Fraction(1, 2), prec), iv_ln(frac_interval(w, prec), prec), prec)
    out = iv_sub(out, frac_interval(w, prec), prec)
    pi_lo, pi_hi = _pi_bounds(prec)
    half_ln_2pi = iv_ln(
        (_quotient(2 * pi_lo, prec, decimal.ROUND_FLOOR), _quotient(2 * pi_hi, prec, decimal.ROUND_CEILING)), prec
    )
    half_ln_2pi = (
        _context(prec, decimal.ROUND_FLOOR).divide(half_ln_2pi[0], 2),
        _context(prec, decimal.ROUND_CEILING).divide(half_ln_2pi[1], 2),
    )
    out = iv_add(out, half_ln_2pi, prec)
    out = iv_add(
        out,
        (
            _quotient(series - abs(term), prec, decimal.ROUND_FLOOR),
            _quotient(series + abs(term), prec, decimal.ROUND_CEILING),
        ),
        prec,
    )
    if shift:
        prod = Fraction(1)
        for i in range(shift):
            prod *= z + i
        out = iv_sub(out, iv_ln(frac_interval(prod, prec), prec), prec)
    return out
