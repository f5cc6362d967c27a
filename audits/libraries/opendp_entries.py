"""OpenDP's primitives a bandit is built from, each at its worst-case pair against the claim its privacy map states.

Laplace (float and integer, the latter OpenDP's discrete Laplace: its geometric), Gaussian (float and
integer) and report noisy max (exponential noise, and Gumbel noise: the exponential mechanism).  OpenDP 0.16
has no sparse vector (above threshold) measurement and no snapping mechanism: its float Laplace and Gaussian
round the input to a grid of spacing 2^k and add discrete noise on that grid (`make_laplace`'s docs: "all
sampling is done using the discrete Laplace distribution", its granularity parameter k), which is what
snapping's rounding is for, so the floating-point claim of both is expected to hold.
"""

from __future__ import annotations

from dpaudit.adapters import (
    opendp_discrete_gaussian,
    opendp_discrete_laplace,
    opendp_gaussian,
    opendp_laplace,
    opendp_noisy_max,
)
from dpaudit.audits.libraries.entry import LibraryEntry

__all__ = ["LIBRARY", "entries"]

LIBRARY = "opendp"

SCALE = 1.0  # Laplace: claim epsilon = 1; Gaussian: rho = 1/2, epsilon 5.22 at delta = 1e-6
GAUSSIAN_DELTA = 1e-6
NOISY_MAX_SCALE = 2.0  # exponential noise: claim epsilon = 2 * sensitivity / scale = 1
CANDIDATES = 10

_GRID = (
    "OpenDP rounds x to a grid of spacing 2^k and adds discrete noise on it (make_laplace's docs and proof "
    "document), so every output is a grid point whatever x: its low-order bits carry no information about x"
)


def entries(version: str) -> list[LibraryEntry]:
    """OpenDP's entries, its installed `version` named in each."""

    def entry(name: str, primitive: str, build, description: str, float_output: bool, source: str = "") -> LibraryEntry:
        return LibraryEntry(
            name=f"libraries.opendp.{name}",
            library=LIBRARY,
            version=version,
            primitive=primitive,
            build=build,
            description=description,
            float_output=float_output,
            source=source,
        )

    return [
        entry(
            "laplace",
            "Laplace",
            lambda: opendp_laplace(SCALE),
            f"make_laplace on one float, scale {SCALE:g}, neighbours (0, 1): the map's epsilon = 1/scale is the "
            "largest loss of the Laplace mechanism (Dwork, McSherry, Nissim, Smith, TCC 2006).",
            True,
            _GRID,
        ),
        entry(
            "discrete-laplace",
            "geometric",
            lambda: opendp_discrete_laplace(SCALE),
            f"make_laplace on one integer (the discrete Laplace, two-sided geometric), scale {SCALE:g}, "
            "neighbours (0, 1): P(k) proportional to exp(-|k|/scale), loss 1/scale at every output "
            "(Ghosh, Roughgarden, Sundararajan, STOC 2009).",
            False,
        ),
        entry(
            "gaussian",
            "Gaussian",
            lambda: opendp_gaussian(SCALE, delta=GAUSSIAN_DELTA),
            f"make_gaussian on one float, scale {SCALE:g}, neighbours (0, 1): the map's rho = 1/(2 scale^2) "
            f"(Bun, Steinke, TCC 2016, Prop. 1.6) stated at delta = {GAUSSIAN_DELTA:g} by Canonne, Kamath, "
            "Steinke (NeurIPS 2020, Cor. 13).",
            True,
            _GRID,
        ),
        entry(
            "discrete-gaussian",
            "Gaussian",
            lambda: opendp_discrete_gaussian(SCALE, delta=GAUSSIAN_DELTA),
            f"make_gaussian on one integer (the discrete Gaussian of Canonne, Kamath, Steinke, NeurIPS 2020), "
            f"scale {SCALE:g}, neighbours (0, 1), rho = 1/(2 scale^2) stated at delta = {GAUSSIAN_DELTA:g}.",
            False,
        ),
        entry(
            "noisy-max",
            "report noisy max",
            lambda: opendp_noisy_max(NOISY_MAX_SCALE, candidates=CANDIDATES),
            f"make_noisy_max with exponential noise (permute-and-flip; McKenna, Sheldon, NeurIPS 2020), scale "
            f"{NOISY_MAX_SCALE:g}, {CANDIDATES} candidates, scores (1, 0, ..., 0) against (0, 1, ..., 1): the "
            "map's epsilon = 2/scale.",
            False,
        ),
        entry(
            "noisy-max-gumbel",
            "exponential mechanism",
            lambda: opendp_noisy_max(
                NOISY_MAX_SCALE, candidates=CANDIDATES, measure="zero_concentrated_divergence", delta=GAUSSIAN_DELTA
            ),
            f"make_noisy_max with Gumbel noise (the exponential mechanism; McSherry, Talwar, FOCS 2007), scale "
            f"{NOISY_MAX_SCALE:g}, {CANDIDATES} candidates, the same scores; the map's rho stated at delta = "
            f"{GAUSSIAN_DELTA:g}.",
            False,
        ),
    ]
