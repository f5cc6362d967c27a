"""One-run audits of bandits at their deployment horizon (not part of the test suite).

    python -m benchmarks run one_run_bandits [--horizon 1000000] [--linear] [--json]

Each row: one run of the algorithm at T = `--horizon` with m canaries (`one_run_target` of
`dpaudit.algorithms.mab.canaries` / `dpaudit.algorithms.linear.canaries`), audited by
`dpaudit.audit.one_run` at 95% (default guess grid, Bonferroni) against the claim eps = 1 (delta = 0,
or 1e-6 for LinUCB-SDP-Amp).  Columns: seconds to place the canaries (a dry run) and to audit
(one run + the bound), epsilon_lower, verdict, guesses and correct guesses.  Correct algorithms
must come out "consistent", their twins (shared noise, inverted Pólya, halved noise, low noise)
"violation".  The 10^5-canary Anytime-Lazy-UCB row (10^4 arms) takes about 2 minutes.  `--linear` adds LinUCB-SDP-Amp (B = 20: 5 10^4 sequential batches, about 45 s per
run at T = 10^6).  Method: Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run",
NeurIPS 2023, Thm 3.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from dpaudit.algorithms.linear import canaries as linear_canaries
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp
from dpaudit.algorithms.mab import canaries as mab_canaries
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.audit import one_run


def cases(linear: bool) -> list[tuple[str, object, int, int, float]]:
    """(label, algorithm, arms, canaries, claim delta)."""
    rows = [
        ("dp-se", DPSE(1.0, 0.5), 700, 1_000, 0.0),
        ("dp-se shared noise", DPSE(1.0, 0.5, noise="shared"), 700, 1_000, 0.0),
        ("dist-dp-se", BatchSE("dist-dp", 1.0), 200, 2_000, 0.0),
        ("dist-dp-se", BatchSE("dist-dp", 1.0), 1_000, 10_000, 0.0),
        ("dist-dp-se inverted Pólya", BatchSE("dist-dp", 1.0, polya="inverted"), 1_000, 10_000, 0.0),
        ("anytime-lazy-ucb", AnytimeLazyUCB(1.0), 100, 1_000, 0.0),
        ("anytime-lazy-ucb", AnytimeLazyUCB(1.0), 1_000, 10_000, 0.0),
        ("anytime-lazy-ucb", AnytimeLazyUCB(1.0), 10_000, 100_000, 0.0),
        ("anytime-lazy-ucb halved noise", AnytimeLazyUCB(2.0), 1_000, 10_000, 0.0),
    ]
    if linear:
        rows += [
            ("linucb-sdp-amp", LinUCBSDPAmp(batch=20, epsilon=1.0, delta=1e-6), 100, 10_000, 1e-6),
            (
                "linucb-sdp-amp low noise",
                LinUCBSDPAmp(batch=20, epsilon=10.0, delta=1e-6, noise="code"),
                100,
                10_000,
                1e-6,
            ),
        ]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--linear", action="store_true", help="add LinUCB-SDP-Amp (about 45 s per run at T = 1e6)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    if args.horizon < 1:
        parser.error(f"--horizon must be >= 1, got {args.horizon}")
    rows = []
    for label, algo, arms, m, delta in cases(args.linear):
        start = time.perf_counter()
        if isinstance(algo, LinUCBSDPAmp):
            target = linear_canaries.one_run_target(algo, args.horizon, m, n_arms=arms)
        else:
            target = mab_canaries.one_run_target(algo, args.horizon, m, n_arms=arms)
        placed = time.perf_counter()
        res = one_run(*target, claim_epsilon=1.0, claim_delta=delta, seed=0)
        rows.append(
            dict(
                algorithm=label,
                arms=arms,
                canaries=m,
                claim_delta=delta,
                place_seconds=round(placed - start, 2),
                audit_seconds=round(time.perf_counter() - placed, 2),
                epsilon_lower=res.epsilon_lower,
                verdict=res.verdict,
                guesses=res.guesses,
                correct=res.correct,
            )
        )
    if args.json:
        print(json.dumps(dict(horizon=args.horizon, claim_epsilon=1.0, confidence=0.95, runs=rows), indent=2))
        return 0
    print(f"one run at T = {args.horizon}, claim epsilon 1, 95% confidence (default guess grid)")
    print(
        f"{'algorithm':<30} {'arms':>6} {'canaries':>8} {'place s':>7} {'audit s':>7} {'eps_lower':>9} "
        f"{'verdict':>10} {'guesses':>7} {'correct':>7}"
    )
    for r in rows:
        print(
            f"{r['algorithm']:<30} {r['arms']:6d} {r['canaries']:8d} {r['place_seconds']:7.2f} "
            f"{r['audit_seconds']:7.2f} {r['epsilon_lower']:9.3f} {r['verdict']:>10} {r['guesses']:7d} "
            f"{r['correct']:7d}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
