"""Reproduce Chowdhury & Zhou's (ICML 2022) simulations (Chowdhury & Zhou, ICML 2022, §5 and App. G). Not a test.

    /tmp/venv/bin/python benchmarks/reproduce_linear.py [--runs 50] [--horizon 20000] [--sweep-runs 20]

Setting (Chowdhury & Zhou (ICML 2022), §5): K = 100 arms fixed per run (the authors' code), unit-norm features and
theta* built as a (d-1)-dim vector of norm 1/sqrt(2) plus a 1/sqrt(2) entry, Bernoulli rewards, delta = 0.1,
batch B = 20 for both shuffle variants, T = 20000, 50 random instances.
- Fig. 1: cumulative regret vs round, d = 5, epsilon in {0.2, 1, 10};
- Fig. 2: epsilon = 1, d in {10, 15};
- regret at T vs epsilon (a sweep over epsilon, d = 5).
Each in two noise calibrations: "code" (the constants of the authors' simulation code, which made the
paper's figures) and "paper" (the theorems' constants; with Chowdhury & Zhou's (ICML 2022) Thm C.1 b, dpaudit expects
P_Vec at B = 20 to be pure noise). Curves are pseudo-regret means with +-1 standard error (the paper plots realized regret
with the same band). The log-log slope of R(t) over t in [T/4, T] is printed for each curve.

Outputs: benchmarks/figures/linear_fig1_{code,paper}.png, linear_fig2_{code,paper}.png,
linear_regret_vs_epsilon.png and linear_results.json (means, standard errors, slopes, seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpaudit.algorithms.linear.linucb import LinUCB, simulate_linear  # noqa: E402
from dpaudit.algorithms.linear.linucb_jdp import LinUCBJDP  # noqa: E402
from dpaudit.algorithms.linear.linucb_ldp import LinUCBLDP  # noqa: E402
from dpaudit.algorithms.linear.shuffle_linucb import LinUCBSDPAmp, LinUCBSDPVec  # noqa: E402

FIGURES = pathlib.Path(__file__).resolve().parent / "figures"
DELTA = 0.1
BATCH = 20
STYLE = {
    "linucb": ("LinUCB", "k"),
    "linucb-jdp": ("LinUCB-JDP", "tab:blue"),
    "linucb-sdp-amp": ("LinUCB-SDP-Amp", "tab:green"),
    "linucb-sdp-vec": ("LinUCB-SDP-Vec", "tab:orange"),
    "linucb-ldp": ("LinUCB-LDP", "tab:red"),
}


def algorithms(epsilon: float, noise: str) -> list:
    private = dict(epsilon=epsilon, delta=DELTA, noise=noise)
    return [
        LinUCB(),
        LinUCBJDP(**private),
        LinUCBSDPAmp(batch=BATCH, **private),
        LinUCBSDPVec(batch=BATCH, **private),
        LinUCBLDP(**private),
    ]


def run_one(alg, horizon: int, runs: int, dim: int, seed: int) -> dict:
    t0 = time.perf_counter()
    curves = simulate_linear(alg, horizon, runs, seed, dim=dim, n_arms=100)
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
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(FIGURES / name, dpi=110)
    plt.close(fig)


def _write_json(path: pathlib.Path, obj) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(obj, fh, indent=1)
    os.chmod(tmp, 0o644)  # mkstemp creates 0600; the results are meant to be read by everyone
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="reproduce Chowdhury & Zhou's (ICML 2022) simulations")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--horizon", type=int, default=20000)
    ap.add_argument("--sweep-runs", type=int, default=20)
    ap.add_argument("--sweep", type=str, default="0.2,0.5,1,2,5,10")
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    out: dict = {"settings": vars(args) | {"delta": DELTA, "batch": BATCH, "arms": 100}, "fig1": {}, "fig2": {}, "sweep": {}}

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def summarise(rows: list[dict]) -> str:
        return ", ".join(f"{r['algorithm']}={r['final_mean']:.0f}(slope {r['loglog_slope']:.2f})" for r in rows)

    for noise in ("code", "paper"):
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
        for ax, eps in zip(axes, (0.2, 1.0, 10.0)):
            rows = [run_one(a, args.horizon, args.runs, 5, args.seed) for a in algorithms(eps, noise)]
            out["fig1"][f"{noise}/eps={eps}"] = rows
            log(f"fig1 {noise} eps={eps}: {summarise(rows)}")
            _panel(ax, rows, f"d=5, eps={eps} ({noise} constants)")
        axes[0].legend()
        _save(fig, f"linear_fig1_{noise}.png")
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
        for ax, dim in zip(axes, (10, 15)):
            rows = [run_one(a, args.horizon, args.runs, dim, args.seed) for a in algorithms(1.0, noise)]
            out["fig2"][f"{noise}/d={dim}"] = rows
            log(f"fig2 {noise} d={dim}: {summarise(rows)}")
            _panel(ax, rows, f"eps=1, d={dim} ({noise} constants)")
        axes[0].legend()
        _save(fig, f"linear_fig2_{noise}.png")
        _write_json(FIGURES / "linear_results.json", out)

    eps_grid = [float(e) for e in args.sweep.split(",")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    base = run_one(LinUCB(), args.horizon, args.sweep_runs, 5, args.seed)
    for ax, noise in zip(axes, ("code", "paper")):
        table: dict[str, list] = {}
        for eps in eps_grid:
            for alg in algorithms(eps, noise)[1:]:
                r = run_one(alg, args.horizon, args.sweep_runs, 5, args.seed)
                table.setdefault(alg.name, []).append((eps, r["final_mean"], r["final_se"]))
            log(f"sweep {noise} eps={eps} done")
        out["sweep"][noise] = table
        for name, pts in table.items():
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
