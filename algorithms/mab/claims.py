"""Chowdhury & Zhou's (ICLR 2023) own privacy statements for Dist-RDP-SE (Thm 2), Dist-CDP-SE (Thm 4) and P_Shuffle (Thm 3).

`dpaudit.mechanisms.secagg` holds the protocols with the events dpaudit accounts for (Skellam: the
exact RDP of Lemma 3; discrete Gaussian: Kairouz et al.'s Prop. 13 at the actual n and σ). What lives
here is the paper's uniform statement of each, reported next to them as "the paper's claim". What
Shuffle-SE's server really sees is accounted in `dpaudit.algorithms.mab.shuffle_view`.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.shuffle_sum import ShuffleSum
from dpaudit.validation import check_epsilon, check_int_at_least, check_positive

__all__ = ["dist_cdp_paper_event", "shuffle_sum_proof_event", "skellam_paper_rdp"]


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
