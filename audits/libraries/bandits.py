"""DP-SE and Dist-DP-SE on each installed DP library's noise, audited at the deployment horizon T = 10^6.

The algorithms take their noise from a `noise_source` (`dpaudit.mechanisms.noise_source`); here the source is
a library's (`dpaudit.adapters.OpenDPNoise`, `dpaudit.adapters.DiffprivlibNoise`), one entry per installed
library per algorithm, named `libraries.<library>.<algorithm>`; a library that is not installed gets no entry.
Each entry makes the normal audit calls of a catalog entry (`dpaudit.entry_runner`) with
`float_check="report"`: the algorithmic verdict against the algorithm's claim, and for float releases the
floating-point verdict of the same claim (the bound with the IEEE 754 bit features; Mironov, "On Significance
of the Least Significant Bits for Differential Privacy", CCS 2012), reported, not gated.

- DP-SE (Sajed, Sheffet, ICML 2019), epsilon = 1 and beta = 1/T as deployed (Hu, Huang, Mehta, arXiv:2102.07929,
  §6), run whole at T = 10^6 on K = 2 arms: the release audited is arm 0's epoch-1 sum plus the library's
  Lap(1/epsilon), a float, on the sums 0 and 1 (Mironov's pair for the low-order bits).
- Dist-DP-SE (Chowdhury, Zhou, ICLR 2023, Alg. 1, Thm 1) at the experiments' parameters (T = 10^6, base 4,
  p = 0.1): the server's view (x̂_1 + DLap(g/epsilon)) mod m of the last complete batch's release, the
  library's discrete Laplace standing for the n Pólya shares' sum, which has that law (their Fact 1); an
  integer, so the algorithmic verdict only.  As in the built-in `dist-dp-se.paper-release`, a run of the whole
  algorithm at T = 10^6 is too slow for the runs an audit needs, and the release is what Thm 1's proof bounds.

OpenDP cannot be seeded: its entries' runs are not reproducible from the seed (the bounds stay valid: an audit
needs independent runs).  diffprivlib's draw from the audit's seeded generators.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.adapters import DiffprivlibNoise, OpenDPNoise
from dpaudit.adapters.target import distribution_version, require
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.environment import RewardTable
from dpaudit.audits.build import Observe, lazy_claims
from dpaudit.audits.mab.targets import BatchRelease
from dpaudit.entries import AuditEntry, NeighbourPair
from dpaudit.registry import AUDITS

__all__ = [
    "ENTRIES",
    "HORIZON",
    "SOURCES",
    "EpochSum",
    "bandit_entries",
    "dpse_pair",
    "installed_sources",
    "paper_batch",
]

HORIZON = 1_000_000
EPS = 1.0
PAPER_BASE, PAPER_P = 4, 0.1  # Chowdhury & Zhou (ICLR 2023), Sec. 7 / App. J and their public code
PAPER_K = 10
AUDIT_OPTIONS = {"float_check": "report"}

#: runs per input: OpenDP's float Laplace costs about 50 µs a value (two per DP-SE run), its integer one 9 µs,
#: diffprivlib's 15-20 µs
SAMPLES = {"opendp": {"dp-se": 50_000, "dist-dp-se": 200_000}, "diffprivlib": {"dp-se": 100_000, "dist-dp-se": 200_000}}
QUICK_SAMPLES = 20_000

PROBE_ROUNDS = 10_000
"""Rounds per arm of the table that measures DP-SE's epoch-1 length l (2124 at epsilon = 1, beta = 1/T, T = 10^6)."""

#: library -> (the module its adapters import, the noise source)
SOURCES: dict[str, tuple[str, Callable[[], Any]]] = {
    "opendp": ("opendp.prelude", OpenDPNoise),
    "diffprivlib": ("diffprivlib.mechanisms", DiffprivlibNoise),
}


@dataclasses.dataclass(frozen=True)
class EpochSum:
    """target(table, rng, size): DP-SE's released epoch-1 sum of arm 0 (one float per run), run at `horizon`."""

    algorithm: DPSE
    horizon: int

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.asarray(Observe(self.algorithm, self.horizon, "noisy_sums", (0,))(data, rng, size)).reshape(size)


def installed_sources() -> dict[str, tuple[str, Any]]:
    """library -> (installed version, its noise source), for each library of `SOURCES` that imports."""
    out = {}
    for library, (module, source) in SOURCES.items():
        try:
            require(module, library)
        except ImportError:
            continue
        out[library] = (distribution_version(library), source())
    return out


def _table(rounds: int, first: float) -> RewardTable:
    """K = 2, 2 `rounds` rounds: arm 1's rewards all 1, arm 0's all 0 but its first round's, `first`."""
    tab = np.zeros((2 * rounds, 2))
    tab[:, 1] = 1.0
    tab[0, 0] = first
    return RewardTable(tab)


@functools.cache
def dpse_pair() -> NeighbourPair:
    """The DP-SE pair at T = 10^6: `_table(l, 0)` vs `_table(l, 1)`, l = DP-SE's epoch-1 length.

    The table holds the 2 l rounds of epoch 1 (arm 0's pulls, then arm 1's), all that a run reads: arm 0 (epoch
    mean at most 1/l) is eliminated against arm 1 (mean 1) unless the two arms' Lap(1/epsilon) draws differ by
    more than 0.86 l = 1827 (probability e^(-1827)(2 + 1827)/4, below 10^-790), and the survivor is then played
    without reading rewards.  A run that needed more rounds would stop with an error, never read rewards the
    pair does not define."""
    length = int(DPSE(EPS).run(_table(PROBE_ROUNDS, 0.0), np.random.default_rng(0), 1, HORIZON).lengths[0, 0])
    return NeighbourPair(
        "one-user",
        _table(length, 0.0),
        _table(length, 1.0),
        f"K=2 at T = 10^6, epoch 1 = {length} pulls per arm: arm 1's rewards all 1; arm 0's all 0 vs its first "
        "round 1 (its epoch-1 sums 0 vs 1)",
    )


def _dpse_entry(library: str, version: str, source: Any) -> AuditEntry:
    algo = DPSE(EPS, noise_source=source)
    return AuditEntry(
        name=f"libraries.{library}.dp-se",
        algorithm="dp-se",
        variant=f"{library} {version} Laplace noise",
        description=f"DP-SE (Sajed & Sheffet 2019), central pure ε-DP at ε = 1, β = 1/T, T = 10^6, with {library}'s "
        "Laplace adding Lap(1/ε) to each epoch sum.",
        target=functools.partial(EpochSum, algo, HORIZON),
        pairs=(dpse_pair(),),
        observable="white-box",
        observable_description=f"arm 0's released epoch-1 sum + Lap(1/ε) as {library} computes it (a float)",
        claims=lazy_claims(functools.partial(algo.privacy, HORIZON)),
        samples=SAMPLES[library]["dp-se"],
        quick=True,
        quick_samples=QUICK_SAMPLES,
        audit_options=dict(AUDIT_OPTIONS),
        source=f"Sajed & Sheffet (ICML 2019), DP-SE; {library} {version}'s Laplace",
    )


def _dist_entry(library: str, version: str, source: Any) -> AuditEntry:
    algo = BatchSE("dist-dp", EPS, base=PAPER_BASE, p=PAPER_P, path="batch", noise_source=source)
    b = paper_batch()
    n = PAPER_BASE**b
    params = algo.batch_params(n, HORIZON)
    pair = NeighbourPair(
        "one-user",
        np.zeros(1),
        np.ones(1),
        f"one release of batch {b} (n = {n} users, g = {params.g}, m = {params.m}) at T = 10^6, "
        "base 4, p = 0.1: every reward 0 vs user 1's reward 1",
    )
    return AuditEntry(
        name=f"libraries.{library}.dist-dp-se",
        algorithm="dist-dp-se",
        variant=f"{library} {version} discrete Laplace noise",
        description=f"Dist-DP-SE (Chowdhury & Zhou 2023, Thm 1), pure ε-DP at ε = 1, the server's view of batch {b}'s "
        f"release (n = {n}, p = 0.1, T = 10^6) with {library}'s discrete Laplace DLap(g/ε) as the total "
        "of the users' noise.",
        target=functools.partial(BatchRelease, algo, n, HORIZON),
        pairs=(pair,),
        observable="white-box",
        observable_description=f"the SecAgg output ŷ (mod m) of one release of {n} users",
        claims=lazy_claims(functools.partial(algo.privacy, HORIZON)),
        samples=SAMPLES[library]["dist-dp-se"],
        quick=True,
        quick_samples=QUICK_SAMPLES,
        audit_options=dict(AUDIT_OPTIONS),
        source=f"Chowdhury & Zhou (ICLR 2023), Algorithm 1, Theorem 1, Fact 1; {library} {version}'s discrete Laplace",
    )


def paper_batch() -> int:
    """The last batch b whose release completes at T = 10^6 with base 4 on K = 10 arms when no arm is
    eliminated (K Σ_{i<=b} 4^i <= T: b = 8), the experiments' size (Chowdhury & Zhou, ICLR 2023, Sec. 7)."""
    b, used = 0, 0
    while used + PAPER_K * PAPER_BASE ** (b + 1) <= HORIZON:
        b += 1
        used += PAPER_K * PAPER_BASE**b
    return b


@functools.cache
def bandit_entries() -> list[AuditEntry]:
    """One entry per installed library per algorithm (DP-SE, Dist-DP-SE); none for a library not installed.
    The same entries on every call (registering them twice is harmless)."""
    out = []
    for library, (version, source) in installed_sources().items():
        out += [_dpse_entry(library, version, source), _dist_entry(library, version, source)]
    return out


ENTRIES = bandit_entries()
for _e in ENTRIES:
    AUDITS.register(_e.name, _e)
