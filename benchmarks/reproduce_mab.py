"""Reproduce the bandit experiments of Hu, Huang, Mehta (arXiv:2102.07929, §6) and Chowdhury & Zhou (ICLR 2023, Sec. 7), cell by cell.

    python benchmarks/reproduce_mab.py --quick                # ~3 min: Chowdhury & Zhou easy (Figs. 1-2) and Fig. 4
    python benchmarks/reproduce_mab.py                        # everything (hard at T = 10^7, Hu-Huang-Mehta at T = 2^22)
    python benchmarks/reproduce_mab.py --part cz|hhm|hhm-hybrid-full [--hybrid-horizon T]

Every cell is printed as a table on stdout: the reference figure beside ours, mean and 95% interval.
Chowdhury & Zhou (ICLR 2023) (§7, App. J): K = 10, their code's instances (run r: np.random.seed(r), mu = gap *
rand(10) + 0.5 - gap/2; `authors_instances`), rewards clip(N(mu, 0.1^2), 0, 1), p = 0.1, eps in {0.1, 0.5, 1}.
- Figs. 1-3: DP-SE, Dist-DP-SE and Dist-RDP-SE (s = 10, 100) with batches 4^b, easy T = 10^6, hard T = 10^7, our run
  r on their instance r < 20 (the figures' 20 instances). The paper gives plots only, so the reference is the
  authors' public code run unchanged (benchmarks/authors_code/run_mab.py) on its instances 0-3; ours is run on the
  same 4 instances (10 or 25 runs each) and the table says whether the authors' 4-run mean falls in the interval a
  correct implementation predicts for it. Also the two bugs of the authors' code (shared DP-SE noise, inverted
  Pólya) next to the correct versions.
- Fig. 4: CDP-SE, LDP-SE, Dist-DP-SE, Dist-RDP-SE, Dist-CDP-SE (s = 10) with batches 2^b, easy T = 10^6 (plot only in
  the paper, not in the authors' public code: no reference number).
Hu, Huang, Mehta (arXiv:2102.07929) (§6, App. I): K = 5, settings 1-3, eps in {0.1, 0.25, 0.5, 1, 8, 64, 128}, 15 runs,
Bernoulli rewards (the paper does not say), DP-SE with beta = 1/T; plots only and no public code (no reference number).
- Anytime-Lazy-UCB and DP-SE at the paper's T = 2 * 2^21;
- Hybrid-UCB with Anytime-Lazy-UCB, DP-SE and UCB1 (one round per step) at T = --hybrid-horizon
  (default 2^18) for the comparison of all four;
- part hhm-hybrid-full: Hybrid-UCB (window engine) with Anytime-Lazy-UCB and DP-SE at T = 2 * 2^21.
Figures go to benchmarks/figures/mab_*.png (mab_cz_vs_authors_code.png: the authors' code beside ours), numbers to
benchmarks/figures/mab_summary.json.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time
from typing import Iterator

import numpy as np
from scipy import stats

from dpaudit._io import atomic_write, atomic_write_text
from dpaudit.algorithms.mab.environment import HHM_SETTINGS, BernoulliArms, ClippedGaussianArms, authors_instances
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.hybrid_ucb import HybridUCB
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import checkpoint_grid
from dpaudit.algorithms.mab.ucb import UCB1
from dpaudit.regret import RegretCurves, plot_curves, plot_final
from tables import print_table  # noqa: E402 (benchmarks/, the script's own folder)

FIG = pathlib.Path(__file__).resolve().parent / "figures"
EPS_001 = (0.1, 0.25, 0.5, 1.0, 8.0, 64.0, 128.0)
EPS_004 = (0.1, 0.5, 1.0)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def curves(label: str, out, means, horizon: int) -> RegretCurves:
    cp = checkpoint_grid(horizon, 120)
    return RegretCurves(label, cp, out.regret(means, cp), {}, {"label": label})


def summary(c: RegretCurves) -> dict:
    lo, hi = c.final_ci
    return {"final_mean": c.final_mean, "final_ci": [lo, hi], "time_average": c.final_mean / c.horizon, "runs": c.runs,
            "horizon": c.horizon}


def hhm_settings(seed: int) -> Iterator[tuple[int, str, np.ndarray, BernoulliArms, np.random.Generator]]:
    """(k, setting, means, environment, rng) for Hu, Huang, Mehta's (arXiv:2102.07929) settings 1..3 (§6, App. I.3); each setting's rng is
    spawned from SeedSequence(seed) in turn."""
    ss = np.random.SeedSequence(seed)
    for k, (setting, mu) in enumerate(HHM_SETTINGS.items(), start=1):
        mu = np.array(mu)
        yield k, setting, mu, BernoulliArms(mu), np.random.default_rng(ss.spawn(1)[0])


def hhm_experiments(results: dict, hybrid_horizon: int, runs: int = 15) -> None:
    T = 2 * 2**21
    for k, setting, mu, env, rng in hhm_settings(1):
        full = {"Anytime-Lazy-UCB": [], "DP-SE": []}
        for eps in EPS_001:
            full["Anytime-Lazy-UCB"].append(curves(f"Lazy eps={eps}", AnytimeLazyUCB(eps).run(env, rng, runs, T), mu, T))
            full["DP-SE"].append(curves(f"DP-SE eps={eps}", DPSE(eps).run(env, rng, runs, T), mu, T))
        log(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}: lazy and DP-SE at T={T} done")
        Th = hybrid_horizon
        t0 = time.time()
        hyb = HybridUCB().run_epsilons(env, rng, runs, Th, EPS_001)
        log(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}: Hybrid-UCB at T={Th}, 7 eps x {runs} runs in {time.time() - t0:.0f} s")
        ucb = curves("UCB1", UCB1().run(env, rng, runs, Th), mu, Th)
        short = {"Hybrid-UCB": [curves(f"Hybrid eps={e}", o, mu, Th) for e, o in zip(EPS_001, hyb)],
                 "Anytime-Lazy-UCB": [curves(f"Lazy eps={e}", AnytimeLazyUCB(e).run(env, rng, runs, Th), mu, Th) for e in EPS_001],
                 "DP-SE": [curves(f"DP-SE eps={e}", DPSE(e).run(env, rng, runs, Th), mu, Th) for e in EPS_001],
                 "UCB1 (non-private)": [ucb] * len(EPS_001)}
        plot_final({k2: (EPS_001, v) for k2, v in full.items()}, FIG / f"mab_hhm_setting{k}_final_T4M.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps")
        plot_final({k2: (EPS_001, v) for k2, v in short.items()}, FIG / f"mab_hhm_setting{k}_final_T{Th}.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = {Th}, {runs} runs: final regret vs eps")
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                panel = [short["Hybrid-UCB"][i], short["Anytime-Lazy-UCB"][i], short["DP-SE"][i], ucb]
                plot_curves(panel, FIG / f"mab_hhm_setting{k}_eps{eps:g}.png",
                            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = {Th}, {runs} runs")
        results[f"hhm/{setting}"] = {
            "T_full": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()},
            f"T_{Th}": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in short.items()},
        }
        hhm_table(setting, T, full, runs)
        hhm_table(setting, Th, short, runs)


def hhm_table(setting: str, horizon: int, table: dict, runs: int) -> None:
    """Hu, Huang, Mehta (arXiv:2102.07929) give plots only (Figs. 1-12) and no code: ours, with the paper's column empty."""
    rows = [(setting, f"{e:g}", name, "plot only", fmt(c.final_mean, *c.final_ci))
            for name, cs in table.items() for e, c in zip(EPS_001, cs)]
    print_table(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}, T = {horizon}, {runs} runs: final regret, mean [95% interval]",
                ("setting", "eps", "algorithm", "paper", "ours"), rows)


def save(results: dict) -> None:
    """Write the summary atomically (dpaudit._io)."""
    atomic_write_text(FIG / "mab_summary.json", json.dumps(results, indent=1))


def hhm_hybrid_full(results: dict, runs: int = 15) -> None:
    """Hybrid-UCB at the paper's T = 2 * 2^21 (window engine), one eps at a time, next to
    Anytime-Lazy-UCB and DP-SE at the same T: final regret vs eps and the Fig. 1-4 panels."""
    T = 2 * 2**21
    for k, setting, mu, env, rng in hhm_settings(11):
        algos = {"Hybrid-UCB": HybridUCB, "Anytime-Lazy-UCB": AnytimeLazyUCB, "DP-SE": DPSE}
        full = {name: [] for name in algos}
        for eps in EPS_001:
            for name, cls in algos.items():
                t0 = time.time()
                full[name].append(curves(name, cls(eps).run(env, rng, runs, T), mu, T))
                if name == "Hybrid-UCB":
                    log(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting} eps={eps}: Hybrid-UCB at T={T} in {time.time() - t0:.0f} s")
        plot_final({n: (EPS_001, cs) for n, cs in full.items()}, FIG / f"mab_hhm_setting{k}_final_T4M.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps")
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                plot_curves([cs[i] for cs in full.values()], FIG / f"mab_hhm_setting{k}_eps{eps:g}_T4M.png",
                            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = 2^22, {runs} runs")
        results.setdefault(f"hhm/{setting}", {})["T_full_with_hybrid"] = {
            name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()}
        hhm_table(setting, T, full, runs)
        save(results)  # after every setting: a long run keeps what it finished


# ---- Chowdhury & Zhou (ICLR 2023, Sec. 7 fn. 5): the authors' code next to ours ---------------------------------------------------
AUTHORS_CODE = pathlib.Path(__file__).resolve().parent / "authors_code" / "mab_chowdhury_zhou_2023.jsonl"
CODE_ALGS = {"DP-SE": "dpse", "Dist-DP-SE": "distdp", "Dist-RDP-SE s=10": "distrdp", "Dist-RDP-SE s=100": "distrdp100"}
HORIZONS_004 = {"easy": 10**6, "hard": 10**7}


def figure_algorithms(eps: float) -> dict:
    """Figs. 1-3 (the authors' MABPrivate.py): DP-SE with dc = 2, the distributed ones with batches 4^b; p = 0.1."""
    return {"DP-SE": DPSE(eps, beta=0.1),
            "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1, base=4),
            "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1, base=4),
            "Dist-RDP-SE s=100": BatchSE("dist-rdp", eps, s=100, p=0.1, base=4)}


def authors_code_runs(path: pathlib.Path = AUTHORS_CODE) -> dict:
    """{(instance, horizon, eps, alg): {run: realised regret}} from the runs of the authors' code (run_mab.py).

    A line with "mean", "se" and "runs" instead of "regret" is a summary of runs 0..runs-1 reported without the
    single values (mean +- standard error over the runs); it is used only where no single runs are stored."""
    out: dict = {}
    summaries: dict = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                key = (r["instance"], r["horizon"], float(r["epsilon"]), r["alg"])
                if "regret" in r:
                    out.setdefault(key, {})[r["run"]] = r["regret"]
                else:
                    summaries[key] = {"mean": r["mean"], "se": r["se"], "runs": r["runs"], "source": r.get("source", "")}
    for key, summ in summaries.items():
        out.setdefault(key, summ)
    return out


def reference(ref: dict) -> tuple[list[int], np.ndarray | None, float, float, float]:
    """(instances, single values or None, mean, 95% t-interval) of the authors' code's runs or of their summary."""
    if "mean" in ref and "se" in ref:
        n = int(ref["runs"])
        h = float(stats.t.ppf(0.975, n - 1) * ref["se"])
        return list(range(n)), None, float(ref["mean"]), ref["mean"] - h, ref["mean"] + h
    ids = sorted(ref)
    theirs = np.array([ref[i] for i in ids])
    return ids, theirs, *t_interval(theirs)


def t_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of the mean of a few runs (the authors' code: 4 runs)."""
    m = float(np.mean(x))
    if x.size < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
    return m, m - h, m + h


def on_instances(algo, instance: str, ids: list[int], copies: int, horizon: int, rng) -> dict:
    """`copies` runs of `algo` on each of the authors' instances `ids`: the mean and its 95% interval, and the
    95% interval in which a mean of ONE run per instance (what the authors' code reports) falls: our mean
    +- 1.96 sqrt(sum_i var_i / |ids|^2 + se^2), var_i the spread of our runs on instance i."""
    mu_all = authors_instances(instance, max(ids) + 1)
    mu = np.tile(mu_all[ids], (copies, 1))
    env = ClippedGaussianArms(mu)
    r = algo.run(env, rng, mu.shape[0], horizon).regret(env.reward_means, np.array([horizon]))[:, 0]
    per = r.reshape(copies, len(ids))
    se = float(r.std(ddof=1) / math.sqrt(r.size))
    one_run_sd = float(math.sqrt(per.var(axis=0, ddof=1).sum()) / len(ids))
    m = float(r.mean())
    h = 1.96 * math.sqrt(one_run_sd**2 + se**2)
    return {"mean": m, "ci": [m - 1.96 * se, m + 1.96 * se], "one_run_mean_interval": [m - h, m + h],
            "per_instance": per.mean(axis=0).tolist(), "runs": int(r.size)}


def fmt(m: float, lo: float, hi: float) -> str:
    if math.isnan(m):
        return "-"
    return f"{m:7.0f} [{lo:6.0f}, {hi:6.0f}]" if not math.isnan(lo) else f"{m:7.0f}"


def cz_experiments(results: dict, *, quick: bool, runs: int = 20) -> None:
    """Figs. 1-3 on the authors' instances (run r = their instance r, r < 20), with the authors' code's own runs
    (instances 0-3) beside ours on the same instances."""
    code = authors_code_runs()
    instances = ("easy",) if quick else ("easy", "hard")
    copies = 10 if quick else 25
    ss = np.random.SeedSequence(4)
    rows = []
    for instance in instances:
        T = HORIZONS_004[instance]
        mu = authors_instances(instance, runs)
        env = ClippedGaussianArms(mu)
        res = {}
        for eps in EPS_004:
            algos = figure_algorithms(eps)
            if instance == "easy":
                algos["DP-SE (authors' shared noise)"] = DPSE(eps, beta=0.1, noise="shared")
                algos["Dist-DP-SE (authors' inverted Polya)"] = BatchSE("dist-dp", eps, p=0.1, base=4, polya="inverted")
            cs, cell = [], {}
            for name, algo in algos.items():
                t0 = time.time()
                rng = np.random.default_rng(ss.spawn(1)[0])
                c = curves(name, algo.run(env, rng, runs, T), env.reward_means, T)
                cs.append(c)
                cell[name] = summary(c)
                ref = code.get((instance, T, eps, CODE_ALGS.get(name, "")), {})
                if ref:
                    ids, theirs, m, lo, hi = reference(ref)
                    like = on_instances(algo, instance, ids, copies, T, rng)
                    inside = like["one_run_mean_interval"][0] <= m <= like["one_run_mean_interval"][1]
                    cell[name]["authors_code"] = {"instances": ids, "regret": None if theirs is None else theirs.tolist(),
                                                  "mean": m, "t_interval": [lo, hi], "source": ref.get("source", "run_mab.py")}
                    cell[name]["ours_on_their_instances"] = like | {"authors_mean_inside": inside}
                    rows.append((instance, eps, name, fmt(m, lo, hi), fmt(like["mean"], *like["ci"]),
                                 fmt(like["mean"], *like["one_run_mean_interval"]), "yes" if inside else "NO",
                                 fmt(c.final_mean, *c.final_ci)))
                else:
                    rows.append((instance, eps, name, "not run" if name in CODE_ALGS else "n/a", "-", "-", "-",
                                 fmt(c.final_mean, *c.final_ci)))
                log(f"Chowdhury & Zhou (ICLR 2023) {instance} eps={eps}: {name} in {time.time() - t0:.1f} s")
            main = [c for c in cs if "authors" not in c.algorithm]
            plot_curves(main, FIG / f"mab_cz_{instance}_eps{eps:g}.png", time_average=True, log_x=True,
                        title=f"Chowdhury & Zhou (ICLR 2023) {instance}, eps = {eps:g}, their instances 0-{runs - 1}")
            if instance == "easy":
                bugs = [c for c in cs if c.algorithm.startswith(("DP-SE", "Dist-DP-SE"))]
                plot_curves(bugs, FIG / f"mab_cz_bugs_eps{eps:g}.png", time_average=True, log_x=True,
                            title=f"Chowdhury & Zhou (ICLR 2023) easy, eps = {eps:g}: correct vs authors' code")
            res[str(eps)] = cell
        results[f"cz/{instance}"] = res
    print_table(
        "Chowdhury & Zhou (ICLR 2023), Figs. 1-3: final regret at T (easy 10^6, hard 10^7), mean [95% interval]. The paper "
        "gives plots only; the reference is the authors' public code run unchanged on its instances 0-3 (Student-t "
        f"interval over its 4 runs). Ours: the same instances x {copies}, and the interval in which a 4-run mean "
        "(one run per instance) of a correct implementation falls; last column: our run r on their instance r, r < 20 "
        "(the figures' setting).",
        ("inst", "eps", "algorithm", "authors' code (inst. 0-3)", f"ours (inst. 0-3 x {copies})",
         "4-run mean expected in", "inside", f"ours (inst. 0-{runs - 1})"), rows)
    plot_vs_authors(results, instances)


def plot_vs_authors(results: dict, instances) -> None:
    """One panel per instance: the authors' code's 4-run mean (t-interval) next to ours on the same instances."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    instances = [i for i in instances if any("authors_code" in cell for e in EPS_004
                                             for cell in results.get(f"cz/{i}", {}).get(str(e), {}).values())]
    if not instances:
        return
    fig = Figure(figsize=(5.5 * len(instances) + 1, 4.2), dpi=100)
    for k, instance in enumerate(instances):
        ax = fig.add_subplot(1, len(instances), k + 1)
        x = 0
        ticks, labels = [], []
        for eps in EPS_004:
            for name in CODE_ALGS:
                cell = results.get(f"cz/{instance}", {}).get(str(eps), {}).get(name, {})
                if "authors_code" not in cell:
                    continue
                a, o = cell["authors_code"], cell["ours_on_their_instances"]
                ax.errorbar([x - 0.15], [a["mean"]], yerr=[[a["mean"] - a["t_interval"][0]], [a["t_interval"][1] - a["mean"]]],
                            fmt="o", color="k", capsize=3, label="authors' code (4 runs)" if x == 0 else None)
                ax.errorbar([x + 0.15], [o["mean"]], yerr=[[o["mean"] - o["one_run_mean_interval"][0]],
                                                          [o["one_run_mean_interval"][1] - o["mean"]]],
                            fmt="s", color="tab:blue", capsize=3, label="dpaudit (4-run mean, 95%)" if x == 0 else None)
                ticks.append(x)
                labels.append(f"{name.replace('Dist-', 'D-').replace(' s=', '/s')}\neps={eps:g}")
                x += 1
        ax.set_xticks(ticks, labels, fontsize=7, rotation=45)
        ax.set_ylabel("final regret")
        ax.set_yscale("log")
        ax.set_title(f"{instance}: authors' instances 0-3")
        ax.grid(alpha=0.3)
        if ticks:
            ax.legend(fontsize=7)
    fig.tight_layout()
    _save_fig(fig, FIG / "mab_cz_vs_authors_code.png")


def _save_fig(fig, path: pathlib.Path) -> None:
    atomic_write(path, lambda fh: fig.savefig(fh, format="png"))


def cz_fig4(results: dict, *, runs: int = 20) -> None:
    """Fig. 4 (batches 2^b): CDP-SE, LDP-SE, Dist-DP-SE, Dist-RDP-SE, Dist-CDP-SE (s = 10) on the easy instances. Its
    algorithms are not in the authors' public code (MABPrivatePlot.py reads result files MABPrivate.py does not
    write) and the paper gives a plot only: there is no number to set beside ours."""
    T = 10**6
    env = ClippedGaussianArms(authors_instances("easy", runs))
    ss = np.random.SeedSequence(44)
    res, rows = {}, []
    for eps in EPS_004:
        algos = {"CDP-SE": BatchSE("central", eps, p=0.1), "LDP-SE": BatchSE("local", eps, p=0.1),
                 "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1), "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1),
                 "Dist-CDP-SE s=10": BatchSE("dist-cdp", eps, s=10, p=0.1)}
        cs = []
        for name, algo in algos.items():
            t0 = time.time()
            c = curves(name, algo.run(env, np.random.default_rng(ss.spawn(1)[0]), runs, T), env.reward_means, T)
            cs.append(c)
            rows.append(("easy", eps, name, "plot only", fmt(c.final_mean, *c.final_ci)))
            log(f"Chowdhury & Zhou (ICLR 2023) fig4 eps={eps}: {name} in {time.time() - t0:.1f} s")
        plot_curves(cs, FIG / f"mab_cz_fig4_eps{eps:g}.png", time_average=True, log_x=True,
                    title=f"Chowdhury & Zhou 2023, Fig. 4 (batches 2^b), eps = {eps:g}, their instances 0-{runs - 1}")
        res[str(eps)] = {c.algorithm: summary(c) for c in cs}
    results["cz/fig4"] = res
    print_table(f"Chowdhury & Zhou (ICLR 2023), Fig. 4: final regret at T = 10^6, mean [95% interval]; paper: plot "
                f"only, not in the authors' public code", ("inst", "eps", "algorithm", "paper", f"ours (inst. 0-{runs - 1})"), rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("hhm", "cz", "hhm-hybrid-full", "all"), default="all")
    ap.add_argument("--quick", action="store_true",
                    help="Chowdhury & Zhou's easy instance only (Figs. 1-2 with the authors' code, Fig. 4), 10 runs per "
                         "instance for the like-for-like comparison: a few minutes")
    ap.add_argument("--hybrid-horizon", type=int, default=2**18)
    args = ap.parse_args()
    FIG.mkdir(parents=True, exist_ok=True)
    path = FIG / "mab_summary.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    if args.quick or args.part in ("cz", "all"):
        cz_experiments(results, quick=args.quick)
        save(results)
        cz_fig4(results)
        save(results)
    if not args.quick and args.part in ("hhm", "all"):
        hhm_experiments(results, args.hybrid_horizon)
        save(results)
    if not args.quick and args.part in ("hhm-hybrid-full", "all"):
        hhm_hybrid_full(results)
    save(results)
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
