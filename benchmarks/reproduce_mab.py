"""Reproduce the bandit experiments of Hu, Huang, Mehta (§6, App. I); Chowdhury & Zhou 2023 (Sec. 7, App. J) (reduced
where this machine needs it).

    /tmp/venv/bin/python benchmarks/reproduce_mab.py [--part s001|s004|all] [--hybrid-horizon T]

Hu, Huang, Mehta (arXiv:2102.07929) (§6, App. I): K = 5, settings 1-3, eps in {0.1, 0.25, 0.5, 1, 8, 64, 128}, 15 runs,
Bernoulli rewards (Hu, Huang, Mehta (arXiv 2021), §6, do not say), DP-SE with beta = 1/T.
- Anytime-Lazy-UCB and DP-SE at the paper's T = 2 * 2^21;
- Hybrid-UCB with Anytime-Lazy-UCB, DP-SE and UCB1 (one round per step) at T = --hybrid-horizon
  (default 2^18) for the comparison of all four;
- part s001-hybrid-full: Hybrid-UCB (window engine) with Anytime-Lazy-UCB and DP-SE at T = 2 * 2^21.
Chowdhury & Zhou (ICLR 2023) (§7, App. J, authors' code): K = 10, 20 random instances (one per run), rewards
N(mu, 0.1^2) clipped to [0, 1], p = 0.1, eps in {0.1, 0.5, 1}.
- Figs. 1-3: DP-SE, Dist-DP-SE and Dist-RDP-SE (s = 10, 100) with batches 4^b, easy T = 10^6, hard T = 10^7;
- Fig. 4: CDP-SE, LDP-SE, Dist-DP-SE, Dist-RDP-SE, Dist-CDP-SE (s = 10) with batches 2^b, easy T = 10^6;
- the two bugs of the authors' code (shared DP-SE noise, inverted Pólya) next to the correct versions.
Figures go to benchmarks/figures/mab_*.png, numbers to benchmarks/figures/mab_summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from typing import Iterator

import numpy as np

from dpaudit.algorithms.mab.environment import SEED001_SETTINGS, BernoulliArms, ClippedGaussianArms, seed004_means
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.hybrid_ucb import HybridUCB
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import checkpoint_grid
from dpaudit.algorithms.mab.ucb import UCB1
from dpaudit.regret import RegretCurves, plot_curves, plot_final

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


def seed001_settings(seed: int) -> Iterator[tuple[int, str, np.ndarray, BernoulliArms, np.random.Generator]]:
    """(k, setting, means, environment, rng) for Hu, Huang, Mehta's (arXiv:2102.07929) settings 1..3 (§6, App. I.3); each setting's rng is
    spawned from SeedSequence(seed) in turn."""
    ss = np.random.SeedSequence(seed)
    for k, (setting, mu) in enumerate(SEED001_SETTINGS.items(), start=1):
        mu = np.array(mu)
        yield k, setting, mu, BernoulliArms(mu), np.random.default_rng(ss.spawn(1)[0])


def seed001(results: dict, hybrid_horizon: int, runs: int = 15) -> None:
    T = 2 * 2**21
    for k, setting, mu, env, rng in seed001_settings(1):
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
        plot_final({k2: (EPS_001, v) for k2, v in full.items()}, FIG / f"mab_s001_setting{k}_final_T4M.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps")
        plot_final({k2: (EPS_001, v) for k2, v in short.items()}, FIG / f"mab_s001_setting{k}_final_T{Th}.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = {Th}, {runs} runs: final regret vs eps")
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                panel = [short["Hybrid-UCB"][i], short["Anytime-Lazy-UCB"][i], short["DP-SE"][i], ucb]
                plot_curves(panel, FIG / f"mab_s001_setting{k}_eps{eps:g}.png",
                            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = {Th}, {runs} runs")
        results[f"s001/{setting}"] = {
            "T_full": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()},
            f"T_{Th}": {name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in short.items()},
        }


def save(results: dict) -> None:
    """Write the summary atomically (temp file + os.replace)."""
    path = FIG / "mab_summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1))
    os.replace(tmp, path)


def seed001_hybrid_full(results: dict, runs: int = 15) -> None:
    """Hybrid-UCB at the paper's T = 2 * 2^21 (window engine), one eps at a time, next to
    Anytime-Lazy-UCB and DP-SE at the same T: final regret vs eps and the Fig. 1-4 panels."""
    T = 2 * 2**21
    for k, setting, mu, env, rng in seed001_settings(11):
        algos = {"Hybrid-UCB": HybridUCB, "Anytime-Lazy-UCB": AnytimeLazyUCB, "DP-SE": DPSE}
        full = {name: [] for name in algos}
        for eps in EPS_001:
            for name, cls in algos.items():
                t0 = time.time()
                full[name].append(curves(name, cls(eps).run(env, rng, runs, T), mu, T))
                if name == "Hybrid-UCB":
                    log(f"Hu, Huang, Mehta (arXiv:2102.07929) {setting} eps={eps}: Hybrid-UCB at T={T} in {time.time() - t0:.0f} s")
        plot_final({n: (EPS_001, cs) for n, cs in full.items()}, FIG / f"mab_s001_setting{k}_final_T4M.png",
                   title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, T = 2^22, {runs} runs: final regret vs eps")
        for i, eps in enumerate(EPS_001):
            if (k == 1 and eps in (0.5, 1.0, 8.0, 64.0)) or (k == 2 and eps in (0.5, 8.0, 64.0)):
                plot_curves([cs[i] for cs in full.values()], FIG / f"mab_s001_setting{k}_eps{eps:g}_T4M.png",
                            title=f"Hu, Huang, Mehta (arXiv:2102.07929) setting {k}, eps = {eps:g}, T = 2^22, {runs} runs")
        results.setdefault(f"s001/{setting}", {})["T_full_with_hybrid"] = {
            name: {str(e): summary(c) for e, c in zip(EPS_001, cs)} for name, cs in full.items()}
        save(results)  # after every setting: a long run keeps what it finished


def seed004(results: dict, runs: int = 20) -> None:
    ss = np.random.SeedSequence(4)
    for instance, T in (("easy", 10**6), ("hard", 10**7)):
        mu = seed004_means(np.random.default_rng(ss.spawn(1)[0]), instance, runs)
        env = ClippedGaussianArms(mu)
        rng = np.random.default_rng(ss.spawn(1)[0])
        res = {}
        for eps in EPS_004:
            algos = {"DP-SE": DPSE(eps, beta=0.1),
                     "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1, base=4),
                     "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1, base=4),
                     "Dist-RDP-SE s=100": BatchSE("dist-rdp", eps, s=100, p=0.1, base=4)}
            if instance == "easy":
                algos["DP-SE (authors' shared noise)"] = DPSE(eps, beta=0.1, noise="shared")
                algos["Dist-DP-SE (authors' inverted Polya)"] = BatchSE("dist-dp", eps, p=0.1, base=4, polya="inverted")
            cs = []
            for name, algo in algos.items():
                t0 = time.time()
                cs.append(curves(name, algo.run(env, rng, runs, T), mu, T))
                log(f"Chowdhury & Zhou (ICLR 2023) {instance} eps={eps}: {name} in {time.time() - t0:.1f} s")
            main = [c for c in cs if "authors" not in c.algorithm]
            plot_curves(main, FIG / f"mab_s004_{instance}_eps{eps:g}.png", time_average=True, log_x=True,
                        title=f"Chowdhury & Zhou (ICLR 2023) {instance}, eps = {eps:g}, {runs} instances")
            if instance == "easy":
                bugs = [c for c in cs if c.algorithm.startswith(("DP-SE", "Dist-DP-SE"))]
                plot_curves(bugs, FIG / f"mab_s004_bugs_eps{eps:g}.png", time_average=True, log_x=True,
                            title=f"Chowdhury & Zhou (ICLR 2023) easy, eps = {eps:g}: correct vs authors' code")
            res[str(eps)] = {c.algorithm: summary(c) for c in cs}
        results[f"s004/{instance}"] = res
    # Fig. 4: batch sizes 2^b, central / local / distributed variants, easy instance, T = 10^6.
    T = 10**6
    mu = seed004_means(np.random.default_rng(ss.spawn(1)[0]), "easy", runs)
    env = ClippedGaussianArms(mu)
    rng = np.random.default_rng(ss.spawn(1)[0])
    res = {}
    for eps in EPS_004:
        algos = {"CDP-SE": BatchSE("central", eps, p=0.1), "LDP-SE": BatchSE("local", eps, p=0.1),
                 "Dist-DP-SE": BatchSE("dist-dp", eps, p=0.1), "Dist-RDP-SE s=10": BatchSE("dist-rdp", eps, s=10, p=0.1),
                 "Dist-CDP-SE s=10": BatchSE("dist-cdp", eps, s=10, p=0.1)}
        cs = []
        for name, algo in algos.items():
            t0 = time.time()
            cs.append(curves(name, algo.run(env, rng, runs, T), mu, T))
            log(f"Chowdhury & Zhou (ICLR 2023) fig4 eps={eps}: {name} in {time.time() - t0:.1f} s")
        plot_curves(cs, FIG / f"mab_s004_fig4_eps{eps:g}.png", time_average=True, log_x=True,
                    title=f"Chowdhury & Zhou 2023, Fig. 4 (batches 2^b), eps = {eps:g}, {runs} instances")
        res[str(eps)] = {c.algorithm: summary(c) for c in cs}
    results["s004/fig4"] = res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("s001", "s004", "s001-hybrid-full", "all"), default="all")
    ap.add_argument("--hybrid-horizon", type=int, default=2**18)
    args = ap.parse_args()
    FIG.mkdir(parents=True, exist_ok=True)
    path = FIG / "mab_summary.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    if args.part in ("s001", "all"):
        seed001(results, args.hybrid_horizon)
    if args.part in ("s004", "all"):
        seed004(results)
    if args.part in ("s001-hybrid-full", "all"):
        seed001_hybrid_full(results)
    save(results)
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
