"""Samplers: continuous noise, Pólya, Skellam, binomial, randomized response.

All take a numpy `Generator` first and return arrays of shape `size` (an int or a tuple; the
leading axis is the batch of independent runs); parameters broadcast against `size` as in numpy.
Pólya and Skellam are *exact* (inversion against certified cdf bounds, `dpaudit.mechanisms.counts`):
their laws are exactly the stated pmfs at the parameters' exact rational values (pass an int or a
`Fraction` to name a decimal value exactly). Laplace, Gaussian, binomial and randomized response
use numpy's floating-point algorithms (laws correct up to float64 rounding); the exact discrete
Laplace, discrete Gaussian and geometric samplers are in `dpaudit.mechanisms.discrete`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from numbers import Real
from typing import Any

import numpy as np

from dpaudit.mechanisms import counts
from dpaudit.mechanisms.discrete import Size, as_shape, exact_rational

__all__ = [
    "binomial",
    "gaussian",
    "k_randomized_response",
    "laplace",
    "poisson",
    "polya",
    "randomized_response",
    "skellam",
]


def _positive(value: Any, name: str) -> np.ndarray:
    """`value` as a float array if every entry is a positive finite real number (TypeError for a non-number)."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be positive and finite, got {value!r}")
    if not np.all(np.isfinite(raw)) or np.any(raw <= 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return raw.astype(float)


def _scalar_scale(value: Any, size: Size | None) -> tuple[float, tuple[int, ...]] | None:
    """(value, shape) when `value` is a positive finite Python/numpy float or int (not bool): the common
    case in simulation loops, validated without building arrays; None sends the caller to the general path.
    numpy draws the same numbers for a scalar scale as for the equal 0-d array."""
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = float(value)
        if math.isfinite(v) and v > 0:
            return v, as_shape(size)
    return None


def _broadcast(size: Size | None, name: str, *arrays: np.ndarray) -> tuple[int, ...]:
    """The output shape: `size`, or the parameters' common shape; parameters must broadcast to it."""
    try:
        shape = as_shape(size) if size is not None else np.broadcast_shapes(*(a.shape for a in arrays))
        ok = all(np.broadcast_shapes(a.shape, shape) == shape for a in arrays)
    except ValueError:
        ok = False
    if not ok:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"{name} of shapes {shapes} do not broadcast to size {size!r}")
    return shape


def laplace(rng: np.random.Generator, scale: Any, size: Size | None = None) -> np.ndarray:
    """Continuous Laplace Lap(scale): density exp(-|x|/scale) / (2 scale) (numpy, float64)."""
    fast = _scalar_scale(scale, size)
    if fast is not None:
        return rng.laplace(0.0, fast[0], fast[1])
    b = _positive(scale, "scale")
    return rng.laplace(0.0, b, _broadcast(size, "scale", b))


def gaussian(rng: np.random.Generator, sigma: Any, size: Size | None = None) -> np.ndarray:
    """Continuous Gaussian N(0, sigma^2) (numpy, float64)."""
    fast = _scalar_scale(sigma, size)
    if fast is not None:
        return rng.normal(0.0, fast[0], fast[1])
    s = _positive(sigma, "sigma")
    return rng.normal(0.0, s, _broadcast(size, "sigma", s))


def binomial(rng: np.random.Generator, n: Any, p: Any, size: Size | None = None) -> np.ndarray:
    """Binomial(n, p): the number of successes in n Bernoulli(p) trials (numpy's sampler)."""
    n_arr = np.asarray(n)
    if not np.issubdtype(n_arr.dtype, np.integer):
        raise TypeError(f"n must be a non-negative integer, got {n!r}")
    if np.any(n_arr < 0):
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    p_arr = np.asarray(p, dtype=float)
    if not np.all((p_arr >= 0) & (p_arr <= 1)):
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    return rng.binomial(n_arr, p_arr, _broadcast(size, "n and p", n_arr, p_arr))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (Real, np.number)) and not isinstance(value, (bool, np.bool_))


def _exact_counts(
    rng: np.random.Generator,
    size: Size | None,
    names: str,
    params: tuple[Any, ...],
    law: Callable[..., counts.CountLaw],
) -> np.ndarray:
    """Draws of law(*params) of the output shape; scalar parameters keep their exact rational
    value, array parameters (floats) are grouped by distinct value."""
    if all(_is_scalar(p) for p in params):
        the_law = law(*params)
        return counts.sample_law(rng, the_law, _broadcast(size, names, *(np.asarray(0.0),) * len(params)))
    arrays = [np.asarray(p, dtype=float) for p in params]
    shape = _broadcast(size, names, *arrays)
    flat = np.stack([np.broadcast_to(a, shape).ravel() for a in arrays], axis=1)
    out = np.empty(flat.shape[0], dtype=np.int64)
    uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    for i, row in enumerate(uniq):
        where = np.flatnonzero(inverse.ravel() == i)
        out[where] = counts.sample_law(rng, law(*(float(v) for v in row)), (where.size,))
    return out.reshape(shape)


def _polya_law(r: Any, theta: Any) -> counts.CountLaw:
    if isinstance(theta, (bool, np.bool_)) or not _is_scalar(theta):
        raise TypeError(f"theta must be a real number in [0, 1), got {theta!r}")
    if not 0 <= theta < 1:
        raise ValueError(f"theta must lie in [0, 1), got {theta!r}")
    return counts.polya_law(r, Fraction(0) if theta == 0 else theta)


def polya(rng: np.random.Generator, r: Any, theta: Any, size: Size | None = None) -> np.ndarray:
    """Pólya(r, theta): P(X = x) = Γ(x+r) / (x! Γ(r)) theta^x (1-theta)^r, x = 0, 1, ...

    The negative binomial NB(r, 1-theta) with real shape r > 0 and theta in [0, 1) (theta = 0
    gives 0), mean r theta/(1-theta); drawn *exactly* by inversion (`dpaudit.mechanisms.counts`).
    Chowdhury & Zhou (ICLR 2023), Fact 1 (Goryczka & Xiong 2015): n i.i.d. Pólya(1/n, theta) sum to Pólya(1, theta)
    = Geometric(1-theta), so n differences of shares sum to DLap(-1/log theta).
    """
    if _is_scalar(r):
        exact_rational(r, "r")
    else:
        _positive(r, "r")
    th = np.asarray(theta, dtype=float) if not _is_scalar(theta) else theta
    if not _is_scalar(theta) and not np.all((th >= 0) & (th < 1)):
        raise ValueError(f"theta must lie in [0, 1), got {theta!r}")
    return _exact_counts(rng, size, "r and theta", (r, theta), _polya_law)


def poisson(rng: np.random.Generator, lam: Any, size: Size | None = None) -> np.ndarray:
    """Poisson(lam): P(X = k) = e^-lam lam^k / k!, lam > 0, drawn exactly by inversion."""
    if _is_scalar(lam):
        exact_rational(lam, "lam")
    else:
        _positive(lam, "lam")
    return _exact_counts(rng, size, "lam", (lam,), counts.poisson_law)


def skellam(rng: np.random.Generator, variance: Any, size: Size | None = None) -> np.ndarray:
    """Symmetric Skellam Sk(0, variance) = N1 - N2 with N1, N2 i.i.d. Poisson(variance/2), exact.

    P(X = x) = exp(-variance) I_x(variance) (modified Bessel function); Chowdhury & Zhou (ICLR 2023), Definition 5;
    Agarwal, Kairouz, Liu (NeurIPS 2021). Closed under sums: variances add. The two Poisson
    draws are exact for the rational variance/2 (`dpaudit.mechanisms.counts`).
    """
    half = exact_rational(variance, "variance") / 2 if _is_scalar(variance) else _positive(variance, "variance") / 2.0
    return poisson(rng, half, size) - poisson(rng, half, size)


def randomized_response(rng: np.random.Generator, bits: Any, epsilon: Any, size: Size | None = None) -> np.ndarray:
    """Binary randomized response (Warner 1965): keep each bit w.p. e^eps/(1+e^eps), else flip.

    epsilon-LDP for one bit (the likelihood ratio is e^eps). `bits` (0/1) broadcast to `size`.
    """
    b = np.asarray(bits)
    if not np.all((b == 0) | (b == 1)):
        raise ValueError("bits must hold only 0 and 1")
    eps = _positive(epsilon, "epsilon")
    shape = _broadcast(size, "bits and epsilon", b, eps)
    flip = rng.random(shape) < 1.0 / (1.0 + np.exp(eps))
    return np.where(flip, 1 - b, b).astype(np.int8)


def k_randomized_response(
    rng: np.random.Generator, values: Any, k: int, epsilon: Any, size: Size | None = None
) -> np.ndarray:
    """k-ary randomized response: keep v w.p. e^eps/(e^eps + k - 1), else a uniform other value.

    epsilon-LDP over {0, ..., k-1} (Kairouz, Oh, Viswanath, "Extremal Mechanisms for Local
    Differential Privacy", 2014; "k-RR").
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer >= 2, got {k!r}")
    if k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    v = np.asarray(values)
    if not np.issubdtype(v.dtype, np.integer):
        raise TypeError(f"values must be integers in [0, {k - 1}], got {values!r}")
    if np.any((v < 0) | (v >= k)):
        raise ValueError(f"values must be integers in [0, {k - 1}], got {values!r}")
    eps = _positive(epsilon, "epsilon")
    shape = _broadcast(size, "values and epsilon", v, eps)
    keep_p = np.exp(eps) / (np.exp(eps) + k - 1)
    keep = rng.random(shape) < keep_p
    other = rng.integers(0, k - 1, shape)
    other = other + (other >= v)
    return np.where(keep, v, other).astype(np.int64)
