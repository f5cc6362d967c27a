"""Audits of the DP libraries' Laplace mechanisms beside the same audit of numpy's Laplace: wall time and ratio.

    python -m benchmarks run libraries [--samples 100000] [--seed 0] [--float-bits] [--targets numpy opendp ...]
                                       [--json]

Each target is audited by `dpaudit.adapters.audit_target` on its neighbours (0, 1) against epsilon = 1, with the
same seed, options and executor ("serial": one core, the comparison is per core); numpy's target is
`rng.laplace(data, 1, size)`.  Targets: numpy, opendp (`opendp_laplace(1.0)`, OpenDP's exact-on-a-grid float
Laplace) and diffprivlib (`diffprivlib_laplace(1.0)`); a library that is not installed is skipped with a note
(`pip install 'dpaudit[opendp]'`, `pip install 'dpaudit[diffprivlib]'`).  Besides the audit's wall time, the
`draw` column times the target alone drawing `--samples` runs, so the ratio to numpy splits into sampler cost
and the auditor's own work.  At 10^5 runs per side about a minute with OpenDP on a shared 2-core machine.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.accounting.guarantees import PureDp
from dpaudit.adapters import LibraryTarget, audit_target, diffprivlib_laplace, opendp_laplace

TARGETS = ("numpy", "opendp", "diffprivlib")


def numpy_laplace(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
    """numpy's Laplace of scale 1 around `data`: the reference."""
    return rng.laplace(data, 1.0, size)


def numpy_target() -> LibraryTarget:
    return LibraryTarget(
        name="Generator.laplace(scale=1.0)",
        library="numpy",
        version=np.__version__,
        claim=PureDp(1.0),
        claim_epsilon=1.0,
        claim_delta=0.0,
        neighbours=(0.0, 1.0),
        reproducible=True,
        sampler=numpy_laplace,
    )


BUILDERS: dict[str, Callable[[], LibraryTarget]] = {
    "numpy": numpy_target,
    "opendp": lambda: opendp_laplace(1.0),
    "diffprivlib": lambda: diffprivlib_laplace(1.0),
}


def row(target: LibraryTarget, samples: int, seed: int, float_bits: bool) -> dict[str, Any]:
    """One audit of `target` and one draw of `samples` runs, timed."""
    start = time.perf_counter()
    target(0.0, np.random.default_rng(seed), samples)
    draw = time.perf_counter() - start
    start = time.perf_counter()
    result = audit_target(target, samples=samples, seed=seed, float_bits=float_bits, executor="serial", progress=False)
    seconds = time.perf_counter() - start
    return {
        "target": target.label,
        "claim_epsilon": target.claim_epsilon,
        "epsilon_lower": result.epsilon_lower,
        "verdict": result.verdict,
        "audit_seconds": seconds,
        "draw_seconds": draw,
        "draw_microseconds_per_run": draw / samples * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000, help="runs per side (default 10^5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--float-bits", action="store_true", help="add the float-bit features (Mironov, CCS 2012)")
    ap.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    rows, notes = [], []
    for name in args.targets:
        try:
            target = BUILDERS[name]()
        except ImportError as exc:
            notes.append(f"{name}: skipped ({exc})")
            continue
        rows.append(row(target, args.samples, args.seed, args.float_bits))
        print(f"done: {rows[-1]['target']} in {rows[-1]['audit_seconds']:.1f} s", file=sys.stderr)
    reference = next((r for r in rows if r["target"].startswith("numpy")), None)
    for r in rows:
        r["ratio_to_numpy"] = r["audit_seconds"] / reference["audit_seconds"] if reference else None
    if args.json:
        json.dump(
            {"samples": args.samples, "seed": args.seed, "float_bits": args.float_bits, "rows": rows, "notes": notes},
            sys.stdout,
            indent=2,
        )
        print()
        return 0
    print(f"{args.samples} runs per side, seed {args.seed}, float_bits {args.float_bits}, executor serial")
    width = max([len("target"), *(len(r["target"]) for r in rows)])
    print(
        f"{'target':{width}s} {'eps_lower':>9s} {'verdict':>11s} {'audit s':>8s} {'x numpy':>8s} {'draw us/run':>12s}"
    )
    for r in rows:
        ratio = f"{r['ratio_to_numpy']:8.1f}" if r["ratio_to_numpy"] is not None else f"{'-':>8s}"
        print(
            f"{r['target']:{width}s} {r['epsilon_lower']:9.3f} {r['verdict']:>11s} {r['audit_seconds']:8.1f} {ratio} "
            f"{r['draw_microseconds_per_run']:12.2f}"
        )
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
