"""python-dp's (`pydp`, Google's differential-privacy library) primitives a bandit is built from, each at its
worst-case pair against the claim the mechanism keeps.

Laplace (float, and the integer overload of `add_noise`: a discrete Laplace, the geometric) and Gaussian.
python-dp's numerical mechanisms have no exponential mechanism, report noisy max or snapping.

Floating point.  Jin, McMurtry, Rubinstein, Ohrimenko ("Are We There Yet? Timing and Floating-Point Attacks on
Differential Privacy Systems", IEEE S&P 2022) show float Laplace and Gaussian samplers leaking the input through
the low-order bits of x + noise; Google's library states it replaced its samplers in 2020 by discrete noise on a
power-of-two grid (its "Secure Noise Generation" documentation).  Measured on python-dp 1.1.5, not assumed:

- Laplace: every output is a multiple of 2^-40 for any input (the input is rounded to the grid), and the
  floating-point audit stays below the claim (0.93 to 0.96 against epsilon = 1 at 3·10^4 runs): expected consistent.
- Gaussian: its outputs are not on a common grid (multiples of 2^-53 or 2^-54 only, as for x + float noise), and
  the floating-point audit contradicts the claim (epsilon_lower 4.0 to 6.0 over three unseeded runs against
  epsilon = 1 at 3·10^4 runs): expected violation.
"""

from __future__ import annotations

from dpaudit.adapters import pydp_gaussian, pydp_laplace
from dpaudit.audits.libraries.entry import LibraryEntry

__all__ = ["LIBRARY", "entries"]

LIBRARY = "pydp"

EPSILON = 1.0
DELTA = 1e-5  # the Gaussian's delta

FLOAT_SAFE = (
    "Google differential-privacy, Secure Noise Generation (2020): discrete Laplace noise on a power-of-two "
    "grid, the input rounded to it; measured: outputs multiples of 2^-40 for any input, floating-point "
    "bound 0.93 to 0.96 against epsilon = 1 at 3e4 runs"
)
FLOAT_LEAK = (
    "Jin, McMurtry, Rubinstein, Ohrimenko, IEEE S&P 2022 (low-order bits of x + float Gaussian noise); "
    "measured: outputs on no common grid, floating-point bound 4.0 to 6.0 against epsilon = 1 at 3e4 runs"
)


def entries(version: str) -> list[LibraryEntry]:
    """python-dp's entries, its installed `version` named in each."""

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
            name=f"libraries.pydp.{name}",
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
            lambda: pydp_laplace(EPSILON),
            f"LaplaceMechanism(epsilon={EPSILON:g}, sensitivity=1).add_noise on one float, neighbours (0, 1): "
            "Google's grid-based secure Laplace.",
            True,
            "consistent",
            FLOAT_SAFE,
        ),
        entry(
            "laplace-int",
            "geometric",
            lambda: pydp_laplace(EPSILON, integer=True),
            f"LaplaceMechanism(epsilon={EPSILON:g}, sensitivity=1).add_noise on one integer (its discrete Laplace), "
            "neighbours (0, 1): loss epsilon at every output.",
            False,
        ),
        entry(
            "gaussian",
            "Gaussian",
            lambda: pydp_gaussian(EPSILON, DELTA),
            f"GaussianMechanism(epsilon={EPSILON:g}, delta={DELTA:g}, sensitivity=1).add_noise on one float "
            "(Balle, Wang, ICML 2018, Thm 8), neighbours (0, 1): its float outputs leak the input, a known-buggy "
            "configuration for the floating-point claim.",
            True,
            "violation",
            FLOAT_LEAK,
        ),
    ]
