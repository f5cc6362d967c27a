"""Catalog entries for the multi-armed algorithms: DP-SE (baseline), seeds 001 and 004.

Inputs are fixed reward tables (`RewardTable`): rewards[t, a] is round t's reward for arm a, the
same in every run, so the two inputs differ in exactly one round (seed 001's relation: one round's
reward vector; seed 004's: one user's reward). Epoch geometry (how many pulls epoch 1 gives each
arm) is read from the algorithm's own output, not recomputed here.
"""

from __future__ import annotations

import functools

import numpy as np

from dpaudit.algorithms.arms import RewardTable
from dpaudit.algorithms.elimination import DPSE
from dpaudit.registry import AUDITS

from dpaudit.audits.build import Observe, claims_from_privacy, flip_point
from dpaudit.audits.catalog import AuditEntry, NeighbourPair, RegretRun

__all__ = ["ENTRIES"]

DPSE_EPS = 1.0
DPSE_BETA = 0.5  # large beta keeps epoch 1 short (444 pulls per arm at eps = 1); the claim holds for any beta
TAIL = 4  # extra ones for arm 0 beyond the flip point: the elimination test then sits in the noise tail


def _dpse_table(length: int, ones: int) -> RewardTable:
    """K = 2, epoch 1 of length `length` per arm: arm 1's rounds all 1, arm 0's first `ones` rounds 1."""
    tab = np.zeros((2 * length + 10, 2))
    tab[length:2 * length, 1] = 1.0
    tab[:ones, 0] = 1.0
    return RewardTable(tab)


@functools.cache
def _dpse_geometry() -> tuple[int, int]:
    """(epoch-1 length l, flip point k): with one shared noise draw, arm 0 survives epoch 1 iff it has >= k ones."""
    probe = DPSE(DPSE_EPS, DPSE_BETA, noise="shared")
    rng = np.random.default_rng(0)
    length = int(probe.run(_dpse_table(2000, 0), rng, 1, 4010).lengths[0, 0])

    def survives(k: int) -> bool:
        pulls = probe.run(_dpse_table(length, k), rng, 1).pulls()[0]
        return bool(pulls[0] > length)  # arm 0 is pulled again in epoch 2

    return length, flip_point(survives, 0, length)


def _dpse_pair(shift: int) -> NeighbourPair:
    length, k = _dpse_geometry()
    return NeighbourPair(
        "one-user", _dpse_table(length, k + shift), _dpse_table(length, k + shift - 1),
        f"K=2, epoch 1 = {length} pulls per arm; arm 1 all ones; arm 0 has {k + shift} vs {k + shift - 1} ones "
        f"(round {k + shift - 1} differs; {'at' if shift == 0 else f'{shift} above'} the noise-free flip point)")


def dpse_entries() -> list[AuditEntry]:
    """DP-SE: the released epoch sum, the elimination decision, and the public code's shared noise draw."""
    correct = DPSE(DPSE_EPS, DPSE_BETA)
    shared = DPSE(DPSE_EPS, DPSE_BETA, noise="shared")
    length, _ = _dpse_geometry()
    horizon = 2 * length + 10
    regret = RegretRun("dp-se", horizon=20_000, runs=20, params={"epsilon": DPSE_EPS, "instance": "s001-1"})
    source = "digest 001 §6.7; digest 004 §7 A7"
    return [
        AuditEntry(
            name="dp-se.epoch-sum", algorithm="dp-se",
            description="DP-SE (Sajed & Sheffet 2019), central pure ε-DP: arm 0's epoch-1 sum plus Lap(1/ε).",
            target=functools.partial(Observe, correct, horizon, "noisy_sums", (0,)),
            pairs=(_dpse_pair(0),), observable="white-box",
            observable_description="arm 0's released noisy epoch-1 sum",
            claims=claims_from_privacy(correct.privacy), samples=400_000, quick=True, quick_samples=100_000,
            regret=regret, source=source),
        AuditEntry(
            name="dp-se.decisions", algorithm="dp-se",
            description="DP-SE elimination decisions after epoch 1, with the test placed in the noise tail.",
            target=functools.partial(Observe, correct, horizon, "pulls"),
            pairs=(_dpse_pair(TAIL),), observable="black-box", observable_description="pull counts of both arms",
            claims=claims_from_privacy(correct.privacy), samples=400_000, quick=True, quick_samples=50_000,
            source=source),
        AuditEntry(
            name="dp-se.shared-noise", algorithm="dp-se", variant="one noise draw shared by all arms (public code)",
            description="DP-SE as in seed 004's public code: one Laplace draw per epoch added to every arm's sum; "
                        "it cancels in the elimination test, so decisions are a deterministic function of the rewards.",
            target=functools.partial(Observe, shared, horizon, "pulls"),
            pairs=(_dpse_pair(0),), observable="black-box", observable_description="pull counts of both arms",
            claims=claims_from_privacy(shared.privacy, paper_expect="violation"), samples=100_000, quick=True,
            quick_samples=5_000, source="digest 004 §7 bug B7; digest 001 §6.7"),
    ]


ENTRIES = dpse_entries()
for _entry in ENTRIES:
    AUDITS.register(_entry.name, _entry)
