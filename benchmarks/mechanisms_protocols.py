"""Throughput of the shuffle protocols and the tree (not part of the test suite).

    python -m benchmarks run mechanisms_protocols [--json]

1. Cheu et al. vector summation (`BitSumProtocol`): the binomial fast path against the per-message
   path (every bit materialised and shuffled), at sizes where the per-message path fits in memory,
   and the fast path alone at the papers' eq. 127 parameters (b ~ 10^11: per message impossible).
2. P_Amp (`GaussianShuffleProtocol`): fast path (sum + N(0, nσ²)) against per-message.
3. `BinaryTree` at T = 10^5: whole-stream release (`run`) and the streaming binary counter (`start`
   / `insert`) for scalars and symmetric matrices.
Figures are wall-clock seconds on this machine (best of `--repeat`); throughput in protocol
invocations (one invocation = one run's full sum) or leaves per second.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

import numpy as np

from dpaudit.algorithms.shuffle_claims import bit_sum_protocol
from dpaudit.mechanisms.shuffle import GaussianShuffleProtocol
from dpaudit.mechanisms.tree import BinaryTree
from dpaudit.mechanisms.vector_sum import BitSumProtocol


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def vector_sum_rows(repeat: int) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for n, d, g, b, runs in [(100, 5, 20, 200, 100), (1000, 5, 64, 100, 10)]:
        proto = BitSumProtocol(num_users=n, num_labels=d, g=g, b=b)
        vals = rng.uniform(-1, 1, (runs, n, d))
        fast = _best(lambda: proto.run(rng, vals), repeat)  # noqa: B023 (called within this iteration)
        slow = _best(lambda: proto.run(rng, vals, per_message=True), repeat)  # noqa: B023 (called within this iteration)
        rows.append(
            dict(
                protocol="vector_sum",
                n=n,
                labels=d,
                g=g,
                b=b,
                runs=runs,
                bits_per_run=n * d * proto.message_bits,
                fast_runs_per_s=runs / fast,
                per_message_runs_per_s=runs / slow,
                speedup=slow / fast,
            )
        )
    proto = bit_sum_protocol(1.0, 1e-3, 1000, 5)
    runs = 1000
    vals = rng.uniform(-1, 1, (runs, 1000, 5))
    fast = _best(lambda: proto.run(rng, vals), repeat)
    rows.append(
        dict(
            protocol="vector_sum (eq. 127 parameters)",
            n=1000,
            labels=5,
            g=proto.g,
            b=proto.b,
            runs=runs,
            bits_per_run=1000 * 5 * proto.message_bits,
            fast_runs_per_s=runs / fast,
            per_message_runs_per_s=None,
            speedup=None,
        )
    )
    return rows


def pamp_rows(repeat: int) -> list[dict]:
    rng = np.random.default_rng(1)
    n, d, runs = 1000, 5, 50
    proto = GaussianShuffleProtocol(dim=d, num_users=n, sigma=26.3)
    phi = rng.normal(size=(runs, n, d))
    phi /= np.linalg.norm(phi, axis=-1, keepdims=True)
    vec, mat = phi * 0.5, phi[..., :, None] * phi[..., None, :]
    fast = _best(lambda: proto.run(rng, vec, mat), repeat)
    slow = _best(lambda: proto.run(rng, vec, mat, per_message=True), repeat)
    return [
        dict(
            protocol="P_Amp",
            n=n,
            labels=d,
            runs=runs,
            fast_runs_per_s=runs / fast,
            per_message_runs_per_s=runs / slow,
            speedup=slow / fast,
        )
    ]


def tree_rows(repeat: int) -> list[dict]:
    rng = np.random.default_rng(2)
    horizon = 10**5
    rows = []
    for shape, symmetric, runs in [((), False, 100), ((5,), False, 10), ((5, 5), True, 4)]:
        tree = BinaryTree(horizon, "gaussian", 1.0, shape, symmetric)
        leaves = rng.normal(size=(runs, horizon) + shape)
        if symmetric:
            leaves = leaves + np.swapaxes(leaves, -1, -2)
        batch = _best(lambda: tree.run(rng, leaves), repeat)  # noqa: B023 (called within this iteration)

        def stream() -> None:
            s = tree.start(rng, runs)  # noqa: B023 (called within this iteration)
            for t in range(horizon):
                s.insert(leaves[:, t])  # noqa: B023 (called within this iteration)

        streaming = _best(stream, 1)
        rows.append(
            dict(
                protocol="tree",
                horizon=horizon,
                leaf_shape=list(shape),
                runs=runs,
                batch_s=batch,
                batch_leaves_per_s=runs * horizon / batch,
                stream_s=streaming,
                stream_leaves_per_s=runs * horizon / streaming,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats (best is kept)")
    args = parser.parse_args(argv)
    rows = []
    for part in (vector_sum_rows, pamp_rows, tree_rows):
        print(f"running {part.__name__} ...", file=sys.stderr)
        rows += part(args.repeat)
    # the machine is shared: the load average says how much the figures are disturbed
    rows.append(dict(load_average_1min=os.getloadavg()[0], cpus=os.cpu_count()))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
