"""Every benchmark by name: the module whose `main(argv)` runs it and what it measures (`python -m benchmarks list`)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str
    module: str  # imported by `python -m benchmarks run NAME`; its `main(argv) -> int` runs the benchmark
    summary: str


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "accounting",
        "benchmarks.accounting",
        "dpaudit's accountants beside dp-accounting: epsilon and wall time (about a minute)",
    ),
    Benchmark(
        "audit",
        "benchmarks.audit",
        "speed and tightness of dpaudit.audit.audit; Clopper-Pearson bounds at large n; coverage",
    ),
    Benchmark(
        "authors_linear",
        "benchmarks.authors_code.run_linear",
        "Chowdhury & Zhou's (ICML 2022) public code, unchanged: one JSON line per run (needs --code)",
    ),
    Benchmark(
        "authors_mab",
        "benchmarks.authors_code.run_mab",
        "Chowdhury & Zhou's (ICLR 2023) public code, unchanged: one JSON line per run (needs --code)",
    ),
    Benchmark(
        "baseline_rule", "benchmarks.baseline_rule", "false-flag rate of `dpaudit audit --baseline` on unchanged code"
    ),
    Benchmark(
        "dask_scale",
        "benchmarks.dask_scale",
        "an audit at 10^8 runs per side on a local Dask cluster: wall time, caller and worker peak memory, identity",
    ),
    Benchmark(
        "extension_policy",
        "benchmarks.extension_policy",
        "what the selection extension is worth, by how well the pilot resolved its event",
    ),
    Benchmark(
        "libraries",
        "benchmarks.libraries",
        "each libraries-catalog primitive beside its numpy twin: bounds, wall time, ratio (skips missing ones)",
    ),
    Benchmark(
        "mechanisms", "benchmarks.mechanisms", "samples per second of every dpaudit sampler beside numpy's Laplace"
    ),
    Benchmark(
        "mechanisms_protocols",
        "benchmarks.mechanisms_protocols",
        "throughput of the shuffle protocols and the binary tree",
    ),
    Benchmark(
        "neighbour_search",
        "benchmarks.neighbour_search",
        "neighbour search (audit_pairs over StatDP's patterns) against the peers' fixed pair",
    ),
    Benchmark(
        "one_run", "benchmarks.one_run", "speed and bounds of the one-run auditor on a per-canary Laplace mechanism"
    ),
    Benchmark(
        "one_run_analyses",
        "benchmarks.one_run_analyses",
        "each one-run catalog entry: its three analyses on one run beside the many-run bound of the same algorithm",
    ),
    Benchmark(
        "one_run_bandits",
        "benchmarks.one_run_bandits",
        "one-run audits of the bandits and their broken twins at the deployment horizon",
    ),
    Benchmark(
        "one_run_canaries",
        "benchmarks.one_run_canaries",
        "one-run audits of the bandits: earlier sizes, one canary per release, guesses fixed from the claim",
    ),
    Benchmark(
        "one_run_fdp",
        "benchmarks.one_run_fdp",
        "one-run audits of Gaussian canaries: the epsilon and the f-DP analyses on the same runs",
    ),
    Benchmark(
        "one_run_fdp_paper",
        "benchmarks.one_run_fdp_paper",
        "Mahloujifar, Melis, Chaudhuri (ICML 2025) Table 1: their Gaussian audits with both one-run analyses",
    ),
    Benchmark(
        "one_run_order",
        "benchmarks.one_run_order",
        "one-run audits of Gaussian, Laplace and randomized-response canaries: the three analyses on the same runs",
    ),
    Benchmark(
        "one_run_order_paper",
        "benchmarks.one_run_order_paper",
        "Xiang et al. (arXiv 2509.08704) headline table: their 60 audit outcomes with dpaudit's one-run analyses",
    ),
    Benchmark(
        "peers",
        "benchmarks.peers.table",
        "the auditor on the StatDP / DP-Sniper benchmark: 22 rows, exact loss, ceiling, peers' bounds",
    ),
    Benchmark(
        "pins",
        "benchmarks.pins",
        "interval table of one or two `dpaudit audit` reports; violations the second one lost",
    ),
    Benchmark(
        "power_coverage", "benchmarks.power_coverage", "coverage of each score family and audit option over 1000 audits"
    ),
    Benchmark(
        "reproduce_glm",
        "benchmarks.reproduce_glm",
        "Sarmasarkar's probit regret table and Li, Shi, Simchi-Levi's error-regret trade-off",
    ),
    Benchmark(
        "reproduce_linear",
        "benchmarks.reproduce_linear",
        "Chowdhury & Zhou (ICML 2022) Figs. 1-2 cell by cell beside the authors' code",
    ),
    Benchmark(
        "reproduce_mab",
        "benchmarks.reproduce_mab",
        "Hu-Huang-Mehta and Chowdhury & Zhou (ICLR 2023) bandit experiments cell by cell",
    ),
    Benchmark(
        "selection_draws",
        "benchmarks.selection_draws",
        "expected bound of the events the auditor chooses, over independent selection splits",
    ),
    Benchmark(
        "selection_gap",
        "benchmarks.selection_gap",
        "where the auditor loses power on a peers row: the score family or its threshold",
    ),
    Benchmark(
        "sequential_peers",
        "benchmarks.sequential_peers",
        "runs per side to a rejection: anytime-valid audits beside Kutta et al.'s sequential f-DP auditor",
    ),
    Benchmark(
        "simulate", "benchmarks.simulate", "simulation speed of the multi-armed algorithms against per-round loops"
    ),
    Benchmark(
        "simulate_contextual",
        "benchmarks.simulate_contextual",
        "wall time of LinUCB-SDP-Amp (d = 10, T = 10^5, 50 runs) and where it goes",
    ),
    Benchmark(
        "simulate_glm",
        "benchmarks.simulate_glm",
        "wall time of ShuffleGLM and Private-GLM at the size of Sarmasarkar's experiments",
    ),
    Benchmark(
        "streaming",
        "benchmarks.streaming",
        "peak memory and wall time of an audit at 10^6-10^8 runs per side against drawing the runs alone",
    ),
)


def find(name: str) -> Benchmark | None:
    """The benchmark called `name`, or None."""
    return next((b for b in BENCHMARKS if b.name == name), None)
