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

from dpaudit.cli._types import FlagError, check_reachable, int_at_least, real_in, seed, writable_folder

NAME = "audit"
HELP = "audit catalog entries against their claims and write a report (exit 1 on an unexpected outcome)"
DEFAULT_OUT = "dpaudit-report"
CONNECT_TIMEOUT = 10.0  # seconds
MIN_SAMPLES = 10  # the fewest runs per input `dpaudit.audit.audit` accepts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="catalog entries (see `dpaudit list`); default: the quick suite")
    parser.add_argument("--all", action="store_true", help="every catalog entry at its full sample size")
    parser.add_argument("--samples", type=int_at_least(MIN_SAMPLES, " (the auditor's minimum)"), default=None,
                        help=f"runs per input for every audit, >= {MIN_SAMPLES} (default: each entry's)")
    parser.add_argument("--confidence", type=real_in(0.0, 1.0, low_open=True, high_open=True), default=0.95,
                        help="family-wise confidence of all lower bounds together, in (0, 1) (default 0.95)")
    parser.add_argument("--seed", type=seed, default=0, help="suite seed, >= 0; each entry derives its own (default 0)")
    parser.add_argument("--executor", default="local",
                        help="local (default) or a Dask scheduler: dask://host:port, tcp://host:port, ...")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"output folder (default ./{DEFAULT_OUT}); locked while this run writes it")
    parser.add_argument("--no-regret", action="store_true", help="skip the regret runs")
    parser.add_argument("--json", action="store_true", help="print the summary, findings and per-claim results as JSON")


def _select(args: argparse.Namespace) -> tuple[list, bool]:
    from dpaudit.registry import AUDITS

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
    """Check every flag (the output folder, the scheduler's reachability) before any work, then run
    the suite holding the output folder's lock, so two runs never mix their files."""
    from dpaudit.audit.execution import dask_address
    from dpaudit.registry import load_plugins
    from dpaudit.report import lock_folder

    if args.all and args.names:
        raise ValueError("give entry names or --all, not both")
    address = None if args.executor == "local" else dask_address(args.executor)
    if args.executor != "local" and address is None:
        raise ValueError(f"--executor must be 'local' or 'dask://host:port', got {args.executor!r}")
    if address is not None:
        check_reachable(address, "--executor")
    writable_folder(args.out, "--out")
    with lock_folder(args.out), _executor(address) as executor:
        load_plugins()
        entries, quick = _select(args)
        return _run_suite(args, entries, quick, args.confidence, executor)


@contextlib.contextmanager
def _executor(address: str | None) -> Iterator[Any]:
    """None for local (the auditor's default: this process, or a local pool for long audits); for a
    Dask scheduler `address` one `distributed.Client` for the whole suite, connected once, before any
    work and within CONNECT_TIMEOUT (so a wrong address fails the run at once), not made the
    default client."""
    if address is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise FlagError("--executor", "dask://… needs the 'distributed' package (pip install 'dpaudit[dask]')") from None
    _probe_scheduler(address)
    with distributed.Client(address, timeout=f"{CONNECT_TIMEOUT:g}s", set_as_default=False) as client:
        yield client


def _probe_scheduler(address: str) -> None:
    """Ask `address` for its identity over Dask's own protocol within CONNECT_TIMEOUT seconds; raise
    FlagError unless a Dask scheduler answers (a refused, silent or foreign peer fails here at once,
    before a `distributed.Client` is made that would wait and retry)."""
    import asyncio

    from distributed.comm import connect

    async def identity() -> Any:
        comm = await connect(address, timeout=CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    try:
        answer = asyncio.run(asyncio.wait_for(identity(), CONNECT_TIMEOUT))
    except Exception as exc:  # a refused, silent or non-Dask peer (its bytes can be read as anything)
        raise FlagError("--executor", f"no Dask scheduler answered at {address} within {CONNECT_TIMEOUT:g} s "
                                      f"({type(exc).__name__}: {str(exc)[:160]})") from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise FlagError("--executor", f"{address} answered, but not as a Dask scheduler")


def _run_suite(args: argparse.Namespace, entries: list, quick: bool, confidence: float, executor: Any) -> int:
    from dpaudit.report import build_report, write_report
    from dpaudit.report.model import one_run_note

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
                                                       "verdict", "expect", "ok", "mode", "num_canaries", "guesses",
                                                       "correct") if k in c} for c in r["claims"]]}
                        for r in records],
        }, indent=1, default=str))
    else:
        for r in records:
            for c in r["claims"]:
                print(f"{r['name']:<34} {c['label']:<10} claim ε={c['epsilon']:<8.4g} δ={c['delta']:<8.2g} "
                      f"ε_lower={c['epsilon_lower']:<8.4g} {c['verdict']:<10} {'ok' if c['ok'] else 'UNEXPECTED'}"
                      f"{one_run_note(c)}")
            if r["error"]:
                print(f"{r['name']:<34} ERROR {r['error']}")
        print(f"gate: {'PASS' if summ['ok'] else 'FAIL'}; report: {paths['html']}")
    return 0 if summ["ok"] else 1
