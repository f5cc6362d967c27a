"""What `dpaudit budget`, `calibrate` and `tradeoff` print: numbers to 6 significant digits, a row per
accountant that says why it gives no number, "best" defined where it is printed, the sensitivity a
mechanism assumes, and a claim and its corrected guarantee compared in words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "BEST_TEXT",
    "ROW_HEADER",
    "best_line",
    "comparison",
    "guarantee_text",
    "num",
    "row_printer",
    "sensitivity_text",
    "short_numbers",
]

BEST_TEXT = "the smallest valid answer across the accountants (each is a valid upper bound, so the least is too)"
ROW_HEADER = "{acct:<10}  {key:>14}  note"

_LONG_NUMBER = re.compile(r"(?<![\w.])\d+\.\d{7,}(?:e[-+]?\d+)?")


def num(x: Any, digits: int = 6) -> str:
    """A number to `digits` significant digits ("inf" for infinity); anything else as text."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    return "inf" if math.isinf(x) else f"{x:.{digits}g}"


def short_numbers(text: str) -> str:
    """`text` with every number printed with more than 6 decimals (e.g. 0.0017748617036597958) cut to 6
    significant digits: for the free texts a declaration carries."""
    return _LONG_NUMBER.sub(lambda m: num(float(m.group())), text)


def params_text(params: dict) -> str:
    return ", ".join(f"{k}={num(v)}" for k, v in params.items())


_SENSITIVITY = ("sensitivity", "l1", "l2")
_LOCAL = {
    "rr": "none: each user's own response is ε0-DP (local model), whatever the data",
    "shuffle": "none: each user's own report is ε0-DP (local model) before shuffling",
    "epsilon-delta": "none: the black box is (ε0, δ0)-DP for one release as given",
}


def sensitivity_text(mechanism: str, params: dict) -> str:
    """The sensitivity the mechanism's guarantee assumes: the given value or the default, and how to change it."""
    from dpaudit.accounting.named import MECHANISMS

    if mechanism in _LOCAL:
        return _LOCAL[mechanism]
    mech = MECHANISMS[mechanism]
    parts = []
    for name in _SENSITIVITY:
        if name in mech.params:
            default, what = mech.params[name]
            given = name in params
            value = params[name] if given else default
            parts.append(f"{what} {num(value)} ({'given' if given else 'the default; --' + name + ' to change'})")
    return "; ".join(parts) if parts else "none"


def guarantee_text(g: dict | None, *, pure_word: bool = True, remark: str = "") -> str:
    """A guarantee: "ε = 1 (pure DP)", "ε = 0.2 at δ = 0.1", "ρ = 0.5 (zCDP)", "none (not private)"; with
    `pure_word` False a pure guarantee is written "ε = X at δ = 0" (no accountant in the table calls it pure);
    `remark` follows the numbers, the source comes last."""
    if g is None:
        return "-"
    notion = g.get("notion")
    if notion == "none":
        return "none (not private)"
    eps = g.get("epsilon")
    eps = float(eps) if isinstance(eps, (int, float, str)) and str(eps) not in ("", "None") else None
    if notion == "pure" and eps is not None:
        text = f"ε = {num(eps)} (pure DP)" if pure_word else f"ε = {num(eps)} at δ = 0"
    elif notion == "approx" and eps is not None:
        text = f"ε = {num(eps)} at δ = {num(g.get('delta', 0.0))}"
    elif notion == "zcdp" and g.get("rho") is not None:
        text = f"ρ = {num(g['rho'])} (zCDP)"
    else:
        text = str(notion) if eps is None else f"{notion} ε = {num(eps)}"
    return text + (f", {remark}" if remark else "") + (f"  ({short_numbers(g['source'])})" if g.get("source") else "")


def _pair(g: dict | None) -> tuple[float, float] | None:
    """(epsilon, delta) of a pure or (epsilon, delta) guarantee, None otherwise."""
    if not g or g.get("notion") not in ("pure", "approx") or g.get("epsilon") is None:
        return None
    return float(g["epsilon"]), float(g.get("delta") or 0.0)


def comparison(claim: dict | None, corrected: dict | None) -> str:
    """How the corrected guarantee stands to the paper's claim: "tighter" (it implies the claim: no larger ε at no
    larger δ), "looser" (the claim implies it: the paper's accounting does not hold), or "different"."""
    a, b = _pair(claim), _pair(corrected)
    if a is None or b is None:
        return "different"
    if b[0] <= a[0] and b[1] <= a[1]:
        return "tighter" if b != a else "equal"
    if b[0] >= a[0] and b[1] >= a[1]:
        return "looser"
    return "different"


def row_printer(pure_note: str | None = None) -> Callable[[dict], None]:
    """Print one accountant row as it is computed: its number, or "-" and why there is none (the accountant does
    not support the event, ran out of range or memory, or gives no finite ε at this δ). `pure_note` replaces the
    pure accountant's note when it does not support the event (see `budget.run_algorithm`)."""

    def show(row: dict) -> None:
        key = "epsilon" if "epsilon" in row else "delta"
        value = row.get(key)
        if row["supported"] and value is not None and not (key == "epsilon" and math.isinf(value)):
            print(f"{row['accountant']:<10}  {num(value):>14}", flush=True)
            return
        if row["supported"]:
            note = row.get("reason") or "no finite ε from this accountant"
        elif row.get("failed"):
            note = row["reason"]
        elif row["accountant"] == "pure" and pure_note is not None:
            note = pure_note
        else:
            note = f"not supported: {row['reason']}"
        print(f"{row['accountant']:<10}  {'-':>14}  {note}", flush=True)

    return show


def best_line(best: dict | None, key: str, point: str) -> str:
    """The "best" line, with what best means; says so when no accountant gives a finite answer."""
    if best is None or (key == "epsilon" and math.isinf(best[key])):
        return f"best: none: no accountant gives a finite {key} at {point}"
    return f"best: {key} {num(best[key])} ({best['accountant']}): {BEST_TEXT}"
