"""Figures of a verification report, as PNG bytes (matplotlib, Agg backend, no display needed).

- regret curves: mean cumulative pseudo-regret with its 95% band for every regret run in the report;
- claimed vs audited epsilon: for every claim, the claimed epsilon and the audited lower bound;
- trade-off: the auditor's empirical trade-off curve (type I error alpha vs type II error beta)
  against the trade-off function of the claimed (epsilon, delta) (Dong, Roth, Su 2022, Prop. 2.5);
- intervals: per entry, the interval [epsilon_lower, epsilon_upper] left for the true epsilon, with
  every claim marked.

Names and labels are text: every figure is drawn with mathtext and TeX off (`_plain_text`), so an
entry named "shop.$x^2$-sum" is labelled as written instead of failing to parse as math.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["epsilon_png", "interval_png", "regret_png", "tradeoff_png"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _plain_text(figure: _F) -> _F:
    """Draw the figure with every text as given: no mathtext for `$...$`, no TeX (whatever the rcParams)."""

    @functools.wraps(figure)
    def plain(*args: Any, **kwargs: Any) -> Any:
        with _pyplot().rc_context({"text.usetex": False, "text.parse_math": False}):
            return figure(*args, **kwargs)

    return plain  # type: ignore[return-value]


def _legend_outside(ax, fontsize: float = 7) -> None:
    """The legend to the right of the axes, never over the data (the saved figure is cropped to fit it)."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def _png(fig) -> bytes:
    plt = _pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


@_plain_text
def regret_png(entries: list[dict[str, Any]]) -> bytes | None:
    """Regret curves of every distinct regret run among `entries`; None if there is none."""
    runs: dict[tuple, dict[str, Any]] = {}
    for e in entries:
        reg = e.get("regret")
        if reg:
            key = (reg["algorithm"], reg["horizon"], reg["runs"], repr(sorted(reg["params"].items())))
            runs.setdefault(key, reg)
    if not runs:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for reg in runs.values():
        x = np.asarray(reg["checkpoints"], dtype=float)
        (line,) = ax.plot(x, reg["mean"], label=f"{reg['algorithm']} (runs={reg['runs']})")
        ax.fill_between(x, reg["lower"], reg["upper"], color=line.get_color(), alpha=0.2)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative pseudo-regret")
    ax.set_title("Regret: mean over runs, 95% band")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return _png(fig)


@_plain_text
def epsilon_png(entries: list[dict[str, Any]]) -> bytes | None:
    """Claimed epsilon vs audited lower bound for every claim; None if no entry has a result."""
    rows = [(e["name"], c) for e in entries if not e.get("error") for c in e["claims"]]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(rows)))
    y = np.arange(len(rows))[::-1]
    claimed = np.array([c["epsilon"] for _, c in rows], dtype=float)
    lower = np.array([c["epsilon_lower"] for _, c in rows], dtype=float)
    finite = lower[np.isfinite(lower)]
    # the axis covers every audited bound; claims far beyond it (loose accountants) sit at its edge as ">"
    cap = 1.15 * max(float(finite.max()) if finite.size else 0.0, 1.0)
    shown = np.where(np.isfinite(lower), lower, cap)
    colors = ["tab:red" if c["verdict"] == "violation" else "tab:green" for _, c in rows]
    ax.barh(y, shown, color=colors, alpha=0.6, label="audited ε_lower (red: violation)")
    inside = claimed <= cap
    ax.scatter(claimed[inside], y[inside], marker="|", s=200, color="k", label="claimed ε", zorder=3)
    if (~inside).any():
        ax.scatter(
            np.full((~inside).sum(), cap),
            y[~inside],
            marker=">",
            s=40,
            color="k",
            label="claimed ε beyond the axis",
            zorder=3,
        )
    ax.set_xlim(0, cap * 1.02)
    ax.set_yticks(y, [f"{n} [{c['label']}]" for n, c in rows], fontsize=7)
    ax.set_xlabel("ε")
    ax.set_title("Claimed ε vs audited lower bound")
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax)
    return _png(fig)


def _claimed_curve(epsilon: float, delta: float, alpha: np.ndarray) -> np.ndarray:
    return np.maximum.reduce(
        [np.zeros_like(alpha), 1 - delta - math.exp(epsilon) * alpha, math.exp(-epsilon) * (1 - delta - alpha)]
    )


@_plain_text
def tradeoff_png(entry: dict[str, Any]) -> bytes | None:
    """The entry's empirical trade-off points against each claimed curve; None without a curve."""
    audits = [a for a in entry.get("audits", []) if a.get("tradeoff")]
    if not audits:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    alpha = np.linspace(0, 1, 401)
    for c in entry["claims"]:
        if math.isfinite(c["epsilon"]) and c["epsilon"] < 50:
            ax.plot(
                alpha,
                _claimed_curve(c["epsilon"], c["delta"], alpha),
                label=f"claimed {c['label']}: ε={c['epsilon']:.3g}, δ={c['delta']:.2g}",
            )
    for a in audits:
        rel = entry["pairs"][a.get("pair", 0)]["relation"] if entry.get("pairs") else ""
        ax.plot(
            a["tradeoff"]["alpha"], a["tradeoff"]["beta"], ".", ms=3, label=f"empirical ({rel}, δ={a['delta']:.2g})"
        )
    ax.plot([0, 1], [1, 0], ":", color="grey", lw=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("type I error α")
    ax.set_ylabel("type II error β")
    ax.set_title(entry["name"], fontsize=9)
    _legend_outside(ax, fontsize=6)
    return _png(fig)


@_plain_text
def interval_png(entries: list[dict[str, Any]]) -> bytes | None:
    """One line per entry from its audited ε_lower to its smallest sound upper bound ε_upper (green
    where ε_lower/ε_upper >= 0.9, orange otherwise, red where a sound claim is violated; entries pinned on
    Gaussian-DP μ carry their μ pin in the label), every claim marked (x: claims expected to hold,
    +: claims known to be wrong); None if no entry has an interval."""
    from dpaudit.report.model import PIN_TARGET, interval, pin_text

    rows = []
    for e in entries:
        iv = e.get("interval") if "interval" in e else interval(e)
        if iv is not None and iv["epsilon_upper"] is not None:
            rows.append((e, iv))
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(rows)))
    y = np.arange(len(rows))[::-1]
    lows = np.array([iv["epsilon_lower"] for _, iv in rows], dtype=float)
    ups = np.array([iv["epsilon_upper"] for _, iv in rows], dtype=float)
    finite = np.concatenate([lows[np.isfinite(lows)], ups[np.isfinite(ups)]])
    # as in epsilon_png: the axis covers the audited bounds (and bounds near them); larger values sit at its edge as ">"
    cap = 1.15 * max(
        float(np.max(lows[np.isfinite(lows)], initial=0.0)) * 2.0, float(np.median(finite)) if finite.size else 0.0, 1.0
    )
    for yi, (e, iv), lo, up in zip(y, rows, lows, ups):
        eps_pin = iv.get("epsilon_pin", iv["pin"])  # the bar is the ε interval: coloured by its own ratio
        color = (
            "tab:red"
            if iv["tight"] == "violated"
            else "tab:green"
            if eps_pin is not None and eps_pin >= PIN_TARGET
            else "tab:orange"
        )
        ax.plot([min(lo, cap), min(up, cap)], [yi, yi], "-", color=color, lw=3, alpha=0.7, solid_capstyle="butt")
        ax.plot([min(lo, cap)], [yi], "o", color=color, ms=4)
        if up > cap:
            ax.plot([cap], [yi], ">", color="k", ms=5)
        for c in e["claims"]:
            if c["epsilon"] is not None and math.isfinite(c["epsilon"]) and c["epsilon"] <= cap:
                ax.plot([c["epsilon"]], [yi], "x" if c["expect"] == "consistent" else "+", color="k", ms=6)
    ax.plot([], [], "-", color="tab:green", lw=3, label=f"[ε_lower, ε_upper], pinned (≥ {PIN_TARGET:g})")
    ax.plot([], [], "-", color="tab:orange", lw=3, label="[ε_lower, ε_upper], not pinned")
    ax.plot([], [], "x", color="k", label="claim expected to hold")
    ax.plot([], [], "+", color="k", label="claim known to be wrong")
    ax.plot([], [], ">", color="k", label="ε_upper beyond the axis")
    ax.set_xlim(0, cap * 1.02)
    ax.set_yticks(
        y,
        [
            f"{e['name']} (δ={iv['delta']:.2g})"
            + (f" μ-pin {pin_text(iv['pin'])}" if iv.get("pin_kind") == "mu" and iv["pin"] is not None else "")
            for e, iv in rows
        ],
        fontsize=7,
    )
    ax.set_xlabel("ε")
    ax.set_title("Where the true ε lies: audited lower bound to smallest sound upper bound")
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax)
    return _png(fig)
