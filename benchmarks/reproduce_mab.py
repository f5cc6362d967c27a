"""Reproduce the bandit experiments of Hu, Huang, Mehta (arXiv:2102.07929, §6) and Chowdhury & Zhou (ICLR 2023, Sec. 7), cell by cell.

    python -m benchmarks run reproduce_mab --quick    # Chowdhury & Zhou easy (Figs. 1-2) and Fig. 4 only
    python -m benchmarks run reproduce_mab            # everything (hard at T = 10^7, Hu-Huang-Mehta at T = 2^22)
    python -m benchmarks run reproduce_mab --part cz|hhm|hhm-hybrid-full [--hybrid-horizon T]
    python -m benchmarks run reproduce_mab --part cz --from-cache  # the Figs. 1-4 tables again, no simulation

Every cell is printed as a table on stdout: the reference figure beside ours, mean and 95% interval.
Chowdhury & Zhou (ICLR 2023) (§7, App. J): K = 10, their code's instances (run r: np.random.seed(r), mu = gap *
rand(10) + 0.5 - gap/2; `authors_instances`), rewards clip(N(mu, 0.1^2), 0, 1), p = 0.1, eps in {0.1, 0.5, 1}.
- Figs. 1-3: DP-SE, Dist-DP-SE and Dist-RDP-SE (s = 10, 100) with batches 4^b, easy T = 10^6, hard T = 10^7, our run
  r on their instance r < 20 (the figures' 20 instances). The paper gives plots only, so the reference is the
  authors' public code run unchanged (benchmarks/authors_code/run_mab.py; its runs in
  authors_code/mab_chowdhury_zhou_2023.jsonl): on instances 0-3 (easy) and on instance 0 (hard). Ours: 39 runs on
  each of the same instances, and the table says whether the authors' value falls in the interval a correct
  implementation predicts for it (a 4-run mean: quantiles of the mean of one of our runs per instance; one run:
  [min, max] of 39 realised regrets, a distribution-free 95% prediction interval; benchmarks/cz_table.py). Also the two bugs of the authors' code
  (shared DP-SE noise, inverted Pólya) next to the correct versions.
- Fig. 4: CDP-SE, LDP-SE, Dist-DP-SE, Dist-RDP-SE, Dist-CDP-SE (s = 10) with batches 2^b, easy T = 10^6 (plot only in
  the paper, not in the authors' public code: no reference number).
A simulating run keeps our runs in benchmarks/figures/mab_cz_ours.json (keyed by cell and seed; the cells of every
eps and algorithm on the easy instances 0-3 and the hard instance 0, and any instance of the jsonl), and reuses
them while the algorithms' code is unchanged; `--part cz --from-cache` then rebuilds benchmarks/figures/
mab_cz_tables.txt, mab_cz_vs_authors_code.png and the summary's cz entries from the jsonl and that cache only (exit
status 1 if a cell of the jsonl has no cached runs).
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
from collections.abc import Iterator

import numpy as np

from benchmarks import cz_table as czt
from benchmarks.tables import format_table, print_table
from dpaudit._io import atomic_write, atomic_write_text
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.environment import HHM_SETTINGS, BernoulliArms, ClippedGaussianArms, authors_instances
from dpaudit.algorithms.mab.hybrid_ucb import HybridUCB
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import checkpoint_grid
from dpaudit.algorithms.mab.ucb import UCB1
from dpaudit.regret import RegretCurves, plot_curves, plot_final

FIG = pathlib.Path(__file__).resolve().parent / "figures"
EPS_001 = (0.1, 0.25, 0.5, 1.0, 8.0, 64.0, 128.0)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def curves(label: str, out, means, horizon: int) -> RegretCurves:
    cp = checkpoint_grid(horizon, 120)
    return RegretCurves(label, cp, out.regret(means, cp), {}, {"label": label})


def summary(c: RegretCurves) -> dict:
    lo, hi = c.final_ci
    return {
        "final_mean": c.final_mean,
        "final_ci": [lo, hi],
        "time_average": c.final_mean / c.horizon,
        "runs": c.runs,
        "horizon": c.horizon,
    }


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
            full["Anytime-Lazy-UCB"].append(
                curves(f"Lazy eps={eps}", AnytimeLazyUCB(eps).run(env, rng, runs, T), mu, T)
            )
            full["DP-SE"].append(curves(f"DP-SE eps={eps}", DPSE(eps).run(env, rng, runs, T), mu, T))
        log(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}: lazy and DP-SE at T={T} done")
        Th = hybrid_horizon
        t0 = time.time()
        hyb = HybridUCB().run_epsilons(env, rng, runs, Th, EPS_001)
        log(
            f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}: Hybrid-UCB at T={Th}, 7 eps x {runs} runs in {time.time() - t0:.0f} s"
        )
        ucb = curves("UCB1", UCB1().run(env, rng, runs, Th), mu, Th)
        short = {
            "Hybrid-UCB": [curves(f"Hybrid eps={e}", o, mu, Th) for e, o in zip(EPS_001, hyb)],
            "Anytime-Lazy-UCB": [
                curves(f"Lazy eps={e}", AnytimeLazyUCB(e).run(env, rng, runs, Th), mu, Th) for e in EPS_001
            ],
            "DP-SE": [curves(f"DP-SE eps={e}", DPSE(e).run(env, rng, runs, Th), mu, Th) for e in EPS_001],
            "UCB1 (non-private)": [ucb] * len(EPS_001),
        }
        plot_final(
            {k2: (EPS_001, v) for k2, v in full.items()},
            FIG / f"mab_hhm_setting{k}_final_T4M.png",
            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps",
        )
        plot_final(
            {k2: (EPS_001, v) for k2, v in short.items()},
            FIG / f"mab_hhm_setting{k}_final_T{Th}.png",
            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = {Th}, {runs} runs: final regret vs eps",
        )
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                panel = [short["Hybrid-UCB"][i], short["Anytime-Lazy-UCB"][i], short["DP-SE"][i], ucb]
                plot_curves(
                    panel,
                    FIG / f"mab_hhm_setting{k}_eps{eps:g}.png",
                    title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = {Th}, {runs} runs",
                )
        results[f"hhm/{setting}"] = {
            "T_full": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()},
            f"T_{Th}": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in short.items()},
        }
        hhm_table(setting, T, full, runs)
        hhm_table(setting, Th, short, runs)


def hhm_table(setting: str, horizon: int, table: dict, runs: int) -> None:
    """Hu, Huang, Mehta (arXiv:2102.07929) give plots only (Figs. 1-12) and no code: ours, with the paper's column empty."""
    rows = [
        (setting, f"{e:g}", name, "plot only", czt.fmt(c.final_mean, *c.final_ci))
        for name, cs in table.items()
        for e, c in zip(EPS_001, cs)
    ]
    print_table(
        f"Hu, Huang, Mehta (arXiv:2102.07929) {setting}, T = {horizon}, {runs} runs: final regret, mean [95% interval]",
        ("setting", "eps", "algorithm", "paper", "ours"),
        rows,
    )


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
                    log(
                        f"Hu, Huang, Mehta (arXiv:2102.07929) {setting} eps={eps}: Hybrid-UCB at T={T} in {time.time() - t0:.0f} s"
                    )
        plot_final(
            {n: (EPS_001, cs) for n, cs in full.items()},
            FIG / f"mab_hhm_setting{k}_final_T4M.png",
            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps",
        )
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                plot_curves(
                    [cs[i] for cs in full.values()],
                    FIG / f"mab_hhm_setting{k}_eps{eps:g}_T4M.png",
                    title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = 2^22, {runs} runs",
                )
        results.setdefault(f"hhm/{setting}", {})["T_full_with_hybrid"] = {
            name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()
        }
        hhm_table(setting, T, full, runs)
        save(results)  # after every setting: a long run keeps what it finished


# ---- Chowdhury & Zhou (ICLR 2023, Sec. 7 fn. 5): the authors' code next to ours ---------------------------------------------------
# Our runs on the authors' instances made by every simulating run (cells of the authors' jsonl add theirs): the
# authors' code was run on instances 0-3 (easy) and 0 (hard, T = 10^7), so a new jsonl line there needs no simulation.
PRECOMPUTE = {"easy": (0, 1, 2, 3), "hard": (0,)}
CZ_TABLES = FIG / "mab_cz_tables.txt"


def figure_algorithms(eps: float) -> dict:
    """Figs. 1-3 (the authors' MABPrivate.py): DP-SE with dc = 2, the distributed ones with batches 4^b; p = 0.1."""
    return {
        "DP-SE": DPSE(eps, beta=0.1),
        "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1, base=4),
        "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1, base=4),
        "Dist-RDP-SE s=100": BatchSE("dist-rdp", eps, s=100, p=0.1, base=4),
    }


def cz_algorithms(instance: str, eps: float) -> dict:
    """Figs. 1-3's algorithms, and on the easy instance the two bugs of the authors' code beside them."""
    algos = figure_algorithms(eps)
    if instance == "easy":
        algos["DP-SE (authors' shared noise)"] = DPSE(eps, beta=0.1, noise="shared")
        algos["Dist-DP-SE (authors' inverted Polya)"] = BatchSE("dist-dp", eps, p=0.1, base=4, polya="inverted")
    return algos


def on_instance(
    algo, instance: str, instance_id: int, copies: int, horizon: int, entropy
) -> tuple[np.ndarray, np.ndarray]:
    """`copies` runs of `algo` on the authors' instance `instance_id`: (pseudo-regret at the horizon, V), V the
    variance the realised regret adds to each run (cz_table.realised_variance)."""
    mu = np.tile(authors_instances(instance, instance_id + 1)[instance_id], (copies, 1))
    env = ClippedGaussianArms(mu)
    out = algo.run(env, np.random.default_rng(np.random.SeedSequence(entropy)), copies, horizon)
    pseudo = out.regret(env.reward_means, np.array([horizon]))[:, 0]
    pulls = czt.pulls_per_arm(out.arms, out.lengths, env.n_arms)
    return pseudo, czt.realised_variance(pulls, env.reward_variances, env.reward_means)


def cz_simulate(cache: dict, instances, *, root: int, runs: int) -> None:
    """Figs. 1-3's runs (run r on the authors' instance r < runs: curves and figures) and our COPIES runs on each
    authors' instance of PRECOMPUTE and of the jsonl (taken from the cache when it was made by the same code)."""
    code = czt.read_authors_runs()
    src_hash = czt.source_hash()
    reuse = cache.get("source_hash") == src_hash
    if not reuse:
        cache.update(czt.new_cache())
    cache["source_hash"] = src_hash
    for instance in instances:
        T = czt.HORIZONS[instance]
        env = ClippedGaussianArms(authors_instances(instance, runs))
        for eps in czt.EPSILONS:
            cs = []
            for name, algo in cz_algorithms(instance, eps).items():
                key = czt.cell_key(instance, T, eps, name)
                t0 = time.time()
                ent = czt.run_seed(root, key)
                c = curves(
                    name,
                    algo.run(env, np.random.default_rng(np.random.SeedSequence(ent)), runs, T),
                    env.reward_means,
                    T,
                )
                cs.append(c)
                czt.put_figure_runs(cache, key, ent, c.regret[:, -1])
                msg = f"figures' runs {time.time() - t0:.1f} s"
                if name in czt.CODE_ALGS:
                    ref = code.get((instance, T, eps, czt.CODE_ALGS[name]))
                    for i in sorted(set(PRECOMPUTE[instance]) | set(ref.ids if ref else ())):
                        ent_i = czt.run_seed(root, key, i)
                        if czt.get_instance_runs(cache, key, ent_i) is not None:
                            continue
                        t1 = time.time()
                        pseudo, var = on_instance(algo, instance, i, czt.COPIES, T, ent_i)
                        czt.put_instance_runs(cache, key, ent_i, i, pseudo, var, time.time() - t1)
                        msg += f", instance {i} x {czt.COPIES} {time.time() - t1:.1f} s"
                log(f"Chowdhury & Zhou (ICLR 2023) {instance} eps={eps}: {name}: {msg}")
                czt.save_cache(cache)  # after every cell: a long run keeps what it finished
            main_cs = [c for c in cs if "authors" not in c.algorithm]
            plot_curves(
                main_cs,
                FIG / f"mab_cz_{instance}_eps{eps:g}.png",
                time_average=True,
                log_x=True,
                title=f"Chowdhury & Zhou (ICLR 2023) {instance}, eps = {eps:g}, their instances 0-{runs - 1}",
            )
            if instance == "easy":
                bugs = [c for c in cs if c.algorithm.startswith(("DP-SE", "Dist-DP-SE"))]
                plot_curves(
                    bugs,
                    FIG / f"mab_cz_bugs_eps{eps:g}.png",
                    time_average=True,
                    log_x=True,
                    title=f"Chowdhury & Zhou (ICLR 2023) easy, eps = {eps:g}: correct vs authors' code",
                )


def final_summary(finals, horizon: int) -> dict:
    """What `summary` gives for a RegretCurves, from its runs' final regrets (normal 95% interval of the mean)."""
    x = np.asarray(finals, dtype=float)
    h = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size)
    m = float(x.mean())
    return {
        "final_mean": m,
        "final_ci": [m - h, m + h],
        "time_average": m / horizon,
        "runs": int(x.size),
        "horizon": horizon,
    }


def cz_table(results: dict, cache: dict, *, root: int, runs: int) -> tuple[str, list[str]]:
    """The Figs. 1-3 table from the authors' jsonl and the cache only (no simulation): its text and the cells
    whose runs the cache lacks. Fills results["cz/easy"|"cz/hard"] (mab_summary.json)."""
    code = czt.read_authors_runs()
    rows, missing = [], []
    for instance in czt.HORIZONS:
        T = czt.HORIZONS[instance]
        res = {}
        for eps in czt.EPSILONS:
            cell = {}
            for name in cz_algorithms(instance, eps):
                key = czt.cell_key(instance, T, eps, name)
                finals = czt.get_figure_runs(cache, key, czt.run_seed(root, key))
                if finals is not None:
                    cell[name] = final_summary(finals, T)
                ref = code.get((instance, T, eps, czt.CODE_ALGS.get(name, "")))
                cmp = None
                if ref is not None:
                    ours = {}
                    for i in ref.ids:
                        e = czt.get_instance_runs(cache, key, czt.run_seed(root, key, i))
                        if e is not None:
                            ours[i] = e
                    if len(ours) == len(ref.ids):
                        cmp = czt.compare(ref, ours, lambda i, key=key: czt.run_seed(root, key, i))
                        cell.setdefault(name, {})["authors_code"] = cmp["authors"]
                        cell[name]["ours_on_their_instances"] = cmp["ours"] | {"authors_value_inside": cmp["inside"]}
                    else:
                        missing.append(f"{key} on instances {sorted(set(ref.ids) - set(ours))}")
                row = czt.table_row(instance, eps, name, cmp, finals, name in czt.CODE_ALGS)
                if ref is not None and cmp is None:
                    row = row[:4] + (czt.ids_label(ref.ids), "not in cache") + row[6:]
                rows.append(row)
            if cell:
                res[str(eps)] = cell
        if res:
            results[f"cz/{instance}"] = res
    title = (
        "Chowdhury & Zhou (ICLR 2023), Figs. 1-3: final regret at T (easy 10^6, hard 10^7), mean [95% interval]. The paper "
        "gives plots only; the reference is the authors' public code run unchanged on its instances (column 'runs'; "
        "Student-t interval over its runs, none for one run). Ours: the same instances x "
        f"{czt.COPIES} runs each, and the interval in which the authors' value falls for a correct implementation: "
        f"for one run, [min, max] of our {czt.COPIES} realised regrets on that instance (distribution-free 95% "
        "prediction interval); for a k-run mean (one run per instance), the 2.5-97.5% quantiles of the mean of one of "
        "our realised regrets per instance (exact over the combinations up to 3*10^6 of them); our realised regret = pseudo-regret + the reward noise of its pulls. Last column: our run r on "
        f"their instance r, r < {runs} (the figures' setting, pseudo-regret). Cache: benchmarks/figures/mab_cz_ours.json."
    )
    return format_table(title, czt.TABLE_HEADER, rows), missing


def plot_vs_authors(results: dict) -> None:
    """One panel per instance: the authors' code's value (t-interval when it has several runs) next to the interval
    in which ours predicts it."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    instances = [
        i
        for i in czt.HORIZONS
        if any(
            "authors_code" in cell for e in czt.EPSILONS for cell in results.get(f"cz/{i}", {}).get(str(e), {}).values()
        )
    ]
    if not instances:
        return
    fig = Figure(figsize=(5.5 * len(instances) + 1, 4.2), dpi=100)
    for k, instance in enumerate(instances):
        ax = fig.add_subplot(1, len(instances), k + 1)
        x = 0
        ticks, labels = [], []
        for eps in czt.EPSILONS:
            for name in czt.CODE_ALGS:
                cell = results.get(f"cz/{instance}", {}).get(str(eps), {}).get(name, {})
                if "authors_code" not in cell:
                    continue
                a, o = cell["authors_code"], cell["ours_on_their_instances"]
                lo, hi = a["t_interval"]
                yerr = [[a["mean"] - lo], [hi - a["mean"]]] if not (math.isnan(lo) or math.isnan(hi)) else None
                ax.errorbar(
                    [x - 0.15],
                    [a["mean"]],
                    yerr=yerr,
                    fmt="o",
                    color="k",
                    capsize=3,
                    label="authors' code (mean of its runs)" if x == 0 else None,
                )
                ax.errorbar(
                    [x + 0.15],
                    [o["mean"]],
                    yerr=[[o["mean"] - o["expected"][0]], [o["expected"][1] - o["mean"]]],
                    fmt="s",
                    color="tab:blue",
                    capsize=3,
                    label="dpaudit: where the authors' value falls (95%)" if x == 0 else None,
                )
                ticks.append(x)
                labels.append(f"{name.replace('Dist-', 'D-').replace(' s=', '/s')}\neps={eps:g}")
                x += 1
        ax.set_xticks(ticks, labels, fontsize=7, rotation=45)
        ax.set_ylabel("final regret")
        ax.set_yscale("log")
        ids = sorted(
            {
                i
                for e in czt.EPSILONS
                for c in results[f"cz/{instance}"].get(str(e), {}).values()
                for i in c.get("authors_code", {}).get("instances", [])
            }
        )
        ax.set_title(f"{instance}: authors' instances {czt.ids_label(ids)}")
        ax.grid(alpha=0.3)
        if ticks:
            ax.legend(fontsize=7)
    fig.tight_layout()
    _save_fig(fig, FIG / "mab_cz_vs_authors_code.png")


def _save_fig(fig, path: pathlib.Path) -> None:
    atomic_write(path, lambda fh: fig.savefig(fh, format="png"))


FIG4_T = 10**6


def fig4_algorithms(eps: float) -> dict:
    return {
        "CDP-SE": BatchSE("central", eps, p=0.1),
        "LDP-SE": BatchSE("local", eps, p=0.1),
        "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1),
        "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1),
        "Dist-CDP-SE s=10": BatchSE("dist-cdp", eps, s=10, p=0.1),
    }


def cz_fig4_simulate(cache: dict, *, root: int, runs: int = 20) -> None:
    """Fig. 4 (batches 2^b): CDP-SE, LDP-SE, Dist-DP-SE, Dist-RDP-SE, Dist-CDP-SE (s = 10) on the easy instances, run r
    on the authors' instance r: curves, and the final regrets into the cache."""
    env = ClippedGaussianArms(authors_instances("easy", runs))
    for eps in czt.EPSILONS:
        cs = []
        for name, algo in fig4_algorithms(eps).items():
            t0 = time.time()
            key = "fig4/" + czt.cell_key("easy", FIG4_T, eps, name)
            ent = czt.run_seed(root, key)
            c = curves(
                name,
                algo.run(env, np.random.default_rng(np.random.SeedSequence(ent)), runs, FIG4_T),
                env.reward_means,
                FIG4_T,
            )
            cs.append(c)
            czt.put_figure_runs(cache, key, ent, c.regret[:, -1])
            log(f"Chowdhury & Zhou (ICLR 2023) fig4 eps={eps}: {name} in {time.time() - t0:.1f} s")
        czt.save_cache(cache)
        plot_curves(
            cs,
            FIG / f"mab_cz_fig4_eps{eps:g}.png",
            time_average=True,
            log_x=True,
            title=f"Chowdhury & Zhou 2023, Fig. 4 (batches 2^b), eps = {eps:g}, their instances 0-{runs - 1}",
        )


def cz_fig4_table(results: dict, cache: dict, *, root: int, runs: int = 20) -> str:
    """Fig. 4's table from the cache. Its algorithms are not in the authors' public code (MABPrivatePlot.py reads
    result files MABPrivate.py does not write) and the paper gives a plot only: no number to set beside ours."""
    res, rows = {}, []
    for eps in czt.EPSILONS:
        for name in fig4_algorithms(eps):
            key = "fig4/" + czt.cell_key("easy", FIG4_T, eps, name)
            finals = czt.get_figure_runs(cache, key, czt.run_seed(root, key))
            if finals is None:
                rows.append(("easy", f"{eps:g}", name, "plot only", "not in cache"))
                continue
            s = final_summary(finals, FIG4_T)
            res.setdefault(str(eps), {})[name] = s
            rows.append(("easy", f"{eps:g}", name, "plot only", czt.fmt(s["final_mean"], *s["final_ci"])))
    if res:
        results["cz/fig4"] = res
    return format_table(
        "Chowdhury & Zhou (ICLR 2023), Fig. 4: final regret at T = 10^6, mean [95% interval]; paper: "
        "plot only, not in the authors' public code",
        ("inst", "eps", "algorithm", "paper", f"ours (inst. 0-{runs - 1})"),
        rows,
    )


def cz_experiments(results: dict, *, quick: bool, from_cache: bool, root: int = 4, runs: int = 20) -> list[str]:
    """Chowdhury & Zhou (ICLR 2023, Sec. 7, Figs. 1-4): simulate (unless from_cache), then write the tables (mab_cz_tables.txt, stdout)
    and mab_cz_vs_authors_code.png from the jsonl and the cache. Returns the cells whose runs the cache lacks."""
    cache = czt.load_cache()
    if from_cache:
        if cache.get("source_hash") != czt.source_hash():
            log(
                f"warning: {czt.CACHE.name} was made by other code ({', '.join(czt.SOURCES)} changed since); "
                "run without --from-cache to re-simulate"
            )
    else:
        cz_simulate(cache, ("easy",) if quick else ("easy", "hard"), root=root, runs=runs)
        cz_fig4_simulate(cache, root=root, runs=runs)
    text, missing = cz_table(results, cache, root=root, runs=runs)
    text += cz_fig4_table(results, cache, root=root, runs=runs)
    sys.stdout.write(text)
    atomic_write_text(CZ_TABLES, text)
    plot_vs_authors(results)
    for m in missing:
        log(
            f"not in the cache: {m}; run `python -m benchmarks run reproduce_mab --part cz` (simulates what is missing)"
        )
    return missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("hhm", "cz", "hhm-hybrid-full", "all"), default="all")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="Chowdhury & Zhou's easy instance only (Figs. 1-2 with the authors' code, Fig. 4): a few minutes",
    )
    ap.add_argument(
        "--from-cache",
        action="store_true",
        help="Chowdhury & Zhou: no simulation; the tables and mab_cz_vs_authors_code.png from the authors' "
        "jsonl and our cached runs (benchmarks/figures/mab_cz_ours.json), in seconds, e.g. after a "
        "new line in benchmarks/authors_code/mab_chowdhury_zhou_2023.jsonl",
    )
    ap.add_argument("--hybrid-horizon", type=int, default=2**18)
    args = ap.parse_args(argv)
    if args.from_cache and args.part != "cz":
        ap.error("--from-cache goes with --part cz")
    FIG.mkdir(parents=True, exist_ok=True)
    path = FIG / "mab_summary.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    missing = []
    if args.quick or args.part in ("cz", "all"):
        missing = cz_experiments(results, quick=args.quick, from_cache=args.from_cache)
        save(results)
    if not args.quick and args.part in ("hhm", "all"):
        hhm_experiments(results, args.hybrid_horizon)
        save(results)
    if not args.quick and args.part in ("hhm-hybrid-full", "all"):
        hhm_hybrid_full(results)
    save(results)
    log(f"wrote {path}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
