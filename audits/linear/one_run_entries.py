"""One-run catalog entries for shuffle-private LinUCB (Chowdhury & Zhou, ICML 2022, Alg. 1 with P_Amp), T = 10^6.

LinUCB-SDP-Amp, batches of B = 20 users (the paper's), d = 5, K = 100, delta = 1e-6, 10^5 canaries, two per
batch (`dpaudit.algorithms.linear.canaries`): a canary's reward is 1 for every action when included and -1
when not (Assumption 3.1 bounds |y| <= 1), so her batch sum moves by 2 phi, twice the 0/1 canary's shift.
The other canary of her batch adds +-<phi, phi'> (variance <= 1) to her score: nothing against the sum's
noise (std sqrt(B) sigma = 90.7), so two per batch double the canaries at no cost; more per batch would
drown the low-noise twin (its noise std 0.42) in the other canaries' +-1 (at 20 per batch it certified only
0.59 < 1).  The claims have delta > 0, so the runner reads the run with the f-DP analysis of the (eps, delta)
curve (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run", ICML 2025, Alg. 3),
which has no 2 m delta term (Steinke, Nasr, Jagielski, NeurIPS 2023, Thm 3.1 has one).  One run takes
15-45 s (the batches are sequential), so these entries are not in the quick suite.  Twin: the authors'
simulation sigma at eps = 10 (about 200 times less noise than the theorem's sigma at eps = 1) against the
claim eps = 1.
"""

from __future__ import annotations

import functools

from dpaudit.algorithms.linear.canaries import one_run_target
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.audits.build import lazy_claims
from dpaudit.entries import Claim, NeighbourPair, OneRunEntry, PinNote
from dpaudit.registry import AUDITS

__all__ = ["ENTRIES"]

DIM, ARMS, BATCH = 5, 100, 20
HORIZON = 1_000_000
CANARIES = 2 * HORIZON // BATCH  # two per batch (module docstring)
EPS, DELTA = 1.0, 1e-6
EXCLUDED_REWARD = -1.0  # an excluded canary's reward for every action: |y| <= 1 (Chowdhury & Zhou 2022, Assumption 3.1)
# One pair fixed in advance, "in" for the top m/4 scores and "out" for the bottom m/4: for Gaussian scores
# with shift mu << 1 the excess of correct guesses over k/2, in standard deviations, is about
# sqrt(k) mu E[z | |z| > z_q] / 2, largest near k = m/2; one pair pays no Bonferroni split.
GUESSES = ((CANARIES // 4, CANARIES // 4),)

_SRC = "Chowdhury & Zhou, Shuffle Private Linear Contextual Bandits (ICML 2022)"
_NOTE = PinNote(
    "both",
    "the released batch sum carries each canary (reward 1 or -1) under Gaussian noise of std sqrt(B) σ "
    "(σ = 20.3, B = 20): a shift of 2 against std 90.7, about 0.022-GDP per canary (ε ≈ 0.08 at δ = 1e-6), "
    "far below the sound claim ε = 0.49 (a bound for the shuffled messages, of which the sum is a "
    "post-processing); a guess on the top or bottom quarter of the scores is right with probability about "
    "0.507, so 5·10^4 guesses on 10^5 canaries certify ε ≈ 0.01 (f-DP analysis: Mahloujifar, Melis, Chaudhuri, "
    "ICML 2025; measured 0.0088, 0.0100, 0.0094 at suite seeds 0-2; at the --all suite's Bonferroni level "
    "near 1e-3 about 4 runs in 10 certify more than 0); every user a canary (20 per batch) certified 0.019-0.026 "
    "but left the twin uncaught; the many-run batch-sum audit pins the same release (in μ)",
)
_OBS = "each canary's batch release u~ (analyzer sum of φ y + noise) projected on her chosen feature vector"


def _entry(name: str, algo: LinUCBSDPAmp, description: str, claims, **kw) -> OneRunEntry:
    return OneRunEntry(
        name=name,
        algorithm=algo.name,
        description=description,
        target=functools.partial(
            one_run_target, algo, HORIZON, CANARIES, dim=DIM, n_arms=ARMS, excluded_reward=EXCLUDED_REWARD
        ),
        pairs=(
            NeighbourPair(
                "reward-only",
                None,
                None,
                f"{CANARIES} canaries, two per batch, each included by a fair coin: a canary user's reward is 1 "
                f"for every action when included, {EXCLUDED_REWARD:g} when not (|y| <= 1); every other reward "
                f"is 0; fixed public features (d = {DIM}, K = {ARMS}); T = {HORIZON}, B = {BATCH}",
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
