"""The empirical auditor: a confidence lower bound on epsilon for a black-box mechanism.

(Not to be confused with `dpaudit.audits`, one letter longer: the catalog pairing the papers'
algorithms with accountants and this auditor.)

    from dpaudit.audit import audit
    result = audit(target, d0, d1, claim_epsilon=1.0, claim_delta=0.0,
                   samples=100_000, confidence=0.95, seed=0)
    result.epsilon_lower   # lower bound on epsilon at claim_delta, valid with prob. >= confidence
    result.verdict         # "violation" if epsilon_lower > claim_epsilon else "consistent"

`target(data, rng, size)` returns `size` independent runs on `data` (first axis): scalars, integer
vectors or real vectors.

For any event E, an (epsilon, delta)-DP mechanism has P[M(d0) in E] <= e^eps P[M(d1) in E] + delta,
so epsilon >= log((p0 - delta)/p1). Events are chosen on a selection split of the runs and counted on
an independent estimation split; p0 and p1 are replaced by one-sided Clopper-Pearson bounds, with
1 - confidence split by Bonferroni over directions, events and proportions (Jagielski, Ullman, Oprea,
NeurIPS 2020; Nasr et al., IEEE S&P 2021; Lu et al., NeurIPS 2022). The score families, confidence
spending, Gaussian-DP and curve checks, cross-fitting, neighbour search and sequential audits are
described in the documentation: docs/concepts/auditor.md.
"""

import sys
import types
from typing import Any

from dpaudit.audit.auditor import audit, run_audit
from dpaudit.audit.describe import describe_target
from dpaudit.audit.one_run import OneRunResult, one_run
from dpaudit.audit.options import AuditOptions
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult, TimeBox
from dpaudit.audit.search import PairSearch, audit_pairs, statdp_patterns
from dpaudit.audit.sequential import SequentialAudit, audit_sequential

__all__ = [
    "AuditOptions",
    "AuditResult",
    "CurveCheck",
    "DirectionResult",
    "OneRunResult",
    "PairSearch",
    "SequentialAudit",
    "TimeBox",
    "audit",
    "audit_pairs",
    "audit_sequential",
    "describe_target",
    "one_run",
    "run_audit",
    "statdp_patterns",
]


class _CallableModule(types.ModuleType):
    """This package, callable as its `audit` function: `dpaudit.audit(...)` is the front door's auditor
    whether or not the package was imported before (the import system binds `dpaudit.audit` to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> AuditResult:
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
