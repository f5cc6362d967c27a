"""The one shape every algorithm of `dpaudit.algorithms` has, and a user's own algorithm can have too.

An algorithm is an object with

- `name`: its `dpaudit regret` name;
- `run(data, rng, ...)`: simulate independent runs on `data` (an environment or a fixed table) with
  the numpy `Generator` `rng`, returning the family's result object (actions, released statistics);
- `target(...)`: the auditor's contract, a callable `target(data, rng, size) -> array` whose first axis
  has `size` independent runs (see `dpaudit.audit.audit`);
- `privacy(horizon, ...)`: the `Privacy` it declares for a run of `horizon` rounds (users): the
  neighbouring relation, the trust model, the `DpEvent` of what it releases about one user, the
  paper's claim and, where the paper's accounting fails, the corrected guarantee. The horizon is always
  an argument (an algorithm's privacy depends on it through its number of releases); family-specific
  inputs (the dimension, the number of types, the environment's constants) are keyword arguments.

`PrivateAlgorithm` states this as a `typing.Protocol`; `isinstance(obj, PrivateAlgorithm)` checks that
the four members exist. Implement it for your own algorithm to audit it with the catalog's building
blocks (`dpaudit.audits.build.Observe`, `lazy_claims`) and to account it with `dpaudit.accounting`.
To give it `dpaudit budget`, `calibrate` and `tradeoff`, register a `dpaudit.registry.AlgorithmEntry`
whose `privacy(horizon=T, **params)` returns this `privacy(...)` and whose `tuned` names its epsilon
input (the parameter calibrate searches); the trust model, the neighbouring relation and the reason the
corrected guarantee differs from the claim (`Privacy.note`, `Guarantee.source`) come from the `Privacy`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpaudit.privacy import Privacy

__all__ = ["PrivateAlgorithm", "Target"]

Target = Callable[[Any, np.random.Generator, int], np.ndarray]
"""target(data, rng, size) -> array with first axis `size`: one row per independent run."""


@runtime_checkable
class PrivateAlgorithm(Protocol):
    """An algorithm dpaudit can audit and account for: `name`, `run`, `target` and `privacy(horizon, ...)`.

    `isinstance(obj, PrivateAlgorithm)` checks that the four members exist (a `typing.Protocol`, PEP 544);
    what each must do is in the module docstring: `target(...)` returns the auditor's
    `target(data, rng, size)`, `privacy(horizon, ...)` the declared `Privacy` of a run.

    Examples
    --------
    >>> import dp_accounting
    >>> from dpaudit import Guarantee, Privacy, PrivateAlgorithm
    >>> class NoisyCount:
    ...     name = "noisy-count"
    ...     def run(self, data, rng, runs=1):
    ...         return data.sum() + rng.laplace(0.0, 1.0, runs)
    ...     def target(self):
    ...         return lambda data, rng, size: self.run(data, rng, size)
    ...     def privacy(self, horizon):
    ...         return Privacy("user", "central", dp_accounting.LaplaceDpEvent(1.0), Guarantee("pure", 1.0))
    >>> isinstance(NoisyCount(), PrivateAlgorithm), NoisyCount().privacy(10).accounted_epsilon()
    (True, 1.0)
    """

    name: str

    def run(self, data: Any, rng: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
        """Simulate independent runs on `data`; return the family's result object."""
        ...

    def target(self, *args: Any, **kwargs: Any) -> Target:
        """The auditor's `target(data, rng, size)` for one observable."""
        ...

    def privacy(self, horizon: int, *args: Any, **kwargs: Any) -> Privacy:
        """The declared privacy of a run of `horizon` rounds."""
        ...
