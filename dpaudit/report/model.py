"""The report document: its schema, its assembly from entry records, and the rows both pages show.

A report is a JSON document (`SCHEMA`, `SCHEMA_VERSION`) holding everything needed to reproduce it:
package versions, the command, the suite seed and each entry's derived seed, samples per side,
confidence (family-wise and per audit call), algorithm parameters, and every audit's result.
"""

from __future__ import annotations

import datetime as _dt
import math
import platform
import re
import sys
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from dpaudit.report.glossary import readable_target

__all__ = [
    "COLUMNS",
    "INTERVAL_COLUMNS",
    "ONE_RUN_COLUMNS",
    "ONE_RUN_TEXT",
    "ONE_RUN_TITLE",
    "PIN_TARGET",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SUMMARY_COLUMNS",
    "build_report",
    "by_algorithm",
    "claim_columns",
    "claim_rows",
    "entry_note",
    "finding_sections",
    "findings",
    "fmt",
    "interval",
    "interval_rows",
    "is_user",
    "one_run_note",
    "one_run_rows",
    "one_run_section",
    "one_run_unpaired",
    "pin_text",
    "proven_claims",
    "samples_text",
    "settings_lines",
    "summarize",
    "versions",
]

SCHEMA = "dpaudit.report"
#: 2: a user claim's and audit's Clopper-Pearson bound on the chosen event is `event_epsilon_upper` (version 1 named
#: it `epsilon_upper`, like the entry-level sound bound; `dpaudit.report.load_report` upgrades version 1).
#: Version 2 also holds `one_run_pairs` (`one_run_rows`, `one_run_unpaired`); a document without it (written
#: before it was added) is read as is, the pages computing the section from its entries.
SCHEMA_VERSION = 2

PIN_TARGET = 0.9
"""An entry is pinned when ε_lower/ε_upper >= PIN_TARGET (within 10%); below it the report states why."""
_ZERO_EPSILON = 1e-9
"""A sound claim at or below this is "ε = 0 at δ" (claims are positive: 0 is written 1e-12)."""


def versions() -> dict[str, str]:
    """Versions of Python, the platform and every package a result depends on."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("dpaudit", "numpy", "scipy", "dp-accounting", "statsmodels", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table: `digits` significant digits, "∞" for inf, "–" for None."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if math.isnan(value):
        return "nan"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def summarize(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts for the gate: ok iff every claim came out as expected and no entry failed to run."""
    entries = list(entries)
    claims = [(e, c) for e in entries for c in e.get("claims", [])]
    return {
        "entries": len(entries),
        "claims": len(claims),
        "ok": all(e.get("ok") for e in entries),
        "errors": [e["name"] for e in entries if e.get("error")],
        "violations_found": [
            f"{e['name']}:{c['label']}" for e, c in claims if c["verdict"] == "violation" and c["expect"] == "violation"
        ],
        "unexpected_violations": [
            f"{e['name']}:{c['label']}"
            for e, c in claims
            if c["verdict"] == "violation" and c["expect"] == "consistent"
        ],
        "missed_violations": [
            f"{e['name']}:{c['label']}"
            for e, c in claims
            if c["verdict"] == "consistent" and c["expect"] == "violation"
        ],
    }


def _claim_phrase(c: dict[str, Any]) -> str:
    acct = c["accountant"]
    by = "as stated" if acct == "stated" else ("best accountant" if acct == "best" else f"{acct} accountant")
    return f"ε = {fmt(c['epsilon'])} at δ = {fmt(c['delta'])} ({by})"


def is_user(entry: dict[str, Any]) -> bool:
    """Whether the entry is the user's own (declared with register_audit), not the built-in catalog's."""
    return entry.get("origin") == "user"


def _subject(e: dict[str, Any]) -> str:
    """Who a finding is about: the user's entry by its name; a catalog entry by its algorithm (and variant)."""
    if is_user(e):
        return str(e["name"])
    subject = f"{e['algorithm']} ({e['variant']})" if e.get("variant") else str(e["algorithm"])
    return f"{subject}, audit {e['name']}"


def _headline(e: dict[str, Any], c: dict[str, Any]) -> str:
    """One line: what was claimed, what the audit shows, how sure it is."""
    ratio = f" ({fmt(c['epsilon_lower'] / c['epsilon'])}× the claim)" if c["epsilon"] > 0 else ""
    return (
        f"{_subject(e)}: {c['label']} claim {_claim_phrase(c)}; the audit shows ε ≥ "
        f"{fmt(c['epsilon_lower'])}{ratio} with {fmt(100 * c['confidence'], 4)}% confidence."
    )


_LONG_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{5,}(?:e[-+]?\d+)?")
"""A number printed with more digits than a reader needs (an event's threshold), shown to 4 digits."""


def _pairs_text(e: dict[str, Any], pairs: list[dict[str, Any]]) -> str:
    """The neighbouring inputs: "relation: description" (a user's: "description (relation R)")."""
    if is_user(e):
        return "; ".join(f"{p.get('description')} (relation {p.get('relation')})" for p in pairs)
    return "; ".join(f"{p.get('relation')}: {p.get('description')}" for p in pairs)


def _event_detail(e: dict[str, Any], c: dict[str, Any]) -> str | None:
    """The event the audit counted, with its event ε_upper (user claims), or how the audit chose it."""
    ev = c.get("event")
    if isinstance(ev, dict) and ev.get("event"):
        text = _LONG_NUMBER.sub(lambda m: fmt(float(m.group()), 4), str(ev["event"]))
        upper = c.get("event_epsilon_upper")
        bound = "" if upper is None else f"; this event's ε is at most {fmt(upper)} (event ε_upper, Clopper-Pearson)"
        return (
            f"{text}, direction {ev.get('direction')}: counted {ev.get('count_first')} vs "
            f"{ev.get('count_second')} times in {ev.get('nobs')} runs per side{bound}"
        )
    if c.get("mode") == "one-run":
        return one_run_note(c).strip(" ()")
    audits = [a for a in e.get("audits") or [] if isinstance(a, dict) and a.get("pair", 0) == c.get("pair", 0)]
    a = audits[0] if audits else None
    if a is None or a.get("direction") is None:
        return None
    ratio = "; its ε bounded by the thinned ratio test" if a.get("bound") == "ratio" else ""
    return (
        f"the event the audit chose on {a.get('selection_samples')} runs per side, counted on "
        f"{a.get('estimation_samples')} fresh runs per side (direction {a['direction']}{ratio})"
    )


def _details(e: dict[str, Any], c: dict[str, Any], interval_: dict[str, Any] | None) -> list[dict[str, str]]:
    """The finding's details: audit, neighbours, event, interval, accountants, source (those known)."""
    pair = (e.get("pairs") or [{}])[c.get("pair", 0)] if e.get("pairs") else {}
    observable = e.get("observable_description") or ""
    seen = (
        f"{e['observable']}: {readable_target(observable)}"
        if observable and observable != e["observable"]
        else str(e["observable"])
    )
    out = [{"label": "audit", "text": f"{e['name']} ({seen})"}]
    if pair:
        out.append({"label": "neighbours", "text": _pairs_text(e, [pair])})
    event = _event_detail(e, c)
    if event:
        out.append({"label": "event", "text": event})
    if interval_ is not None and interval_.get("tight") == "violated":
        out.append(
            {
                "label": "interval",
                "text": (
                    f"none: the audit's ε_lower exceeds the {interval_['claim']} claim's ε = {fmt(interval_['epsilon_upper'])}, "
                    "a claim expected to hold"
                ),
            }
        )
    elif interval_ is not None and interval_.get("epsilon_upper") is not None:
        out.append(
            {
                "label": "interval",
                "text": (
                    f"the true ε at δ = {fmt(interval_['delta'])} lies in [{fmt(interval_['epsilon_lower'])}, "
                    f"{fmt(interval_['epsilon_upper'])}]: sound ε_upper from the {interval_['claim']} claim "
                    f"({interval_['accountant']})"
                ),
            }
        )
    accs = ", ".join(f"{k} {fmt(v)}" for k, v in (c.get("by_accountant") or {}).items() if v is not None)
    others = [o for o in e["claims"] if o is not c and o["verdict"] == "consistent"]
    holds = "; ".join(f"{o['label']} {_claim_phrase(o)}" for o in others)
    if accs or holds:
        text = (f"this claim under each accountant: {accs}" if accs else "") + ("; " if accs and holds else "")
        out.append(
            {"label": "accountants", "text": text + (f"claims the audit is consistent with: {holds}" if holds else "")}
        )
    if c.get("source"):
        out.append({"label": "source", "text": str(c["source"])})
    return out


def findings(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every claim the audits contradict: `text`, one line (what was claimed, what the audit shows, how
    sure), and `details` (audit, neighbours, event, interval, accountants, source; label and text each).

    kind "paper": a claim about a faithful implementation (a paper's, or a user's own); kind "variant":
    a known-buggy variant (e.g. of the authors' public code, or a user's twin declared to fail) caught
    against the claim it was shipped with.
    """
    out = []
    for e in entries:
        for c in e.get("claims", []):
            if c["verdict"] != "violation":
                continue
            iv = e.get("interval") if "interval" in e else interval(e)
            out.append(
                {
                    "kind": "variant" if e.get("variant") else "paper",
                    "entry": e["name"],
                    "algorithm": e["algorithm"],
                    "claim": c["label"],
                    "epsilon": c["epsilon"],
                    "delta": c["delta"],
                    "epsilon_lower": c["epsilon_lower"],
                    "confidence": c["confidence"],
                    "expected": c["expect"] == "violation",
                    "text": _headline(e, c),
                    "details": _details(e, c, iv),
                }
            )
    return out


FINDING_SECTIONS = (
    ("findings", "Findings: paper claims the audits contradict", "paper", False),
    ("user-findings", "Findings: your claims the audits contradict", "paper", True),
    ("variants", "Known-buggy variants caught", "variant", False),
    ("user-expected", 'Expected violations caught: your entries declared with expect="violation"', "variant", True),
)
"""(id, title, finding kind, the user's entries?) of the findings sections, in page order."""


def finding_sections(report: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(id, title, findings) of each findings section the report has entries for: the paper and variant
    sections for built-in entries, the "your claims" and "expected violations" ones for the user's."""
    entries = [e for e in report["entries"] if isinstance(e, dict)]
    users = {e.get("name") for e in entries if is_user(e)}
    has = {False: any(not is_user(e) for e in entries), True: bool(users)}
    if not entries:
        has[False] = True
    out = []
    for ident, title, kind, user in FINDING_SECTIONS:
        if has[user]:
            found = [f for f in report["findings"] if f["kind"] == kind and (f.get("entry") in users) == user]
            out.append((ident, title, found))
    return out


def entry_note(e: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) parts of an entry's note under its algorithm's table: what it audits, what it observes,
    its neighbouring inputs, the source, and how it ran."""
    description = readable_target(e.get("description") or "").strip()
    if description and description[-1] not in ".!?":
        description += "."
    seen = readable_target(e.get("observable_description") or "")
    observable = f"{e['observable']}: {seen}" if seen and seen != e["observable"] else str(e["observable"])
    pairs = _pairs_text(e, e["pairs"])
    parts = [("", description), ("observable", observable), ("neighbours", pairs), ("source", e["source"] or "–")]
    if e.get("mode") == "one-run" and isinstance(e.get("one_run"), dict):
        runs = f"one run at T = {e['one_run'].get('horizon')} with {e['one_run'].get('num_canaries')} canaries"
    else:
        runs = f"{e['audits'][0].get('samples') if e.get('audits') else '–'} samples per side"
        box = e["audits"][0].get("time_box") if e.get("audits") else None
        if isinstance(box, dict):
            runs = (
                f"time budget {fmt(box['budget'])} s: {len(box['stage_samples'])} stages reached "
                f"{box['stage_samples'][-1]} runs per side ({box['samples_drawn']} in all, stopped by "
                f"{'a settled violation' if box['stopped'] == 'violation' else 'the budget'}); the bound is "
                f"stage {box['best_stage'] + 1}'s, {e['audits'][0].get('samples')} samples per side"
            )
    parts.append(("run", f"seed {e.get('seed')}, {runs}, {e.get('seconds')} s"))
    return parts


def _auto_reason(iv: dict[str, Any]) -> str:
    """Why an interval is wide, from the numbers alone (used where the entry declares no reason)."""
    if iv["epsilon_upper"] is None:
        return "no sound claim with a finite ε: nothing bounds the view from above"
    if iv["epsilon_upper"] <= _ZERO_EPSILON and iv["mu_upper"] is None:
        return (
            f"every sound claim is ε = 0 at δ = {fmt(iv['delta'])} (the view's δ(0) is below the claim's δ), "
            "so the ε-interval says nothing, and the entry declares no accountant μ to pin instead"
        )
    if iv["lower"] == 0:
        return "the audit found no event separating the neighbours at this sample size"
    return "no analysis of the gap yet: neither side is known to be exact for this view"


def proven_claims(claims: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The claims dpaudit can prove for the view: expected to hold, and not the paper's own where the
    entry carries a corrected claim (a paper's claim, or its own composition, that dpaudit's analysis
    corrects is not a bound dpaudit proves, even where the audit cannot refute it)."""
    claims = [c for c in claims if c["expect"] == "consistent"]
    corrected = any(c["label"] == "corrected" for c in claims)
    return [c for c in claims if not (corrected and c["label"].startswith("paper"))]


def interval(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The interval [ε_lower, ε_upper] an entry leaves for the true ε of its audited view.

    ε_upper is the tightest proven claim (`proven_claims`: the accountants' and the corrected bounds,
    never a claim known to be wrong): among those with a finite ε, the one with the largest
    ratio ε_lower/ε at its own δ (for claims at one δ: the smallest), with ε_lower the audit's bound
    at that δ. pin = ε_lower/ε_upper. When the entry declares the accountant's Gaussian-DP μ
    (`mu_upper`), the pin is the auditor's μ_lower over it (Dong, Roth, Su, "Gaussian Differential
    Privacy", JRSS-B 2022: μ-GDP is the whole trade-off curve, where ε at a large δ says little).
    `tight` is "both" when pinned (pin >= PIN_TARGET), "violated" when the audit exceeds a sound
    claim, else the side the entry's `pin_note` shows to be tight ("upper" when the audit is the
    loose side, "lower" when the accounting is, "neither"), "unknown" without a note; `reason`
    says why the pin is below PIN_TARGET. None for an entry that did not run.
    The entry-level `epsilon_upper` is this proven bound; it is not the claim-level `event_epsilon_upper` of
    user audits (the Clopper-Pearson upper bound on the ε of the event that audit chose).
    """
    if entry.get("error") or not entry.get("claims"):
        return None
    sound = proven_claims(entry["claims"])
    finite = [c for c in sound if c["epsilon"] is not None and math.isfinite(c["epsilon"])]
    best = None
    for c in finite:
        ratio = (
            c["epsilon_lower"] / c["epsilon"]
            if c["epsilon"] > _ZERO_EPSILON
            else (math.inf if c["epsilon_lower"] > 0 else 0.0)
        )
        key = (ratio, -c["epsilon"])
        if best is None or key > best[0]:
            best = (key, c)
    claim = best[1] if best else None
    mu_lowers = [a["mu_lower"] for a in entry.get("audits", []) if a.get("mu_lower") is not None]
    mu_lower = max(mu_lowers) if mu_lowers else None
    mu_upper = entry.get("mu_upper")
    iv: dict[str, Any] = {
        "epsilon_lower": None if claim is None else claim["epsilon_lower"],
        "epsilon_upper": None if claim is None else claim["epsilon"],
        "delta": None if claim is None else claim["delta"],
        "claim": None if claim is None else claim["label"],
        "accountant": None if claim is None else claim["accountant"],
        "epsilon_pin": None,
        "mu_lower": mu_lower,
        "mu_upper": mu_upper,
        "mu_pin": None,
        "lower": None if claim is None else claim["epsilon_lower"],
        "sound": all(c["verdict"] == "consistent" for c in sound),
    }
    if claim is not None and claim["epsilon"] > _ZERO_EPSILON:
        iv["epsilon_pin"] = claim["epsilon_lower"] / claim["epsilon"]
    if mu_upper is not None and mu_upper > 0 and mu_lower is not None:
        iv["mu_pin"] = mu_lower / mu_upper
    if mu_upper is not None:
        iv["pin_kind"], iv["pin"] = "mu", iv["mu_pin"]
        iv["lower"] = mu_lower
    else:
        iv["pin_kind"], iv["pin"] = "epsilon", iv["epsilon_pin"]
    note = entry.get("pin_note") or {}
    if not iv["sound"]:
        iv["tight"] = "violated"
    elif iv["pin"] is not None and iv["pin"] >= PIN_TARGET:
        iv["tight"] = "both"
    else:
        iv["tight"] = {"audit": "upper", "accounting": "lower", "both": "neither"}.get(
            str(note.get("loose")), "unknown"
        )
    iv["reason"] = None
    if iv["sound"] and (iv["pin"] is None or iv["pin"] < PIN_TARGET):
        iv["reason"] = note.get("reason") or _auto_reason(iv)
    del iv["lower"]
    return iv


def _with_interval(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry record with `interval`, `epsilon_upper` and `pin` added (every other field kept)."""
    iv = interval(entry)
    return {
        **entry,
        "interval": iv,
        "epsilon_upper": None if iv is None else iv["epsilon_upper"],
        "pin": None if iv is None else iv["pin"],
    }


def build_report(
    entries: list[dict[str, Any]],
    *,
    settings: dict[str, Any],
    command: list[str] | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """Assemble the report document from entry records (see `dpaudit.audits.run.run_entry`); each
    entry gains its interval (`interval`, `epsilon_upper`, `pin`)."""
    entries = [_with_interval(e) for e in entries]
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "versions": versions(),
        "command": list(command) if command is not None else None,
        "settings": dict(settings),
        "seconds": seconds,
        "entries": entries,
        "summary": summarize(entries),
        "findings": findings(entries),
        "one_run_pairs": {"rows": one_run_rows(entries), "unpaired": one_run_unpaired(entries)},
    }


def by_algorithm(entries: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Entries grouped by algorithm, in the order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault(e["algorithm"], []).append(e)
    return groups


def claim_rows(entry: dict[str, Any]) -> list[dict[str, str]]:
    """One table row per claim of an entry, formatted for Markdown and HTML alike."""
    rows = []
    reg = entry.get("regret")
    regret = "–"
    if reg:
        ci = reg.get("final_ci")
        interval = (
            f"[{fmt(ci[0])}, {fmt(ci[1])}]"
            if ci is not None and all(map(math.isfinite, ci))
            else "[no interval: needs ≥ 2 runs]"
        )
        regret = f"{fmt(reg['final_mean'])} {interval} at T={reg['horizon']}"
    if entry.get("error"):
        return [
            {
                "entry": entry["name"],
                "observable": entry["observable"],
                "claim": "–",
                "claimed": "–",
                "accountants": "–",
                "delta": "–",
                "lower": "–",
                "verdict": "ERROR",
                "floating": "–",
                "expect": entry["expect"],
                "tightness": "–",
                "regret": regret,
                "status": entry["error"],
            }
        ]
    for c in entry["claims"]:
        accs = ", ".join(f"{k} {fmt(v)}" for k, v in c.get("by_accountant", {}).items() if v is not None)
        rows.append(
            {
                "entry": entry["name"],
                "observable": entry["observable"],
                "claim": c["label"],
                "claimed": f"{fmt(c['epsilon'])} ({c['accountant']})",
                "accountants": accs or "–",
                "delta": fmt(c["delta"]),
                "lower": f"{fmt(c['epsilon_lower'])} @{fmt(100 * c['confidence'], 4)}%" + one_run_note(c),
                "verdict": c["verdict"],
                "floating": floating_text(c),
                "expect": c["expect"],
                "tightness": fmt(c["tightness"], 2),
                "regret": regret,
                "status": "ok" if c["ok"] else "UNEXPECTED",
            }
        )
    return rows


def floating_text(claim: dict[str, Any]) -> str:
    """The claim's floating-point verdict: "ε ≥ x: verdict" (", gates" under float_check = gate), or "–"."""
    fp = claim.get("floating_point")
    if not fp:
        return "–"
    return f"ε ≥ {fmt(fp['epsilon_lower'])}: {fp['verdict']}" + (", gates" if fp["gate"] else "")


_ONE_RUN_ANALYSES = {
    "epsilon": "ε analysis (Steinke, Nasr, Jagielski 2023)",
    "fdp": "f-DP analysis (Mahloujifar, Melis, Chaudhuri 2025)",
}


def one_run_note(claim: dict[str, Any]) -> str:
    """ " (one run: m canaries, r guesses, w correct; <analysis>)" for a claim judged by a one-run audit, else "".

    The analysis is the ε analysis of Steinke, Nasr, Jagielski (NeurIPS 2023, Thm 3.1) or the f-DP analysis of
    Mahloujifar, Melis, Chaudhuri (ICML 2025, Alg. 3); a record written before it was recorded names none."""
    if claim.get("mode") != "one-run":
        return ""
    analysis = claim.get("analysis")
    named = f"; {_ONE_RUN_ANALYSES.get(analysis, analysis)}" if analysis else ""
    return (
        f" (one run: {claim['num_canaries']} canaries, {claim['guesses']} guesses, {claim['correct']} correct{named})"
    )


COLUMNS = (
    ("entry", "entry"),
    ("observable", "observable"),
    ("claim", "claim"),
    ("claimed", "claimed ε (accountant)"),
    ("accountants", "ε under each accountant"),
    ("delta", "δ"),
    ("lower", "ε_lower (confidence)"),
    ("verdict", "verdict"),
    ("floating", "floating point"),
    ("expect", "expected"),
    ("tightness", "tightness ε_lower/ε"),
    ("regret", "regret at T [95% CI]"),
    ("status", "status"),
)


def claim_columns(entries: Iterable[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The columns of an algorithm's claim table: COLUMNS, without the regret column when no entry has a
    regret run (a user's entries never have one), nor the floating-point one when no claim has that verdict."""
    entries = list(entries)
    drop = set()
    if not any(e.get("regret") for e in entries):
        drop.add("regret")
    if not any(c.get("floating_point") for e in entries for c in e.get("claims") or ()):
        drop.add("floating")
    return tuple(c for c in COLUMNS if c[0] not in drop)


def samples_text(report: dict[str, Any]) -> str:
    """The runs per input the audits used: the --samples given, else each entry's own as a range (one-run
    audits use one run whatever --samples says)."""
    given = report["settings"].get("samples")
    if given is not None:
        return f"{given} per side (--samples)"
    counts = sorted(
        {
            a["samples"]
            for e in report.get("entries", [])
            for a in e.get("audits") or []
            if isinstance(a, dict) and isinstance(a.get("samples"), int) and not isinstance(a["samples"], bool)
        }
    )
    one_run = any(e.get("mode") == "one-run" for e in report.get("entries", []))
    if not counts:
        return "one run per one-run audit" if one_run else "each entry's own"
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return f"{span} per side (each entry's own)" + (", one run for one-run audits" if one_run else "")


def settings_lines(report: dict[str, Any]) -> list[str]:
    """The report's settings section as markdown bullet lines: versions, seed, samples, confidence,
    catalog, skipped and unfinished entries, command and wall time.
    """
    s = report["settings"]
    v = report["versions"]
    lines = [
        f"- created {report['created']}, dpaudit {v.get('dpaudit')}, Python {v.get('python')}, numpy {v.get('numpy')}, "
        f"dp-accounting {v.get('dp-accounting')}",
        f"- seed {s.get('seed')}, samples {samples_text(report)}, "
        f"family-wise confidence {fmt(s.get('confidence'), 4)} over {s.get('audit_calls')} audit calls "
        f"(each at {fmt(s.get('per_audit_confidence'), 6)}, Bonferroni), executor {s.get('executor')}",
    ]
    if s.get("catalog"):
        from dpaudit.user_config import catalog_text

        lines.append(f"- catalog: {catalog_text(s['catalog'], s.get('config'), bool(s.get('quick')))}")
    lines += [f"- skipped {note}" for note in s.get("skipped") or []]
    if s.get("incomplete"):
        lines.append(f"- **incomplete**: interrupted before {', '.join(s.get('not_run') or [])} finished")
    if report.get("command"):
        lines.append(f"- command: `{' '.join(report['command'])}`")
    if report.get("seconds") is not None:
        lines.append(f"- wall time {fmt(report['seconds'])} s (the command's, up to assembling this report)")
    return lines


def pin_text(pin: Any) -> str:
    """A pin for the tables: rounded down to 3 decimals, so a pin below PIN_TARGET never shows as PIN_TARGET."""
    if pin is None:
        return "–"
    if isinstance(pin, str) or not math.isfinite(float(pin)) or float(pin) < 0.5:
        return fmt(pin, 2)
    shown = math.floor(float(pin) * 1000 + 1e-9) / 1000
    return f"{shown:.3f}".rstrip("0").rstrip(".") if shown else "0"


def interval_rows(entries: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per entry of the interval table, for Markdown and HTML alike: entries that ran and have a
    proven upper bound (a known-buggy variant whose only claim is the wrong one has none)."""
    rows = []
    for e in entries:
        iv = e.get("interval") if "interval" in e else interval(e)
        if iv is None or iv["epsilon_upper"] is None:
            continue
        mu = (
            f"[{fmt(iv['mu_lower'])}, {fmt(iv['mu_upper'])}]"
            if iv["mu_upper"] is not None
            else ("≥ " + fmt(iv["mu_lower"]) if iv["mu_lower"] is not None else "–")
        )
        pin = "–" if iv["pin"] is None else pin_text(iv["pin"]) + (" (μ)" if iv["pin_kind"] == "mu" else "")
        rows.append(
            {
                "entry": e["name"],
                "delta": fmt(iv["delta"]),
                "interval": f"[{fmt(iv['epsilon_lower'])}, {fmt(iv['epsilon_upper'])}]",
                "upper": "–" if iv["claim"] is None else f"{iv['claim']} ({iv['accountant']})",
                "mu": mu,
                "pin": pin,
                "tight": iv["tight"],
                "reason": iv["reason"] or "",
            }
        )
    return rows


INTERVAL_COLUMNS = (
    ("entry", "entry"),
    ("delta", "δ"),
    ("interval", "[ε_lower, sound ε_upper]"),
    ("upper", "sound ε_upper from"),
    ("mu", "[μ_lower, μ_upper]"),
    ("pin", "pin"),
    ("tight", "tight side"),
    ("reason", "why not pinned within 10%"),
)


SUMMARY_COLUMNS = (
    ("entry", "entry"),
    ("claim", "claim"),
    ("claimed", "claimed ε (accountant)"),
    ("delta", "δ"),
    ("lower", "ε_lower (confidence)"),
    ("verdict", "verdict"),
    ("expect", "expected"),
    ("status", "status"),
)


def _same(a: Any, b: Any) -> bool:
    """Whether two claimed numbers (an ε or a δ) are the same claim's, up to rounding."""
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def _mode_groups(entries: Iterable[dict[str, Any]]) -> dict[tuple[str, str], tuple[list[Any], list[Any]]]:
    """(one-run entries, many-run entries) that ran, per (algorithm, variant) that has both; a variant is
    its own algorithm (a known-buggy twin is compared with its own twin only)."""
    groups: dict[tuple[str, str], tuple[list[Any], list[Any]]] = {}
    for e in entries:
        if not isinstance(e, dict) or e.get("error") or not e.get("claims"):
            continue
        sides = groups.setdefault((str(e["algorithm"]), str(e.get("variant") or "")), ([], []))
        sides[0 if e.get("mode") == "one-run" else 1].append(e)
    return {key: sides for key, sides in groups.items() if sides[0] and sides[1]}


def _held(e: dict[str, Any]) -> list[dict[str, Any]]:
    """The entry's claims expected to hold, with a number."""
    return [c for c in e["claims"] if c["expect"] == "consistent" and c["epsilon"] is not None]


def _best_at(entries: list[dict[str, Any]], epsilon: float, delta: float) -> tuple[Any, Any] | None:
    """(entry, claim) with the largest ε_lower among the entries' claims (ε, δ) expected to hold."""
    best = None
    for e in entries:
        for c in _held(e):
            same = _same(c["epsilon"], epsilon) and _same(c["delta"], delta)
            if same and (best is None or c["epsilon_lower"] > best[1]["epsilon_lower"]):
                best = (e, c)
    return best


def _upper_for_both(one: dict[str, Any], many: dict[str, Any], delta: float) -> dict[str, Any] | None:
    """The smallest finite claim at δ proven (`proven_claims`) for both entries' views: a sound ε_upper for each."""
    theirs = [c for c in proven_claims(many["claims"]) if _same(c["delta"], delta)]
    common = [
        c
        for c in proven_claims(one["claims"])
        if _same(c["delta"], delta)
        and c["epsilon"] is not None
        and math.isfinite(c["epsilon"])
        and any(_same(o["epsilon"], c["epsilon"]) for o in theirs)
    ]
    return min(common, key=lambda c: c["epsilon"], default=None)


def _ratio(lower: float, upper: dict[str, Any] | None) -> float | None:
    return None if upper is None or upper["epsilon"] <= _ZERO_EPSILON else lower / upper["epsilon"]


def _relation(e: dict[str, Any], c: dict[str, Any]) -> Any:
    pairs = e.get("pairs") or []
    pair = c.get("pair", 0)
    return pairs[pair].get("relation") if isinstance(pair, int) and 0 <= pair < len(pairs) else None


def _side(e: dict[str, Any], c: dict[str, Any], upper: dict[str, Any] | None) -> dict[str, Any]:
    """One side of a row: the entry, its ε_lower at the claim, the ratio to ε_upper, how it ran."""
    out = {
        "entry": e["name"],
        "epsilon_lower": c["epsilon_lower"],
        "ratio": _ratio(c["epsilon_lower"], upper),
        "confidence": c.get("confidence"),
        "observable": e.get("observable"),
        "relation": _relation(e, c),
        "seconds": e.get("seconds"),
    }
    if e.get("mode") == "one-run":
        run = e.get("one_run") or {}
        out.update(
            analysis=c.get("analysis"),
            horizon=run.get("horizon"),
            num_canaries=run.get("num_canaries", c.get("num_canaries")),
            guesses=c.get("guesses"),
            correct=c.get("correct"),
        )
    else:
        at = [a for a in e.get("audits") or [] if _same(a.get("delta"), c["delta"])]
        audit: dict[str, Any] = max(at, key=lambda a: a["epsilon_lower"], default={})
        out["samples"] = audit.get("samples")
    return out


def one_run_rows(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (algorithm, claim ε, δ) that a one-run entry and a many-run entry of the algorithm both
    expect to hold: the best one-run ε_lower and the best many-run ε_lower on that claim, each with its entry
    and how it ran, and ε_upper, the smallest ε at δ proven for both entries' views (the claim itself where no
    tighter one is known), with each ε_lower's ratio to it.

    Only bounds of the same claim (ε, δ) are compared; the two entries may audit different views of the
    algorithm (a one-run entry the releases holding its canaries, a many-run entry one statistic or the actions),
    so each side names its entry. Taking the larger of several bounds is valid at the report's family-wise
    confidence (every audit call holds at once, Bonferroni).
    """
    rows = []
    for (alg, variant), (ones, manys) in _mode_groups(entries).items():
        keys: list[tuple[float, float, list[str]]] = []
        for c in [c for e in ones + manys for c in _held(e)]:
            key = next((k for k in keys if _same(k[0], c["epsilon"]) and _same(k[1], c["delta"])), None)
            if key is None:
                keys.append((c["epsilon"], c["delta"], [c["label"]]))
            elif c["label"] not in key[2]:
                key[2].append(c["label"])
        for epsilon, delta, labels in keys:
            one, many = _best_at(ones, epsilon, delta), _best_at(manys, epsilon, delta)
            if one is None or many is None:
                continue
            upper = _upper_for_both(one[0], many[0], delta)
            rows.append(
                {
                    "algorithm": alg,
                    "variant": variant,
                    "epsilon": epsilon,
                    "delta": delta,
                    "claims": labels,
                    "epsilon_upper": None if upper is None else upper["epsilon"],
                    "upper_claim": None if upper is None else upper["label"],
                    "upper_accountant": None if upper is None else upper["accountant"],
                    "one_run": _side(*one, upper),
                    "many_run": _side(*many, upper),
                }
            )
    return rows


def _claims_text(entries: list[dict[str, Any]]) -> str:
    shown: list[str] = []
    for c in [c for e in entries for c in _held(e)]:
        text = f"ε = {fmt(c['epsilon'])} at δ = {fmt(c['delta'])}"
        if text not in shown:
            shown.append(text)
    return "; ".join(shown)


def one_run_unpaired(entries: Iterable[dict[str, Any]]) -> list[str]:
    """Why an algorithm with entries in both modes has no row in `one_run_rows`: the claims each mode expects
    to hold share no (ε, δ) (e.g. a one-run audit at δ = 1e-6, many-run audits at δ = 0.1). Algorithms whose
    entries of one mode hold no claim expected to hold (known-buggy twins) are left out."""
    entries = list(entries)
    paired = {(r["algorithm"], r["variant"]) for r in one_run_rows(entries)}
    out = []
    for (alg, variant), (ones, manys) in _mode_groups(entries).items():
        if (alg, variant) in paired or not any(map(_held, ones)) or not any(map(_held, manys)):
            continue
        subject = f"{alg} ({variant})" if variant else alg
        out.append(
            f"{subject}: the two modes expect no claim (ε, δ) in common, so no bounds are compared (one run, "
            f"{', '.join(e['name'] for e in ones)}: {_claims_text(ones)}; many runs, "
            f"{', '.join(e['name'] for e in manys)}: {_claims_text(manys)})"
        )
    return out


def _count(value: Any) -> str:
    """A count for the one-run table: with thousands separators."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else fmt(value)


def _lower_text(side: dict[str, Any]) -> str:
    conf = side.get("confidence")
    at = f" @{fmt(100 * conf, 4)}%" if isinstance(conf, (int, float)) else ""
    return fmt(side.get("epsilon_lower")) + at


def _one_run_cells(row: dict[str, Any]) -> dict[str, str]:
    one, many = row.get("one_run") or {}, row.get("many_run") or {}
    subject = f"{row.get('algorithm')} ({row['variant']})" if row.get("variant") else str(row.get("algorithm"))
    labels = row.get("claims")
    named = ", ".join(map(str, labels)) if isinstance(labels, list) else str(labels)
    upper = row.get("epsilon_upper")
    analysis = one.get("analysis")
    return {
        "or_algorithm": subject,
        "or_claim": f"ε = {fmt(row.get('epsilon'))} at δ = {fmt(row.get('delta'))} ({named})",
        "or_upper": "–" if upper is None else f"{fmt(upper)} ({row.get('upper_claim')}, {row.get('upper_accountant')})",
        "or_one": _lower_text(one),
        "or_one_ratio": pin_text(one.get("ratio")),
        "or_one_run": (
            f"{one.get('entry')}: one run, T = {_count(one.get('horizon'))}, {_count(one.get('num_canaries'))} "
            f"canaries, {_count(one.get('guesses'))} guesses ({_count(one.get('correct'))} correct), "
            f"{_ONE_RUN_ANALYSES.get(analysis, analysis) if analysis else 'analysis not recorded'}; "
            f"{one.get('observable')}, {one.get('relation')}; {fmt(one.get('seconds'))} s"
        ),
        "or_many": _lower_text(many),
        "or_many_ratio": pin_text(many.get("ratio")),
        "or_many_run": (
            f"{many.get('entry')}: {_count(many.get('samples'))} runs per side; {many.get('observable')}, "
            f"{many.get('relation')}; {fmt(many.get('seconds'))} s"
        ),
    }


def one_run_section(report: dict[str, Any]) -> tuple[list[dict[str, str]], list[str]]:
    """The rows (formatted for Markdown and HTML alike) and notes of the "One run beside many runs" section:
    the report's `one_run_pairs`, or, in a document written before it held them, computed from its entries."""
    pairs = report.get("one_run_pairs")
    if not isinstance(pairs, dict):
        entries = [e for e in report["entries"] if isinstance(e, dict)]
        pairs = {"rows": one_run_rows(entries), "unpaired": one_run_unpaired(entries)}
    rows = [_one_run_cells(r) for r in pairs.get("rows") or [] if isinstance(r, dict)]
    return rows, [str(n) for n in pairs.get("unpaired") or []]


ONE_RUN_TITLE = "One run beside many runs"
ONE_RUN_TEXT = (
    "Per algorithm audited in both modes, each claim (ε, δ) a one-run entry and a many-run entry both expect to "
    "hold: the one-run audit's ε_lower (one run of T rounds with canaries) beside the largest many-run ε_lower "
    "on the same claim, and each one's ratio to ε_upper, the smallest ε at that δ proven for both entries' views "
    "(the claim itself where no tighter one is known). The entries may audit different views (the releases "
    "holding the canaries, one statistic, the actions): each number names its entry. Seconds are the entry's "
    "wall time (with its regret runs, where the report has them)."
)
"""The section's title and the paragraph above its table, for both pages."""

ONE_RUN_COLUMNS = (
    ("or_algorithm", "algorithm"),
    ("or_claim", "claim ε at δ"),
    ("or_upper", "ε_upper (from)"),
    ("or_one", "one run: ε_lower"),
    ("or_one_ratio", "one run: ε_lower/ε_upper"),
    ("or_one_run", "one run: entry, T, canaries, guesses, analysis; view; wall time"),
    ("or_many", "many runs: best ε_lower"),
    ("or_many_ratio", "many runs: ε_lower/ε_upper"),
    ("or_many_run", "many runs: entry, runs per side; view; wall time"),
)
