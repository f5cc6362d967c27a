"""Memory and throughput of `dpaudit.audit` at 10^6 to 10^8 runs per side (not part of the test suite).

    python -m benchmarks run streaming [--sizes 1000000 10000000 100000000] [--width 8]
                                       [--vector-sizes 1000000 10000000]
                                       [--entries dp-se.epoch-sum linucb-sdp-amp.batch-sum]
                                       [--entry-sizes 10000000] [--json]

Each audit runs in a fresh process, so its peak resident memory (`ru_maxrss`) is its own. Beside it, the
same process draws the same runs from the target alone, in the same chunks, and only sums them.
  - memory: peak RSS of the audit, and of the draw alone.
  - throughput: the audit's wall time over the draw's (each in a fresh process, one after the other; the
    audit's imports and set-up are warmed by a small audit first).
  - the auditor's own work per run, (audit - draw) / (2 n), and the draw's cost per run: the ratio is at most
    1.2 for any target with the same outputs whose run costs at least five times the auditor's work (the
    auditor's work depends on the outputs, not on what drawing them costs).
Targets: a scalar Laplace count (epsilon = 1), a vector of `--width` Laplace releases of one value, and the
targets of catalog entries (`--entries`, their first neighbouring pair and audit options, at `--entry-sizes`).
The Laplace targets cost tens of nanoseconds per run, so the auditor's own work (the selection split's sorts,
the events' counts) shows in full; a bandit release simulated by a catalog entry costs microseconds, and the
ratio approaches 1.
Runs beyond the selection split are drawn chunk by chunk, counted, and dropped, so memory above the draw's
is the selection split (10% of the runs, plus 20% when its pilot is unresolved).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
import dpaudit

n, kind, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
options = {}
if kind.startswith("entry:"):
    import dpaudit.audits  # registers the catalog
    from dpaudit.registry import AUDITS

    entry = AUDITS.get(kind[6:])
    target, d0, d1 = entry.target(), entry.pairs[0].d0, entry.pairs[0].d1
    options = dict(entry.audit_options)
else:
    width = int(kind.split(":")[1])
    d0, d1 = 0.0, 1.0

    def target(x, rng, size):
        if width == 1:
            return x + rng.laplace(0.0, 1.0, size)
        return x + rng.laplace(0.0, float(width), (size, width))

chunk = 250_000
kw = dict(claim_epsilon=1.0, float_check="off", executor="serial", **options)
if mode == "audit":  # imports and first-call set-up out of the timing (one small audit)
    dpaudit.audit(target, d0, d1, samples=10_000, seed=1, **kw)
t0 = time.perf_counter()
if mode == "audit":
    r = dpaudit.audit(target, d0, d1, samples=n, seed=0, chunk_size=chunk, **kw)
    extra = {"epsilon_lower": r.epsilon_lower, "selection_samples": r.selection_samples}
else:
    seeds = np.random.SeedSequence(0).spawn(2 * (-(-n // chunk)))
    total = 0.0
    for i, s in enumerate(seeds):
        size = min(chunk, n - (i // 2) * chunk)
        total += float(np.sum(np.asarray(target(d1 if i % 2 else d0, np.random.default_rng(s), size), dtype=float)))
    extra = {}
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))
"""


def _run(n: int, kind: str, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), kind, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks run streaming", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10**6, 10**7, 10**8])
    parser.add_argument("--width", type=int, default=8, help="the vector target's width (default 8)")
    parser.add_argument("--vector-sizes", type=int, nargs="*", default=[10**6, 10**7])
    parser.add_argument("--entries", nargs="*", default=["dp-se.epoch-sum", "linucb-sdp-amp.batch-sum"])
    parser.add_argument("--entry-sizes", type=int, nargs="+", default=[10**7])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    plan = [("laplace:1", "scalar", args.sizes), (f"laplace:{args.width}", f"vector({args.width})", args.vector_sizes)]
    plan += [(f"entry:{name}", name, args.entry_sizes) for name in args.entries]
    for kind, label, sizes in plan:
        for n in sizes:
            start = time.perf_counter()
            audit = _run(n, kind, "audit")
            draw = _run(n, kind, "draw")
            rows.append(
                {
                    "target": label,
                    "runs_per_side": n,
                    "audit_peak_mb": round(audit["peak_mb"], 1),
                    "draw_peak_mb": round(draw["peak_mb"], 1),
                    "audit_s": round(audit["seconds"], 2),
                    "draw_s": round(draw["seconds"], 2),
                    "ratio": round(audit["seconds"] / draw["seconds"], 3),
                    "auditor_ns_per_run": round((audit["seconds"] - draw["seconds"]) / (2 * n) * 1e9, 1),
                    "draw_ns_per_run": round(draw["seconds"] / (2 * n) * 1e9, 1),
                    "epsilon_lower": round(audit["epsilon_lower"], 4),
                    "selection_samples": audit["selection_samples"],
                    "wall_s": round(time.perf_counter() - start, 1),
                }
            )
            row = rows[-1]
            if not args.json:
                print(
                    f"{row['target']:<25} n={n:>11,d}  audit {row['audit_peak_mb']:>8.1f} MB {row['audit_s']:>8.2f} s"
                    f"  draw {row['draw_peak_mb']:>7.1f} MB {row['draw_s']:>8.2f} s  ratio {row['ratio']:.2f}"
                    f"  per run: auditor {row['auditor_ns_per_run']:>6.1f} ns, draw {row['draw_ns_per_run']:>7.1f} ns"
                    f"  eps_lower {row['epsilon_lower']:.4f}  selection {row['selection_samples']:,d}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
