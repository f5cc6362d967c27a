"""One-run catalog entries for shuffle-private LinUCB (Chowdhury & Zhou, ICML 2022, Alg. 1 with P_Amp, §3.2) at T = 10^6.

LinUCB-SDP-Amp, batches of B = 20 users (the paper's), d = 5, K = 100, delta = 1e-6, 10^4 canaries, one
per batch for the first 10^4 of the 5 10^4 batches (`dpaudit.algorithms.linear.canaries`).  The claims
have delta > 0, so the runner reads the run with the f-DP analysis of the (eps, delta) curve (Mahloujifar,
Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run", ICML 2025, Alg. 3), which has no 2 m delta
term (Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1 has one).  One run takes about 45 s (the batches
are sequential), so these entries are not in the quick suite.  Twin: the authors' simulation sigma at eps = 10 (about
200 times less noise than the theorem's sigma at eps = 1) against the claim eps = 1.
"""

from __future__ import annotations

import functools

from dpaudit.algorithms.linear.canaries import one_run_target
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.audits.build import lazy_claims
from dpaudit.entries import Claim, NeighbourPair, OneRunEntry, PinNote
from dpaudit.registry import AUDITS

__all__ = ["ENTRIES"]

HORIZON = 1_000_000
CANARIES = 10_000
DIM, ARMS, BATCH = 5, 100, 20
EPS, DELTA = 1.0, 1e-6
# Guess the top and bottom m/8 or m/4 canaries: 4 pairs instead of the default grid's 224, because the
# --all suite's Bonferroni split (about 55 calls) would leave 224 pairs a level near 4e-6 per pair.
GUESSES = tuple((a, b) for a in (CANARIES // 8, CANARIES // 4) for b in (CANARIES // 8, CANARIES // 4))

_SRC = "Chowdhury & Zhou, Shuffle Private Linear Contextual Bandits (ICML 2022)"
_NOTE = PinNote(
    "both",
    "the released batch sum carries each canary under Gaussian noise of std sqrt(B) σ (σ = 20.3, B = 20), "
    "about 0.011-GDP per canary (ε ≈ 0.04 at δ = 1e-6), far below the sound claim ε = 0.49 (a bound for "
    "the shuffled messages, of which the sum is a post-processing); a guess is then right with probability "
    "about 0.505, which 2500-5000 guesses cannot tell from 0.5 under either one-run analysis (ε: Steinke, Nasr, "
    "Jagielski, NeurIPS 2023; f-DP: Mahloujifar, Melis, Chaudhuri, ICML 2025); the many-run batch-sum "
    "audit pins the same release (in μ)",
)
_OBS = "each canary's batch release u~ (analyzer sum of φ y + noise) projected on her chosen feature vector"


def _entry(name: str, algo: LinUCBSDPAmp, description: str, claims, **kw) -> OneRunEntry:
    return OneRunEntry(
        name=name,
        algorithm=algo.name,
        description=description,
        target=functools.partial(one_run_target, algo, HORIZON, CANARIES, dim=DIM, n_arms=ARMS),
        pairs=(
            NeighbourPair(
                "reward-only",
                None,
                None,
                f"{CANARIES} canaries, each included by a fair coin: a canary user's reward is 1 for "
                f"every action when included, 0 when not; every other reward is 0; fixed public "
                f"features (d = {DIM}, K = {ARMS}); T = {HORIZON}, B = {BATCH}",
            ),
        ),
        observable="white-box",
        observable_description=_OBS,
        claims=claims,
        quick=False,
        horizon=HORIZON,
        num_canaries=CANARIES,
        pin_note=_NOTE,
        guesses=GUESSES,
        **kw,
    )


def one_run_entries() -> list[OneRunEntry]:
    """LinUCB-SDP-Amp in one run at T = 10^6, and its low-noise twin."""
    amp = LinUCBSDPAmp(batch=BATCH, epsilon=EPS, delta=DELTA)
    low = LinUCBSDPAmp(batch=BATCH, epsilon=10 * EPS, delta=DELTA, noise="code")
    return [
        _entry(
            "linucb-sdp-amp.one-run",
            amp,
            f"LinUCB-SDP-Amp, (ε, δ)-SDP with ε = {EPS}, δ = {DELTA:g}, audited in one run at T = 10^6 with "
            f"{CANARIES} canaries.",
            lazy_claims(functools.partial(amp.privacy, HORIZON, dim=DIM)),
            source=f"{_SRC}, Thm 3.2; one-run f-DP audit of Mahloujifar, Melis, Chaudhuri (ICML 2025, Alg. 3)",
        ),
        _entry(
            "linucb-sdp-amp.one-run-low-noise",
            low,
            "LinUCB-SDP-Amp with the authors' simulation σ at ε = 10 (about 200× below the theorem's σ at "
            "ε = 1) against the claim ε = 1, in one run at T = 10^6.",
            (Claim("paper", delta=DELTA, epsilon=EPS, expect="violation", source=f"{_SRC}, Thm 3.2 at ε = 1"),),
            variant="authors' simulation σ at ε = 10, claimed ε = 1",
            source=f"{_SRC}, §5 fn. 7: the authors' simulation code σ = sqrt(ln(2.5B/δ))/(ε sqrt(B))",
        ),
    ]


ENTRIES = one_run_entries()
for _e in ENTRIES:
    AUDITS.register(_e.name, _e)
