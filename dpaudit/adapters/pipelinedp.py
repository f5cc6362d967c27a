"""PipelineDP's low-level mechanisms (`pipeline_dp.dp_computations`) as audit targets, with the claim read from the
mechanism spec they are built from.

    from dpaudit.adapters import audit_target, pipelinedp_laplace
    audit_target(pipelinedp_laplace(epsilon=1.0), samples=100_000, float_bits=True)

PipelineDP is imported on first use (`pip install 'dpaudit[pipelinedp]'`).  A target is
`create_additive_mechanism(MechanismSpec(mechanism_type, _eps, _delta), Sensitivities(l1 or l2))`, the factory its
aggregations call, claimed (eps, delta)-DP as the spec states (PureDp for Laplace), or its
`ExponentialMechanism`, claimed eps-DP.  Its additive mechanisms wrap python-dp's `LaplaceMechanism` and
`GaussianMechanism` (as do its helpers `apply_laplace_mechanism` and `apply_gaussian_mechanism`), so their noise is
Google's grid-based secure noise (`dpaudit.adapters.pydp`).

Batching.  `AdditiveMechanism.add_noise` takes an array and maps python-dp's `add_noise` over it (`np.vectorize`):
one call per target call, about 10^5 runs per second.  `ExponentialMechanism.apply` draws one index per call, with
its probabilities recomputed each time.  Neither takes a numpy rng (python-dp seeds its own generator from the
operating system, `ExponentialMechanism` draws from an unseeded `numpy.random.default_rng()`): runs are not
reproducible from the audit's seed (`reproducible=False`); the audit stays valid, its runs being independent.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import ApproxDp, PureDp
from dpaudit.adapters.target import Guarantee, LibraryTarget, distribution_version, point_claim, require
from dpaudit.validation import check_int_at_least, check_open_unit, check_positive

__all__ = ["pipelinedp_exponential", "pipelinedp_gaussian", "pipelinedp_laplace"]

DISTRIBUTION = "pipeline-dp"


def _module(name: str) -> Any:
    return require(f"pipeline_dp.{name}", "pipelinedp")


def claim_of(spec: Any) -> Guarantee:
    """The (eps, delta) `spec` (a `MechanismSpec`) states: PureDp for Laplace (delta unused), else ApproxDp."""
    laplace = spec.mechanism_type == _module("aggregate_params").MechanismType.LAPLACE
    return PureDp(float(spec.eps)) if laplace else ApproxDp(float(spec.eps), float(spec.delta))


class _Additive:
    """`size` runs of `create_additive_mechanism(spec, sensitivities).add_noise` on `data` repeated, in one call."""

    def __init__(self, spec: Any, sensitivities: Any):
        self.spec, self.sensitivities = spec, sensitivities

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        if size == 0:  # np.vectorize cannot infer its output type from no input
            return np.empty(0)
        mechanism = _module("dp_computations").create_additive_mechanism(self.spec, self.sensitivities)
        return np.asarray(mechanism.add_noise(np.full(size, float(data))), dtype=float).reshape(size)


def _additive(kind: str, epsilon: float, delta: float | None, sensitivity: float) -> LibraryTarget:
    computations, budget = _module("dp_computations"), _module("budget_accounting")
    mechanism_type = getattr(_module("aggregate_params").MechanismType, kind.upper())
    s = check_positive(sensitivity, "sensitivity")
    spec = budget.MechanismSpec(
        mechanism_type,
        _eps=check_positive(epsilon, "epsilon"),
        _delta=None if delta is None else check_open_unit(delta, "delta"),
    )
    sensitivities = computations.Sensitivities(l1=s) if kind == "laplace" else computations.Sensitivities(l2=s)
    mechanism = computations.create_additive_mechanism(spec, sensitivities)
    claim = claim_of(spec)
    epsilon_point, delta_point = point_claim(claim, None)
    return LibraryTarget(
        name=mechanism.describe().replace("  ", " "),
        library="pipelinedp",
        version=distribution_version(DISTRIBUTION),
        claim=claim,
        claim_epsilon=epsilon_point,
        claim_delta=delta_point,
        neighbours=(0.0, float(mechanism.sensitivity)),
        reproducible=False,
        sampler=_Additive(spec, sensitivities),
    )


def pipelinedp_laplace(epsilon: float, sensitivity: float = 1.0) -> LibraryTarget:
    """PipelineDP's Laplace mechanism (L1 `sensitivity`): x plus Laplace noise of scale sensitivity/epsilon
    (Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis", TCC 2006),
    claimed epsilon-DP.  Neighbours (0, sensitivity)."""
    return _additive("laplace", epsilon, None, sensitivity)


def pipelinedp_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0) -> LibraryTarget:
    """PipelineDP's Gaussian mechanism (L2 `sensitivity`): x plus Gaussian noise of python-dp's sigma for
    (epsilon, delta) (the analytic Gaussian: Balle, Wang, "Improving the Gaussian Mechanism of Differential
    Privacy", ICML 2018, Thm 8), claimed (epsilon, delta)-DP.  Neighbours (0, sensitivity)."""
    return _additive("gaussian", epsilon, delta, sensitivity)


class _Utility:
    """The interface of PipelineDP's `ExponentialMechanism.ScoringFunction` over candidate indices:
    score(i) = utilities[i], not monotonic (so the mechanism divides by 2 sensitivity)."""

    is_monotonic = False

    def __init__(self, utilities: tuple[float, ...], sensitivity: float):
        self.utilities, self.global_sensitivity = utilities, sensitivity

    def score(self, k: int) -> float:
        return self.utilities[k]


class _Exponential:
    """`size` runs of `ExponentialMechanism(scores of data).apply(epsilon, candidates)`, one index per call."""

    def __init__(self, epsilon: float, sensitivity: float):
        self.epsilon, self.sensitivity = epsilon, sensitivity

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        computations = _module("dp_computations")
        utilities = tuple(float(u) for u in np.asarray(data, dtype=float).ravel())
        apply = computations.ExponentialMechanism(_Utility(utilities, self.sensitivity)).apply
        candidates = list(range(len(utilities)))
        return np.fromiter(map(apply, repeat(self.epsilon, size), repeat(candidates, size)), dtype=np.int64, count=size)


def pipelinedp_exponential(epsilon: float, sensitivity: float = 1.0, candidates: int = 10) -> LibraryTarget:
    """PipelineDP's `ExponentialMechanism` with a non-monotonic score of the given `sensitivity`: index i with
    probability proportional to exp(epsilon u_i/(2 sensitivity)) (McSherry, Talwar, "Mechanism Design via
    Differential Privacy", FOCS 2007, Thm 6), claimed epsilon-DP.  Neighbours: utilities (s, 0, ..., 0) and
    (0, s, ..., s) over `candidates` entries, as for diffprivlib's (loss of index 0 = 0.90 epsilon at k = 10)."""
    _module("dp_computations")
    eps = check_positive(epsilon, "epsilon")
    s = check_positive(sensitivity, "sensitivity")
    k = check_int_at_least(candidates, 2, "candidates")
    d0, d1 = (s,) + (0.0,) * (k - 1), (0.0,) + (s,) * (k - 1)
    return LibraryTarget(
        name=f"ExponentialMechanism(eps={eps!r}, sensitivity={s!r}, candidates={k})",
        library="pipelinedp",
        version=distribution_version(DISTRIBUTION),
        claim=PureDp(eps),
        claim_epsilon=eps,
        claim_delta=0.0,
        neighbours=(d0, d1),
        reproducible=False,
        sampler=_Exponential(eps, s),
    )
