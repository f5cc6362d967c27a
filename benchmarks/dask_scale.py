"""An audit at 10^8 runs per side on a local Dask cluster of worker processes (not part of the test suite).

    python -m benchmarks run dask_scale [--samples 100000000] [--workers 2] [--json]

The target is a scalar Laplace count (epsilon = 1).  The same audit runs twice, each in a fresh process:
serially, and with `executor=` a `distributed.Client` of a `LocalCluster` with `--workers` processes of one
thread each.  Printed per run: the wall time, the peak resident memory of the process that calls `audit`
and of each worker (`ru_maxrss`), and epsilon_lower; then whether the two results are identical (their JSON,
bit for bit).  A worker draws and counts one chunk of 250,000 runs per side at a time and keeps nothing, so
its peak does not grow with the runs; the calling process keeps the selection split (10% of the runs).
About a minute at the defaults on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
import dpaudit

n, workers = int(sys.argv[1]), int(sys.argv[2])

def target(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

options = dict(claim_epsilon=1.0, samples=n, seed=0, float_check="off", chunk_size=250_000)
if workers == 0:
    t0 = time.perf_counter()
    r = dpaudit.audit(target, 0.0, 1.0, executor="serial", **options)
    print(json.dumps({"seconds": time.perf_counter() - t0, "caller_mb": peak_mb(), "worker_mb": [],
                      "epsilon_lower": r.epsilon_lower, "result": r.to_json()}))
else:
    import cloudpickle, distributed
    cloudpickle.register_pickle_by_value(sys.modules["__main__"])
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
         distributed.Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(workers)
        t0 = time.perf_counter()
        r = dpaudit.audit(target, 0.0, 1.0, executor=client, **options)
        seconds = time.perf_counter() - t0
        worker_mb = sorted(client.run(peak_mb).values())
    print(json.dumps({"seconds": seconds, "caller_mb": peak_mb(), "worker_mb": worker_mb,
                      "epsilon_lower": r.epsilon_lower, "result": r.to_json()}))
"""


def _run(samples: int, workers: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(samples), str(workers)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    if args.samples < 1_000 or args.workers < 1:
        parser.error("--samples must be >= 1000 and --workers >= 1")
    serial = _run(args.samples, 0)
    cluster = _run(args.samples, args.workers)
    same = serial.pop("result") == cluster.pop("result")
    if args.json:
        print(json.dumps({"samples": args.samples, "serial": serial, "dask": cluster, "identical": same}))
        return 0
    print(f"scalar Laplace, {args.samples:,} runs per side")
    for name, row in (("serial", serial), (f"dask, {args.workers} worker processes", cluster)):
        workers = ", ".join(f"{mb:.0f}" for mb in row["worker_mb"]) or "-"
        print(
            f"{name:<26} {row['seconds']:7.1f} s   caller peak {row['caller_mb']:6.0f} MB   "
            f"worker peaks {workers} MB   eps_lower {row['epsilon_lower']:.4f}"
        )
    print(f"results identical (JSON, bit for bit): {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
