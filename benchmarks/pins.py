"""The interval table of one or two `dpaudit audit` reports (not part of the test suite).

    python -m benchmarks run pins BEFORE_DIR [AFTER_DIR] [--json]

Per entry: [ε_lower, ε_upper] (ε_upper the smallest proven claim, `dpaudit.report.interval`), the
pin ratio (ε, or Gaussian-DP μ where the entry declares the accountant's μ), and the tight side; with
two reports, both pins side by side and the claims whose verdict changed. A violation found in the
first report that the second misses is listed under "lost violations" (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from dpaudit.report import fmt, interval, load_report


def _pins(report: dict) -> dict[str, dict]:
    out = {}
    for e in report["entries"]:
        iv = e.get("interval") if "interval" in e else interval(e)
        out[e["name"]] = {
            "interval": iv,
            "verdicts": {c["label"]: c["verdict"] for c in e.get("claims", [])},
            "error": e.get("error"),
        }
    return out


def _cell(iv: dict | None) -> str:
    if iv is None or iv["epsilon_upper"] is None:
        return "–"
    pin = "–" if iv["pin"] is None else fmt(iv["pin"], 2) + (" (μ)" if iv["pin_kind"] == "mu" else "")
    return f"[{fmt(iv['epsilon_lower'])}, {fmt(iv['epsilon_upper'])}] {pin}"


def _summary(pins: dict[str, dict]) -> str:
    vals = [
        p["interval"]["pin"] or 0.0
        for p in pins.values()
        if p["interval"] is not None and p["interval"]["epsilon_upper"] is not None
    ]
    pinned = sum(v >= 0.9 for v in vals)
    return (
        f"{pinned} of {len(vals)} pinned (≥ 0.9), median pin {statistics.median(vals):.2f}" if vals else "no intervals"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after", nargs="?")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    before = _pins(load_report(args.before))
    after = _pins(load_report(args.after)) if args.after else None
    lost = []
    if after is not None:
        for name, b in before.items():
            a = after.get(name)
            for label, verdict in b["verdicts"].items():
                if verdict == "violation" and (a is None or a["verdicts"].get(label) != "violation"):
                    lost.append(f"{name}:{label}")
    if args.json:
        print(json.dumps({"before": before, "after": after, "lost_violations": lost}, default=str))
        return 1 if lost else 0
    head = (
        "| entry | before | after | tight side (after) | reason (after) |"
        if after
        else "| entry | interval, pin | tight side | reason |"
    )
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    for name, b in before.items():
        if after is not None:
            a = after.get(name, {}).get("interval")
            print(
                f"| {name} | {_cell(b['interval'])} | {_cell(a)} | {a['tight'] if a else '–'} | "
                f"{(a or {}).get('reason') or ''} |"
            )
        else:
            iv = b["interval"]
            print(f"| {name} | {_cell(iv)} | {iv['tight'] if iv else '–'} | {(iv or {}).get('reason') or ''} |")
    print()
    print("before: " + _summary(before) + (("; after: " + _summary(after)) if after else ""))
    if after is not None:
        print("lost violations: " + (", ".join(lost) or "none"))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
