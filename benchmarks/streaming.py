"""Memory and throughput of `dpaudit.audit` at 10^6 to 10^8 runs per side (not part of the test suite).

    python -m benchmarks run streaming [--sizes 1000000 10000000 100000000] [--width 8]
                                       [--vector-sizes 1000000 10000000] [--json]

Each audit runs in a fresh process, so its peak resident memory (`ru_maxrss`) is its own. Beside it, the
same process draws the same runs from the target alone, in the same chunks, and only sums them.
  - memory: peak RSS of the audit, and of the draw alone.
  - throughput: the audit's wall time over the draw's (each in a fresh process, one after the other; the
    audit's imports and set-up are warmed by a small audit first).
Targets: a scalar Laplace count (epsilon = 1), and a vector of `--width` Laplace releases of one value.
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

n, width, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def target(x, rng, size):
    if width == 1:
        return x + rng.laplace(0.0, 1.0, size)
    return x + rng.laplace(0.0, float(width), (size, width))

chunk = 250_000
if mode == "audit":  # imports and first-call set-up out of the timing (one small audit)
    dpaudit.audit(target, 0.0, 1.0, claim_epsilon=1.0, samples=10_000, seed=1, float_check="off", executor="serial")
t0 = time.perf_counter()
if mode == "audit":
    r = dpaudit.audit(target, 0.0, 1.0, claim_epsilon=1.0, samples=n, seed=0, float_check="off",
                      executor="serial", chunk_size=chunk)
    extra = {"epsilon_lower": r.epsilon_lower, "selection_samples": r.selection_samples}
else:
    seeds = np.random.SeedSequence(0).spawn(2 * (-(-n // chunk)))
    total = 0.0
    for i, s in enumerate(seeds):
        size = min(chunk, n - (i // 2) * chunk)
        total += float(np.sum(target(float(i % 2), np.random.default_rng(s), size)))
    extra = {}
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))
"""


def _run(n: int, width: int, mode: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(width), mode], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks run streaming", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7, 10**8])
    parser.add_argument("--width", type=int, default=8, help="the vector target's width (default 8)")
    parser.add_argument("--vector-sizes", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for width, sizes in ((1, args.sizes), (args.width, args.vector_sizes)):
        for n in sizes:
            start = time.perf_counter()
            audit = _run(n, width, "audit")
            draw = _run(n, width, "draw")
            rows.append(
                {
                    "target": "scalar" if width == 1 else f"vector({width})",
                    "runs_per_side": n,
                    "audit_peak_mb": round(audit["peak_mb"], 1),
                    "draw_peak_mb": round(draw["peak_mb"], 1),
                    "audit_s": round(audit["seconds"], 2),
                    "draw_s": round(draw["seconds"], 2),
                    "ratio": round(audit["seconds"] / draw["seconds"], 3),
                    "epsilon_lower": round(audit["epsilon_lower"], 4),
                    "selection_samples": audit["selection_samples"],
                    "wall_s": round(time.perf_counter() - start, 1),
                }
            )
            row = rows[-1]
            if not args.json:
                print(
                    f"{row['target']:<10} n={n:>11,d}  audit {row['audit_peak_mb']:>8.1f} MB {row['audit_s']:>8.2f} s"
                    f"  draw {row['draw_peak_mb']:>7.1f} MB {row['draw_s']:>8.2f} s  ratio {row['ratio']:.2f}"
                    f"  eps_lower {row['epsilon_lower']:.4f}  selection {row['selection_samples']:,d}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
