"""Exact comparisons of a uniform variable with transcendental thresholds.

The exact samplers of `dpaudit.mechanisms.discrete` decide events of the form U < T, where U is
uniform on [0, 1) and T is exp(-x) (x rational) or a product of such numbers. Floating point
decides almost every comparison; the rare ones closer than a safety margin are decided here by
arbitrary-precision arithmetic: U is revealed bit by bit (`LazyUniform`) and T is bracketed by
rigorous decimal bounds (`exp_neg_bounds`), both refined until they separate. This is the
"lazy digits" idea behind the exact samplers of Canonne, Kamath, Steinke, "The Discrete
Gaussian for Differential Privacy" (NeurIPS 2020), Section 5.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from typing import Callable

import numpy as np

__all__ = ["LazyUniform", "exp_neg_bounds", "ratio_power_bounds"]

Bounds = tuple[Fraction, Fraction]

_START_DIGITS = 40
_STEP_DIGITS = 20
_STEP_BITS = 32


def _context(prec: int, rounding: str) -> decimal.Context:
    return decimal.Context(
        prec=prec, rounding=rounding, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX
    )


def _quotient(x: Fraction, prec: int, rounding: str) -> decimal.Decimal:
    return _context(prec, rounding).divide(
        decimal.Decimal(x.numerator), decimal.Decimal(x.denominator)
    )


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
