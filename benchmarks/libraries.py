"""Audits of every primitive of the libraries catalog beside the same audit of a numpy twin: bounds, wall time, ratio.

    python -m benchmarks run libraries [--samples 100000] [--seed 0] [--float-bits]
                                       [--targets numpy opendp diffprivlib pipelinedp pydp] [--json] [--out FILE]

For each entry of `dpaudit audit --catalog libraries` (`dpaudit.audits.libraries`: OpenDP, diffprivlib, PipelineDP,
python-dp; each library's Laplace, Gaussians, geometric / discrete Laplace, exponential mechanism, report noisy max,
snapping, whichever it has) the library's target is audited by `dpaudit.adapters.audit_target` on its neighbours
against its own claim, and so is its numpy twin: the same distribution, claim and neighbours, drawn with numpy
(`TWINS`): `rng.laplace`, `rng.normal` (at the library's own sigma), a difference of two geometrics for the discrete
Laplace, an inverted probability table for the discrete Gaussian, Gumbel-argmax for the exponential mechanism,
exponential-noise argmax for report noisy max (permute-and-flip's law; McKenna, Sheldon, NeurIPS 2020), numpy's
Laplace then diffprivlib's clamp and power-of-two rounding for snapping (Mironov, CCS 2012, Sect. 5.2).  Both sides
use the same seed, `--samples` runs per side, the auditor's default `float_check="report"` (so a scalar float output
gets its floating-point bound, `result.floating_point`) and the "serial" executor: one core, the comparison is per
core.  The `draw` column times the library target alone drawing min(--samples, 20 000) runs, which splits the ratio
into sampler cost and the auditor's own work (the numpy side).

`--targets` names the libraries whose entries are run (default all; a library that is not installed is skipped with a
line saying so and which extra installs it) and, with "numpy", the twin side (without it the numpy columns are
empty).  The table is Markdown, on stdout and, with `--out FILE`, written atomically to FILE; `--json` prints the
rows as JSON instead.  At 10^5 runs per side several minutes on a shared 2-core machine.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.adapters import LibraryTarget, audit_target
from dpaudit.adapters.target import distribution_version, require
from dpaudit.audits.libraries import (
    DISTRIBUTIONS,
    LIBRARIES,
    diffprivlib_entries,
    opendp_entries,
    pipelinedp_entries,
    pydp_entries,
)
from dpaudit.audits.libraries.entry import LibraryEntry

TARGETS = ("numpy", *LIBRARIES)
DRAW_RUNS = 20_000  # runs of the library target timed alone (the draw column)

Sampler = Callable[[Any, np.random.Generator, int], np.ndarray]


def laplace(scale: float) -> Sampler:
    """x + Lap(scale) by `Generator.laplace`."""
    return lambda x, rng, n: rng.laplace(float(x), scale, n)


def normal(sigma: float) -> Sampler:
    """x + N(0, sigma^2) by `Generator.normal`."""
    return lambda x, rng, n: rng.normal(float(x), sigma, n)


def discrete_laplace(scale: float) -> Sampler:
    """x + G1 - G2 with G1, G2 geometric of success probability p = 1 - exp(-1/scale): P(k) proportional to
    exp(-|k|/scale) (Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing Privacy Mechanisms", STOC 2009)."""
    p = -math.expm1(-1.0 / scale)
    return lambda x, rng, n: int(x) + rng.geometric(p, n) - rng.geometric(p, n)


def discrete_gaussian(sigma: float) -> Sampler:
    """x + K with P(K = k) proportional to exp(-k^2/(2 sigma^2)) (Canonne, Kamath, Steinke, "The Discrete Gaussian
    for Differential Privacy", NeurIPS 2020), by `Generator.choice` over |k| <= 40 sigma + 1 (the mass left out,
    below exp(-800), is no float)."""
    support = np.arange(-math.ceil(40 * sigma) - 1, math.ceil(40 * sigma) + 2)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
    probabilities = weights / weights.sum()
    return lambda x, rng, n: int(x) + rng.choice(support, n, p=probabilities)


def gumbel_argmax(epsilon: float, sensitivity: float) -> Sampler:
    """The exponential mechanism, P(i) proportional to exp(epsilon u_i/(2 sensitivity)) (McSherry, Talwar, FOCS 2007),
    as argmax of u_i + Gumbel(0, 2 sensitivity/epsilon), the Gumbel-max trick scaled by 2 sensitivity/epsilon."""
    return noisy_argmax(lambda rng, shape: rng.gumbel(0.0, 2 * sensitivity / epsilon, shape))


def noisy_argmax(noise: Callable[[np.random.Generator, tuple[int, int]], np.ndarray]) -> Sampler:
    """argmax_i (u_i + noise_i) over the utilities `x`, independent noise per run and candidate."""

    def draw(x: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        u = np.asarray(x, dtype=float)
        return np.argmax(u + noise(rng, (n, u.size)), axis=1)

    return draw


def snapping(epsilon: float, lower: float, upper: float, sensitivity: float) -> Sampler:
    """diffprivlib's `Snapping` with numpy's Laplace: x scaled to sensitivity 1 and centred, clamped to [-B, B],
    plus Lap(1/epsilon') with diffprivlib's effective epsilon' = (epsilon - 2 eta)/(1 + 12 B eta), rounded to the
    nearest multiple of Lambda, the smallest power of two >= 1/epsilon' (ties up), clamped, scaled back (Mironov,
    "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012, Sect. 5.2)."""
    eta = np.finfo(float).epsneg
    bound = (upper - lower) / 2.0 / sensitivity
    scale = 1.0 / ((epsilon - 2 * eta) / (1 + 12 * bound * eta))
    lam = 2.0 ** math.ceil(math.log2(scale))

    def draw(x: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        centred = float(x) / sensitivity - bound - lower / sensitivity
        noisy = min(max(centred, -bound), bound) + rng.laplace(0.0, scale, n)
        remainder = np.mod(noisy, lam)
        rounded = np.where(
            remainder > lam / 2,
            noisy - remainder + lam,
            np.where(remainder == lam / 2, noisy + remainder, noisy - remainder),
        )
        out: np.ndarray = (np.clip(rounded, -bound, bound) + bound) * sensitivity + lower
        return out

    return draw


def _diffprivlib_sigma(variant: str) -> float:
    """The sigma diffprivlib's Gaussian `variant` computes for the catalog's (epsilon, delta), sensitivity 1 (its
    `_scale`: the analytic one solves Balle, Wang, ICML 2018, Thm 8 numerically)."""
    cls = {"classic": "Gaussian", "analytic": "GaussianAnalytic", "discrete": "GaussianDiscrete"}[variant]
    mech = getattr(require("diffprivlib.mechanisms", "diffprivlib"), cls)(
        epsilon=diffprivlib_entries.EPSILON, delta=diffprivlib_entries.DELTA, sensitivity=1
    )
    return float(mech._scale)


def _pydp_sigma() -> float:
    """python-dp's `GaussianMechanism(epsilon, delta, 1).std` (Balle, Wang, ICML 2018, Thm 8)."""
    mechanisms = require("pydp.algorithms.numerical_mechanisms", "pydp")
    return float(
        mechanisms.GaussianMechanism(epsilon=pydp_entries.EPSILON, delta=pydp_entries.DELTA, sensitivity=1.0).std
    )


def _pipelinedp_sigma() -> float:
    """PipelineDP's Gaussian `create_additive_mechanism(spec, l2 = 1).std`."""
    computations = require("pipeline_dp.dp_computations", "pipelinedp")
    budget = require("pipeline_dp.budget_accounting", "pipelinedp")
    params = require("pipeline_dp.aggregate_params", "pipelinedp")
    spec = budget.MechanismSpec(
        params.MechanismType.GAUSSIAN, _eps=pipelinedp_entries.EPSILON, _delta=pipelinedp_entries.DELTA
    )
    return float(computations.create_additive_mechanism(spec, computations.Sensitivities(l2=1.0)).std)


_O, _D, _P, _G = opendp_entries, diffprivlib_entries, pipelinedp_entries, pydp_entries

#: catalog entry name -> (its numpy twin's description, a builder of the twin's sampler)
TWINS: dict[str, tuple[str, Callable[[], Sampler]]] = {
    "libraries.opendp.laplace": (f"laplace(x, {_O.SCALE:g})", lambda: laplace(_O.SCALE)),
    "libraries.opendp.discrete-laplace": (
        f"geometric difference, scale {_O.SCALE:g}",
        lambda: discrete_laplace(_O.SCALE),
    ),
    "libraries.opendp.gaussian": (f"normal(x, {_O.SCALE:g})", lambda: normal(_O.SCALE)),
    "libraries.opendp.discrete-gaussian": (
        f"discrete Gaussian table, sigma {_O.SCALE:g}",
        lambda: discrete_gaussian(_O.SCALE),
    ),
    "libraries.opendp.noisy-max": (
        f"argmax(u + exponential({_O.NOISY_MAX_SCALE:g}))",
        lambda: noisy_argmax(lambda rng, s: rng.exponential(_O.NOISY_MAX_SCALE, s)),
    ),
    "libraries.opendp.noisy-max-gumbel": (
        f"argmax(u + gumbel(0, {_O.NOISY_MAX_SCALE:g}))",
        lambda: noisy_argmax(lambda rng, s: rng.gumbel(0.0, _O.NOISY_MAX_SCALE, s)),
    ),
    "libraries.diffprivlib.laplace": (f"laplace(x, {1 / _D.EPSILON:g})", lambda: laplace(1 / _D.EPSILON)),
    "libraries.diffprivlib.gaussian": ("normal(x, classic sigma)", lambda: normal(_diffprivlib_sigma("classic"))),
    "libraries.diffprivlib.gaussian-analytic": (
        "normal(x, analytic sigma)",
        lambda: normal(_diffprivlib_sigma("analytic")),
    ),
    "libraries.diffprivlib.gaussian-discrete": (
        "discrete Gaussian table",
        lambda: discrete_gaussian(_diffprivlib_sigma("discrete")),
    ),
    "libraries.diffprivlib.geometric": (
        f"geometric difference, scale {1 / _D.EPSILON:g}",
        lambda: discrete_laplace(1 / _D.EPSILON),
    ),
    "libraries.diffprivlib.exponential": ("Gumbel argmax", lambda: gumbel_argmax(_D.EPSILON, 1.0)),
    "libraries.diffprivlib.permute-and-flip": (
        f"argmax(u + exponential({2 / _D.EPSILON:g}))",
        lambda: noisy_argmax(lambda rng, s: rng.exponential(2 / _D.EPSILON, s)),
    ),
    "libraries.diffprivlib.snapping": (
        "laplace, then clamp and round",
        lambda: snapping(_D.EPSILON, -_D.SNAPPING_BOUND, _D.SNAPPING_BOUND, 1.0),
    ),
    "libraries.pipelinedp.laplace": (f"laplace(x, {1 / _P.EPSILON:g})", lambda: laplace(1 / _P.EPSILON)),
    "libraries.pipelinedp.gaussian": ("normal(x, library sigma)", lambda: normal(_pipelinedp_sigma())),
    "libraries.pipelinedp.exponential": ("Gumbel argmax", lambda: gumbel_argmax(_P.EPSILON, 1.0)),
    "libraries.pydp.laplace": (f"laplace(x, {1 / _G.EPSILON:g})", lambda: laplace(1 / _G.EPSILON)),
    "libraries.pydp.laplace-int": (
        f"geometric difference, scale {1 / _G.EPSILON:g}",
        lambda: discrete_laplace(1 / _G.EPSILON),
    ),
    "libraries.pydp.gaussian": ("normal(x, library sigma)", lambda: normal(_pydp_sigma())),
}


def twin(entry: LibraryEntry, target: LibraryTarget) -> LibraryTarget:
    """`target` with its sampler replaced by the numpy twin of `entry`: same claim and neighbours."""
    description, build = TWINS[entry.name]
    return dataclasses.replace(
        target, name=description, library="numpy", version=np.__version__, reproducible=True, sampler=build()
    )


def audit(target: LibraryTarget, samples: int, seed: int, float_bits: bool) -> tuple[Any, float]:
    """One audit of `target` (default float_check, serial) and its wall time."""
    start = time.perf_counter()
    result = audit_target(target, samples=samples, seed=seed, float_bits=float_bits, executor="serial", progress=False)
    return result, time.perf_counter() - start


def _bounds(result: Any) -> tuple[float, float | None]:
    fp = result.floating_point
    return float(result.epsilon_lower), None if fp is None else float(fp.epsilon_lower)


def row(entry: LibraryEntry, samples: int, seed: int, float_bits: bool, numpy_side: bool) -> dict[str, Any]:
    """The library target's draw and audit, and its numpy twin's audit, timed."""
    target = entry.build()
    draws = min(samples, DRAW_RUNS)
    start = time.perf_counter()
    target(target.neighbours[0], np.random.default_rng(seed), draws)
    draw = time.perf_counter() - start
    result, seconds = audit(target, samples, seed, float_bits)
    algorithmic, floating = _bounds(result)
    out: dict[str, Any] = {
        "entry": entry.name,
        "library": entry.library,
        "version": entry.version,
        "primitive": entry.primitive,
        "target": target.label,
        "claim_epsilon": target.claim_epsilon,
        "claim_delta": target.claim_delta,
        "epsilon_lower": algorithmic,
        "epsilon_lower_floating_point": floating,
        "verdict": result.verdict,
        "audit_seconds": seconds,
        "draw_microseconds_per_run": draw / draws * 1e6,
        "numpy_target": None,
        "numpy_epsilon_lower": None,
        "numpy_epsilon_lower_floating_point": None,
        "numpy_audit_seconds": None,
        "ratio_to_numpy": None,
    }
    if numpy_side:
        reference = twin(entry, target)
        result, seconds = audit(reference, samples, seed, float_bits)
        algorithmic, floating = _bounds(result)
        out.update(
            numpy_target=reference.label,
            numpy_epsilon_lower=algorithmic,
            numpy_epsilon_lower_floating_point=floating,
            numpy_audit_seconds=seconds,
            ratio_to_numpy=out["audit_seconds"] / seconds,
        )
    return out


def _number(x: float) -> str:
    """3 significant digits; a power of ten as 10⁻ⁿ."""
    if x == 0:
        return "0"
    exponent = math.log10(x)
    if x < 1e-2 and exponent == round(exponent):
        return "10" + str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x:.3g}"


def _pair(library: float | None, reference: float | None) -> str:
    """'library / numpy' bounds, '–' for a bound that does not exist."""

    def show(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    if library is None and reference is None:
        return "–"
    return show(library) if reference is None and library is not None else f"{show(library)} / {show(reference)}"


def table(rows: list[dict[str, Any]], samples: int, seed: int, float_bits: bool, notes: list[str]) -> str:
    """The Markdown table of `rows`, with its header line and the skip notes."""
    lines = [
        (
            f"{samples} runs per side, seed {seed}, float_bits {float_bits}, float_check report, executor serial; "
            "ε_lower cells: library / numpy twin"
        ),
        "",
        (
            "| library | version | mechanism | claim (ε, δ) | ε_lower algorithmic | ε_lower floating-point "
            "| library audit s | numpy audit s | ratio | library draw µs/run |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        numpy_s = "–" if r["numpy_audit_seconds"] is None else f"{r['numpy_audit_seconds']:.2f}"
        ratio = "–" if r["ratio_to_numpy"] is None else f"{r['ratio_to_numpy']:.1f}"
        mechanism = f"{r['primitive']} `{r['entry'].rsplit('.', 1)[1]}`"
        lines.append(
            f"| {r['library']} | {r['version']} | {mechanism} | {_number(r['claim_epsilon'])}, "
            f"{_number(r['claim_delta'])} | {_pair(r['epsilon_lower'], r['numpy_epsilon_lower'])} | "
            f"{_pair(r['epsilon_lower_floating_point'], r['numpy_epsilon_lower_floating_point'])} | "
            f"{r['audit_seconds']:.2f} | {numpy_s} | {ratio} | {r['draw_microseconds_per_run']:.2f} |"
        )
    lines.extend(["", *notes] if notes else [])
    return "\n".join(lines) + "\n"


def write_atomically(path: str, text: str) -> None:
    """`text` to `path` through a temporary file in the same folder and `os.replace`."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".libraries-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000, help="runs per side (default 10^5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--float-bits", action="store_true", help="add the float-bit features (Mironov, CCS 2012)")
    ap.add_argument(
        "--targets",
        nargs="+",
        choices=TARGETS,
        default=list(TARGETS),
        help="libraries to run (default all) and 'numpy' for the twin side",
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    ap.add_argument("--out", metavar="FILE", help="also write the output to FILE (atomically)")
    args = ap.parse_args(argv)
    if args.samples < 1:
        ap.error(f"--samples must be a positive integer, got {args.samples}")

    numpy_side = "numpy" in args.targets
    libraries = [t for t in args.targets if t != "numpy"] or list(LIBRARIES)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for library in libraries:
        module, entries = LIBRARIES[library]
        try:
            require(module, library)
        except ImportError as exc:
            notes.append(f"{library}: skipped, not installed ({exc})")
            print(notes[-1], file=sys.stderr)
            continue
        for entry in entries(distribution_version(DISTRIBUTIONS.get(library, library))):
            rows.append(row(entry, args.samples, args.seed, args.float_bits, numpy_side))
            r = rows[-1]
            numpy_s = "" if r["numpy_audit_seconds"] is None else f", numpy {r['numpy_audit_seconds']:.1f} s"
            print(f"done: {entry.name} in {r['audit_seconds']:.1f} s{numpy_s}", file=sys.stderr)
    if args.json:
        text = (
            json.dumps(
                {
                    "samples": args.samples,
                    "seed": args.seed,
                    "float_bits": args.float_bits,
                    "float_check": "report",
                    "rows": rows,
                    "notes": notes,
                },
                indent=2,
            )
            + "\n"
        )
    else:
        text = table(rows, args.samples, args.seed, args.float_bits, notes)
    sys.stdout.write(text)
    if args.out:
        write_atomically(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
