"""`dpaudit audit`: run audit entries, write report.json/.md/.html (and JUnit XML), exit with the gate's status.

Which entries: the catalog the project declares (`[tool.dpaudit]` in the nearest pyproject.toml upward,
or `--config FILE`: the user's own entries, `dpaudit.register_audit`), else outside any project the
built-in catalog; `--catalog builtin|user|all` chooses (`--catalog libraries`: the DP libraries'
primitives, a library not installed skipped and said); a project that declares no audits is refused.
With no names the built-in catalog runs its quick default suite (the entries marked quick, at their
quick sample sizes) and the user's entries all run; `--all` runs the whole built-in catalog at full
sizes. The family-wise confidence is split evenly over all audit calls of the run (Bonferroni), so
every reported lower bound holds simultaneously.

Exit status: 0 every claim as expected; 1 a claim failed (with `--baseline`: a claim newly failed or
the ε of the baseline's own event rose significantly, `dpaudit.baseline`); 2 usage error, found before
any audit runs (flags, the config, the user's modules and `register_audit` calls, the baseline), or a
run that audits nothing; 3 an entry could not run (anything its code raised, `sys.exit()` included,
an accountant's or dpaudit's own error, or its worker died); 130 interrupted (the report of the
entries that finished is written, marked incomplete).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import multiprocessing
import os
import pathlib
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dpaudit._interrupt import EXIT_INTERRUPTED
from dpaudit.cli._catalog import EXTRA_CATALOGS, add_catalog_arguments, catalog_skips, load_entries
from dpaudit.cli._types import FlagError, check_path, check_reachable, int_at_least, real_in, seed, writable_folder
from dpaudit.limits import MIN_SAMPLES
from dpaudit.records import ClaimRecord, EntryRecord, lost_record
from dpaudit.user_config import catalog_text as _catalog_text

if TYPE_CHECKING:
    from dpaudit.entries import Entry

__all__ = ["HELP", "NAME", "add_arguments", "run"]

EXIT_OK, EXIT_FAILED, EXIT_INTERNAL = 0, 1, 3  # 2 (usage error) is dpaudit.cli.main's

NAME = "audit"
HELP = (
    "audit your entries ([tool.dpaudit] in pyproject.toml) or the built-in catalog against their claims and "
    "write a report (exit 0 pass, 1 a claim failed, 2 usage error, 3 internal error)"
)
DEFAULT_OUT = "dpaudit-report"
CONNECT_TIMEOUT = 10.0  # seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the flags of `dpaudit audit` on its subparser."""
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="entries (see `dpaudit list`); default: all of yours, or the built-in quick suite",
    )
    parser.add_argument("--all", action="store_true", help="every built-in catalog entry at its full sample size")
    parser.add_argument(
        "--deep",
        action="store_true",
        help="with --all or names: each run-limited entry at the runs per input its pin note names "
        "(`dpaudit list --json`: deep_samples), each one-run entry that has one at its deep size (deep_size: "
        "more canaries), the others at their full size; hours on one machine, see --executor",
    )
    add_catalog_arguments(parser)
    parser.add_argument(
        "--junit-xml", default=None, metavar="FILE", help="also write JUnit XML (one testcase per claim) to FILE"
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="REPORT",
        help="an earlier report.json (or its folder): exit 1 only when a claim newly fails or the "
        "baseline's own event's epsilon rose significantly on fresh runs; report.md lists "
        "what changed",
    )
    parser.add_argument(
        "--samples",
        type=int_at_least(MIN_SAMPLES, " (the auditor's minimum)"),
        default=None,
        help=f"runs per input for every audit, >= {MIN_SAMPLES} (default: each entry's)",
    )
    parser.add_argument(
        "--time-budget",
        type=real_in(0.0, float("inf"), low_open=True, high_open=True),
        default=None,
        metavar="SECONDS",
        help="each of your audits draws runs in doubling stages until SECONDS are spent or a violation is "
        "settled, its bound valid whenever it stops (--samples: the first stage's runs; default: "
        "[tool.dpaudit] time_budget, else one audit of fixed size)",
    )
    parser.add_argument(
        "--confidence",
        type=real_in(0.0, 1.0, low_open=True, high_open=True),
        default=0.95,
        help="family-wise confidence of all lower bounds together, in (0, 1) (default 0.95)",
    )
    parser.add_argument("--seed", type=seed, default=0, help="suite seed, >= 0; each entry derives its own (default 0)")
    parser.add_argument(
        "--executor",
        default="local",
        help="local (default) or a Dask scheduler: dask://host:port, tcp://host:port, ...",
    )
    parser.add_argument(
        "--jobs",
        type=int_at_least(1),
        default=None,
        help="entries audited at once in local processes, >= 1 (default: the CPUs this process may "
        "use, 1 with a Dask executor); the report does not depend on it",
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT}); locked while this run writes it"
    )
    parser.add_argument("--no-regret", action="store_true", help="skip the regret runs")
    parser.add_argument("--json", action="store_true", help="print the summary, findings and per-claim results as JSON")


def _select(args: argparse.Namespace, catalog: str, builtin: list[str], user: list[str]) -> tuple[list, bool]:
    """The entries to run, and whether the built-in ones run at their quick sizes."""
    from dpaudit.registry import AUDITS

    if args.names:
        known = set(builtin) | set(user)
        for name in args.names:
            if name not in known:
                hint = (
                    " (a built-in entry: add --catalog builtin or all)" if catalog == "user" and name in AUDITS else ""
                )
                raise ValueError(f"unknown audit entry {name!r}{hint}; known: {', '.join(sorted(known)) or 'none'}")
        return [AUDITS.get(n) for n in dict.fromkeys(args.names)], False
    users = [AUDITS.get(n) for n in user]
    if args.all or catalog == "user":
        return [AUDITS.get(n) for n in builtin] + users, False
    quick = [AUDITS.get(n) for n in builtin if AUDITS.get(n).quick]
    if not quick and not users:
        raise ValueError("the catalog has no quick entries; name entries or use --all")
    return quick + users, True


def _command(args: argparse.Namespace) -> list[str]:
    """The command line that reproduces this run."""
    cmd = ["dpaudit", NAME, *args.names] + (["--all"] if args.all else []) + (["--deep"] if args.deep else [])
    for flag, value in (
        ("--config", args.config),
        ("--catalog", args.catalog),
        ("--junit-xml", args.junit_xml),
        ("--baseline", args.baseline),
    ):
        if value is not None:
            cmd += [flag, str(value)]
    if args.samples is not None:
        cmd += ["--samples", str(args.samples)]
    cmd += [
        "--confidence",
        str(args.confidence),
        "--seed",
        str(args.seed),
        "--executor",
        args.executor,
        "--out",
        str(args.out),
    ]
    if args.jobs is not None:
        cmd += ["--jobs", str(args.jobs)]
    return cmd + (["--no-regret"] if args.no_regret else [])


def _junit_path(path: str, out: str) -> pathlib.Path:
    """The JUnit XML file: not a folder, not a file of the report set in `out`, in a writable folder."""
    from dpaudit.report.files import report_set_member

    p = check_path(path, "--junit-xml")
    if p.is_dir():
        raise FlagError("--junit-xml", f"{path!r} is a folder; give a file name such as {str(p / 'dpaudit.xml')!r}")
    if report_set_member(p, out):
        raise FlagError(
            "--junit-xml",
            f"{path!r} is a file of the report set in --out {out!r} (report.json, "
            "report.md, report.html, intervals.png or dpaudit's own); give another name",
        )
    writable_folder(str(p.absolute().parent), "--junit-xml")
    return p


def _baseline(path: str) -> dict[str, Any]:
    """The baseline report, checked before any audit runs (`dpaudit.baseline.check_report`): FlagError
    (exit 2) naming the file and the missing key when it is absent, not JSON, truncated or incomplete."""
    from dpaudit.baseline import check_report
    from dpaudit.report import load_report

    check_path(path, "--baseline")
    try:
        report = load_report(path)
        check_report(report, str(path))
    except ValueError as exc:  # UnicodeDecodeError too (a binary file)
        message = str(exc)
        raise FlagError("--baseline", message if str(path) in message else f"{path!r}: {message}") from None
    return report


def _baseline_events(
    args: argparse.Namespace, baseline: dict[str, Any], entries: list, catalog: str
) -> dict[str, dict[str, Any]]:
    """{entry name: {claim label: the baseline claim's event}} for the entries' run options, once the
    baseline is known to share an entry with this run (else FlagError, exit 2); the settings that
    differ from the baseline's are printed to stderr first."""
    from dpaudit.baseline import check_baseline

    mine = {"samples": args.samples, "confidence": args.confidence, "catalog": catalog, "seed": args.seed}
    try:
        warnings = check_baseline(baseline, [e.name for e in entries], mine)
    except ValueError as exc:
        raise FlagError("--baseline", f"{args.baseline}: {exc}") from None
    for warning in warnings:
        print(f"warning: --baseline {args.baseline}: {warning}", file=sys.stderr)
    return {
        e["name"]: {c["label"]: c["event"] for c in e["claims"] if c.get("event")}
        for e in baseline["entries"]
        if not e.get("error")
    }


def _floating_note(claim: dict[str, Any]) -> str:
    """ "; floating point: ε_lower=x verdict" for a claim whose float outputs had the floating-point audit."""
    fp = claim.get("floating_point")
    if not fp:
        return ""
    return f"; floating point: ε_lower={fp['epsilon_lower']:.4g} {fp['verdict']}" + (" (gates)" if fp["gate"] else "")


def _claim_status(name: str, claim: ClaimRecord, comparison: dict[str, Any] | None) -> str:
    """ok or UNEXPECTED; with a baseline, "known" for a claim failing in the baseline too and "ROSE"
    for a gating rise of the baseline's event, as the exit status counts them."""
    changes = (comparison or {}).get("changes", ())
    kinds = {c["kind"] for c in changes if (c["entry"], c["claim"]) == (name, claim["label"])}
    if not claim["ok"]:
        return "known" if "still-failing" in kinds else "UNEXPECTED"
    return "ROSE" if "rose" in kinds else "ok"


def run(args: argparse.Namespace) -> int:
    """Check every flag (the output folder, the scheduler's reachability), then the config and the
    user's modules, before any audit runs; then run the suite holding the output folder's lock, so
    two runs never mix their files."""
    started = time.perf_counter() - _process_age()  # the report's wall time is the command's, from its start
    from dpaudit.audit.executors import dask_address
    from dpaudit.report import lock_folder

    if args.all and args.names:
        raise ValueError("give entry names or --all, not both")
    address = None if args.executor == "local" else dask_address(args.executor)
    if args.executor != "local" and address is None:
        raise ValueError(f"--executor must be 'local' or 'dask://host:port', got {args.executor!r}")
    if address is not None and args.jobs not in (None, 1):
        raise FlagError(
            "--jobs",
            f"runs entries in local processes; with a Dask executor the scheduler spreads the "
            f"work (got --jobs {args.jobs} with --executor {args.executor})",
        )
    if args.samples is not None:
        _check_samples(args.samples)
    if args.deep and not (args.all or args.names):
        raise FlagError("--deep", "runs the catalog at its deep sizes: give --all or entry names")
    if args.deep and args.samples is not None:
        raise FlagError("--deep", f"sets each entry's runs; drop --samples {args.samples}")
    baseline = _baseline(args.baseline) if args.baseline is not None else None
    junit = _junit_path(args.junit_xml, args.out) if args.junit_xml is not None else None
    if address is not None:
        check_reachable(address, "--executor")
    writable_folder(args.out, "--out")
    with lock_folder(args.out):
        catalog, config, builtin, user = load_entries(args, whole_catalog=args.all)
        skipped = catalog_skips(catalog)  # the libraries catalog: a library that is not installed
        if skipped and not builtin and not user:
            raise ValueError(
                f"nothing to audit: the {_catalog_text(catalog, config, False)} has no entry to run; "
                + "; ".join(f"skipped {note}" for note in skipped)
            )
        if args.time_budget is not None:
            if not user:
                raise FlagError("--time-budget", "times your audits (user entries); none is selected")
            from dpaudit.user_config import default_option

            for name in user:
                default_option(name, "time_budget", args.time_budget, override=True)
        entries, quick = _select(args, catalog, builtin, user)
        if args.deep:
            entries = [_deep(e) for e in entries]
        if not entries:  # a run that audits nothing is no pass
            raise ValueError(f"nothing to audit: the {_catalog_text(catalog, config, False)} has no entry to run")
        for note in skipped:
            print(f"dpaudit audit: skipped {note}", file=sys.stderr, flush=True)
        print(
            f"dpaudit audit: {len(entries)} entries of the {_catalog_text(catalog, config, quick)}",
            file=sys.stderr,
            flush=True,
        )
        with _executor(address) as executor:
            return _run_suite(
                args,
                entries,
                quick,
                executor,
                catalog=catalog,
                config=str(config.file) if config is not None else None,
                baseline=baseline,
                junit=junit,
                started=started,
                skipped=skipped,
            )


def _deep(entry: Any) -> Any:
    """`entry` at its deep size: a run-limited entry at its `deep_samples` runs per input (the runs its pin note
    says the interval needs), a one-run entry at its `deep` run (more canaries: `OneRunEntry.at_deep_size`);
    any other entry as it is."""
    from dpaudit.entries import OneRunEntry

    if isinstance(entry, OneRunEntry):
        return entry.at_deep_size()
    deep = getattr(entry, "deep_samples", None)
    return dataclasses.replace(entry, samples=deep, deep_samples=None) if deep is not None else entry


def _process_age() -> float:
    """Seconds since this process started (Linux: /proc/self/stat's start time against /proc/uptime), 0 where
    that cannot be read: the time spent importing and building the parser before `run`."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat, open("/proc/uptime", encoding="ascii") as up:
            start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            return max(0.0, float(up.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def _check_samples(samples: int) -> None:
    """--samples as the auditor will check it (its run and chunk limits), before any work."""
    from dpaudit.audit import AuditOptions

    try:
        AuditOptions.create(claim_epsilon=1.0, samples=samples)
    except ValueError as exc:
        raise FlagError("--samples", f"{samples} runs per input cannot be audited: {exc}") from None


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
        raise FlagError(
            "--executor",
            "dask://… needs the 'distributed' package (the [dask] extra: pip install 'distributed>=2023.1')",
        ) from None
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
    except Exception as exc:  # noqa: BLE001  (a refused, silent or non-Dask peer: its bytes can be anything)
        raise FlagError(
            "--executor",
            f"no Dask scheduler answered at {address} within {CONNECT_TIMEOUT:g} s "
            f"({type(exc).__name__}: {str(exc)[:160]})",
        ) from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise FlagError("--executor", f"{address} answered, but not as a Dask scheduler")


def _run_suite(
    args: argparse.Namespace,
    entries: list,
    quick: bool,
    executor: Any,
    *,
    catalog: str,
    config: str | None,
    baseline: dict[str, Any] | None,
    junit: pathlib.Path | None,
    started: float,
    skipped: list[str] | None = None,
) -> int:
    from dpaudit.report import build_report, write_report
    from dpaudit.report.model import one_run_note

    confidence = args.confidence
    calls = sum(e.audit_calls() for e in entries)
    per_call = 1.0 - (1.0 - confidence) / calls
    start = started
    jobs = suite_jobs(args.jobs, len(entries), local=executor is None)
    options = dict(
        samples=args.samples,
        quick=quick,
        confidence=per_call,
        seed=args.seed,
        executor=executor,
        regret=not args.no_regret,
    )
    if baseline is not None:  # checked before any audit runs; each entry picks its own events
        options["baseline_events"] = _baseline_events(args, baseline, entries, catalog)
    try:
        records, not_run = run_entries(entries, options, jobs), []
    except SuiteInterrupted as stop:  # Ctrl-C: report what finished, marked incomplete
        records = [r for r in stop.records if r is not None]
        not_run = [e.name for e, r in zip(entries, stop.records) if r is None]
    settings = {
        "seed": args.seed,
        "samples": args.samples,
        "quick": quick,
        "confidence": confidence,
        "per_audit_confidence": per_call,
        "audit_calls": calls,
        "executor": args.executor,
        "jobs": jobs,
        "regret": not args.no_regret,
        "deep": bool(args.deep),
        "names": [e.name for e in entries],
        "catalog": catalog,
        "config": config,
        "incomplete": bool(not_run),
        "not_run": not_run,
    }
    if skipped:  # a library catalog's libraries that are not installed
        settings["skipped"] = skipped
    report = build_report(
        [dict(r) for r in records],
        settings=settings,
        command=_command(args),
        seconds=round(time.perf_counter() - start, 2),
    )
    if baseline is not None and not not_run:
        from dpaudit.baseline import compare

        report["baseline"] = compare(baseline, report, source=str(args.baseline))
    paths = write_report(report, args.out)
    if junit is not None:
        from dpaudit.junit import write_junit

        write_junit(report, junit)
    summ = report["summary"]
    code = exit_status(report)
    if args.json:
        print(
            json.dumps(
                {
                    "ok": summ["ok"],
                    "exit_status": code,
                    "out": str(args.out),
                    "summary": summ,
                    "regressions": report["baseline"]["regressions"] if report.get("baseline") else None,
                    "incomplete": bool(not_run),
                    "not_run": not_run,
                    **({"skipped": skipped} if skipped else {}),
                    "findings": [f["text"] for f in report["findings"]],
                    "entries": [
                        {
                            "name": r["name"],
                            "algorithm": r["algorithm"],
                            "expect": r["expect"],
                            "ok": r["ok"],
                            "error": r["error"],
                            "claims": [
                                {
                                    k: c[k]
                                    for k in (
                                        "label",
                                        "epsilon",
                                        "delta",
                                        "accountant",
                                        "epsilon_lower",
                                        "verdict",
                                        "floating_point",
                                        "expect",
                                        "ok",
                                        "mode",
                                        "num_canaries",
                                        "guesses",
                                        "correct",
                                    )
                                    if k in c
                                }
                                for c in r["claims"]
                            ],
                        }
                        for r in records
                    ],
                },
                indent=1,
                default=str,
            )
        )
    else:
        for i, r in enumerate(records):
            if catalog in EXTRA_CATALOGS and (i == 0 or records[i - 1]["algorithm"] != r["algorithm"]):
                print(f"{r['algorithm']}:")  # the libraries catalog: a library and its version, or a bandit
            for c in r["claims"]:
                print(
                    f"{r['name']:<34} {c['label']:<10} claim ε={c['epsilon']:<8.4g} δ={c['delta']:<8.2g} "
                    f"ε_lower={c['epsilon_lower']:<8.4g} {c['verdict']:<10} "
                    f"{_claim_status(r['name'], c, report.get('baseline'))}"
                    f"{one_run_note(dict(c))}{_floating_note(dict(c))}"
                )
            if r["error"]:
                print(f"{r['name']:<34} ERROR {r['error']}")
        if report.get("baseline") is not None:
            print(
                f"baseline {args.baseline}: {len(report['baseline']['regressions'])} regression(s)"
                + (": " + ", ".join(report["baseline"]["regressions"]) if report["baseline"]["regressions"] else "")
            )
        gate = {
            EXIT_OK: "PASS",
            EXIT_FAILED: "FAIL",
            EXIT_INTERNAL: "ERROR (an audit could not run)",
            EXIT_INTERRUPTED: f"INTERRUPTED ({len(records)} of {len(entries)} entries finished; "
            "the report is marked incomplete)",
        }[code]
        for note in skipped or []:
            print(f"skipped {note}")
        print(f"catalog: {_catalog_text(catalog, config, quick)}")
        print(f"gate: {gate}; report: {paths['html']}")
    return code


def suite_jobs(jobs: int | None, n_entries: int, *, local: bool) -> int:
    """How many entries run at once: `jobs` if given, else the CPUs this process may use (1 on a
    one-core machine, and 1 with a Dask executor, whose scheduler spreads each audit's chunks);
    never more than there are entries, and 1 where processes cannot be forked."""
    if jobs is None:
        jobs = _usable_cpus() if local else 1
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(int(jobs), n_entries))


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: The entries and options of the suite being run, read by forked workers (`_child`): entries
#: stay in this process's registry (users' entries included) and are never pickled.
_SUITE: tuple[list, dict[str, Any]] | None = None

#: Seconds a worker is given to end after SIGTERM before it is killed.
_TERMINATE_SECONDS = 2.0


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the suite; `records` holds the finished entries' records (None where unfinished)."""

    def __init__(self, records: list[EntryRecord | None]):
        super().__init__("interrupted")
        self.records = records


def _progress(i: int, n: int, rec: EntryRecord) -> None:
    status = "ok" if rec["ok"] else ("ERROR " + rec["error"] if rec["error"] else "UNEXPECTED")
    print(f"[{i}/{n}] {rec['name']} ... {status} ({rec['seconds']:.1f} s)", file=sys.stderr, flush=True)


def run_entries(entries: list[Entry], options: dict[str, Any], jobs: int) -> list[EntryRecord]:
    """Every entry's record, in the order of `entries`, from `jobs` processes at once.

    Each entry's audits are seeded from the suite seed and the entry's name alone
    (`dpaudit.entry_runner.entry_seed`) and every audit's chunks give bit-identical results wherever
    they run, so the records do not depend on `jobs` (only their `seconds` do).  With jobs > 1 each
    entry runs in a forked process of its own (at most `jobs` at once, each auditing serially: no
    pool inside a pool), so a process that dies (killed, out of memory, `os._exit`) is that entry's
    error and the other entries still run.  Progress lines go to stderr as entries finish.
    Raises SuiteInterrupted (with the finished records) on Ctrl-C, after stopping the workers.
    """
    n = len(entries)
    records: list[EntryRecord | None] = [None] * n
    global _SUITE
    if jobs <= 1:
        try:
            for i, entry in enumerate(entries):
                records[i] = record = entry.run(**options)
                _progress(i + 1, n, record)
        except KeyboardInterrupt:  # entries record what their own code raises: this is the user's Ctrl-C
            raise SuiteInterrupted(records) from None
    else:
        _SUITE = (entries, {**options, "executor": "serial"})
        try:
            _run_forked(entries, records, jobs)
        finally:
            _SUITE = None
    return [r for r in records if r is not None]  # every entry's, by now


def _child(index: int, conn: Any, parent: int, threads: int) -> None:
    """A worker's body: audit entry `index` and send its record; SIGINT is the parent's to handle."""
    import signal

    from dpaudit.audit.workers import worker_init

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker_init(parent, threads)
    if _SUITE is None:  # set by `run_entries` before it forks
        raise RuntimeError("no suite to run in this worker")
    entries, options = _SUITE
    try:
        record = entries[index].run(**options)
    except BaseException as exc:  # noqa: BLE001  (dpaudit's own failure; entries record their users' exceptions)
        record = lost_record(entries[index], f"{type(exc).__name__}: {exc}")
    conn.send(record)
    conn.close()


def _run_forked(entries: list[Entry], records: list[EntryRecord | None], jobs: int) -> None:
    from multiprocessing.connection import wait

    from dpaudit.audit.workers import blas_threads

    ctx = multiprocessing.get_context("fork")
    pending = list(range(len(entries)))
    running: dict[Any, tuple[int, Any]] = {}  # reading end -> (entry index, process)
    try:
        while pending or running:
            while pending and len(running) < jobs:
                i = pending.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(
                    target=_child,
                    args=(i, writer, os.getpid(), blas_threads(jobs)),
                    name=f"dpaudit-{entries[i].name}",
                    daemon=True,
                )
                proc.start()
                writer.close()  # the worker holds the only writing end: its death reads as end of file
                running[reader] = (i, proc)
            for ready in wait(list(running)):
                i, proc = running.pop(ready)
                conn: Any = ready  # one of the reading ends in `running`
                try:
                    record: EntryRecord | None = conn.recv()
                except (EOFError, OSError):
                    record = None
                conn.close()
                proc.join()
                if record is None:
                    record = lost_record(entries[i], _death(proc.exitcode))
                records[i] = record
                _progress(i + 1, len(entries), record)
    except KeyboardInterrupt:
        _stop([proc for _, proc in running.values()])
        raise SuiteInterrupted(records) from None
    except BaseException:
        _stop([proc for _, proc in running.values()])
        raise


def _death(exitcode: int | None) -> str:
    """Why a worker ended without a record, from its exit code."""
    import signal

    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (the out-of-memory killer, or kill -9)" if name == "SIGKILL" else ""
        return f"WorkerDied: the worker process auditing this entry was killed by {name}{hint}"
    return f"WorkerDied: the worker process auditing this entry exited with status {exitcode} before reporting"


def _stop(procs: list[Any]) -> None:
    """End the workers: SIGTERM, then SIGKILL for those still alive after `_TERMINATE_SECONDS`."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + _TERMINATE_SECONDS
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def exit_status(report: dict[str, Any]) -> int:
    """130 if the run was interrupted (the report is incomplete); 3 if an entry could not run; else
    with a baseline comparison 1 on a regression, without one 1 unless every claim is as expected;
    else 0."""
    summ = report["summary"]
    if report.get("settings", {}).get("incomplete"):
        return EXIT_INTERRUPTED
    if summ["errors"]:
        return EXIT_INTERNAL
    if report.get("baseline") is not None:
        return EXIT_FAILED if report["baseline"]["regressions"] else EXIT_OK
    return EXIT_OK if summ["ok"] else EXIT_FAILED
