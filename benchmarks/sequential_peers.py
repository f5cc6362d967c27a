"""Runs per side to a rejection: dpaudit's anytime-valid audits beside the sequential f-DP auditor APT.

    python -m benchmarks run sequential_peers [--repeats 100] [--first-stage 400] [--max-runs 51000] [--out PATH]

Kutta, Dunsche, Wei, Zikas, "Sequential Auditing for f-Differential Privacy" (arXiv 2602.06518, 2026) audit a
claimed trade-off curve with APT (their Alg. 1): after a burn-in of M = 50 pairs it draws one run per side at a
time, re-estimates the error pair of a likelihood-ratio classifier every 10 pairs and rejects when a
Brownian-motion boundary (level gamma, valid as the burn-in grows: their Thm 3.1) puts the pair below the claim.
Their n counts runs per side (X_k from D and Y_k from D' at step k; 2n runs in all), burn-in included.

Part A is their headline setting (Sec. 4, Fig. 5): M(x) = sum(x) + N(0, 1) on D = (0, ..., 0), D' = (1, 0, ..., 0)
(r = 10), so the true curve is mu = 1 Gaussian DP; the claims are mu-GDP with mu = 0.5 (large violation), 0.8
(small violation) and 1 (no violation, the twin that must not be rejected); gamma = 0.05; kmax = 10,000 pairs;
1,000 repetitions.  Fig. 5 only plots the rejection rate against n; the numbers beside it come from the authors'
runs behind the figure (github.com/martindunsche/sequential_fdp_auditing, experiments_log/results/
gaussian_parametric/stops_burn50_*.csv, the whitebox row, and gaussian/ for the blackbox KDE row; a stop during
the burn-in counts as n = 50, as their Table 1 counts it).

dpaudit audits the same claim as `claim=GaussianDpEvent(1 / mu)` (its curve tested at 64 epsilons with half of
1 - confidence, and epsilon(claim_delta) with the other half; claim_delta = 0.01 so that the first stage may be
small: at 1e-5 the mu = 1 claim needs >= 514 runs per side in a stage), float_check off (APT has no
floating-point test), confidence 0.95.  Three rules on the same seeds:

- time-boxed (`audit(..., time_budget=...)`, `dpaudit.audit.anytime`): stage k has first-stage * 2^k fresh runs
  per side at level 0.05 / ((k + 1)(k + 2)) and the audit stops at the first stage whose verdict is a violation;
  here the clock is replaced by a run cap (no stage once the runs drawn would exceed --max-runs per side), so the
  count does not depend on the machine.  Runs = all stages' runs per side up to the stop.
- sequential (`dpaudit.audit.sequential.audit_sequential`) with stages first-stage * 2^k under the same cap,
  claim_epsilon = epsilon(claim_delta) of the claim; both rules stop and decide on a stage's verdict, which
  counts the claimed-curve test.
- what-if (not in dpaudit): the time-boxed stages, rejecting when the epsilon test fires or when the lead
  Gaussian-DP event's probit Clopper-Pearson bound mu_lower (at the level the curve test has, a_k / 2, shared by
  2 directions x 2 proportions) exceeds the claimed mu: Phi^-1(P[E]) - Phi^-1(Q[E]) <= mu for every event E
  under mu-GDP (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Def. 2.6 with alpha = Q[E]),
  so this tests one selected event where the curve test pays Bonferroni over every scanned threshold.

Part B is their Table 1 (Sec. 4.3, the mechanisms of the MMD auditor they compare with): NonDPGaussian1 and
NonDPLaplace1, mean of D = (0) against D' = (0, 1) plus noise of scale 2 / (n eps) (n = 1 and 2: the code behind
the table; the text's Laplace has a ceiling, 2 / ceil(n eps)), claim (eps, 1e-5)-DP, eps = 0.01 and 0.1; the
table gives mean +- sd of n over 1,000 runs.  dpaudit: the time-boxed rule from 50 runs per side (their burn-in).
Part B has no twin: its mechanisms satisfy no (eps, 1e-5)-DP claim of that size (the noise scales differ).
About 5 minutes on one core at the defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import dp_accounting
import numpy as np

from benchmarks.tables import write_lines
from dpaudit.accounting.curves import gaussian_epsilon
from dpaudit.audit import anytime
from dpaudit.audit import options as audit_options
from dpaudit.audit.auditor import run_audit
from dpaudit.audit.bounds import probit_cp_lower, probit_cp_upper
from dpaudit.audit.result import AuditResult
from dpaudit.audit.sequential import audit_sequential

GAMMA = 0.05
KMAX = 10_000  # the paper's cap on n (pairs, i.e. runs per side) after the burn-in
CLAIM_DELTA = 0.01
TRUE_MU = 1.0

# Part A, from the authors' runs behind Fig. 5 (1,000 repetitions each): claimed mu -> rejections within kmax,
# then the 25th, 50th, 75th percentile of n over the rejecting runs, whitebox (gaussian_parametric/) and
# blackbox (gaussian/).
PAPER_WHITEBOX = {0.5: (1000, 110, 180, 270), 0.8: (1000, 800, 1350, 2022), 1.0: (5, None, None, None)}
PAPER_BLACKBOX = {0.5: (1000, 100, 160, 260), 0.8: (1000, 800, 1390, 1970), 1.0: (11, None, None, None)}

# Part B, their Table 1: (mechanism, eps) -> mean, sd of n over 1,000 runs (rejection rate 1 in every cell).
PAPER_TABLE1 = {
    ("NonDPGaussian1", 0.01): (59.09, 16.65),
    ("NonDPGaussian1", 0.1): (67.99, 27.10),
    ("NonDPLaplace1", 0.01): (86.46, 40.73),
    ("NonDPLaplace1", 0.1): (114.08, 70.03),
}


def gaussian_sum(x: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    """M(x) = sum(x) + N(0, 1): their Gaussian mechanism with sigma = 1."""
    return float(np.sum(x)) + rng.standard_normal(size)


def noisy_mean(noise: str, eps: float) -> Callable[[np.ndarray, np.random.Generator, int], np.ndarray]:
    """NonDPGaussian1 / NonDPLaplace1 as the authors' code runs them: mean(x) + noise of scale 2 / (n eps)."""

    def mechanism(x: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        n = len(x)
        scale = 2.0 / (n * eps)
        draw = rng.standard_normal(size) if noise == "gauss" else rng.laplace(0.0, 1.0, size)
        return float(np.mean(x)) + scale * draw

    return mechanism


def stage_options(mu: float | None, eps: float | None, first: int, seed: int) -> audit_options.AuditOptions:
    """The options of a time-boxed audit (the budget is unused: `stages` replaces the clock by a run cap)."""
    if mu is not None:
        claim: dict[str, Any] = {"claim": dp_accounting.GaussianDpEvent(1.0 / mu), "claim_delta": CLAIM_DELTA}
    else:
        claim = {"claim_epsilon": eps, "claim_delta": 1e-5}
    return audit_options.AuditOptions.create(
        samples=first, confidence=1.0 - GAMMA, seed=seed, float_check="off", time_budget=1.0, **claim
    )


def stages(target: Callable, d0: Any, d1: Any, o: audit_options.AuditOptions, cap: int, stop: Callable) -> list:
    """The stages `anytime.timeboxed_audit` runs (same options, levels and seed streams), until `stop(stage, k)`
    or until the next stage would take the runs drawn past `cap` per side."""
    done: list[AuditResult] = []
    k = 0
    while sum(r.samples for r in done) + o.samples * 2**k <= cap:
        level = anytime.stage_level(GAMMA, k)
        o_k = dataclasses.replace(o, samples=o.samples * 2**k, confidence=1.0 - level, time_budget=None)
        done.append(run_audit(target, d0, d1, o_k, (anytime.STAGE_STREAM, k)))
        if stop(done[-1], k):
            break
        k += 1
    return done


def mu_test(r: AuditResult, level: float) -> float:
    """The larger direction's probit Clopper-Pearson lower bound on mu of its lead GDP event, each proportion at
    `level` / 4 (2 directions x 2 proportions share `level`)."""
    return max(
        float(
            probit_cp_lower(d.mu_count_first, d.nobs, level / 4) - probit_cp_upper(d.mu_count_second, d.nobs, level / 4)
        )
        for d in r.directions
    )


def first_stop(done: list[AuditResult], fired: Callable[[AuditResult, int], bool]) -> int | None:
    """Runs per side drawn up to the first stage that fires, or None."""
    for k, r in enumerate(done):
        if fired(r, k):
            return sum(s.samples for s in done[: k + 1])
    return None


def part_a(mu: float, repeats: int, first: int, cap: int) -> dict[str, list[int | None]]:
    d0, d1 = np.zeros(10), np.zeros(10)
    d1[0] = 1.0
    claim_eps = gaussian_epsilon(mu, CLAIM_DELTA)

    def whatif(r: AuditResult, k: int) -> bool:
        return r.epsilon_lower > r.claim_epsilon or mu_test(r, anytime.stage_level(GAMMA, k) / 2) > mu

    out: dict[str, list[int | None]] = {"timeboxed": [], "whatif": [], "sequential": []}
    for seed in range(repeats):
        o = stage_options(mu, None, first, seed)
        done = stages(gaussian_sum, d0, d1, o, cap, lambda r, k: r.verdict == "violation" and whatif(r, k))
        stop = next((k for k, r in enumerate(done) if r.verdict == "violation"), None)
        out["timeboxed"].append(None if stop is None else sum(r.samples for r in done[: stop + 1]))
        out["whatif"].append(first_stop(done, whatif))
        if seed == 0:  # the stage loop is the time-boxed audit's: check it once per row
            box = anytime.timeboxed_audit(
                lambda st, key: run_audit(gaussian_sum, d0, d1, st, key),
                o,
                keep_going=lambda s, _: sum(x.samples for x in s) + 2 * s[-1].samples <= cap,
            )
            assert box.time_box is not None and (box.time_box.stopped == "violation") == (stop is not None)
            assert stop is None or box.time_box.samples_drawn == out["timeboxed"][0], (box.time_box, stop)
            assert box.verdict == ("consistent" if stop is None else "violation")
        sizes: list[int] = []
        while sum(sizes) + first * 2 ** len(sizes) <= cap:
            sizes.append(first * 2 ** len(sizes))
        seq = audit_sequential(
            gaussian_sum, d0, d1, claim_eps, stages=sizes, confidence=1.0 - GAMMA, seed=seed, float_check="off",
            claim=dp_accounting.GaussianDpEvent(1.0 / mu), claim_delta=CLAIM_DELTA,
        )  # fmt: skip
        out["sequential"].append(seq.samples_used if seq.verdict == "violation" else None)
    return out


def part_b(noise: str, eps: float, repeats: int, cap: int) -> list[int | None]:
    target = noisy_mean(noise, eps)
    runs: list[int | None] = []
    for seed in range(repeats):
        o = stage_options(None, eps, 50, seed)
        done = stages(target, np.zeros(1), np.array([0.0, 1.0]), o, cap, lambda r, k: r.verdict == "violation")
        runs.append(first_stop(done, lambda r, k: r.verdict == "violation"))
    return runs


def quartiles(values: list[int]) -> tuple[float, float, float]:
    q = np.percentile(values, [25, 50, 75]) if values else [float("nan")] * 3
    return float(q[0]), float(q[1]), float(q[2])


def cell(runs: list[int | None], within: int) -> str:
    """'rejected/total (within `within`) | q25 / median / q75 of the rejecting runs'."""
    hit = [n for n in runs if n is not None]
    inside = sum(n <= within for n in hit)
    q25, q50, q75 = quartiles(hit)
    spread = "-" if not hit else f"{q25:.0f} / {q50:.0f} / {q75:.0f}"
    return f"{f'{len(hit)}/{len(runs)} ({inside} <= {within})':<26} | {spread:>20}"


def paper_cell(row: tuple[int, int | None, int | None, int | None]) -> str:
    rejected, q25, q50, q75 = row
    spread = "-" if q50 is None else f"{q25} / {q50} / {q75}"
    return f"{f'{rejected}/1000 (all <= {KMAX + 50})':<26} | {spread:>20}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100, help="seeds per row (default 100)")
    parser.add_argument("--first-stage", type=int, default=400, help="runs per side of stage 0 (default 400)")
    parser.add_argument("--max-runs", type=int, default=51_000, help="cap on the runs per side (default 51000)")
    parser.add_argument("--out", default=None, help="also write the tables to this file")
    args = parser.parse_args(argv)
    if args.repeats < 2:
        parser.error("--repeats must be >= 2")
    if args.first_stage < 10 or args.max_runs < args.first_stage:
        parser.error("--first-stage must be >= 10 and --max-runs >= --first-stage")
    start = time.perf_counter()
    lines: list[str] = []

    def emit(*new: str) -> None:
        lines.extend(new)
        print("\n".join(new), flush=True)

    flags = [
        f"--{name} {value}"
        for name, value, default in (
            ("repeats", args.repeats, 100),
            ("first-stage", args.first_stage, 400),
            ("max-runs", args.max_runs, 51_000),
        )
        if value != default
    ]
    command = " ".join(["python -m benchmarks run sequential_peers", *flags])
    emit(
        "# Kutta, Dunsche, Wei, Zikas, 'Sequential Auditing for f-Differential Privacy' (arXiv 2602.06518, 2026):",
        "# runs per side to a rejection at gamma = 0.05, their APT beside dpaudit's anytime-valid audits.",
        f"# Measured with `{command} --out benchmarks/figures/sequential_peers.txt`.",
        "#",
        "# Part A (their Sec. 4, Fig. 5): sum(x) + N(0, 1) on (0,...,0) vs (1,0,...,0): true mu = 1 GDP; claim mu-GDP.",
        "# Paper: 1,000 runs, rejections within kmax = 10,000 pairs | q25 / median / q75 of n (runs per side) over",
        "# the rejecting runs.  dpaudit: claim=GaussianDpEvent(1/mu), claim_delta = 0.01, stage 0 = "
        f"{args.first_stage} runs per side,",
        f"# cap {args.max_runs} runs per side; rejections (of them within 10,000 runs per side) | q25 / median / q75",
        "# of the runs per side drawn in all stages up to the rejection.  Twin (mu = 1): every rejection is false.",
    )
    part_a_rows = {}
    for mu in (0.5, 0.8, 1.0):
        part_a_rows[mu] = part_a(mu, args.repeats, args.first_stage, args.max_runs)
        print(f"# mu {mu}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    header = f"{'claim':<9} {'rule':<32} {'rejected (within)':<26} | {'q25 / median / q75':>20}"
    emit(header)
    for mu, runs in part_a_rows.items():
        emit(
            f"mu = {mu:<4} {'paper APT, whitebox':<32} {paper_cell(PAPER_WHITEBOX[mu])}",
            f"{'':<9} {'paper APT, blackbox (KDE)':<32} {paper_cell(PAPER_BLACKBOX[mu])}",
            f"{'':<9} {'dpaudit time-boxed':<32} {cell(runs['timeboxed'], KMAX)}",
            f"{'':<9} {'dpaudit audit_sequential':<32} {cell(runs['sequential'], KMAX)}",
            f"{'':<9} {'what-if: mu test of lead event':<32} {cell(runs['whatif'], KMAX)}",
        )
    emit(
        "#",
        "# Part B (their Table 1, Sec. 4.3): mean(x) + noise of scale 2/(n eps) on (0) vs (0, 1), claim (eps, 1e-5)-DP.",
        "# Paper: mean +- sd of n over 1,000 runs (all rejected).  dpaudit time-boxed from 50 runs per side:",
        "# rejections, mean +- sd and median of the runs per side drawn up to the rejection.",
        f"{'mechanism':<15} {'eps':>5} | {'paper APT':>15} | dpaudit time-boxed",
    )
    for (name, eps), (mean, sd) in PAPER_TABLE1.items():
        found = part_b("gauss" if "Gaussian" in name else "laplace", eps, args.repeats, args.max_runs)
        hit = [n for n in found if n is not None]
        ours = (
            f"{len(hit)}/{len(found)}, {statistics.mean(hit):.1f} +- {statistics.stdev(hit):.1f}, "
            f"median {statistics.median(hit):.0f}"
            if len(hit) > 1
            else f"{len(hit)}/{len(found)}"
        )
        emit(f"{name:<15} {eps:>5} | {mean:>6.2f} +- {sd:<6.2f} | {ours}")
    emit(f"# {time.perf_counter() - start:.0f} s in all")
    if args.out:
        write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
