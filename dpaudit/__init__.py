"""dpaudit: differential-privacy claims of bandit algorithms, made checkable.

One import for the three jobs, as `import opendp.prelude as dp` or `dp_accounting` give theirs:

    import dpaudit

    dpaudit.epsilon(event, delta=1e-5)                  # a budget before deployment
    dpaudit.audit(target, d0, d1, claim_epsilon=1.0)    # a lower bound on epsilon, valid at its confidence
    @dpaudit.register_audit(name=..., ...)              # an audit `dpaudit audit` runs in CI

The names below (`__all__`) are the public interface; they are imported on first use, so
`import dpaudit` stays cheap. The sub-packages `dpaudit.accounting`, `dpaudit.audit`,
`dpaudit.mechanisms`, `dpaudit.algorithms`, `dpaudit.audits` and `dpaudit.testing` are public too;
every other module is an implementation detail, free to change.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_FRONT_DOOR = {
    # auditing: the empirical lower bound, in many runs or in one, and the CI registry
    "audit": "dpaudit.audit",
    "AuditResult": "dpaudit.audit",
    "one_run": "dpaudit.audit",
    "OneRunResult": "dpaudit.audit",
    "register_audit": "dpaudit.user_audits",
    # accounting: guarantees of a DpEvent under every accountant, and the noise that meets a target
    "epsilon": "dpaudit.accounting",
    "delta": "dpaudit.accounting",
    "calibrate": "dpaudit.accounting.calibration",
    "PrivacyAccountant": "dpaudit.accounting",
    "ACCOUNTANTS": "dpaudit.accounting",
    "UnsupportedEventError": "dpaudit.accounting",
    "PureDp": "dpaudit.accounting",
    "ApproxDp": "dpaudit.accounting",
    "RdpCurve": "dpaudit.accounting",
    "Zcdp": "dpaudit.accounting",
    # the events dp-accounting lacks (its own, e.g. dp_accounting.GaussianDpEvent, compose with them)
    "BinomialDpEvent": "dpaudit.accounting",
    "DiscreteGaussianDpEvent": "dpaudit.accounting",
    "EpsilonDeltaDpEvent": "dpaudit.accounting",
    "KaryRandomizedResponseDpEvent": "dpaudit.accounting",
    "ParallelComposedDpEvent": "dpaudit.accounting",
    "ShuffledDpEvent": "dpaudit.accounting",
    "SkellamDpEvent": "dpaudit.accounting",
    # budgets of whole algorithms and deployment plans
    "privacy_budget": "dpaudit.budgets",
    "algorithm_budget": "dpaudit.budgets",
    "calibrate_algorithm": "dpaudit.budgets",
    "load_plan": "dpaudit.budgets",
    "plan_budget": "dpaudit.budgets",
    # the algorithm interface and its declared privacy
    "PrivateAlgorithm": "dpaudit.interface",
    "Privacy": "dpaudit.privacy",
    "Guarantee": "dpaudit.privacy",
}

__all__ = ["__version__", *_FRONT_DOOR]  # noqa: PLE0604  (the keys of _FRONT_DOOR: strings)


def __getattr__(name: str) -> Any:
    module = _FRONT_DOOR.get(name)
    if module is None:
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    # `dpaudit.audit` is also the auditor's package (the import system binds that name to it): the
    # package itself, callable as its `audit` function, so both readings work
    value = loaded if module == f"{__name__}.{name}" else getattr(loaded, name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
