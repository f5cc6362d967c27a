"""Privacy notions and accountants: what (epsilon, delta), RDP curve or zCDP rho a release has."""

from dpaudit.accounting.events import (
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    ParallelComposedDpEvent,
    ShuffledDpEvent,
    SkellamDpEvent,
)

__all__ = [
    "DiscreteGaussianDpEvent",
    "EpsilonDeltaDpEvent",
    "ParallelComposedDpEvent",
    "ShuffledDpEvent",
    "SkellamDpEvent",
]
