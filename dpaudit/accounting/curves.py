"""Privacy curves of the mechanisms behind the events (`dpaudit.accounting.events` and
dp-accounting's): the Gaussian (eps, delta) profile, Skellam and Poisson-subsampled Gaussian RDP,
zCDP of a release, Skellam and binomial PLDs. The accountants (`dpaudit.accounting.backends`) read them.
"""

from __future__ import annotations

import math
import sys

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy import stats
from scipy.special import gammaln, ive, log_ndtr

from dpaudit.accounting.binomial_loss import binomial_loss_pld
from dpaudit.accounting.events import DiscreteGaussianDpEvent, SkellamDpEvent
from dpaudit.accounting.guarantees import half_square_up, pure_to_zcdp
from dpaudit.accounting.leaves import TINY, nonprivate, pure_epsilon, trivially_private
from dpaudit.accounting.search import first_accepted_doubling, smallest_accepted

__all__ = [
    "MAX_ENUMERATED",
    "ULP",
    "binomial_enumerated",
    "binomial_pld",
    "gaussian_delta",
    "gaussian_epsilon",
    "half_square_up",
    "laplace_rdp",
    "log_gaussian_delta",
    "poisson_gaussian_rdp",
    "skellam_pld",
    "skellam_rdp",
    "zcdp_of_leaf",
]


NeighborRel = dp_accounting.NeighboringRelation


ULP = float(np.finfo(float).eps)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def log_gaussian_delta(mu: float, epsilon: float) -> float:
    """log of the exact delta of the Gaussian mechanism with mu = sensitivity/sigma, rounded up:
    delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle, Wang, "Improving the Gaussian
    Mechanism for Differential Privacy", ICML 2018, Thm 8).

    Both terms are taken in log space (log_ndtr), so delta below 1e-308 keeps its value. The
    computed gap between the two log terms is widened by a bound on its round-off; where that
    round-off swamps the gap (mu below ~1e-8, the two terms agree to every digit) the bound
    delta <= Phi(x + mu/2) - Phi(x - mu/2) <= mu phi(dist(0, [x - mu/2, x + mu/2])), x = -eps/mu
    (e^eps >= 1; the integral of phi over an interval of length mu) is used instead: both are
    upper bounds, the smaller is returned. 0 (log = -inf) only when even that bound underflows
    its exponent range or mu = 0.
    """
    if mu == 0.0:
        return -math.inf
    if math.isinf(mu):
        return 0.0
    x = -epsilon / mu
    a = float(log_ndtr(x + mu / 2))
    b = epsilon + float(log_ndtr(x - mu / 2))
    if a == -math.inf:
        return -math.inf
    err = 8 * ULP * (abs(a) + abs(b) + 1.0)
    gap = a - b + err
    formula = a + err + math.log(-math.expm1(-gap)) if gap < math.inf else a + err
    dist = max(0.0, -x - mu / 2)  # the interval [x - mu/2, x + mu/2] lies left of 0 when eps >= mu^2/2
    interval = math.log(mu) - 0.5 * dist * dist - _LOG_SQRT_2PI
    return min(0.0, formula, interval)


def gaussian_delta(mu: float, epsilon: float) -> float:
    """Exact delta of the Gaussian mechanism (`log_gaussian_delta`, rounded up): a positive delta
    below the smallest double is reported as the smallest positive double, never as 0."""
    ld = log_gaussian_delta(mu, epsilon)
    return 0.0 if ld == -math.inf else max(math.exp(ld), math.ulp(0.0))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon (bisection, rounded up) with `log_gaussian_delta(mu, eps) <= log delta`;
    inf at delta = 0 (the Gaussian mechanism is not pure DP) or for sigma below ~1e-6 of the
    sensitivity (beyond epsilon = 1e12: no meaningful guarantee)."""
    if delta <= 0.0 or math.isinf(mu):
        return math.inf
    target = math.log(delta)

    def accept(e: float) -> bool:
        return log_gaussian_delta(mu, e) <= target

    if accept(0.0):
        return 0.0
    hi = first_accepted_doubling(accept, 1.0, 1e12)
    if math.isinf(hi):
        return hi
    lo = 0.0 if hi == 1.0 else hi / 2
    return smallest_accepted(accept, lo, hi, rtol=1e-12, atol=1e-300)


def _exp_minus_linear(x: np.ndarray) -> np.ndarray:
    """g(x) = e^x - 1 - x >= 0 without cancellation: x^2 sum_{m>=0} x^m/(m+2)! (Horner, 24 terms: the
    rest is below 1e-30 of the sum) for |x| < 1/2, expm1(x) - x beyond."""
    small = np.abs(x) < 0.5
    xs = np.where(small, x, 0.0)
    series = np.zeros_like(xs)
    for m in range(23, -1, -1):
        series = series * xs + 1.0 / math.factorial(m + 2)
    xl = np.where(small, 0.0, x)
    return np.where(small, xs * xs * series, np.expm1(xl) - xl)


def laplace_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """RDP of the Laplace mechanism with pure epsilon eps (scale = sensitivity/eps), rounded up:

        D_a = log(a/(2a-1) e^((a-1) eps) + (a-1)/(2a-1) e^(-a eps)) / (a-1)

    (Mironov, "Renyi Differential Privacy", CSF 2017, Prop. 6). For a eps <= 1 the argument minus 1 is
    (a g((a-1) eps) + (a-1) g(-a eps))/(2a-1), g(x) = e^x - 1 - x: two non-negative terms, so a tiny
    eps (1e-17, where D_a ~ a eps^2/2) keeps its value (dp-accounting's form cancels to 0 there).
    Above, the logarithm is taken with (a-1) eps factored out, so a huge a eps does not overflow.
    """
    a = np.asarray(orders, dtype=float)
    eps = float(epsilon)
    if eps == 0.0:
        return np.zeros_like(a)
    if math.isinf(eps):
        return np.full_like(a, np.inf)
    small = a * eps <= 1.0
    with np.errstate(over="ignore"):
        excess = (
            a * _exp_minus_linear(np.where(small, (a - 1.0) * eps, 0.0))
            + (a - 1.0) * _exp_minus_linear(np.where(small, -a * eps, 0.0))
        ) / (2.0 * a - 1.0)
        log_b = (a - 1.0) * eps + np.log(a + (a - 1.0) * np.exp(-(2.0 * a - 1.0) * eps)) - np.log(2.0 * a - 1.0)
    out = np.where(small, np.log1p(excess), log_b) / (a - 1.0)
    # round-off: a few ulp of each term of the logarithm, which holds (a - 1) eps + log a; below the
    # smallest normal double a value keeps no relative precision: one smallest double is added
    out = out * (1 + 16 * ULP) + 16 * ULP * (np.log(a) + 1.0) / (a - 1.0) * ~small
    return np.where(out < sys.float_info.min, out + TINY, out)


def skellam_rdp(orders: np.ndarray, variance: float, l1: float, l2: float) -> np.ndarray:
    """RDP of the Skellam mechanism at `orders`.

    eps(a) = a l2^2/(2 var) + min(((2a-1) l2^2 + 6 l1)/(4 var^2), 3 l1/(2 var)) for integer a > 1
    (Agarwal, Kairouz, Liu, NeurIPS 2021, Thm 3.5, with var = 2 mu the Skellam variance). At a
    real order the bound of ceil(a) is used: Renyi divergence is non-decreasing in the order.
    """
    a = np.ceil(np.asarray(orders, dtype=float))
    with np.errstate(over="ignore", divide="ignore"):  # variance ~ 1e-300: the bound is inf, as it should be
        second = ((2 * a - 1) * l2 * l2 + 6 * l1) / (4 * variance) / variance
        return a * (l2 / (2 * variance)) * l2 + np.minimum(second, 3 * l1 / (2 * variance))


def poisson_gaussian_rdp(q: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism (add/remove-one) at `orders`.

    At an integer order a >= 2: log A_a = log sum_{i=0}^{a} C(a, i) q^i (1-q)^(a-i) exp((i^2 - i)/(2 sigma^2))
    and eps(a) = log A_a / (a - 1) (Mironov, Talwar, Zhang 2019, Sec. 3.3). These are the terms of
    dp-accounting's `_compute_log_a_int`, evaluated as arrays (one log-gamma table serves every
    order) instead of a Python loop of a + 1 steps per order (5.2 million steps on RDP_ORDERS),
    and summed max-shifted (pairwise, error ~ log2(a) ulp). The result is raised by
    4 (a + 1) ulp * (|log A_a| + a |log(1-q)| + 2), a bound on the rounding error of dp-accounting's
    sequential log-sum, so it is never below dp-accounting's value (it exceeds it by < 1e-10 * max(1, eps(a))).
    Other orders (fractional, a <= 1, inf) and the degenerate q in {0, 1}, sigma = 0 go to
    dp-accounting unchanged.
    """
    orders = np.asarray(orders, dtype=float)
    q, sigma = float(q), float(noise_multiplier)
    out = np.empty_like(orders)
    if q > 0.0 and sigma > 0.0 and math.isinf(0.5 / sigma / sigma):
        # sigma below ~1e-154: the unsampled term alone makes every order infinite (and
        # dp-accounting's sigma**2 raises OverflowError)
        return np.full_like(orders, np.inf)
    integer = np.isfinite(orders) & (orders >= 2) & (np.floor(orders) == orders)
    if not (0.0 < q < 1.0 and sigma > 0.0):
        integer[:] = False
    if (~integer).any():
        acct = rdp_lib.RdpAccountant(orders[~integer], neighboring_relation=NeighborRel.ADD_OR_REMOVE_ONE)
        out[~integer] = acct.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))).rdp
    if integer.any():
        top = int(orders[integer].max())
        log_gamma = gammaln(np.arange(top + 1) + 1.0)  # log k! for k = 0..top
        log_q, log_1mq = math.log(q), math.log1p(-q)
        half_inv_var = 0.5 / sigma / sigma  # inf below sigma ~ 1e-154 (2 sigma^2 would underflow to 0)
        eps = np.finfo(float).eps
        for j in np.flatnonzero(integer):
            a = int(orders[j])
            if math.isinf(half_inv_var):  # the i = 2 term alone is infinite
                out[j] = math.inf
                continue
            i = np.arange(a + 1)
            terms = (log_gamma[a] - log_gamma[: a + 1] - log_gamma[a::-1]) + i * log_q + (a - i) * log_1mq
            terms = terms + (i * i - i) * half_inv_var
            peak = float(terms.max())
            log_a = peak + math.log(float(np.sum(np.exp(terms - peak))))
            log_a += 4 * (a + 1) * eps * (abs(log_a) + a * abs(log_1mq) + 2)
            out[j] = log_a / (a - 1)
    return out


def zcdp_of_leaf(leaf) -> tuple[float, float] | None:
    """(rho, xi) of a leaf (`_zcdp_of_leaf`), a rho that underflowed raised to the smallest double."""
    pair = _zcdp_of_leaf(leaf)
    if pair is None or pair[0] > 0.0 or trivially_private(leaf):
        return pair
    return TINY, pair[1]


def _zcdp_of_leaf(leaf) -> tuple[float, float] | None:
    """(rho, xi) of a leaf, or None.

    Gaussian: rho = 1/(2 nm^2) (Bun, Steinke 2016, Prop. 1.6); discrete Gaussian D^2/(2 sigma^2)
    (CKS 2020, Thm 4); pure eps: eps^2/2 (Bun, Steinke 2016, Prop. 3.3); ZCDpEvent: its (rho, xi);
    Skellam: rho = l2^2/(2 var), xi = 3 l1/(2 var) + rho (the second branch of AKL 2021 Thm 3.5 at
    ceil(a) <= a + 1, so valid at every real order)."""
    if nonprivate(leaf):
        return math.inf, 0.0
    if isinstance(leaf, dp_accounting.GaussianDpEvent):
        mu = 1.0 / leaf.noise_multiplier  # inf for a noise multiplier below 1/1.8e308: rho = inf
        return half_square_up(mu), 0.0
    if isinstance(leaf, DiscreteGaussianDpEvent):
        return half_square_up(leaf.sensitivity / leaf.sigma), 0.0
    if isinstance(leaf, dp_accounting.ZCDpEvent):
        return float(leaf.rho), float(leaf.xi)
    if isinstance(leaf, SkellamDpEvent):
        rho = leaf.l2_sensitivity / (2 * leaf.variance) * leaf.l2_sensitivity
        return rho, 3 * leaf.l1_sensitivity / (2 * leaf.variance) + rho
    pe = pure_epsilon(leaf)
    if pe is not None:
        return pure_to_zcdp(pe), 0.0
    return None


def skellam_log_tail(variance: float, u: float) -> float:
    """log of a bound on P(X >= u) for Skellam noise X of variance var and u >= 0 (Chernoff, with
    E e^(lambda X) = e^(var (cosh lambda - 1)) at lambda = asinh(u/var)):
    -(u asinh(u/var) - sqrt(var^2 + u^2) + var)."""
    return -(u * math.asinh(u / variance) - math.hypot(variance, u) + variance)


def skellam_pld(variance: float, sensitivity: int, vdi: float):
    """Pessimistic PLD of the scalar Skellam mechanism: X + Sk(var/2, var/2) vs X + D + Sk(var/2, var/2).

    pmf(x) = e^-var I_|x|(var) = ive(|x|, var) (Skellam 1946; the exponentially scaled Bessel
    function keeps it accurate for large variances, where scipy's skellam.logpmf loses its
    accuracy). Outcomes are enumerated on [-T, T + D] with T = 15 sd + 50; the mass of the
    shifted distribution outside that range, bounded by `skellam_log_tail` on both sides (1 minus
    the enumerated mass reads 0 once it is below 1e-16), and at outcomes where the unshifted pmf
    underflows goes to the infinite privacy loss (pessimistic).
    """
    sd = math.sqrt(variance)
    t = math.ceil(15 * sd + 50)
    x = np.arange(-t, t + sensitivity + 1)
    with np.errstate(divide="ignore"):
        lower = np.log(ive(np.abs(x), variance))
        upper = np.log(ive(np.abs(x - sensitivity), variance))
    keep = np.isfinite(lower) & np.isfinite(upper)
    only_upper = np.isfinite(upper) & ~np.isfinite(lower)
    log_lower = {int(o): float(v) for o, v in zip(x[keep], lower[keep])}
    log_upper: dict[int | str, float] = {int(o): float(v) for o, v in zip(x[keep], upper[keep])}
    # X + D leaves [-T, T + D] only if X leaves [-T, T]
    bound = 2 * math.exp(skellam_log_tail(variance, t + 1)) + math.fsum(np.exp(upper[only_upper]))
    outside = max(1.0 - math.fsum(np.exp(upper[keep])), bound)
    if outside > 0:
        log_upper["outside"] = math.log(outside)  # absent from lower: infinite loss
    return pld_lib.from_two_probability_mass_functions(
        log_lower, log_upper, pessimistic_estimate=True, value_discretization_interval=vdi
    )


def binomial_log_tail(trials: int, p: float, k: int) -> float:
    """log of a bound on P(X >= k) (k >= Np) or P(X <= k) (k <= Np) for X ~ Bin(N, p): -N KL(k/N || p)
    (Chernoff; Hoeffding 1963, Thm 1)."""
    a = min(max(k / trials, 0.0), 1.0)
    kl = (a * math.log(a / p) if a > 0 else 0.0) + ((1 - a) * math.log((1 - a) / (1 - p)) if a < 1 else 0.0)
    return -trials * kl


MAX_ENUMERATED = 400_000  # beyond it (sd > 5000) the binomial PLD is built on a grid of losses
_BINOMIAL_LOG_MASS_TRUNCATION = -40.0


def binomial_enumerated(trials: int, probability: float, sensitivity: int) -> bool:
    """Whether `binomial_pld` enumerates the outcomes (±40 sd and the shift: at most `MAX_ENUMERATED` of them)
    rather than building the loss grid of `dpaudit.accounting.binomial_loss`."""
    return 2 * 40 * math.sqrt(trials * probability * (1 - probability)) + sensitivity <= MAX_ENUMERATED


def binomial_pld(trials: int, probability: float, sensitivity: int, vdi: float):
    """Pessimistic PLD of count + Bin(trials, p) against count + D + Bin(trials, p), both directions
    (symmetric=False: the binomial is skewed for p != 1/2).

    Beyond `MAX_ENUMERATED` outcomes (`binomial_enumerated`) it is `binomial_loss.binomial_loss_pld` at
    interval `vdi` (which must be at least its `smallest_interval`: the grid is widened below it), for up
    to 2⁵² trials. Otherwise outcomes within ±40 sd of the mean are enumerated with scipy's exact log-pmf; each
    distribution's mass outside the window (at least its Chernoff bound, `binomial_log_tail`) goes to
    an outcome the other never takes (infinite privacy loss, so it only adds to delta), and so do outcomes of log-mass below
    `_BINOMIAL_LOG_MASS_TRUNCATION` (at most `MAX_ENUMERATED` of them: < 10⁻¹² of delta), which keeps the
    support, hence self-composition over many labels, small.
    """
    n, p, d = int(trials), float(probability), int(sensitivity)
    if not binomial_enumerated(n, p, d):
        return binomial_loss_pld(n, p, d, vdi)
    sd = math.sqrt(n * p * (1 - p))
    lo, hi = max(0, math.floor(n * p - 40 * sd - 1)), min(n, math.ceil(n * p + 40 * sd + 1))
    x = np.arange(lo, hi + 1)
    logpmf = stats.binom.logpmf(x, n, p)
    base: dict[int | str, float] = {int(o): float(v) for o, v in zip(x, logpmf) if np.isfinite(v)}
    shifted: dict[int | str, float] = {int(o) + d: v for o, v in base.items()}
    # 1 minus the enumerated mass reads 0 below 1e-16: the tails beyond the window are bounded too
    tails = (math.exp(binomial_log_tail(n, p, lo - 1)) if lo > 0 else 0.0) + (
        math.exp(binomial_log_tail(n, p, hi + 1)) if hi < n else 0.0
    )
    outside = max(1.0 - math.fsum(np.exp(list(base.values()))), tails)
    if outside > 0:
        base["outside (unshifted)"] = math.log(outside)
        shifted["outside (shifted)"] = math.log(outside)
    return pld_lib.from_two_probability_mass_functions(
        base,
        shifted,
        pessimistic_estimate=True,
        value_discretization_interval=vdi,
        symmetric=False,
        log_mass_truncation_bound=_BINOMIAL_LOG_MASS_TRUNCATION,
    )
