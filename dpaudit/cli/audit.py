"""`dpaudit audit`: run catalog entries, write report.json/.md/.html, exit 1 unless every claim is as expected.

With no names the quick default suite runs (the entries marked quick, at their quick sample sizes);
`--all` runs the whole catalog at full sizes. The family-wise confidence is split evenly over all
audit calls of the run (Bonferroni), so every reported lower bound holds simultaneously.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any, Iterator

from dpaudit.validation import check_open_unit, check_positive_int

NAME = "audit"
HELP = "audit catalog entries against their claims and write a report (exit 1 on an unexpected outcome)"
DEFAULT_OUT = "dpaudit-report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="catalog entries (see `dpaudit list`); default: the quick suite")
    parser.add_argument("--all", action="store_true", help="every catalog entry at its full sample size")
    parser.add_argument("--samples", type=int, default=None, help="runs per input for every audit (default: each entry's)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="family-wise confidence of all lower bounds together (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help="suite seed; each entry derives its own (default 0)")
    parser.add_argument("--executor", default="local",
                        help="local (default) or a Dask scheduler: dask://host:port, tcp://host:port, ...")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    parser.add_argument("--no-regret", action="store_true", help="skip the regret runs")
    parser.add_argument("--json", action="store_true", help="print the summary, findings and per-claim results as JSON")


def _select(args: argparse.Namespace) -> tuple[list, bool]:
    from dpaudit.registry import AUDITS

    if args.all and args.names:
        raise ValueError("give entry names or --all, not both")
    if args.all:
        return [AUDITS.get(n) for n in AUDITS.names()], False
    if args.names:
        return [AUDITS.get(n) for n in dict.fromkeys(args.names)], False
    quick = [AUDITS.get(n) for n in AUDITS.names() if AUDITS.get(n).quick]
    if not quick:
        raise ValueError("the catalog has no quick entries; name entries or use --all")
    return quick, True


def _command(args: argparse.Namespace) -> list[str]:
    """The command line that reproduces this run."""
    cmd = ["dpaudit", NAME, *args.names] + (["--all"] if args.all else [])
    if args.samples is not None:
        cmd += ["--samples", str(args.samples)]
    cmd += ["--confidence", str(args.confidence), "--seed", str(args.seed), "--executor", args.executor,
            "--out", str(args.out)]
    return cmd + (["--no-regret"] if args.no_regret else [])


def run(args: argparse.Namespace) -> int:
    from dpaudit.audit.execution import dask_address
    from dpaudit.registry import load_plugins

    confidence = check_open_unit(args.confidence, "confidence")
    if args.samples is not None:
        check_positive_int(args.samples, "samples")
    address = None if args.executor == "local" else dask_address(args.executor)
    if args.executor != "local" and address is None:
        raise ValueError(f"executor must be 'local' or 'dask://host:port', got {args.executor!r}")
    load_plugins()
    entries, quick = _select(args)
    with _executor(address) as executor:
        return _run_suite(args, entries, quick, confidence, executor)


@contextlib.contextmanager
def _executor(address: str | None) -> Iterator[Any]:
    """None for local (the auditor's default: this process, or a local pool for long audits); for a
    Dask scheduler `address` one `distributed.Client` for the whole suite, connected once (so an
    unreachable scheduler fails the run at once, not each audit call), not made the default client."""
    if address is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise ValueError("--executor dask://… needs the 'distributed' package (pip install 'dpaudit[dask]')") from None
    with distributed.Client(address, timeout="30s", set_as_default=False) as client:
        yield client


def _run_suite(args: argparse.Namespace, entries: list, quick: bool, confidence: float, executor: Any) -> int:
    from dpaudit.report import build_report, write_report

    calls = sum(e.audit_calls() for e in entries)
    per_call = 1.0 - (1.0 - confidence) / calls
    start = time.perf_counter()
    records = []
    for i, entry in enumerate(entries, 1):
        print(f"[{i}/{len(entries)}] {entry.name} ...", end="", file=sys.stderr, flush=True)
        rec = entry.run(samples=args.samples, quick=quick, confidence=per_call, seed=args.seed,
                        executor=executor, regret=not args.no_regret)
        status = "ok" if rec["ok"] else ("ERROR " + rec["error"] if rec["error"] else "UNEXPECTED")
        print(f" {status} ({rec['seconds']:.1f} s)", file=sys.stderr, flush=True)
        records.append(rec)
    settings = {"seed": args.seed, "samples": args.samples, "quick": quick, "confidence": confidence,
                "per_audit_confidence": per_call, "audit_calls": calls, "executor": args.executor,
                "regret": not args.no_regret, "names": [e.name for e in entries]}
    report = build_report(records, settings=settings, command=_command(args),
                          seconds=round(time.perf_counter() - start, 2))
    paths = write_report(report, args.out)
    summ = report["summary"]
    if args.json:
        print(json.dumps({
            "ok": summ["ok"], "out": str(args.out), "summary": summ,
            "findings": [f["text"] for f in report["findings"]],
            "entries": [{"name": r["name"], "algorithm": r["algorithm"], "expect": r["expect"], "ok": r["ok"],
                         "error": r["error"],
                         "claims": [{k: c[k] for k in ("label", "epsilon", "delta", "accountant", "epsilon_lower",
                                                       "verdict", "expect", "ok")} for c in r["claims"]]}
                        for r in records],
        }, indent=1, default=str))
    else:
        for r in records:
            for c in r["claims"]:
                print(f"{r['name']:<34} {c['label']:<10} claim ε={c['epsilon']:<8.4g} δ={c['delta']:<8.2g} "
                      f"ε_lower={c['epsilon_lower']:<8.4g} {c['verdict']:<10} {'ok' if c['ok'] else 'UNEXPECTED'}")
            if r["error"]:
                print(f"{r['name']:<34} ERROR {r['error']}")
        print(f"gate: {'PASS' if summ['ok'] else 'FAIL'}; report: {paths['html']}")
    return 0 if summ["ok"] else 1
