"""Privacy notions and accountants: what (epsilon, delta), RDP curve or zCDP rho a release has.

Describe what is released as a `dp_accounting.DpEvent` tree (with the events of
`dpaudit.accounting.events`), then ask:

    from dpaudit import accounting
    accounting.epsilon(event, delta=1e-5)                     # best valid answer
    accounting.epsilon(event, delta=1e-5, accountant="rdp")   # one of accounting.ACCOUNTANTS
    accounting.delta(event, epsilon=1.0)
    acct = accounting.Accountant("pld"); acct.compose(event); acct.epsilon(1e-5)

`accounting.PrivacyAccountant("pld")` is the same accountant behind dp-accounting's
`PrivacyAccountant` interface (so `dp_accounting.calibrate_dp_mechanism` works with it).
"""

from dpaudit.accounting.accountants import (
    ACCOUNTANTS,
    Accountant,
    delta,
    epsilon,
    pure_guarantee,
    rdp_guarantee,
    supporting_accountants,
    zcdp_guarantee,
)
from dpaudit.accounting.errors import UnsupportedEventError
from dpaudit.accounting.events import (
    BinomialDpEvent,
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    KaryRandomizedResponseDpEvent,
    ParallelComposedDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)
from dpaudit.accounting.guarantees import ApproxDp, PureDp, RdpCurve, Zcdp
from dpaudit.accounting.privacy_accountant import PrivacyAccountant

__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "ApproxDp",
    "BinomialDpEvent",
    "DiscreteGaussianDpEvent",
    "EpsilonDeltaDpEvent",
    "KaryRandomizedResponseDpEvent",
    "ParallelComposedDpEvent",
    "PrivacyAccountant",
    "PureDp",
    "RdpCurve",
    "ShuffledDpEvent",
    "SkellamDpEvent",
    "UnsupportedEventError",
    "Zcdp",
    "delta",
    "epsilon",
    "pure_guarantee",
    "rdp_guarantee",
    "supporting_accountants",
    "zcdp_guarantee",
]
