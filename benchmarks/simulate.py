"""Simulation speed of the multi-armed algorithms against straightforward per-round loops.

    python -m benchmarks run simulate [--prefix ROUNDS] [--json FILE] [--contextual]

Cases: DP-SE and Dist-DP-SE with K = 10 (Chowdhury & Zhou (ICLR 2023), Sec. 7, easy instance, Bernoulli rewards),
T = 10^6, 1000 runs; Anytime-Lazy-UCB with K = 5 (Hu, Huang, Mehta (arXiv:2102.07929), §6, setting 1), T = 10^6, 100 runs.
The per-round references run all runs as numpy arrays but advance one round at a time (a
reward per run per round, users' shares drawn one by one); they are timed on the first
`--prefix` rounds and extrapolated linearly to T (their cost per round is constant). The
UCB-style target compares the event engine with the time numpy takes to draw the R*T rewards.
`--contextual` then runs the contextual cases: LinUCB-SDP-Amp at d = 10, T = 10^5,
50 runs, with its linear-algebra share (the simulate_contextual benchmark), and ShuffleGLM and Private-GLM
at the size of Sarmasarkar's (shuffle/joint DP GLM bandits) §8 experiments (the simulate_glm benchmark); each of
those also runs on its own (`python -m benchmarks run simulate_glm`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks import simulate_contextual, simulate_glm
from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.environment import HHM_SETTINGS, BernoulliArms, cz_means
from dpaudit.algorithms.mab.lazy_ucb import AnytimeLazyUCB
from dpaudit.algorithms.mab.outcome import checkpoint_grid


def per_round_elimination(means, rng, runs, rounds, horizon, length, radius, private_sum):
    """Textbook loop: each round every run pulls the next scheduled arm and adds its reward.

    length(e, n_active) and radius(e, n_active, l) as in the vectorised engine; private_sum(rng,
    sums, l, mask) turns the epoch's exact sums into the released ones. Stops after `rounds`.
    """
    K = means.shape[1]
    rows = np.arange(runs)
    active = np.ones((runs, K), dtype=bool)
    e = np.ones(runs, dtype=np.int64)
    l = length(1, active.sum(axis=1))
    slot = np.zeros(runs, dtype=np.int64)  # position among the active arms
    done = np.zeros(runs, dtype=np.int64)  # pulls of the current arm in this epoch
    sums = np.zeros((runs, K))
    regret = np.zeros(runs)
    gap = means.max(axis=1, keepdims=True) - means
    for _ in range(rounds):
        order = np.cumsum(active, axis=1) - 1
        arm = np.argmax(active & (order == slot[:, None]), axis=1)
        x = rng.random(runs) < means[rows, arm]
        sums[rows, arm] += x
        regret += gap[rows, arm]
        done += 1
        next_arm = done == l
        slot = np.where(next_arm, slot + 1, slot)
        done = np.where(next_arm, 0, done)
        n_active = active.sum(axis=1)
        end = next_arm & (slot == n_active) & (n_active > 1)
        if end.any():
            idx = np.flatnonzero(end)
            noisy = private_sum(rng, sums[idx], l[idx], active[idx], e[idx])
            mu = np.where(active[idx], noisy / l[idx, None], -np.inf)
            c = radius(e[idx], n_active[idx], l[idx])[:, None]
            active[idx] &= mu + c >= np.max(mu - c, axis=1, keepdims=True)
            e[idx] += 1
            l[idx] = length(e[idx], active[idx].sum(axis=1))
            sums[idx] = 0.0
        slot = np.where(slot >= active.sum(axis=1), 0, slot)
    return regret


def dpse_reference(means, rng, runs, rounds, horizon, eps, beta):
    def length(e, n):
        d = 2.0 ** -np.asarray(e, dtype=float)
        return 1 + np.floor(
            np.maximum(32 * np.log(8 * n * e**2 / beta) / d**2, 8 * np.log(4 * n * e**2 / beta) / (eps * d))
        ).astype(np.int64)

    def radius(e, n, l):
        return np.sqrt(np.log(8 * n * e**2 / beta) / (2 * l)) + np.log(4 * n * e**2 / beta) / (l * eps)

    def private_sum(rng, sums, l, active, e):
        return sums + rng.laplace(0.0, 1.0 / eps, sums.shape)

    return per_round_elimination(means, rng, runs, rounds, horizon, length, radius, private_sum)


def dist_dp_reference(means, rng, runs, rounds, horizon, eps, p, base):
    """Per-user path of Dist-DP-SE, but drawing each batch's Pólya shares when the batch closes
    (one share pair per user) — the straightforward protocol without the DLap fast path."""
    algo = BatchSE("dist-dp", eps, p=p, base=base)

    def length(e, n):
        return np.full(np.shape(n), 0, dtype=np.int64) + base ** np.asarray(e, dtype=np.int64)

    def radius(e, n, l):
        sigma, h = algo._sigma_h(1)
        lg4, lg2 = np.log(4 * n * e**2 / p), np.log(2 * n * e**2 / p)
        return np.sqrt(lg4 / (2 * l)) + sigma * np.sqrt(lg2) / l + h * lg2 / l

    def private_sum(rng, sums, l, active, e):
        out = np.zeros(sums.shape)
        for i in range(sums.shape[0]):
            proto = algo.secagg(int(l[i]), horizon)
            bp = proto.params
            for a in np.flatnonzero(active[i]):
                shares = proto.user_noise(rng, (bp.n,))  # one Pólya-difference share per user
                y = (int(sums[i, a]) * bp.g + int(shares.sum())) % bp.m
                out[i, a] = proto.analyze(np.array([y]))[0]
        return out

    return per_round_elimination(means, rng, runs, rounds, horizon, length, radius, private_sum)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", type=int, default=20_000, help="rounds timed for the per-round references")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument(
        "--contextual", action="store_true", help="also run the simulate_contextual and simulate_glm benchmarks"
    )
    args = ap.parse_args(argv)
    T = 10**6
    results = {}

    means = cz_means(np.random.default_rng(0), "easy", 1000)
    env = BernoulliArms(means)
    cp = checkpoint_grid(T, 200)
    for name, algo, ref in [
        ("dp-se", DPSE(epsilon=1.0, beta=0.1), lambda rng, n: dpse_reference(means, rng, 1000, n, T, 1.0, 0.1)),
        (
            "dist-dp-se",
            BatchSE("dist-dp", 1.0, p=0.1, base=2),
            lambda rng, n: dist_dp_reference(means, rng, 1000, n, T, 1.0, 0.1, 2),
        ),
    ]:
        fast, out = timed(lambda: algo.run(env, np.random.default_rng(1), 1000, T).regret(means, cp))  # noqa: B023 (called within this iteration)
        slow, _ = timed(lambda: ref(np.random.default_rng(2), args.prefix))  # noqa: B023 (called within this iteration)
        slow_full = slow * T / args.prefix
        results[name] = {
            "runs": 1000,
            "horizon": T,
            "seconds": fast,
            "per_round_seconds_prefix": slow,
            "prefix_rounds": args.prefix,
            "per_round_seconds_extrapolated": slow_full,
            "speedup": slow_full / fast,
            "final_regret": float(out[:, -1].mean()),
        }

    mu5 = np.array(HHM_SETTINGS["hhm-1"])
    env5 = BernoulliArms(mu5)
    runs = 100
    fast, out = timed(lambda: AnytimeLazyUCB(1.0).run(env5, np.random.default_rng(3), runs, T).regret(mu5, cp))
    slow, _ = timed(lambda: AnytimeLazyUCB(1.0, "rounds").run(env5, np.random.default_rng(4), runs, args.prefix))
    rng = np.random.default_rng(5)

    def draw_rewards():
        block = 10**5
        for _ in range(T // block):
            _ = rng.random((block, runs)) < mu5[0]  # the comparison is what is timed

    draw, _ = timed(draw_rewards)
    results["anytime-lazy-ucb"] = {
        "runs": runs,
        "horizon": T,
        "seconds": fast,
        "per_round_seconds_prefix": slow,
        "prefix_rounds": args.prefix,
        "per_round_seconds_extrapolated": slow * T / args.prefix,
        "speedup": slow * T / args.prefix / fast,
        "numpy_reward_draw_seconds": draw,
        "ratio_to_reward_draw": fast / draw,
        "final_regret": float(out[:, -1].mean()),
    }
    for name, r in results.items():
        extra = (
            f", {r['ratio_to_reward_draw']:.3f}x numpy's reward draw ({r['numpy_reward_draw_seconds']:.2f} s)"
            if "ratio_to_reward_draw" in r
            else ""
        )
        print(
            f"{name:>17}: {r['runs']} runs, T={r['horizon']}: {r['seconds']:.3f} s; per-round "
            f"{r['per_round_seconds_prefix']:.2f} s for {r['prefix_rounds']} rounds -> {r['per_round_seconds_extrapolated']:.0f} s "
            f"at T (x{r['speedup']:.0f}){extra}; mean R(T) = {r['final_regret']:.0f}"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    if args.contextual:
        simulate_contextual.main([])
        simulate_glm.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main())
