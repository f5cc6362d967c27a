"""Chowdhury & Zhou's (ICLR 2023) own privacy statements for Dist-RDP-SE (Thm 2), Dist-CDP-SE (Thm 4) and P_Shuffle (Thm 3).

`dpaudit.mechanisms.secagg` holds the protocols with the events dpaudit accounts for (Skellam: the
exact RDP of Lemma 3; discrete Gaussian: Kairouz et al.'s Prop. 13 at the actual n and σ). What lives
here is the paper's uniform statement of each, reported next to them as "the paper's claim".

For Shuffle-SE (Thm 3 with `mechanisms.ShuffleSum`'s unary randomized-response bits) it also holds the
exact pure ε of what the server sees, `shuffle_count_epsilon`: the count of ones C is a post-processing of
S = Σ_i y_i, S of the changed user's own message y_1 = (x̂_1 + η_1) mod m, and the worst ratio of y_1's
law is attained by S itself at S = 0, so ε(C) <= ε(S) = log f(0)/f(g) for f the Pólya-difference pmf.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
from scipy.special import gammaln, logsumexp

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.shuffle_sum import ShuffleSum
from dpaudit.validation import check_epsilon, check_int_at_least, check_positive

__all__ = ["skellam_paper_rdp", "dist_cdp_paper_event", "shuffle_sum_proof_event", "polya_difference_log_pmf",
           "shuffle_count_epsilon", "shuffle_count_lower_epsilon", "shuffle_count_event"]


def skellam_paper_rdp(alpha: float, epsilon: float, s: float) -> float:
    """Chowdhury & Zhou (ICLR 2023), Thm 2 as printed (Dist-RDP-SE):

        eps(a) = a eps²/2 + min((2a-1) eps²/(4 s²) + 3 eps/(2 s³), 3 eps²/(2 s)),  integer a >= 2.

    dpaudit reads the last term as a possible typo (3 eps/(2 s sqrt(n)) would follow from g >= s eps sqrt(n)):
    it can fall slightly below Lemma 3 at the actual g; account with the protocol's event (Lemma 3) and
    report this only as the paper's claim.
    """
    a = check_int_at_least(alpha, 2, "alpha")
    eps = check_epsilon(epsilon)
    s = check_positive(s, "s")
    return a * eps**2 / 2 + min((2 * a - 1) * eps**2 / (4 * s**2) + 3 * eps / (2 * s**3), 3 * eps**2 / (2 * s))


def dist_cdp_paper_event(epsilon: float, s: float, horizon: int) -> dp_accounting.ZCDpEvent:
    """Chowdhury & Zhou (ICLR 2023), Thm 4 as stated (Dist-CDP-SE, App. F): ½eps_hat²-zCDP with

        eps_hat = min(sqrt(eps² + xi/2), eps + xi),  xi = 10 sum_{k=1}^{T/2-1} exp(-2 pi² s² k/(k+1)),

    the paper's uniform xi (n = T/2 users, sigma = s) in place of Kairouz et al.'s Prop. 13 at the actual n and sigma.
    """
    eps = check_epsilon(epsilon)
    s = check_positive(s, "s")
    t = check_int_at_least(horizon, 2, "horizon")
    k = np.arange(1, t // 2, dtype=float)
    xi = 10.0 * float(np.sum(np.exp(-2 * math.pi**2 * s**2 * k / (k + 1))))
    eps_hat = min(math.sqrt(eps**2 + xi / 2), eps + xi)
    return dp_accounting.ZCDpEvent(rho=eps_hat**2 / 2)


def shuffle_sum_proof_event(protocol: ShuffleSum) -> dp_accounting.ComposedDpEvent:
    """The accounting of the proof of Chowdhury & Zhou (ICLR 2023), Thm 3 (App. D.2) for one P_Shuffle release:
    the modular sum (`ShuffleSum.modular_sum_event`, eps' under theta_reading="proof") composed with the
    2 eps~ of two relaxed-security simulations (triangle inequality). Valid only if S~ o R~ is an
    eps~-relaxed secure aggregation, which `ShuffleSum`'s unary instantiation does not establish."""
    relaxed = EpsilonDeltaDpEvent(2 * protocol.eps_tilde, 0.0)
    return dp_accounting.ComposedDpEvent([protocol.modular_sum_event(), relaxed])


# ---- Shuffle-SE: the exact pure epsilon of the server's count

_TAIL_RELATIVE = 1e-15  # the Pólya-difference series is cut where its remainder is below this fraction
_ROUND_OFF = 1e-9  # relative margin on a computed log-ratio: floating-point sums of a few thousand terms


def polya_difference_log_pmf(k: int, r: float, theta: float) -> tuple[float, float]:
    """[lower, upper] on log f(k), f the pmf of η = G1 - G2, G_i ~ Pólya(r, θ) independent (pmf
    Γ(j+r)/(Γ(r) j!) θ^j (1-θ)^r; Chowdhury & Zhou (ICLR 2023), Fact 1): f(k) = Σ_j P(j + |k|) P(j).

    The terms fall by at least θ² per step (P(j+1)/P(j) = θ(j+r)/(j+1) <= θ for r <= 1), so the series is cut
    after J terms, its remainder at most the last term times θ²/(1 - θ²) (added to the upper end)."""
    k = abs(int(k))
    check_positive(r, "r")
    if not 0.0 < theta < 1.0:
        raise ValueError(f"theta must lie in (0, 1), got {theta!r}")
    if r > 1.0:
        raise ValueError(f"r must be <= 1 (a share of the Pólya noise), got {r!r}")
    log_theta = math.log(theta)
    ratio_tail = -math.log1p(-theta * theta)  # log 1/(1 - θ²)
    terms = math.ceil((math.log(_TAIL_RELATIVE) - ratio_tail) / (2 * log_theta)) + 1
    j = np.arange(terms, dtype=float)

    def log_p(x: np.ndarray) -> np.ndarray:
        return gammaln(x + r) - gammaln(r) - gammaln(x + 1) + x * log_theta + r * math.log1p(-theta)

    series = log_p(j + k) + log_p(j)
    lower = float(logsumexp(series))
    remainder = float(series[-1]) + 2 * log_theta - math.log1p(-theta * theta)
    upper = float(np.logaddexp(lower, remainder))
    return lower - _ROUND_OFF * (1 + abs(lower)), upper + _ROUND_OFF * (1 + abs(upper))


def shuffle_count_epsilon(protocol: ShuffleSum) -> float:
    """Pure ε (rounded up) of one Shuffle-SE release as the server sees it: the count of ones C of the shuffled
    unary randomized-response bits, over every one-user change (Chowdhury & Zhou (ICLR 2023), Thm 3, App. D.2,
    with `mechanisms.ShuffleSum`'s bit encoding).

    C = Bin(S, 1 - f) + Bin(k d - S, f) is a post-processing of S = Σ_i y_i, and S = y_1 + (the others' sum, independent
    of user 1), so ε(C) <= ε(S) <= the pure ε of y_1 = (x̂_1 + η_1) mod m, whose laws for x̂_1 = a, b are the Pólya-
    difference pmf f folded mod m and shifted by a, b (0 <= a < b <= g). With r = 1/n <= 1 every Pólya pmf is log-convex,
    so f is log-convex on k >= 0, f(k + 1)/f(k) is non-decreasing there and |log f(k)/f(k + Δ)| <= log f(0)/f(Δ)
    for every k; a ratio of folded sums is at most its worst term's, and f decreases in |k|: the bound is
    log f(0)/f(g) for the pair (0, g). It is also the exact ε of S up to the fold (`shuffle_count_lower_epsilon`:
    S = 0 needs every y_i = 0, so P_0(S = 0)/P_g(S = 0) = u_0(0)/u_g(0), the others' factor cancelling)."""
    n, g = protocol.params.n, protocol.params.g
    top = polya_difference_log_pmf(0, 1.0 / n, protocol.theta)[1]
    bottom = polya_difference_log_pmf(g, 1.0 / n, protocol.theta)[0]
    return top - bottom


def shuffle_count_lower_epsilon(protocol: ShuffleSum) -> float:
    """The exact ε of the flip-free count S from below: log u_0(0)/u_g(0) with u_x(0) = P((x + η) mod m = 0)
    = Σ_i f(i m - x), the folded terms |i| <= 1 kept in the numerator's lower end and all of them bounded in the
    denominator's upper end (terms |i| >= 2 by the geometric decay f(k + m)/f(k) <= θ^m)."""
    n, g, m = protocol.params.n, protocol.params.g, protocol.params.m
    r, theta = 1.0 / n, protocol.theta
    num = polya_difference_log_pmf(0, r, theta)[0]
    den_terms = [polya_difference_log_pmf(i * m - g, r, theta)[1] for i in (-1, 0, 1)]
    far = math.log(2.0) + max(den_terms) + m * math.log(theta) - math.log1p(-theta ** m)  # |i| >= 2, both sides
    return num - float(logsumexp(den_terms + [far]))


def shuffle_count_event(protocol: ShuffleSum) -> EpsilonDeltaDpEvent:
    """One Shuffle-SE release as the accounting engine sees it: pure (`shuffle_count_epsilon`, 0)."""
    return EpsilonDeltaDpEvent(shuffle_count_epsilon(protocol), 0.0)
