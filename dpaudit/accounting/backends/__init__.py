"""The accountants, one module each (as dp-accounting separates `rdp/` and `pld/`): each turns
flattened branches of leaves into epsilon(delta) and delta(epsilon). The mechanism curves they
read live in `dpaudit.accounting.curves`."""

from dpaudit.accounting.backends.approx import ApproxBackend
from dpaudit.accounting.backends.base import Backend
from dpaudit.accounting.backends.pld import PldBackend
from dpaudit.accounting.backends.pure import PureBackend
from dpaudit.accounting.backends.rdp import RDP_ORDERS, RdpBackend
from dpaudit.accounting.backends.shuffle import ShuffleBackend
from dpaudit.accounting.backends.zcdp import ZcdpBackend

__all__ = [
    "RDP_ORDERS",
    "ApproxBackend",
    "Backend",
    "PldBackend",
    "PureBackend",
    "RdpBackend",
    "ShuffleBackend",
    "ZcdpBackend",
]
