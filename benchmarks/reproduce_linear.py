"""Reproduce Chowdhury & Zhou's (ICML 2022) simulations (§5 and App. G) cell by cell. Not a test.

    python -m benchmarks run reproduce_linear --quick  # ~5 min: Figs. 1-2 cells, the authors' instances 0-7, no sweep
    python -m benchmarks run reproduce_linear          # 50 runs per cell and the epsilon sweep (~30 min)

Setting (Chowdhury & Zhou (ICML 2022), §5, Figs. 1-2, and its public code): K = 100 arms fixed per run, run r on the authors' code's
instance r (`environment.authors_instances`: their np.random.seed(2) stream, features rescaled to norm <= 1 with the
same means), Bernoulli rewards, delta = 0.1, batch B = 20 for both shuffle variants, T = 20000, 50 instances.
- Fig. 1: cumulative regret vs round, d = 5, epsilon in {0.2, 1, 10};
- Fig. 2: epsilon = 1, d in {10, 15};
- regret at T vs epsilon (a sweep over epsilon, d = 5; not in --quick).
Each in three calibrations: "code" (the noise constants of the authors' simulation code, which made the paper's
figures, with its ridge Lambda = 2 Gamma) and "paper" (the theorems' constants and ridge rule; P_Vec at B = 20 is then
pure noise), both with dpaudit's confidence radius beta_m; and "code-constants": the code's noise together with the code's fixed confidence width
cew(T) and ridge (`linucb.code_width`), i.e. every constant of the authors' code on dpaudit's implementation.
Every cell is printed on stdout: the paper gives plots only, so the reference is the authors' public code run
unchanged on its instances 0-7 (benchmarks/authors_code/run_linear.py, realised regret; Student-t 95% interval over
its 8 runs) beside ours on the same 8 instances, their paired difference (t-interval), and ours on all instances
(mean, 95% interval). Curves are pseudo-regret means with +-1 standard error (the paper plots realized regret with the
same band). The log-log slope of R(t) over t in [T/4, T] is in the JSON.

Outputs: benchmarks/figures/linear_fig1_{code,code-constants,paper}.png, linear_fig2_{...}.png,
linear_regret_vs_epsilon.png, linear_vs_authors_code.png and linear_results.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from benchmarks.tables import print_table
from dpaudit._io import atomic_write, atomic_write_text
from dpaudit.algorithms.linear.linucb import LinUCB, code_width, simulate_linear
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec

FIGURES = pathlib.Path(__file__).resolve().parent / "figures"
AUTHORS_CODE = pathlib.Path(__file__).resolve().parent / "authors_code" / "linear_chowdhury_zhou_2022.jsonl"
# dpaudit's algorithm name -> the class in the authors' LinBanditPrivate.py
CODE_NAMES = {
    "linucb": "LinUCB",
    "linucb-jdp": "JDPLinUCB",
    "linucb-sdp-amp": "SDPLinUCBPAmp",
    "linucb-sdp-vec": "SDPLinUCBPVec",
    "linucb-ldp": "LDPLinUCB",
}
DELTA = 0.1
BATCH = 20
STYLE = {
    "linucb": ("LinUCB", "k"),
    "linucb-jdp": ("LinUCB-JDP", "tab:blue"),
    "linucb-sdp-amp": ("LinUCB-SDP-Amp", "tab:green"),
    "linucb-sdp-vec": ("LinUCB-SDP-Vec", "tab:orange"),
    "linucb-ldp": ("LinUCB-LDP", "tab:red"),
}


CALIBRATIONS = ("code", "code-constants", "paper")


def algorithms(epsilon: float, noise: str, dim: int = 5, horizon: int = 20000) -> list:
    """The five algorithms of Figs. 1-2 in one calibration: "code" / "paper" noise with dpaudit's radius beta_m and
    ridge rule; "code-constants": the code's noise, its fixed width cew(T) (`code_width`) and its ridge (Lambda = 2 Gamma
    on features of norm sqrt(2), i.e. Gamma here; LinUCB: 1e-4 / 2), everything the authors' code fixes."""
    if noise == "code-constants":
        out = []
        for a in algorithms(epsilon, "code"):
            gamma = 1.0 if a.name == "linucb" else a.default_regularizer(dim, horizon) / 2
            ridge = 0.5e-4 if a.name == "linucb" else gamma
            out.append(dataclasses.replace(a, regularizer=ridge, width=code_width(gamma, dim, horizon)))
        return out
    private = dict(epsilon=epsilon, delta=DELTA, noise=noise)
    return [
        LinUCB(),
        LinUCBJDP(**private),
        LinUCBSDPAmp(batch=BATCH, **private),
        LinUCBSDPVec(batch=BATCH, **private),
        LinUCBLDP(**private),
    ]


def authors_code_runs(path: pathlib.Path = AUTHORS_CODE) -> dict:
    """{(class, dim, eps, horizon): {run: realised regret}} from the runs of the authors' code (run_linear.py)."""
    out: dict = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out.setdefault((r["alg"], r["dim"], float(r["epsilon"]), r["horizon"]), {})[r["run"]] = r["regret"]
    return out


def t_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of the mean."""
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - h, m + h


def fmt(m: float, lo: float, hi: float) -> str:
    if math.isnan(m):
        return "-"
    return f"{m:6.0f} [{lo:6.0f}, {hi:6.0f}]" if not math.isnan(lo) else f"{m:6.0f}"


def compare(row: dict, code: dict, dim: int, eps: float, horizon: int) -> tuple:
    """The authors' code's runs on instances 0..n-1 beside ours on the same instances (paired by instance)."""
    ref = code.get((CODE_NAMES[row["algorithm"]], dim, 1.0 if row["algorithm"] == "linucb" else eps, horizon), {})
    ours = np.array(row["final_regret"])
    all_ours = fmt(*t_interval(ours))
    ids = [i for i in sorted(ref) if i < ours.size]
    if len(ids) < 2:
        return "not run", "-", "-", all_ours
    theirs = np.array([ref[i] for i in ids])
    mine = ours[ids]
    d = t_interval(theirs - mine)
    row["authors_code"] = {
        "runs": ids,
        "regret": theirs.tolist(),
        "ours_same_runs": mine.tolist(),
        "paired_difference": list(d),
    }
    return fmt(*t_interval(theirs)), fmt(*t_interval(mine)), fmt(*d), all_ours


def run_one(alg, horizon: int, runs: int, dim: int, seed: int) -> dict:
    t0 = time.perf_counter()
    curves = simulate_linear(alg, horizon, runs, seed, dim=dim, n_arms=100, instances="authors")
    cp = curves.checkpoints
    mean = curves.mean()
    se = curves.regret.std(axis=0, ddof=1) / np.sqrt(runs)
    sel = cp >= horizon // 4
    slope = float(np.polyfit(np.log(cp[sel]), np.log(np.maximum(mean[sel], 1e-9)), 1)[0])
    return {
        "algorithm": alg.name,
        "checkpoints": cp.tolist(),
        "mean": mean.tolist(),
        "se": se.tolist(),
        "final_mean": float(mean[-1]),
        "final_regret": curves.regret[:, -1].tolist(),
        "final_se": float(se[-1]),
        "loglog_slope": slope,
        "regularizer": curves.params["regularizer_used"],
        "nonpd_batches": curves.privacy.get("nonpd_batches", 0),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _panel(ax, results: list[dict], title: str) -> None:
    for r in results:
        label, colour = STYLE[r["algorithm"]]
        cp, m, se = np.array(r["checkpoints"]), np.array(r["mean"]), np.array(r["se"])
        ax.plot(cp, m, color=colour, label=label)
        ax.fill_between(cp, m - se, m + se, color=colour, alpha=0.2)
    ax.set_title(title)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative pseudo-regret")
    ax.grid(alpha=0.3)


def _save(fig, name: str) -> None:
    fig.tight_layout()
    atomic_write(FIGURES / name, lambda fh: fig.savefig(fh, format="png", dpi=110))
    plt.close(fig)


def _write_json(path: pathlib.Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1))


def _plot_vs_authors(out: dict) -> None:
    """Final regret per cell: the authors' code (t-interval over its runs) beside ours on the same instances."""
    fig, axes = plt.subplots(1, 3, figsize=(20, 4.6), sharey=True)
    for ax, noise in zip(axes, CALIBRATIONS):
        x, ticks, labels = 0, [], []
        for fig_key, cells in (("fig1", ("eps=0.2", "eps=1.0", "eps=10.0")), ("fig2", ("d=10", "d=15"))):
            for c in cells:
                for r in out[fig_key].get(f"{noise}/{c}", []):
                    ac = r.get("authors_code")
                    if not ac:
                        continue
                    label, colour = STYLE[r["algorithm"]]
                    m, lo, hi = t_interval(ac["regret"])
                    ax.errorbar([x - 0.15], [m], yerr=[[m - lo], [hi - m]], fmt="o", color="k", capsize=2)
                    m, lo, hi = t_interval(ac["ours_same_runs"])
                    ax.errorbar([x + 0.15], [m], yerr=[[m - lo], [hi - m]], fmt="s", color=colour, capsize=2)
                    ticks.append(x)
                    labels.append(f"{label.replace('LinUCB-', '')} {c.replace('.0', '')}")
                    x += 1
                x += 0.5
        ax.set_xticks(ticks, labels, rotation=70, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("regret at T")
        ax.set_title(f"authors' code (black) vs dpaudit, {noise} calibration, instances 0-7")
        ax.grid(alpha=0.3)
    _save(fig, "linear_vs_authors_code.png")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="reproduce Chowdhury & Zhou's (ICML 2022) simulations")
    ap.add_argument(
        "--quick", action="store_true", help="8 runs per cell (the authors' code's instances 0-7), no sweep"
    )
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--horizon", type=int, default=20000)
    ap.add_argument("--sweep-runs", type=int, default=20)
    ap.add_argument("--sweep", type=str, default="0.2,0.5,1,2,5,10")
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    if args.quick:
        args.runs = 8
    out: dict = {
        "settings": vars(args) | {"delta": DELTA, "batch": BATCH, "arms": 100, "instances": "authors"},
        "fig1": {},
        "fig2": {},
        "sweep": {},
    }
    code = authors_code_runs()
    table: list[tuple] = []

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def summarise(rows: list[dict]) -> str:
        return ", ".join(f"{r['algorithm']}={r['final_mean']:.0f}(slope {r['loglog_slope']:.2f})" for r in rows)

    def cell(rows: list[dict], label: str, noise: str, dim: int, eps: float) -> None:
        for r in rows:
            table.append((label, noise, STYLE[r["algorithm"]][0], *compare(r, code, dim, eps, args.horizon)))

    linucb_rows: dict[tuple, dict] = {}

    def rows_for(eps: float, dim: int, noise: str) -> list[dict]:
        """One cell; non-private LinUCB does not depend on the calibration or eps and is run once per d."""
        rows = []
        for a in algorithms(eps, noise, dim, args.horizon):
            if a.name == "linucb":
                key = (dim, noise == "code-constants")
                if key not in linucb_rows:
                    linucb_rows[key] = run_one(a, args.horizon, args.runs, dim, args.seed)
                rows.append(linucb_rows[key])
            else:
                rows.append(run_one(a, args.horizon, args.runs, dim, args.seed))
        return rows

    for noise in CALIBRATIONS:
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
        for ax, eps in zip(axes, (0.2, 1.0, 10.0)):
            rows = rows_for(eps, 5, noise)
            out["fig1"][f"{noise}/eps={eps}"] = rows
            cell(rows, f"Fig. 1 d=5 eps={eps:g}", noise, 5, eps)
            log(f"fig1 {noise} eps={eps}: {summarise(rows)}")
            _panel(ax, rows, f"d=5, eps={eps} ({noise} constants)")
        axes[0].legend()
        _save(fig, f"linear_fig1_{noise}.png")
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
        for ax, dim in zip(axes, (10, 15)):
            rows = rows_for(1.0, dim, noise)
            out["fig2"][f"{noise}/d={dim}"] = rows
            cell(rows, f"Fig. 2 d={dim} eps=1", noise, dim, 1.0)
            log(f"fig2 {noise} d={dim}: {summarise(rows)}")
            _panel(ax, rows, f"eps=1, d={dim} ({noise} constants)")
        axes[0].legend()
        _save(fig, f"linear_fig2_{noise}.png")
        _write_json(FIGURES / "linear_results.json", out)

    print_table(
        f"Chowdhury & Zhou (ICML 2022), Figs. 1-2: regret at T = {args.horizon}, mean [95% interval]. The paper gives plots "
        "only; the reference is the authors' public code run unchanged on its instances 0-7 (realised regret, t-interval "
        "over its runs); ours on the same instances (pseudo-regret), the paired difference authors - ours, and ours on "
        f"instances 0-{args.runs - 1}. noise: dpaudit's calibration, 'code' / 'paper' noise with dpaudit's radius and "
        "ridge, 'code-constants' the code's noise, fixed width and ridge (the authors' code has only its own).",
        (
            "cell",
            "noise",
            "algorithm",
            "authors' code (inst. 0-7)",
            "ours (inst. 0-7)",
            "authors - ours (paired)",
            f"ours (inst. 0-{args.runs - 1})",
        ),
        table,
    )
    _plot_vs_authors(out)
    if args.quick:
        return 0

    eps_grid = [float(e) for e in args.sweep.split(",")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    base = run_one(LinUCB(), args.horizon, args.sweep_runs, 5, args.seed)
    for ax, noise in zip(axes, ("code", "paper")):  # the sweep keeps dpaudit's radius: the calibrations of the noise
        sweep: dict[str, list] = {}
        for eps in eps_grid:
            for alg in algorithms(eps, noise)[1:]:
                r = run_one(alg, args.horizon, args.sweep_runs, 5, args.seed)
                sweep.setdefault(alg.name, []).append((eps, r["final_mean"], r["final_se"]))
            log(f"sweep {noise} eps={eps} done")
        out["sweep"][noise] = sweep
        for name, pts in sweep.items():
            e, m, s = (np.array(v) for v in zip(*pts))
            label, colour = STYLE[name]
            ax.errorbar(e, m, yerr=s, color=colour, marker="o", label=label, capsize=3)
        ax.axhline(base["final_mean"], color="k", ls="--", label="LinUCB")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"regret at T={args.horizon}")
        ax.set_title(f"d=5, K=100, {args.sweep_runs} runs ({noise} constants)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    _save(fig, "linear_regret_vs_epsilon.png")
    out["sweep"]["linucb"] = base["final_mean"]
    _write_json(FIGURES / "linear_results.json", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
