"""PipelineDP's primitives a bandit is built from (`pipeline_dp.dp_computations`), each at its worst-case pair
against the claim its mechanism spec states.

Laplace and Gaussian (`create_additive_mechanism`, the factory its aggregations call) and the exponential
mechanism (`ExponentialMechanism`).  PipelineDP has no geometric, report noisy max or snapping mechanism of its own.

Floating point.  Its additive mechanisms wrap python-dp's (`pydp_entries`), so they inherit its floats, measured
on PipelineDP 0.3.1 over python-dp 1.1.5: the Laplace (discrete noise on a power-of-two grid, the input rounded to
it: Google differential-privacy, "Secure Noise Generation", 2020) keeps its claim (floating-point bound 0.92 to 0.94
against epsilon = 1 at 3·10^4 runs); the Gaussian's outputs are x + noise on no common grid and leak the input
through their low-order bits (Jin, McMurtry, Rubinstein, Ohrimenko, "Are We There Yet? Timing and Floating-Point
Attacks on Differential Privacy Systems", IEEE S&P 2022), floating-point bound 5.8 to 5.9 against epsilon = 1: an
expected violation.  The exponential mechanism's output is an index: no floating-point claim.
"""

from __future__ import annotations

from dpaudit.adapters import pipelinedp_exponential, pipelinedp_gaussian, pipelinedp_laplace
from dpaudit.audits.libraries.entry import LibraryEntry

__all__ = ["LIBRARY", "entries"]

LIBRARY = "pipelinedp"

EPSILON = 1.0
DELTA = 1e-5  # the Gaussian's delta
CANDIDATES = 10

FLOAT_SAFE = (
    "wraps python-dp's LaplaceMechanism (Google differential-privacy, Secure Noise Generation, 2020: "
    "discrete noise on a power-of-two grid); measured: floating-point bound 0.92 to 0.94 against epsilon = 1 "
    "at 3e4 runs"
)
FLOAT_LEAK = (
    "wraps python-dp's GaussianMechanism, whose outputs are x + noise on no common grid (Jin, McMurtry, "
    "Rubinstein, Ohrimenko, IEEE S&P 2022); measured: floating-point bound 5.8 to 5.9 against epsilon = 1 at "
    "3e4 runs"
)


def entries(version: str) -> list[LibraryEntry]:
    """PipelineDP's entries, its installed `version` named in each."""

    def entry(
        name: str,
        primitive: str,
        build,
        description: str,
        float_output: bool,
        fp_expect: str = "consistent",
        source: str = "",
    ) -> LibraryEntry:
        return LibraryEntry(
            name=f"libraries.pipelinedp.{name}",
            library=LIBRARY,
            version=version,
            primitive=primitive,
            build=build,
            description=description,
            float_output=float_output,
            fp_expect=fp_expect,
            source=source,
        )

    return [
        entry(
            "laplace",
            "Laplace",
            lambda: pipelinedp_laplace(EPSILON),
            f"create_additive_mechanism(Laplace, eps={EPSILON:g}, l1=1) on one float, neighbours (0, 1): python-dp's "
            "grid-based Laplace.",
            True,
            "consistent",
            FLOAT_SAFE,
        ),
        entry(
            "gaussian",
            "Gaussian",
            lambda: pipelinedp_gaussian(EPSILON, DELTA),
            f"create_additive_mechanism(Gaussian, eps={EPSILON:g}, delta={DELTA:g}, l2=1) on one float, "
            "neighbours (0, 1): python-dp's Gaussian, whose float outputs leak the input, a known-buggy "
            "configuration for the floating-point claim.",
            True,
            "violation",
            FLOAT_LEAK,
        ),
        entry(
            "exponential",
            "exponential mechanism",
            lambda: pipelinedp_exponential(EPSILON, candidates=CANDIDATES),
            f"ExponentialMechanism(eps={EPSILON:g}, sensitivity=1, not monotonic) over {CANDIDATES} candidates "
            "(McSherry, Talwar, FOCS 2007), utilities (1, 0, ..., 0) against (0, 1, ..., 1): loss of index 0 = "
            "0.90 epsilon.",
            False,
        ),
    ]
