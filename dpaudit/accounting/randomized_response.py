"""k-ary randomized response accounted from its local epsilon eps0 and bucket count k, in log space.

k-RR with pure epsilon eps0 outputs the true bucket with probability a = e^eps0/(e^eps0 + k - 1) and
each other bucket with probability b = 1/(e^eps0 + k - 1) (Warner 1965; Kairouz, Oh, Viswanath,
"Extremal Mechanisms for Local Differential Privacy", NeurIPS 2014). dp-accounting describes the same
family by its noise parameter p = k/(e^eps0 - 1 + k) (`RandomizedResponseDpEvent`): for large k or
small eps0, p rounds to (or near) 1.0 and eps0 = log1p(k(1-p)/p) is lost, so every figure here is
computed from eps0 and k, never through p:

- the Renyi divergence of order alpha (`rdp`), in closed form from e^(alpha eps0) - 1 and 1 - e^-((alpha-1) eps0);
- the privacy loss distribution (`pld`): loss +eps0 w.p. a, -eps0 w.p. b, 0 w.p. (k-2) b;
- eps0 of a `RandomizedResponseDpEvent` (`epsilon_of_noise_parameter`), refused with a ValueError
  where its noise parameter cannot carry eps0 to a relative `NOISE_PARAMETER_RTOL`.

Every figure is rounded up (never optimistic) by a bound on its floating-point error.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib

__all__ = [
    "NOISE_PARAMETER_RTOL",
    "epsilon_of_noise_parameter",
    "log_other_bucket_probability",
    "noise_parameter",
    "pld",
    "rdp",
]

ULP = float(np.finfo(float).eps)
TINY = math.ulp(0.0)

NOISE_PARAMETER_RTOL = 1e-9
"""Largest relative uncertainty of eps0 tolerated from a noise parameter p given as a double: one
ulp of p moves k(1-p)/p by ulp(p) (1/(1-p) + 1/p) relative; beyond this the parameter is refused."""


def _log_k_minus(num_buckets: int, j: int) -> float:
    """log(k - j) for an integer k > j, exact before the logarithm (Python integers)."""
    return math.log(int(num_buckets) - j)


def log_other_bucket_probability(local_epsilon: float, num_buckets: int) -> float:
    """log b = -log(e^eps0 + k - 1): the probability of each bucket other than the true one."""
    return -float(np.logaddexp(local_epsilon, _log_k_minus(num_buckets, 1)))


def noise_parameter(local_epsilon: float, num_buckets: int) -> float:
    """dp-accounting's noise parameter p = k b = k/(e^eps0 - 1 + k) (rounded: for display and for
    dp-accounting's own accountants only; it can round to 1.0, dpaudit never reads it)."""
    return min(1.0, math.exp(math.log(int(num_buckets)) + log_other_bucket_probability(local_epsilon, num_buckets)))


def epsilon_of_noise_parameter(p: float, num_buckets: int) -> float:
    """eps0 = log1p(k(1-p)/p) of `RandomizedResponseDpEvent(p, k)`, the largest over the reals within
    one ulp of p, rounded up; 0 for k = 1 (the output ignores the input).

    ValueError when p = 1.0 (with k >= 2) or when one ulp of p moves eps0 by more than a relative
    `NOISE_PARAMETER_RTOL`: p then does not carry eps0 (p = k/(e^eps0 - 1 + k) rounds near 1 for
    large k or small eps0), and the event must be given by eps0 and k instead.
    """
    p, k = float(p), int(num_buckets)
    if k == 1:
        return 0.0
    h = math.ulp(p)  # the spacing above p; the spacing below is at most this
    rel = h / (1.0 - p) + h / p if p < 1.0 else math.inf
    if not rel <= NOISE_PARAMETER_RTOL:
        raise ValueError(
            f"RandomizedResponseDpEvent.noise_parameter={p!r} with num_buckets={k} cannot be represented: "
            f"one ulp of p moves epsilon0 = log1p(k(1-p)/p) by a relative {rel:.3g} (more than "
            f"{NOISE_PARAMETER_RTOL:g}), so the double p has lost epsilon0; describe the release by its "
            "local epsilon instead: dpaudit.accounting.KaryRandomizedResponseDpEvent(local_epsilon, num_buckets)"
        )
    # k(1 - p')/p' is decreasing in p': its largest value within one ulp is at p - h; log1p(e^log x)
    # in log space, so k(1 - p)/p beyond the doubles (p = 1e-300, k = 1e20) keeps its logarithm
    terms = (math.log(k), math.log((1.0 - p) + h), -math.log(p - h))
    log_x = math.fsum(terms) + 4 * ULP * sum(abs(t) for t in terms)  # each logarithm off by an ulp
    return float(np.logaddexp(0.0, log_x)) * (1.0 + 8 * ULP)


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x - 1) for x > 0, accurate at both ends (x + log1p(-e^-x) above 1)."""
    with np.errstate(over="ignore"):
        return np.where(x > 1.0, x + np.log1p(-np.exp(-np.maximum(x, 1.0))), np.log(np.expm1(np.minimum(x, 1.0))))


def _log_one_minus_exp_neg(y: np.ndarray) -> np.ndarray:
    """log(1 - e^-y) for y > 0 (log1p(-e^-y) above log 2, log(-expm1(-y)) below)."""
    return np.where(
        y > math.log(2.0),
        np.log1p(-np.exp(-np.maximum(y, math.log(2.0)))),
        np.log(-np.expm1(-np.minimum(y, math.log(2.0)))),
    )


def rdp(local_epsilon: float, num_buckets: int, orders: np.ndarray) -> np.ndarray:
    """Renyi divergence of k-RR (replace-one) at each order alpha > 1, rounded up:

        D_alpha = log1p((e^(alpha eps0) - 1)(1 - e^-((alpha-1) eps0)) / (e^eps0 + k - 1)) / (alpha - 1),

    i.e. log((e^(alpha eps0) + e^((1-alpha) eps0) + k - 2)/(e^eps0 + k - 1))/(alpha - 1), the order-alpha
    divergence of (a, b, b, ...) from (b, a, b, ...) (Mironov, "Renyi Differential Privacy", CSF 2017,
    Def. 3; the numerator minus the denominator factors as shown). log1p(e^x) is taken as
    logaddexp(0, x), so neither tiny eps0 (1e-17) nor huge alpha eps0 or k (1e20) loses it.
    """
    a = np.asarray(orders, dtype=float)
    eps0 = float(local_epsilon)
    with np.errstate(over="ignore"):  # alpha eps0 beyond the doubles gives inf there: a valid (loose) bound
        log_t = _log_expm1(a * eps0) + _log_one_minus_exp_neg((a - 1.0) * eps0)
        log_den = float(np.logaddexp(eps0, _log_k_minus(num_buckets, 1)))
        # round-off: a few ulp of each log term (of magnitude ~ alpha eps0 + |log eps0|) and of log(k-1)
        x = log_t - log_den + 16 * ULP * (np.abs(log_t) + abs(log_den) + a * eps0 + 1.0)
        out = np.logaddexp(0.0, x) * (1.0 + 8 * ULP) / (a - 1.0)
    return np.where(out < sys.float_info.min, out + TINY, out)  # no relative precision below the normals


def pld(local_epsilon: float, num_buckets: int, value_discretization_interval: float):
    """Pessimistic privacy loss distribution of one k-RR release (replace-one, symmetric): loss eps0
    w.p. a, -eps0 w.p. b, 0 w.p. (k-2) b, each loss rounded up to the grid (dp-accounting's
    pessimistic discretisation; the grid index is raised by a relative 4 ulp against the rounding of
    eps0/interval)."""
    eps0, v = float(local_epsilon), float(value_discretization_interval)
    log_b = log_other_bucket_probability(eps0, num_buckets)
    up = math.ceil(eps0 / v * (1 + 4 * ULP))
    down = math.ceil(-eps0 / v * (1 - 4 * ULP))
    probs = {up: math.exp(-float(np.logaddexp(0.0, _log_k_minus(num_buckets, 1) - eps0)))}  # a, not e^(eps0 + log b)
    probs[down] = probs.get(down, 0.0) + math.exp(log_b)
    if int(num_buckets) > 2:
        probs[0] = probs.get(0, 0.0) + math.exp(_log_k_minus(num_buckets, 2) + log_b)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(probs, 0.0, v, pessimistic_estimate=True)
