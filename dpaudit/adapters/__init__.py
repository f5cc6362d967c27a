"""Audit targets from the DP libraries people ship with: OpenDP, diffprivlib, PipelineDP and python-dp (`pydp`).

Each builder returns a `LibraryTarget`: callable as `target(data, rng, size)` (what `dpaudit.audit.audit`
draws from), with the library's own claim (`claim`, `claim_epsilon`, `claim_delta`, `claim_rho`), a
neighbouring pair where the mechanism's loss is largest (`neighbours`), and `name`, `library`, `version`:

    from dpaudit.adapters import audit_target, diffprivlib_laplace, opendp_laplace
    audit_target(opendp_laplace(scale=1.0), samples=100_000, float_bits=True)        # consistent
    audit_target(diffprivlib_laplace(epsilon=1.0), samples=100_000, float_bits=True)  # a violation

`OpenDPNoise` and `DiffprivlibNoise` (`dpaudit.adapters.noise`) are noise sources for the algorithms that take
`noise_source=` (DP-SE, Dist-DP-SE): the library's Laplace and discrete Laplace instead of dpaudit's samplers.

The libraries are optional and imported only when a builder is called: `pip install 'dpaudit[opendp]'`,
`pip install 'dpaudit[diffprivlib]'`, `pip install 'dpaudit[pipelinedp]'`, `pip install 'dpaudit[pydp]'`.
PipelineDP's and python-dp's targets draw from the library's own generator, not from the audit's rng
(`reproducible=False`).
"""

from dpaudit.adapters.diffprivlib import (
    diffprivlib_exponential,
    diffprivlib_gaussian,
    diffprivlib_geometric,
    diffprivlib_laplace,
    diffprivlib_mechanism,
    diffprivlib_snapping,
)
from dpaudit.adapters.noise import DiffprivlibNoise, OpenDPNoise
from dpaudit.adapters.opendp import (
    opendp_discrete_gaussian,
    opendp_discrete_laplace,
    opendp_gaussian,
    opendp_laplace,
    opendp_measurement,
    opendp_noisy_max,
)
from dpaudit.adapters.pipelinedp import pipelinedp_exponential, pipelinedp_gaussian, pipelinedp_laplace
from dpaudit.adapters.pydp import pydp_gaussian, pydp_laplace
from dpaudit.adapters.target import LibraryTarget, audit_target

__all__ = [
    "DiffprivlibNoise",
    "LibraryTarget",
    "OpenDPNoise",
    "audit_target",
    "diffprivlib_exponential",
    "diffprivlib_gaussian",
    "diffprivlib_geometric",
    "diffprivlib_laplace",
    "diffprivlib_mechanism",
    "diffprivlib_snapping",
    "opendp_discrete_gaussian",
    "opendp_discrete_laplace",
    "opendp_gaussian",
    "opendp_laplace",
    "opendp_measurement",
    "opendp_noisy_max",
    "pipelinedp_exponential",
    "pipelinedp_gaussian",
    "pipelinedp_laplace",
    "pydp_gaussian",
    "pydp_laplace",
]
