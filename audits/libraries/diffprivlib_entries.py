"""diffprivlib's primitives a bandit is built from, each at its worst-case pair against the claim it is built with.

Laplace, Gaussian (classic, analytic, discrete), geometric, the exponential mechanism, permute-and-flip
(its report noisy max) and snapping.  diffprivlib 0.6 has no sparse vector (above threshold) mechanism.

Known-buggy configurations.  Its float Laplace and Gaussians return x + noise computed in floating point, and
the set of floats such a sum can take depends on x: the low-order bits of an output tell the inputs apart
(Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012).  diffprivlib
draws that noise from several uniforms (Holohan, Braghin, "Secure Random Sampling in Differential Privacy",
ESORICS 2021), which changes which floats are reachable but not that x + noise is rounded to x's grid;
Haney, Desfontaines, Hartman, Shrestha, Hay ("Precision-based attacks and interval refining: how to break,
then fix, differential privacy on finite computers", arXiv:2207.13793, 2022) break diffprivlib's Laplace
this way, and diffprivlib's own `Snapping` docstring names snapping as its fix for the classic Laplace's
floating-point vulnerability.  Their floating-point claims are therefore expected violations; snapping's,
and every integer or index output's, are expected to hold.
"""

from __future__ import annotations

from dpaudit.adapters import (
    diffprivlib_exponential,
    diffprivlib_gaussian,
    diffprivlib_geometric,
    diffprivlib_laplace,
    diffprivlib_snapping,
)
from dpaudit.audits.libraries.entry import LibraryEntry

__all__ = ["LIBRARY", "entries"]

LIBRARY = "diffprivlib"

EPSILON = 1.0
DELTA = 1e-5  # the Gaussians' delta
CANDIDATES = 10
SNAPPING_BOUND = 10.0  # snapping clamps to [-B, B]

_FLOAT_LEAK = (
    "Mironov, CCS 2012 (low-order bits of x + noise); Haney, Desfontaines, Hartman, Shrestha, Hay, "
    "arXiv:2207.13793, 2022 (precision-based attacks on diffprivlib); diffprivlib's Snapping docstring "
    "(snapping fixes the classic Laplace's floating-point vulnerability)"
)
_SNAPPING = (
    "Mironov, CCS 2012, Sect. 5.2: the output is a multiple of a power of two Lambda >= the noise scale, "
    "so its low-order bits are the same for both inputs"
)


def entries(version: str) -> list[LibraryEntry]:
    """diffprivlib's entries, its installed `version` named in each."""

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
            name=f"libraries.diffprivlib.{name}",
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
            lambda: diffprivlib_laplace(EPSILON),
            f"Laplace(epsilon={EPSILON:g}, sensitivity=1) on one float, neighbours (0, 1): the documented float "
            "Laplace, a known-buggy configuration for the floating-point claim.",
            True,
            "violation",
            _FLOAT_LEAK,
        ),
        entry(
            "gaussian",
            "Gaussian",
            lambda: diffprivlib_gaussian(EPSILON, DELTA, variant="classic"),
            f"Gaussian(epsilon={EPSILON:g}, delta={DELTA:g}) on one float (Dwork, Roth, 2014, Thm A.1), "
            "neighbours (0, 1): float noise, a known-buggy configuration for the floating-point claim.",
            True,
            "violation",
            _FLOAT_LEAK,
        ),
        entry(
            "gaussian-analytic",
            "Gaussian",
            lambda: diffprivlib_gaussian(EPSILON, DELTA, variant="analytic"),
            f"GaussianAnalytic(epsilon={EPSILON:g}, delta={DELTA:g}) on one float (Balle, Wang, ICML 2018, Thm 8), "
            "neighbours (0, 1): float noise, a known-buggy configuration for the floating-point claim.",
            True,
            "violation",
            _FLOAT_LEAK,
        ),
        entry(
            "gaussian-discrete",
            "Gaussian",
            lambda: diffprivlib_gaussian(EPSILON, DELTA, variant="discrete"),
            f"GaussianDiscrete(epsilon={EPSILON:g}, delta={DELTA:g}) on one integer (Canonne, Kamath, Steinke, "
            "NeurIPS 2020), neighbours (0, 1).",
            False,
        ),
        entry(
            "geometric",
            "geometric",
            lambda: diffprivlib_geometric(EPSILON),
            f"Geometric(epsilon={EPSILON:g}, sensitivity=1) on one integer (Ghosh, Roughgarden, Sundararajan, "
            "STOC 2009), neighbours (0, 1): loss epsilon at every output.",
            False,
        ),
        entry(
            "exponential",
            "exponential mechanism",
            lambda: diffprivlib_exponential(EPSILON, candidates=CANDIDATES),
            f"Exponential(epsilon={EPSILON:g}, sensitivity=1) over {CANDIDATES} candidates (McSherry, Talwar, "
            "FOCS 2007), utilities (1, 0, ..., 0) against (0, 1, ..., 1): loss of index 0 = 0.90 epsilon.",
            False,
        ),
        entry(
            "permute-and-flip",
            "report noisy max",
            lambda: diffprivlib_exponential(EPSILON, candidates=CANDIDATES, permute_and_flip=True),
            f"PermuteAndFlip(epsilon={EPSILON:g}, sensitivity=1) over {CANDIDATES} candidates (McKenna, Sheldon, "
            "NeurIPS 2020; report noisy max with exponential noise), the same utilities.",
            False,
        ),
        entry(
            "snapping",
            "snapping",
            lambda: diffprivlib_snapping(EPSILON, -SNAPPING_BOUND, SNAPPING_BOUND),
            f"Snapping(epsilon={EPSILON:g}, sensitivity=1, lower=-{SNAPPING_BOUND:g}, upper={SNAPPING_BOUND:g}) on "
            "one float, neighbours (0, 1): the floating-point-safe Laplace (Mironov, CCS 2012, Sect. 5.2).",
            True,
            "consistent",
            _SNAPPING,
        ),
    ]
