"""The catalog catches Anytime-Lazy-UCB's missing forgetting and Shuffle-SE's integer count, at reduced samples.

Fixed seeds. Recorded at full size: no-forgetting eps_lower 2.26 (claim 1), shuffle count 3.76 (claim 1);
at the sizes here each clears its claim by a wide margin, so a miss (lack of power) is far below 1%. The
twins run the correct mechanism on the same pair and must stay below the claim: the auditor's bound exceeds
a true claim with probability at most 5% (confidence 0.95), per claim.
"""

import dataclasses
import functools

from dpaudit.algorithms.mab.lazy_ucb import lazy_array_releases
from dpaudit.audits.build import Releases
from dpaudit.entry_runner import run_entry
from dpaudit.registry import AUDITS, load_plugins

load_plugins()


def _paper(rec):
    return next(c for c in rec["claims"] if c["label"] == "paper")


def test_no_forgetting_is_caught_and_the_forgetful_twin_is_not():
    entry = AUDITS.get("anytime-lazy-ucb.no-forgetting")
    rec = run_entry(entry, samples=40_000, confidence=0.95, seed=0, regret=False)
    assert rec["ok"] and _paper(rec)["verdict"] == "violation" and _paper(rec)["epsilon_lower"] > 1.3
    twin = dataclasses.replace(entry, target=functools.partial(Releases, lazy_array_releases, 1.0))
    claim = _paper(run_entry(twin, samples=40_000, confidence=0.95, seed=0, regret=False))
    assert claim["verdict"] == "consistent"


def test_shuffle_count_is_caught_and_the_decoded_sum_is_not():
    count = _paper(
        run_entry(AUDITS.get("shuffle-se.server-count"), samples=40_000, confidence=0.95, seed=0, regret=False)
    )
    assert count["verdict"] == "violation" and count["epsilon_lower"] > 2.0
    decoded = _paper(
        run_entry(AUDITS.get("shuffle-se.analyzer"), samples=40_000, confidence=0.95, seed=0, regret=False)
    )
    assert decoded["verdict"] == "consistent"
