"""Exact, vectorised samplers of the geometric, discrete Laplace and discrete Gaussian laws.

What "exact" means here. Each sampler is an inversion (or a rejection step) that compares a
uniform U on [0, 1) with thresholds T_k that are exponentials of *rational* numbers; the
parameters are taken at their exact rational value (a Python float is the binary number it
stores, `fractions.Fraction(x)`; pass an `int` or a `Fraction` to name a decimal value exactly).
The comparison U < T_k is decided in float64 only when U lies farther than a safety margin
(relative 2^-40, i.e. about 4000 units in the last place of the logarithm) from T_k; the rest,
about one draw in 10^11 at unit scale, is decided exactly by `dpaudit.mechanisms.exact`
(U revealed bit by bit, T_k bracketed by directed-rounding decimal arithmetic). The output law is
therefore exactly the stated pmf, under two assumptions:
  1. the bit generator's output is uniform (numpy's `Generator.random` is k / 2^53 with k uniform);
  2. numpy's float64 `log` has relative error below 2^-42 (it is accurate to a few units in
     the last place, 2^-51; `tests/mechanisms/test_samplers.py` checks a grid against decimal).
Unlike a floating-point Laplace (Mironov, "On Significance of the Least Significant Bits for
Differential Privacy", CCS 2012), the support and every probability are the exact ones, so no
output value has probability zero under one neighbour and positive under the other.

Discrete Laplace and geometric draws cost one uniform and one logarithm each, like numpy's own
continuous Laplace; the discrete Gaussian is the rejection sampler of Canonne, Kamath, Steinke,
"The Discrete Gaussian for Differential Privacy" (NeurIPS 2020), Algorithm 3, run in rounds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from numbers import Integral, Rational, Real
from typing import Any

import numpy as np

from dpaudit.mechanisms.exact import Bounds, LazyUniform, exp_neg_bounds, ratio_power_bounds

__all__ = [
    "Size",
    "as_shape",
    "bisect_last_true",
    "discrete_gaussian",
    "discrete_laplace",
    "exact_rational",
    "geometric",
]

Size = int | tuple[int, ...]

_MARGIN = 2.0**-40
_UNIT = 2.0**-53
_W_MIN = 2.0**-20  # uniforms below this (one draw in 10^6) take the exact path
_MAX_SCALE = 1e12


def exact_rational(value: Any, name: str) -> Fraction:
    """The exact rational value of a positive finite parameter (int, Fraction or float)."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, (Integral, np.integer)):
        q = Fraction(int(value))
    elif isinstance(value, Rational):
        q = Fraction(value)
    else:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
        q = Fraction(v)
    if q <= 0:
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return q


def as_shape(size: Size | None) -> tuple[int, ...]:
    """`size` (None, an int or a tuple of ints) as a shape tuple; TypeError for another type, ValueError for a
    negative entry."""
    if size is None:
        return ()
    if not isinstance(size, (Integral, np.integer)) and not np.iterable(size):
        raise TypeError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    shape = (size,) if isinstance(size, (Integral, np.integer)) else tuple(size)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (Integral, np.integer)):
            raise TypeError(f"size must be a non-negative int or a tuple of them, got {size!r}")
        if s < 0:
            raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    return tuple(int(s) for s in shape)


def bisect_last_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """max{k in [lo, hi) : pred(k)} by bisection, for pred monotone (true, then false) with
    pred(lo) true and pred(hi) false (neither end is evaluated)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _last_true(pred: Callable[[int], bool], start: int) -> int:
    """max{k >= 0 : pred(k)} for pred true at 0 and monotone (true, then false)."""
    if start > 0 and not pred(start):
        hi, step = start, 1
        while True:
            lo = max(hi - step, 0)
            if lo == 0 or pred(lo):
                break
            hi, step = lo, 2 * step
    else:
        lo, step = start, 1
        while pred(lo + step):
            lo, step = lo + step, 2 * step
        hi = lo + step
    return bisect_last_true(pred, lo, hi)


def _invert_tail(
    rng: np.random.Generator,
    w: np.ndarray,
    width: float,
    log_c: float,
    gamma: float,
    threshold: Callable[[int, int], Bounds],
) -> np.ndarray:
    """M = max{k >= 0 : W < T_k} with T_k = c * exp(-k * gamma), T_0 >= 1 > W.

    W = w + width * V (w a float draw on the grid of `width`, V uniform, revealed lazily).
    Float path: M = ceil(x) - 1 for x = (log c - log W) / gamma, accepted when the interval of
    x allowed by rounding and by the unknown digits of W holds no integer; otherwise exact path,
    with threshold(k, prec) bracketing T_k.
    """
    ig = 1.0 / gamma
    slack = _MARGIN * (1.0 + abs(log_c))
    # b >= x = (log c - log W)/gamma (rounding slack included), and when w >= _W_MIN (so that
    # -log w <= 14) x >= b - spread: spread covers rounding and log(w + width) - log(w) <= width/w.
    spread = ig * (28.0 * _MARGIN + 2.0 * slack + width / _W_MIN)
    with np.errstate(divide="ignore", invalid="ignore"):
        lw = np.log(w)
        b = lw * (-(1.0 + _MARGIN) * ig)
        b += (log_c + slack) * ig
        fb = np.floor(b)
        ok = (b - fb) >= spread
        ok &= w >= _W_MIN
        out = fb.astype(np.int64)
    for i in np.flatnonzero(~ok):
        u = LazyUniform(float(w.flat[i]), width, rng)
        start = int(fb.flat[i]) if np.isfinite(fb.flat[i]) else 0

        def pred(k: int, u: LazyUniform = u) -> bool:
            return k == 0 or u.below(lambda prec: threshold(k, prec))

        out.flat[i] = _last_true(pred, start)
    return out


def geometric(rng: np.random.Generator, p: Any, size: Size | None = None) -> np.ndarray:
    """Failures before the first success in Bernoulli(p) trials: P(G = k) = p (1-p)^k, k >= 0.

    Exact for the rational p (see the module docstring); inversion G = max{k : U < (1-p)^k}.
    """
    pq = exact_rational(p, "p")
    if pq > 1:
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    shape = as_shape(size)
    if pq == 1:
        return np.zeros(shape, dtype=np.int64)
    gamma = -math.log1p(-float(pq))
    if gamma < 1.0 / _MAX_SCALE:
        raise ValueError(f"p must be at least {1.0 / _MAX_SCALE:g}, got {p!r}")
    ratio = 1 - pq
    return _invert_tail(
        rng,
        rng.random(shape),
        _UNIT,
        0.0,
        gamma,
        lambda k, prec: ratio_power_bounds(ratio, k, prec),
    )


def _dlap_threshold(gamma: Fraction) -> Callable[[int, int], Bounds]:
    """T_k = P(|X| >= k) = 2 exp(-k gamma) / (1 + exp(-gamma)) for X ~ DLap(1/gamma), k >= 1."""

    def threshold(k: int, prec: int) -> Bounds:
        ek_lo, ek_hi = exp_neg_bounds(k * gamma, prec)
        e1_lo, e1_hi = exp_neg_bounds(gamma, prec)
        return 2 * ek_lo / (1 + e1_hi), 2 * ek_hi / (1 + e1_lo)

    return threshold


def discrete_laplace(rng: np.random.Generator, scale: Any, size: Size | None = None) -> np.ndarray:
    """Discrete Laplace DLap(scale): P(X = x) = tanh(1/(2 scale)) exp(-|x|/scale), x in Z.

    Exact for the rational `scale` (module docstring). |X| is drawn by inversion,
    |X| = max{k : W < 2 q^k / (1+q)} with q = exp(-1/scale), and the sign from an independent
    bit (the top bit of the same 53-bit uniform, W its remaining 52 bits). Same law as the
    difference of two i.i.d. geometric variables and as Canonne-Kamath-Steinke's Algorithm 2.
    Variance 2q/(1-q)^2; Chowdhury & Zhou (ICLR 2023), Definition 4.
    """
    lam = exact_rational(scale, "scale")
    if lam > _MAX_SCALE:
        raise ValueError(f"scale must be at most {_MAX_SCALE:g}, got {scale!r}")
    r = rng.random(as_shape(size))
    negative = r >= 0.5
    mag = _dlap_magnitude(rng, 1 / lam, 2.0 * r - negative, 2 * _UNIT)
    return np.negative(mag, out=mag, where=negative)


def _dlap_magnitude(rng: np.random.Generator, gamma: Fraction, w: np.ndarray, width: float) -> np.ndarray:
    """|X| for X ~ DLap(1/gamma) by inversion of the uniforms W = w + width * V."""
    gamma_f = float(gamma)
    log_c = -math.log1p(math.expm1(-gamma_f) / 2.0)
    return _invert_tail(rng, w, width, log_c, gamma_f, _dlap_threshold(gamma))


def _dgauss_accept(rng: np.random.Generator, mag: np.ndarray, sigma2: Fraction, t: Fraction) -> np.ndarray:
    """Bernoulli(exp(-g)) for g = (mag - sigma2/t)^2 / (2 sigma2), decided as log U + g < 0.

    mag >= 0 are proposal magnitudes |Y|. U lies in [u, u + 2^-53): log U - log u <= 2^-53/u;
    float rounding of log u (|log u| <= 37) and of g is below
    2^-40 (40 + 2 (max mag^2 + (sigma2/t)^2) / sigma2), the tolerance below.
    """
    s2 = float(sigma2)
    c = float(sigma2 / t)
    g = mag.astype(np.float64)
    amax = float(g.max()) if g.size else 0.0
    g -= c
    np.square(g, out=g)
    g *= 0.5 / s2
    u = rng.random(mag.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.log(u)
        h += g
        tol = _UNIT / u
        tol += _MARGIN * (40.0 + 2.0 * (amax * amax + c * c) / s2)
        accept = h < -tol
        ambiguous = np.abs(h) <= tol
    for i in np.flatnonzero(ambiguous):
        gi = (int(mag.flat[i]) - sigma2 / t) ** 2 / (2 * sigma2)
        lazy = LazyUniform(float(u.flat[i]), _UNIT, rng)
        accept.flat[i] = lazy.below(functools.partial(exp_neg_bounds, gi))
    return accept


def _dgauss_acceptance(sigma: float, t: float) -> float:
    """Acceptance rate of the rejection step: sum_y DLap_t(y) exp(-(|y| - sigma²/t)² / (2 sigma²))
    (0.7602 = sqrt(2 pi / e) / 2 in the limit of large sigma with t = sigma). Only sets batch sizes."""
    if sigma >= 10:
        return 0.76
    y = np.arange(0, int(40 * t) + 40, dtype=float)
    weight = np.where(y == 0, 1.0, 2.0) * math.tanh(1 / (2 * t)) * np.exp(-y / t)
    return float(np.sum(weight * np.exp(-((y - sigma**2 / t) ** 2) / (2 * sigma**2))))


def discrete_gaussian(rng: np.random.Generator, sigma: Any, size: Size | None = None) -> np.ndarray:
    """Discrete Gaussian N_Z(0, sigma^2): P(X = x) ∝ exp(-x^2 / (2 sigma^2)), x in Z.

    Rejection from a discrete Laplace, Canonne, Kamath, Steinke (NeurIPS 2020), Algorithm 3:
    propose Y ~ DLap(t), accept with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) (valid
    for every t > 0). CKS take t = floor(sigma) + 1; here t = sigma for sigma >= 1 and
    t = 5 sigma / 4 below (exact rationals, which the exact discrete Laplace accepts), raising the
    acceptance rate from 0.45-0.73 to 0.6-0.76. Proposals are drawn in vectorised rounds;
    acceptance is decided exactly (module docstring) for the rational sigma^2 = Fraction(sigma)^2.
    Chowdhury & Zhou (ICLR 2023), Definition 11.
    """
    sig = exact_rational(sigma, "sigma")
    if sig > _MAX_SCALE:
        raise ValueError(f"sigma must be at most {_MAX_SCALE:g}, got {sigma!r}")
    sigma2 = sig * sig
    t = sig if sig >= 1 else sig * Fraction(5, 4)
    shape = as_shape(size)
    n = math.prod(shape)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    overdraw = 1.03 / _dgauss_acceptance(float(sig), float(t))
    while filled < n:
        need = n - filled
        mag = _dlap_magnitude(rng, 1 / t, rng.random(int(need * overdraw) + 16), _UNIT)
        keep = mag[_dgauss_accept(rng, mag, sigma2, t)][:need]
        np.negative(keep, out=keep, where=rng.random(keep.size) < 0.5)
        out[filled : filled + keep.size] = keep
        filled += keep.size
    return out.reshape(shape)
