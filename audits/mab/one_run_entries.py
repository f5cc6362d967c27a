"""One-run catalog entries for the multi-armed algorithms at deployment horizons (T = 10^6, DP-SE 10^7).

Each entry runs the algorithm once with canaries (`dpaudit.algorithms.mab.canaries`: users whose
whole reward vector is 1 when included, 0 when not, all other rewards 0) and bounds epsilon with
`dpaudit.audit.one_run` (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run",
NeurIPS 2023, Thm 3.1): the claims are pure (delta = 0), where the runner picks this epsilon analysis
over the f-DP one (`dpaudit.entry_runner.one_run_analysis`; on these runs the f-DP bounds are 0.02-0.3%
lower).  Sizes keep every entry to a few seconds, so all are in the quick suite, next to the many-run
entries of the same algorithms at small T; the deep sizes below take under a minute.

Each canary has a release of its own: two canaries in one released sum each see the other's bit as
noise.  The bound tightens with the number of guesses (about 1/sqrt(m)), so an entry hosts as many
canaries as its run has releases (`released_block_count`), and the arms (and, for DP-SE, whose first
epoch holds about 1200 rounds per arm, the horizon) are chosen for thousands of releases.  The guess
count is fixed before the run from the claim (`tail_guesses`: the canaries in the Laplace tails, where
the likelihood ratio is e^eps), so one pair is tested at the full level.  Measured on seeds 0-7
(`python -m benchmarks run one_run_canaries`): mean epsilon_lower 0.94-0.95 of epsilon = 1 (min 0.90;
max 1.03: a 95% bound this close to the truth is above it on about one seed in twenty, here 2 of 24),
against 0.86-0.87 (min 0.78) with the default grid of guess counts on the same runs, and 0.66-0.78
(min 0.50) at the earlier 1000-2000 canaries on 100-700 arms.

In the `--all` suite every call runs at a Bonferroni level (1 - 0.05/58 with its 58 calls), where these sizes
certify 0.875, 0.878 and 0.841 (DP-SE, Dist-DP-SE, Anytime-Lazy-UCB; suite seed 0).  Each guess is right with
probability at most e^eps/(1 + e^eps) (Thm 3.1), so the deficit shrinks like 1/sqrt(guesses), and each entry
has a deep size (`deep`, run by `dpaudit audit --deep`), one canary per release again: DP-SE 29 000 canaries on
29 000 arms at T = 5·10^7 (its first epoch fills the horizon), Dist-DP-SE 30 000 on 5000 arms (6 batches each),
Anytime-Lazy-UCB 40 000 on 5500 arms (40 855 releases), all for 20 000-27 000 guesses.  Measured at that level,
suite seeds 0-2, one core: epsilon_lower 0.944, 0.970, 0.963 (DP-SE, 8 s, peak RSS 0.75 GB), 0.957, 0.956,
0.951 (Dist-DP-SE, 7-9 s, 0.32 GB) and 0.958, 0.987, 0.965 (Anytime-Lazy-UCB, 26-36 s, 0.33 GB).

Twins that must be caught: the public code's shared noise draw (DP-SE), the inverted Pólya parameter
(Dist-DP-SE), and noise halved against the claim (Anytime-Lazy-UCB); caught at their quick sizes, they have
no deep size.
"""

from __future__ import annotations

import functools
from typing import Any

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.canaries import one_run_target, tail_guesses
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.audits.build import lazy_claims
from dpaudit.entries import Claim, NeighbourPair, OneRunEntry, PinNote
from dpaudit.registry import AUDITS

__all__ = ["ENTRIES"]

HORIZON = 1_000_000
EPS = 1.0
DPSE_BETA = 0.5  # as in the many-run DP-SE entries: a short epoch 1
# (horizon, arms, canaries): one canary per release of the placement's dry run (5000, 8000 and 5477 releases)
DPSE_SIZE = (10_000_000, 5_000, 5_000)
DIST_SIZE = (HORIZON, 1_000, 8_000)
LAZY_SIZE = (HORIZON, 500, 5_000)
# the deep sizes (`dpaudit audit --deep`), one canary per release again (29000, 30000 and 40855 releases): DP-SE's
# first epoch fills T = 5·10^7 on 29000 arms, Dist-DP-SE releases 6 batches per arm on 5000 arms
DPSE_DEEP = (50_000_000, 29_000, 29_000)
DIST_DEEP = (HORIZON, 5_000, 30_000)
LAZY_DEEP = (HORIZON, 5_500, 40_000)

_HHM = "Hu, Huang, Mehta (arXiv:2102.07929)"

ONE_RUN_NOTE = PinNote(
    "audit",
    "a one-run audit (Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1) is limited by its guesses: each is "
    "right with probability at most e^ε/(1 + e^ε) (0.73 at ε = 1), so the deficit shrinks like 1/sqrt(guesses); "
    "the 3400-5500 guesses of 5000-8000 canaries certify ε ≈ 0.9-0.95 at 95% but 0.84-0.88 at the --all suite's "
    "Bonferroni level (1 - 0.05/58); at the deep size (dpaudit audit --deep: 29 000-40 000 canaries, one release "
    "each, 20 000-27 000 guesses) they certify 0.94-0.99 there (suite seeds 0-2, under a minute and 1 GB each)",
)

_CZ = "Chowdhury & Zhou (ICLR 2023)"

INVERTED_NOTE = PinNote(
    "audit",
    "the corrected claim, 4775 (the inverted shares' ε accounted at T = 10^6, B releases of DLap(-1/log(1-θ))), is far "
    "beyond what one run can certify: r guesses, all right, certify at most the ε with (1 + e^{-ε})^{-r} = 0.05 at 95% (Steinke, "
    "Nasr, Jagielski, NeurIPS 2023, Thm 3.1), ε ≈ log(r/3), 7.5 for the 5470 guesses of 8000 canaries and "
    "e^4775 guesses for 4775; the twin's claim ε = 1 is refuted (3.2), and the many-run twin "
    "dist-dp-se.inverted-polya pins its own release's 6.03 at 0.97",
)


def _pair(horizon: int, arms: int, canaries: int) -> NeighbourPair:
    return NeighbourPair(
        "one-user",
        None,
        None,
        f"{canaries} canaries on {arms} arms, one per release, each included by a fair coin: a canary user's "
        f"reward vector is all ones when included, all zeros when not; every other user's rewards are 0 "
        f"(T = {horizon:,})",
    )


def _power(n: int) -> str:
    """n as a·10^k (10^7, 5·10^7)."""
    digits = str(n).rstrip("0")
    k = len(str(n)) - len(digits)
    return f"10^{k}" if digits == "1" else f"{digits}·10^{k}"


def _run(algo, size: tuple[int, int, int], description: str) -> dict[str, Any]:
    """The fields of one run of `algo` at `size` = (horizon, arms, canaries); `description` may hold {T} and {m}."""
    horizon, arms, canaries = size
    return {
        "target": functools.partial(one_run_target, algo, horizon, canaries, n_arms=arms),
        "pairs": (_pair(horizon, arms, canaries),),
        "horizon": horizon,
        "num_canaries": canaries,
        "guesses": tail_guesses(canaries, EPS),
        "description": description.format(T=_power(horizon), m=canaries),
    }


def _entry(
    name: str,
    algo,
    size: tuple[int, int, int],
    description: str,
    observable: str,
    claims,
    deep: tuple[int, int, int] | None = None,
    pin_note: PinNote = ONE_RUN_NOTE,
    **kw,
) -> OneRunEntry:
    return OneRunEntry(
        name=name,
        algorithm=algo.name,
        **_run(algo, size, description),
        observable="white-box",
        observable_description=observable,
        claims=claims,
        quick=True,
        pin_note=pin_note,
        deep=_run(algo, deep, description) if deep else None,
        **kw,
    )


def one_run_entries() -> list[OneRunEntry]:
    """DP-SE (T = 10^7), Dist-DP-SE and Anytime-Lazy-UCB (T = 10^6) in one run, with their twins."""
    dpse, shared = DPSE(EPS, DPSE_BETA), DPSE(EPS, DPSE_BETA, noise="shared")
    dist, inverted = BatchSE("dist-dp", EPS), BatchSE("dist-dp", EPS, polya="inverted")
    lazy, halved = AnytimeLazyUCB(EPS), AnytimeLazyUCB(2 * EPS)
    dpse_obs = "each canary's released epoch sum + Lap(1/ε) minus the mean of its epoch's releases"
    dist_obs = "each canary's batch aggregate (Σ x̂ + noise) mod m, centred and divided by g, minus its batch's mean"
    lazy_obs = "the released array sum + Lap(1/ε) holding each canary's observation"
    return [
        _entry(
            "dp-se.one-run",
            dpse,
            DPSE_SIZE,
            "DP-SE (Sajed & Sheffet 2019), central pure ε-DP, audited in one run at T = {T} with {m} canaries.",
            dpse_obs,
            lazy_claims(functools.partial(dpse.privacy, DPSE_SIZE[0])),
            deep=DPSE_DEEP,
            source="Sajed & Sheffet (ICML 2019), DP-SE; one-run audit of Steinke, Nasr, Jagielski (NeurIPS 2023, Thm 3.1)",
        ),
        _entry(
            "dp-se.one-run-shared-noise",
            shared,
            DPSE_SIZE,
            "DP-SE with one Laplace draw per epoch shared by all arms, in one run at T = 10^7: the draw "
            "cancels against the epoch's mean.",
            dpse_obs,
            lazy_claims(functools.partial(shared.privacy, DPSE_SIZE[0]), paper_expect="violation"),
            variant="one noise draw shared by all arms (public code)",
            source=f"the public code of {_CZ} (Sec. 7 fn. 5): one Laplace draw per epoch shared by all arms",
        ),
        _entry(
            "dist-dp-se.one-run",
            dist,
            DIST_SIZE,
            f"Dist-DP-SE ({_CZ}, Thm 1), Pólya shares + secure aggregation, pure ε-DP, in one run at T = {{T}} "
            "with {m} canaries.",
            dist_obs,
            lazy_claims(functools.partial(dist.privacy, HORIZON)),
            deep=DIST_DEEP,
            source=f"{_CZ}, Theorem 1",
        ),
        _entry(
            "dist-dp-se.one-run-inverted-polya",
            inverted,
            DIST_SIZE,
            "Dist-DP-SE with Pólya(1/n, 1-θ) shares (public code), in one run at T = 10^6.",
            dist_obs,
            lazy_claims(functools.partial(inverted.privacy, HORIZON), paper_expect="violation"),
            variant="Pólya(1/n, 1-θ) shares instead of Pólya(1/n, θ) (the authors' public code)",
            pin_note=INVERTED_NOTE,
            source=f"the public code of {_CZ} (Sec. 7 fn. 5): Pólya(1/n, 1-θ) shares",
        ),
        _entry(
            "anytime-lazy-ucb.one-run",
            lazy,
            LAZY_SIZE,
            f"Anytime-Lazy-UCB ({_HHM}, Alg. 1), central pure ε-DP, in one run at T = {{T}} with {{m}} canaries.",
            lazy_obs,
            lazy_claims(functools.partial(lazy.privacy, HORIZON)),
            deep=LAZY_DEEP,
            source=f"{_HHM}, Algorithm 1 (Anytime-Lazy-UCB), Theorem 2",
        ),
        _entry(
            "anytime-lazy-ucb.one-run-halved-noise",
            halved,
            LAZY_SIZE,
            "Anytime-Lazy-UCB with Lap(1/(2ε)) on each array sum (noise halved) against the claim ε = 1, in one "
            "run at T = 10^6.",
            lazy_obs,
            (
                Claim("paper", epsilon=EPS, expect="violation", source=f"{_HHM}, Thm 2 for Lap(1/ε), ε = 1"),
                Claim("corrected", epsilon=2 * EPS, source="Lap(1/(2ε)) on a sensitivity-1 sum: 2ε"),
            ),
            variant="noise halved: Lap(1/(2ε)) instead of Lap(1/ε)",
            source=f"{_HHM}, Algorithm 1: Lap(1/ε) on each array sum",
        ),
    ]


ENTRIES = one_run_entries()
for _e in ENTRIES:
    AUDITS.register(_e.name, _e)
