"""Every one-run catalog entry's three analyses on its one run, beside the many-run bound of the same algorithm.

    python -m benchmarks run one_run_analyses [--entries NAME ...] [--json] [--out benchmarks/figures/one_run_analyses.txt]

Each one-run entry of the built-in catalog (`dpaudit list`: DP-SE, Dist-DP-SE, Anytime-Lazy-UCB, LinUCB-SDP-Amp and
their known-violating twins) runs its mechanism ONCE, as `dpaudit audit NAME` runs it (`Entry.run`, hence
`dpaudit.entry_runner.run_one_run_entry`: suite seed 0, the entry's own seed, the run memoised by the runner's
`_memoised`, keyed by (inclusion, generator state)), and three analyses read that same run at the entry's guesses,
at the claim the runner gives the auditor (the smallest positive claimed epsilon at each claimed delta) and at 95%
each (the entry's confidence, not split over a suite):

- "epsilon": Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS 2023, Thm 3.1);
- "fdp": Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run" (ICML 2025, Alg. 3): epsilon
  at the claim's delta, and the largest Gaussian-DP mu the run refutes;
- "order-statistics": Xiang, Wang, Xiao, Tian, Wang, "Tight Privacy Audit in One Run" (arXiv 2509.08704, 2025;
  `dpaudit.audit.one_run_order`), a bound for a pure claim (delta = 0) on any mechanism, at delta > 0 only for
  canaries that do not interfere: LinUCB-SDP-Amp's two canaries per batch share their release, so no number there.

The catalog's own analysis (`dpaudit.entry_runner.one_run_analysis`) is starred, and its bound is checked equal to the
entry's record.  Beside them: the many-run entries of the same algorithm and variant, run through the same path at
their full sizes (`Entry.run`, as `dpaudit audit NAMES` runs them; 95% per call; no regret runs), paired as the
report's "One run beside many runs" section pairs them (`dpaudit.report.model.one_run_rows`: the best many-run
epsilon_lower on a claim (eps, delta) both modes expect to hold, and epsilon_upper, the smallest claim at delta
proven for both views).  A twin's claim expected to be violated is outside that section; for it the best
epsilon_lower on the same claim among the many-run entries of the same variant is shown, and epsilon_upper is the
one-run entry's own smallest proven claim at that delta (`dpaudit.report.model.proven_claims`, as
`dpaudit.report.interval` reads it; none where no claim is proven).  Ratios are to epsilon_upper (none where it is
0); a bound above a proven epsilon_upper is flagged.  About 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.tables import format_table, write_lines
from dpaudit.audit import one_run
from dpaudit.cli._catalog import builtin_names
from dpaudit.entry_runner import _memoised
from dpaudit.registry import AUDITS
from dpaudit.report.model import one_run_rows, one_run_unpaired, proven_claims

ANALYSES = ("epsilon", "fdp", "order-statistics")
CONFIDENCE = 0.95  # each audit call's, as a one-run entry states it (the CLI splits a suite's level over its calls)
SEED = 0  # the suite seed of `dpaudit audit` (its default); each entry derives its own from it and its name
ZERO_EPSILON = 1e-9  # a proven claim at or below this is "epsilon = 0 at delta" (the report's threshold): no ratio
FIGURE = "benchmarks/figures/one_run_analyses.txt"
# Why the order-statistics bound is not one at delta > 0, per algorithm (dpaudit.audit.one_run_order, "Validity")
INTERFERENCE = {
    "linucb-sdp-amp": "two canaries share each batch sum, each adding +-<phi, phi'> to the other's score",
}


class _Counted:
    """A mechanism whose calls are counted and timed: the run's seconds, and a check that it ran once."""

    def __init__(self, mechanism: Callable[..., Any]):
        self.mechanism, self.calls, self.seconds = mechanism, 0, 0.0

    def __call__(self, inclusion: Any, rng: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.mechanism(inclusion, rng)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start


def one_run_names() -> list[str]:
    """The built-in catalog's one-run entries, in the catalog's order (what `dpaudit list` shows)."""
    return [n for n in builtin_names() if getattr(AUDITS.get(n), "mode", None) == "one-run"]


def many_run_names(names: list[str]) -> list[str]:
    """The built-in many-run entries of the same algorithm and variant as one of `names` (the report compares a
    variant with its own twin only), in the catalog's order."""
    keys = {(AUDITS.get(n).algorithm, AUDITS.get(n).variant) for n in names}
    return [
        n
        for n in builtin_names()
        if getattr(AUDITS.get(n), "mode", None) != "one-run"
        and (AUDITS.get(n).algorithm, AUDITS.get(n).variant) in keys
    ]


def order_statistics_reason(entry: Any, delta: float) -> str | None:
    """None where the order-statistics analysis gives a bound for `entry` at `delta`, else why it does not."""
    if delta == 0:
        return None  # a pure claim: Binomial(k, e^eps / (1 + e^eps)), Steinke et al.'s bound, valid for every mechanism
    why = INTERFERENCE.get(entry.algorithm, "its canaries are not known not to interfere")
    return f"not a bound at delta > 0 for interfering canaries: {why}"


def measure_one_run(entry: Any) -> dict[str, Any]:
    """Run `entry` once as `dpaudit audit` does, then every analysis on that same run (read from the memo).

    Returns the entry's record (`record`) and, per claimed delta, each analysis's bound, guesses and seconds."""
    target = entry.target()
    counted = _Counted(target.mechanism)
    mechanism = _memoised(counted)
    shared = dataclasses.replace(entry, target=lambda: target._replace(mechanism=mechanism))
    record = shared.run(confidence=CONFIDENCE, seed=SEED, regret=False)
    if record["error"]:
        raise RuntimeError(f"{entry.name} did not run: {record['error']}")
    audits = []
    for audit in record["audits"]:
        results: dict[str, dict[str, Any]] = {}
        for analysis in ANALYSES:
            reason = order_statistics_reason(entry, audit["delta"]) if analysis == "order-statistics" else None
            if reason is not None:
                results[analysis] = {"bound": False, "reason": reason}
                continue
            start = time.perf_counter()
            res = one_run(
                mechanism,
                target.num_canaries,
                target.score,
                claim_epsilon=audit["claim_epsilon"],
                claim_delta=audit["delta"],
                confidence=audit["confidence"],
                seed=audit["seed"],
                guesses=entry.guesses,
                analysis=analysis,
            )
            results[analysis] = {
                "bound": True,
                "epsilon_lower": res.epsilon_lower,
                "mu_lower": res.mu_lower,
                "k_plus": res.k_plus,
                "k_minus": res.k_minus,
                "correct": res.correct,
                "seconds": time.perf_counter() - start,
            }
        if results[audit["analysis"]]["epsilon_lower"] != audit["epsilon_lower"]:
            raise RuntimeError(
                f"{entry.name}: the {audit['analysis']} analysis gave {results[audit['analysis']]['epsilon_lower']} "
                f"on the memoised run, the entry's record {audit['epsilon_lower']}"
            )
        audits.append({"audit": audit, "analyses": results})
    if counted.calls != 1:
        raise RuntimeError(f"{entry.name}: the mechanism ran {counted.calls} times, not once")
    return {
        "entry": entry,
        "record": record,
        "canaries": target.num_canaries,
        "run_seconds": counted.seconds,
        "audits": audits,
    }


def run_many(names: list[str]) -> list[dict[str, Any]]:
    """Each many-run entry's record, as `dpaudit audit NAMES` makes it (full sizes, 95% per call, no regret)."""
    records = []
    for i, name in enumerate(names, 1):
        record = AUDITS.get(name).run(confidence=CONFIDENCE, seed=SEED, regret=False)
        if record["error"]:
            raise RuntimeError(f"{name} did not run: {record['error']}")
        print(f"[many {i}/{len(names)}] {name}: {record['seconds']:.1f} s", file=sys.stderr, flush=True)
        records.append(record)
    return records


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def _best_same_claim(records: list[dict[str, Any]], epsilon: float, delta: float) -> dict[str, Any] | None:
    """The largest epsilon_lower on the claim (epsilon, delta) among `records`, whatever its expectation: the
    comparison of a twin's claim expected to be violated, which the report's section leaves out."""
    best = None
    for r in records:
        for c in r["claims"]:
            if c["epsilon"] is None or not (_same(c["epsilon"], epsilon) and _same(c["delta"], delta)):
                continue
            if best is None or c["epsilon_lower"] > best["epsilon_lower"]:
                at = [a for a in r["audits"] if _same(a["delta"], delta)]
                samples = max(at, key=lambda a: a["epsilon_lower"])["samples"] if at else None
                best = {
                    "entry": r["name"],
                    "epsilon_lower": c["epsilon_lower"],
                    "samples": samples,
                    "seconds": r["seconds"],
                    "expect": c["expect"],
                }
    return best


def _own_upper(record: dict[str, Any], delta: float) -> dict[str, Any] | None:
    """The entry's smallest finite claim at `delta` dpaudit proves for its view (`proven_claims`): the epsilon_upper
    `dpaudit.report.interval` gives an entry whose claims are at one delta."""
    sound = [
        c
        for c in proven_claims(record["claims"])
        if _same(c["delta"], delta) and c["epsilon"] is not None and math.isfinite(c["epsilon"])
    ]
    return min(sound, key=lambda c: c["epsilon"], default=None)


def _above_catalog(name: str, delta: float, catalog: str, bounds: dict[str, float]) -> list[str]:
    """A note for each analysis whose bound on the run exceeds the catalog's by more than 0.1% (the analysis is
    fixed before the run: taking the larger after seeing both would not be a 95% bound)."""
    own = bounds[catalog]
    return [
        f"{name} at delta = {delta:g}: the {a} analysis gives {b:.4g}, {100 * (b / own - 1):.1f}% above the "
        f"catalog's {catalog} analysis ({own:.4g}) on the same run"
        for a, b in bounds.items()
        if a in ANALYSES and b > own * 1.001
    ]


def compare(measured: list[dict[str, Any]], many: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per (one-run entry, claimed delta): its analyses, the many-run bound, epsilon_upper and the ratios;
    and the notes (the report's reasons for unpaired algorithms, and every bound above a proven epsilon_upper)."""
    records = [m["record"] for m in measured] + many
    pairs, unpaired = one_run_rows(records), one_run_unpaired(records)
    rows, notes = [], list(unpaired)
    for m in measured:
        rec = m["record"]
        key = (rec["algorithm"], rec.get("variant") or "")
        group = [r for r in many if (r["algorithm"], r.get("variant") or "") == key]
        if not rec["ok"]:
            notes.append(f"RED FLAG {rec['name']}: the catalog's verdicts are not the expected ones")
        for item in m["audits"]:
            audit, analyses = item["audit"], item["analyses"]
            eps, delta = audit["claim_epsilon"], audit["delta"]
            claims = [c for c in rec["claims"] if c["epsilon"] is not None and _same(c["delta"], delta)]
            at_claim = [c for c in claims if _same(c["epsilon"], eps)]
            paired = next(
                (
                    p
                    for p in pairs
                    if (p["algorithm"], p["variant"]) == key and _same(p["epsilon"], eps) and _same(p["delta"], delta)
                ),
                None,
            )
            if paired is not None:
                many_side, upper, upper_from = paired["many_run"], paired["epsilon_upper"], paired["upper_claim"]
                pairing = "report"
            else:
                many_side, pairing = _best_same_claim(group, eps, delta), "same claim"
                own = _own_upper(rec, delta)
                upper, upper_from = (None, None) if own is None else (own["epsilon"], own["label"])
            if many_side is None:
                pairing = "none" if group else "no many-run entry of this algorithm and variant"
            bounds = {a: r["epsilon_lower"] for a, r in analyses.items() if r["bound"]}
            if many_side is not None:
                bounds["many-run"] = many_side["epsilon_lower"]
            ratios = {a: (b / upper if upper is not None and upper > ZERO_EPSILON else None) for a, b in bounds.items()}
            for a, b in bounds.items():
                if upper is not None and b > upper:
                    notes.append(
                        f"RED FLAG {rec['name']} at delta = {delta:g}: the {a} bound {b:.4g} is above the proven "
                        f"epsilon_upper = {upper:.4g} ({upper_from})"
                    )
            notes += _above_catalog(rec["name"], delta, audit["analysis"], bounds)
            rows.append(
                {
                    "entry": rec["name"],
                    "algorithm": rec["algorithm"],
                    "variant": rec.get("variant") or "",
                    "claim_epsilon": eps,
                    "delta": delta,
                    "claims": [f"{c['label']} ({c['expect']})" for c in at_claim],
                    "horizon": m["entry"].horizon,
                    "canaries": m["canaries"],
                    "guesses": {
                        a: (r["k_plus"], r["k_minus"], r["correct"]) for a, r in analyses.items() if r["bound"]
                    },
                    "catalog_analysis": audit["analysis"],
                    "analyses": analyses,
                    "run_seconds": m["run_seconds"],
                    "entry_seconds": rec["seconds"],
                    "many_run": many_side,
                    "pairing": pairing,
                    "epsilon_upper": upper,
                    "upper_claim": upper_from,
                    "ratios": ratios,
                }
            )
    return rows, notes


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    an = row["analyses"]

    def bound(a: str) -> str:
        if not an[a]["bound"]:
            return "n/a (delta > 0, interfering)"
        return _num(an[a]["epsilon_lower"]) + ("*" if a == row["catalog_analysis"] else "")

    fdp = bound("fdp") + (f" (mu {an['fdp']['mu_lower']:.3g})" if an["fdp"].get("mu_lower") is not None else "")
    kp, km, correct = row["guesses"][row["catalog_analysis"]]
    many = row["many_run"]
    if many is None:
        many_text = "- (" + ("none of the same variant" if row["pairing"] != "none" else "no common claim: notes") + ")"
    else:
        many_text = (
            f"{_num(many['epsilon_lower'])} ({many['entry']}, {many['samples']:,}/side, {many['seconds']:.1f} s)"
        )
        many_text += " [same claim]" if row["pairing"] == "same claim" else ""
    seconds = ", ".join(f"{an[a]['seconds']:.2f}" if an[a]["bound"] else "-" for a in ANALYSES)
    ratios = ", ".join(_num(row["ratios"].get(a)) for a in (*ANALYSES, "many-run"))
    upper = "-" if row["epsilon_upper"] is None else f"{_num(row['epsilon_upper'])} ({row['upper_claim']})"
    return (
        row["entry"],
        f"{_num(row['claim_epsilon'])} @ {row['delta']:g}: {', '.join(row['claims'])}",
        f"{row['canaries']:,}",
        f"{kp}+{km} ({correct} right)",
        bound("epsilon"),
        fdp,
        bound("order-statistics"),
        many_text,
        upper,
        f"{row['run_seconds']:.1f}",
        seconds,
        ratios,
    )


HEADER = (
    "entry",
    "claim eps @ delta: labels (expected)",
    "canaries",
    "guesses k+ + k-",
    "eps analysis",
    "f-DP analysis (mu)",
    "order-statistics",
    "many-run best eps_lower (entry, runs, s)",
    "eps_upper (claim)",
    "run s",
    "analysis s: eps, fdp, order",
    "/ eps_upper: eps, fdp, order, many",
)


def table_lines(rows: list[dict[str, Any]], notes: list[str], many: list[dict[str, Any]]) -> list[str]:
    """The table, the many-run entries run, and the notes, as text lines."""
    lines = format_table(
        "One-run analyses on one run per entry, beside the many-run bound", HEADER, list(map(_cells, rows))
    )
    out = lines.strip("\n").splitlines()
    out += ["", "many-run entries run (full size, 95% per call, suite seed 0):"]
    for r in many:
        bounds = "; ".join(
            f"delta {a['delta']:g}: eps_lower {a['epsilon_lower']:.4g} ({a['samples']:,}/side)" for a in r["audits"]
        )
        out.append(
            f"  {r['name']} [{r['algorithm']}{' / ' + r['variant'] if r.get('variant') else ''}]: {bounds}; {r['seconds']:.1f} s"
        )
    out += ["", "notes:"] + [f"  {n}" for n in notes or ["none"]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", nargs="+", metavar="NAME", help="one-run entries (default: all of the catalog's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per row instead of the table")
    parser.add_argument("--out", default=None, help=f"also write the table to this file (e.g. {FIGURE})")
    args = parser.parse_args(argv)
    known = one_run_names()
    names = args.entries or known
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"not one-run entries of the catalog: {', '.join(unknown)}; known: {', '.join(known)}")
    start = time.perf_counter()
    measured = []
    for i, name in enumerate(names, 1):
        measured.append(measure_one_run(AUDITS.get(name)))
        print(
            f"[one-run {i}/{len(names)}] {name}: {measured[-1]['record']['seconds']:.1f} s", file=sys.stderr, flush=True
        )
    many = run_many(many_run_names(names))
    rows, notes = compare(measured, many)
    wall = time.perf_counter() - start
    command = "python -m benchmarks run one_run_analyses" + (f" --entries {' '.join(names)}" if args.entries else "")
    lines = [
        "# Each one-run catalog entry run once as `dpaudit audit NAME` runs it (suite seed 0), three analyses on that",
        "# run at the entry's guesses and claim, 95% each (* the catalog's analysis); the many-run entries of the same",
        "# algorithm and variant at full size, paired as the report's 'One run beside many runs' (pairing 'same claim':",
        "# a twin's claim expected to be violated).  Ratios are to eps_upper; s = seconds.",
        f"# Measured with `{command}{'' if args.out is None else ' --out ' + args.out}`: {wall:.0f} s wall time.",
        *table_lines(rows, notes, many),
    ]
    if args.json:
        for row in rows:
            print(json.dumps(row, default=str))
        print(json.dumps({"notes": notes, "seconds": wall}))
    else:
        print("\n".join(lines))
    if args.out:
        write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
