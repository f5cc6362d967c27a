"""Reproduce Sarmasarkar's (shuffle/joint DP GLM bandits) probit regret table (§8, Table 2: κ sweep) and Li, Shi,
Simchi-Levi's (ICML 2024) error-versus-regret trade-off (§5).

    python -m benchmarks run reproduce_glm [--part glm|conse|all] [--runs-glm 10] [--runs-conse 50]
                                           [--horizon-glm 5000] [--modes ...] [--json]

Part glm (Sarmasarkar, §8 Table 2): probit, d = 3, K = 20, T = 5000, δ = ζ = 0.02, S ∈ {2, 2.5, 3} on the
authors' instance (their generator, env seed 109832: κ = 18.39, 56.44, 222.15 as in the table), Private-GLM at
ε ∈ {4, 6, 8} and its non-private counterpart (noiseless trees, exact optimiser), 10 runs, each cell printed
as mean and 95% interval (Student t over the runs) beside the paper's number. Modes:
- "dp-sgd": dpaudit's Private-GLM with the authors' optimiser (Remark A.1: DP-SGD, `optimizer="dp-sgd"`),
  accounted at the replace-one sensitivity 2C, the correct binary tree, the authors' HEAD cap (3 log2);
- "authors": the code that wrote Table 2 (the authors' first commit ab8fd16): the same DP-SGD with their
  noise C·z, their tree query (`tree_query="ab8fd16"`, whose prefix sums over-count) and cap ⌊log2(·)⌋;
- "dp-gd": dpaudit's default optimiser (noisy projected full-batch GD, zCDP-calibrated).
The "RS-GLinUCB" row of the paper is Sawarni et al.'s algorithm, which dpaudit does not implement; the
non-private counterpart (same rules, no noise) stands beside it for scale only.
Figures: benchmarks/figures/glm_probit_kappa.png (regret at T against κ, per mode, with 95% intervals, the
paper's dashed), glm_probit_curves.png (regret curves with 95% bands at S = 2, mode "authors") and
glm_results.json (every cell). Measured (10 runs, seed 1 for the rewards, 2 for the algorithm):
- mode "authors" (the code that wrote the table): ε = 4 inside the 95% interval for all three κ
  (391.5 [335, 448] vs 369.5; 413 [351, 475] vs 382; 422 [357, 488] vs 385); ε = 6 3-4% below
  (279.4 [276, 282] vs 289.7, 288.0 vs 299.3, 288.0 vs 296.4); ε = 8 inside at S = 2.5, 11-12% below
  at S = 2 and 3 (265.7 [238, 293] vs 300.3; 267.4 [235, 300] vs 301.7). The residue is the rest of their
  code we do not copy (shuffled fixed-size batches, their q²-RDP calibration, their epoch search, their
  random streams); the paper's ε = 6 and ε = 8 are equal within 4%, ours within 5%.
- mode "dp-sgd" (correct tree): 45-55% above the paper at ε = 4 and 6, 19-26% at ε = 8. 85-97% of
  the regret accrues before the first θ̂_τ fit (while θ̂ = 0), which comes when det of the released H
  has doubled: at t ≈ 1144 / 841 / 682 (ε = 4 / 6 / 8) with the correct prefix sums against 808 / 515 / 461
  with the first-commit tree, which over-counts (about 2x at t = 1100) and so doubles early. At S = 2,
  ε = 4 the regret before it differs by 512 - 359 = 153, the whole gap between the modes (543.5 vs 391.5).
- mode "dp-gd": the same first fit (same trees), then 196 more regret at S = 2, ε = 4 against 31 with
  DP-SGD, whose 0.2 clip (against 1) cuts the noise on the gradient sum 5x: 708 vs 544.
Part conse (Li, Shi, Simchi-Levi, §4-5): n = 20000, 50 replications, α ∈ {0, 0.25, 0.5, 0.75, 1}, ConSE and DP-ConSE
(ε ∈ {0.5, 1, 2}) on M = 1 (the paper's experiments) and M = 4 types with Bernoulli outcomes, |Δ| = 0.4.
Figures: conse_tradeoff.png (max-type MSE against regret, log-log; Theorems 2.3/3.5 predict
error × regret = Θ(M)) and conse_privacy_vs_types.png (DP-ConSE's claimed ε against the corrected
component accounting as M grows). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from dpaudit._io import atomic_write_text
from dpaudit.algorithms.conse.algorithm import ConSEParams, run_conse
from dpaudit.algorithms.conse.privacy import conse_privacy
from dpaudit.algorithms.conse.regret import default_experiment
from dpaudit.algorithms.glm.environment import paper_glm_environment
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, run_private_glm

FIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures")
PAPER_TABLE2 = {  # Sarmasarkar, Table 2 (probit, d=3, K=20, T=5000): S -> (κ, {ε: regret}, RS-GLinUCB)
    2.0: (18.39, {4.0: 369.53, 6.0: 289.67, 8.0: 300.32}, 295.27),
    2.5: (56.44, {4.0: 382.25, 6.0: 299.33, 8.0: 295.49}, 168.83),
    3.0: (222.15, {4.0: 384.91, 6.0: 296.41, 8.0: 301.73}, 194.53),
}
MODES = {  # name -> PrivateGLMParams options (module docstring)
    "dp-sgd": {"optimizer": "dp-sgd"},
    "authors": {"optimizer": "dp-sgd", "sgd_noise": "code", "tree_query": "ab8fd16", "count2_factor": 1.0},
    "dp-gd": {"optimizer": "dp-gd"},
}
EPSILONS = (4.0, 6.0, 8.0, None)


def _save(fig, name: str) -> str:
    os.makedirs(FIG, exist_ok=True)
    path = os.path.join(FIG, name)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    os.replace(tmp, path)
    plt.close(fig)
    return path


def interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% Student-t interval of the mean over the runs."""
    n = values.size
    m = float(values.mean())
    half = float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return m, m - half, m + half


def _paper(S: float, eps: float | None) -> float:
    _, table, rs = PAPER_TABLE2[S]
    return table[eps] if eps else rs


def part_glm(runs: int, horizon: int, modes: list[str]) -> dict:
    logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's fractional-order RDP chatter
    rows = []
    curves = {}
    for S in PAPER_TABLE2:
        env = paper_glm_environment(np.random.default_rng(109832), 3, 20, horizon, S, "probit")
        data = env.sample(np.random.default_rng(1), runs)
        for mode in modes:
            for eps in EPSILONS:
                if eps is None and mode != modes[0]:
                    continue  # one non-private counterpart (the paper's last row is another algorithm)
                t0 = time.perf_counter()
                params = PrivateGLMParams(epsilon=eps, delta=0.02, zeta=0.02, **MODES[mode])
                res = run_private_glm(env, data, params, np.random.default_rng(2))
                final = res.regret[:, -1]
                mean, lo, hi = interval(final)
                first = np.array([np.flatnonzero(sw)[0] if sw.any() else horizon for sw in res.switches])
                before = np.array([res.regret[i, f - 1] if f > 0 else 0.0 for i, f in enumerate(first)])
                paper = _paper(S, eps)
                rows.append(
                    {
                        "S": S,
                        "kappa": env.kappa,
                        "mode": mode,
                        "epsilon": eps,
                        "regret": mean,
                        "low": lo,
                        "high": hi,
                        "paper": paper,
                        "inside": bool(lo <= paper <= hi),
                        "first_switch": float(first.mean()),
                        "regret_before_first_switch": float(before.mean()),
                        "switches": float(res.calls_tau.mean()),
                        "explore_rounds": float(res.explore.sum(1).mean()),
                        "seconds": time.perf_counter() - t0,
                    }
                )
                if S == 2.0 and mode == "authors":
                    curves[eps] = res.regret
                print(
                    f"S={S} {mode} eps={eps} regret {mean:.1f} [{lo:.1f}, {hi:.1f}] paper {paper} "
                    f"({rows[-1]['seconds']:.0f} s)",
                    file=sys.stderr,
                )
    fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for i, eps in enumerate(EPSILONS):
            sel = [r for r in rows if r["epsilon"] == eps and r["mode"] == mode]
            if sel:
                label = f"eps={eps:g}" if eps else "non-private counterpart"
                ax.errorbar(
                    [r["kappa"] for r in sel],
                    [r["regret"] for r in sel],
                    yerr=[[r["regret"] - r["low"] for r in sel], [r["high"] - r["regret"] for r in sel]],
                    marker="o",
                    color=f"C{i}",
                    capsize=3,
                    label=label,
                )
            ax.plot(
                [PAPER_TABLE2[S][0] for S in PAPER_TABLE2],
                [_paper(S, eps) for S in PAPER_TABLE2],
                ls="--",
                marker="x",
                color=f"C{i}",
                label=("paper " + (f"eps={eps:g}" if eps else "RS-GLinUCB")),
            )
        ax.set_xscale("log")
        ax.set_xlabel("kappa (S = 2, 2.5, 3)")
        ax.set_title(f"mode {mode}")
        ax.legend(fontsize=6, ncol=2)
    axes[0][0].set_ylabel(f"cumulative regret at T={horizon} (mean, 95% interval)")
    fig.suptitle("Sarmasarkar, Table 2: probit, d=3, K=20 (ours solid, paper dashed)")
    f1 = _save(fig, "glm_probit_kappa.png")
    figures = [f1]
    if curves:
        fig, ax = plt.subplots(figsize=(6, 4))
        t = np.arange(1, horizon + 1)
        for i, (eps, reg) in enumerate(curves.items()):
            m = reg.mean(axis=0)
            half = stats.t.ppf(0.975, runs - 1) * reg.std(axis=0, ddof=1) / np.sqrt(runs)
            ax.plot(t, m, color=f"C{i}", label=f"eps={eps:g}" if eps else "non-private")
            ax.fill_between(t, m - half, m + half, color=f"C{i}", alpha=0.2)
            if eps:
                ax.axhline(_paper(2.0, eps), color=f"C{i}", ls=":", lw=1)
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative regret")
        ax.set_title("Private-GLM, mode authors, probit S=2 (dotted: paper at T)")
        ax.legend()
        figures.append(_save(fig, "glm_probit_curves.png"))
    path = os.path.join(FIG, "glm_results.json")
    atomic_write_text(path, json.dumps({"runs": runs, "horizon": horizon, "rows": rows}, indent=1))
    return {"rows": rows, "figures": figures + [path]}


def part_conse(runs: int) -> dict:
    n = 20000
    alphas = (0.0, 0.25, 0.5, 0.75, 1.0)
    rows = []
    for m in (1, 4):
        env = default_experiment(types=m, gap=0.4, seasonality=0.3 if m > 1 else 0.0)
        data = env.sample(np.random.default_rng(5), n, runs)
        for eps in (None, 2.0, 1.0, 0.5):
            for alpha in alphas:
                res = run_conse(env, data, ConSEParams(alpha=alpha, epsilon=eps), np.random.default_rng(6))
                reg = float(res.regret[:, -1].mean())
                mse = res.max_mse(env.cate)
                rows.append(
                    {
                        "types": m,
                        "epsilon": eps,
                        "alpha": alpha,
                        "regret": reg,
                        "max_mse": mse,
                        "product": reg * mse,
                        "mean_rct": float(res.rct_lengths.mean()),
                    }
                )
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, m in zip(axes, (1, 4)):
        for i, eps in enumerate((None, 2.0, 1.0, 0.5)):
            sel = [r for r in rows if r["types"] == m and r["epsilon"] == eps]
            ax.plot(
                [r["regret"] for r in sel],
                [r["max_mse"] for r in sel],
                marker="o",
                color=f"C{i}",
                label="ConSE" if eps is None else f"DP-ConSE eps={eps:g}",
            )
            for r in sel:
                ax.annotate(f"{r['alpha']:g}", (r["regret"], r["max_mse"]), fontsize=6)
        ref = [r for r in rows if r["types"] == m and r["epsilon"] is None]
        x = np.geomspace(min(r["regret"] for r in ref), max(r["regret"] for r in ref), 20)
        c = np.median([r["product"] for r in ref])
        ax.plot(x, c / x, "k:", label="error x regret = const")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("regret at n=20000")
        ax.set_ylabel("max over types of MSE")
        ax.set_title(f"Li, Shi, Simchi-Levi (ICML 2024) trade-off, M={m} (labels: alpha)")
        ax.legend(fontsize=7)
    f1 = _save(fig, "conse_tradeoff.png")
    claims = []
    for m in range(1, 9):
        for eps in (0.5, 1.0, 2.0):
            p = conse_privacy(ConSEParams(epsilon=eps), n, m, rct_length_floor=1000.0)
            claims.append(
                {
                    "types": m,
                    "epsilon": eps,
                    "claimed": eps,
                    "corrected": p.corrected.epsilon,
                    "rct_lengths_part": p.implied["context_phase1"].epsilon,
                }
            )
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, eps in enumerate((0.5, 1.0, 2.0)):
        sel = [c for c in claims if c["epsilon"] == eps]
        ax.plot(
            [c["types"] for c in sel],
            [c["corrected"] for c in sel],
            marker="o",
            color=f"C{i}",
            label=f"corrected, eps={eps:g}",
        )
        ax.axhline(eps, color=f"C{i}", ls="--", lw=1, label=f"paper's claim {eps:g}")
    ax.set_xlabel("number of types M")
    ax.set_ylabel("epsilon (n=20000, T_min >= 1000)")
    ax.set_title("DP-ConSE: claimed vs corrected (RCT lengths move together)")
    ax.legend(fontsize=7)
    f2 = _save(fig, "conse_privacy_vs_types.png")
    return {"rows": rows, "privacy": claims, "figures": [f1, f2]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("glm", "conse", "all"), default="all")
    ap.add_argument("--runs-glm", type=int, default=10)
    ap.add_argument("--runs-conse", type=int, default=50)
    ap.add_argument("--horizon-glm", type=int, default=5000)
    ap.add_argument("--modes", nargs="+", choices=tuple(MODES), default=list(MODES))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = {}
    if args.part in ("conse", "all"):
        out["conse"] = part_conse(args.runs_conse)
    if args.part in ("glm", "all"):
        out["glm"] = part_glm(args.runs_glm, args.horizon_glm, args.modes)
    if args.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    if "glm" in out:
        print("Sarmasarkar, Table 2 (probit, d=3, K=20, T=5000, 10 runs): regret at T, mean [95% interval] | paper")
        print("  (first switch: mean round of the first θ̂_τ fit; before: regret accrued before it, θ̂ = 0)")
        for r in out["glm"]["rows"]:
            name = f"eps={r['epsilon']:g}" if r["epsilon"] else "non-private"
            paper = r["paper"]
            tag = (
                "inside" if r["inside"] else f"gap {r['regret'] - paper:+.1f} ({(r['regret'] / paper - 1) * 100:+.0f}%)"
            )
            if not r["epsilon"]:
                tag = "paper: RS-GLinUCB (another algorithm)"
            print(
                f"  S={r['S']:<4} kappa={r['kappa']:7.2f} {r['mode']:8s} {name:12s} {r['regret']:7.1f} "
                f"[{r['low']:7.1f}, {r['high']:7.1f}] | {paper:7.2f}  {tag:28s} first switch "
                f"{r['first_switch']:6.0f}, before {r['regret_before_first_switch']:6.1f}, fits {r['switches']:.1f}"
            )
    if "conse" in out:
        print("Li, Shi, Simchi-Levi (ICML 2024) trade-off (n=20000): types, eps, alpha -> regret, max MSE, product")
        for r in out["conse"]["rows"]:
            name = f"{r['epsilon']:g}" if r["epsilon"] else "none"
            print(
                f"  M={r['types']} eps={name:5s} alpha={r['alpha']:<5} regret {r['regret']:9.1f}"
                f"  mse {r['max_mse']:.5f}  product {r['product']:.2f}  mean T_j {r['mean_rct']:.0f}"
            )
        print("DP-ConSE claimed vs corrected epsilon (T_min >= 1000):")
        for c in out["conse"]["privacy"]:
            print(f"  M={c['types']} eps={c['epsilon']:g}: claimed {c['claimed']:g}, corrected {c['corrected']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
