"""Batched LinUCB over R runs at once: the template of Chowdhury & Zhou's (ICML 2022) Algorithm 1 and plain LinUCB.

Algorithm 1 of Chowdhury & Zhou (ICML 2022, §3.1): rounds are grouped in
batches of B users; inside batch m every user plays

    a_t = argmax_a <phi(c_t,a), theta_{m-1}> + beta_{m-1} * ||phi(c_t,a)||_{V_{m-1}^{-1}}

with the model of the previous batches only; at the batch end a *release* turns the batch's
(phi*y, phi phi^T) into (u~_m, V~_m) (exact sums, or a local/shuffle/tree mechanism), and
V_m = lambda I + sum V~, u_m = sum u~, theta_m = V_m^{-1} u_m. A partial last batch is never
released (the pseudocode updates only at t = mB; nothing is played after T anyway).

With B = 1 and exact sums this is LinUCB (Abbasi-Yadkori, Pal, Szepesvari 2011, OFUL), run with
Sherman-Morrison rank-one updates of V^{-1}. Batched runs solve the stacked (R, d, d) systems once
per batch: np.linalg.solve(V, [u | I]) gives theta and V^{-1} together.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Callable
from typing import Protocol

import numpy as np

from dpaudit.algorithms.linear.environment import Block, ContextTable, Environment, linear_environment
from dpaudit.privacy import NON_PRIVATE, Privacy
from dpaudit.regret import RegretCurves
from dpaudit.validation import (
    check_choice,
    check_int_at_least,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = [
    "OBSERVABLES",
    "ExactSums",
    "LinUCB",
    "LinUCBResult",
    "LinearAlgorithm",
    "Release",
    "RunningSums",
    "checkpoint_grid",
    "clip_data",
    "code_width",
    "confidence_radius",
    "private_regularizer",
    "run_batched_linucb",
    "simulate_linear",
    "user_statistics",
]


class Release(Protocol):
    """What a batch end releases: the running private estimates of sum(phi*y) and sum(phi phi^T).

    `start(runs, dim, horizon, batch, rng)` resets the state (rng for noise drawn once, e.g. tree
    nodes); `release(phis (R,n,d), ys (R,n), rng)` ingests one batch and returns (u (R,d), G (R,d,d),
    stats) where u, G are the current cumulative estimates and stats a dict of released arrays.
    `noise_std` is the std of one entry of the accumulated noise after `horizon` rounds (sigma~ of
    Chowdhury & Zhou (ICML 2022), Assumption A.3 / Lemma A.4), used for the regularizer; 0 for exact sums.
    """

    exact: bool

    def start(self, runs: int, dim: int, horizon: int, batch: int, rng: np.random.Generator) -> None:
        """Reset the state for `runs` runs (`rng` for noise drawn once, e.g. tree nodes)."""

    def release(
        self, phis: np.ndarray, ys: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Ingest one batch, phis (R, n, d) and ys (R, n); return the cumulative (u (R, d), G (R, d, d), stats)."""

    def noise_std(self, horizon: int, batch: int, dim: int) -> float:
        """Std of one entry of the accumulated noise after `horizon` rounds (sigma~ of Chowdhury & Zhou,
        ICML 2022, Assumption A.3 / Lemma A.4); 0 for exact sums.
        """


def user_statistics(phis: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each user's (phi y, phi phi^T), shapes (R, n, d) and (R, n, d, d): what the randomizers get."""
    return ys[..., None] * phis, phis[..., :, None] * phis[..., None, :]


class RunningSums:
    """A `Release` keeping the cumulative estimates u (R, d) and G (R, d, d), zero at `start`."""

    def start(self, runs: int, dim: int, horizon: int, batch: int, rng: np.random.Generator) -> None:
        """Reset the cumulative sums to zero for `runs` runs of dimension `dim`."""
        self._u = np.zeros((runs, dim))
        self._g = np.zeros((runs, dim, dim))

    def accumulate(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add one batch's (private) sums; returns the cumulative (u, G)."""
        self._u += u
        self._g += v
        return self._u, self._g


class ExactSums(RunningSums):
    """Non-private release: the exact cumulative sums (Remark A.5 of Chowdhury & Zhou (ICML 2022): sigma~ = 0)."""

    exact = True

    def release(self, phis, ys, rng):
        """Add the batch's exact sum(phi y) and sum(phi phi^T); no statistics are released."""
        u, g = self.accumulate((ys[..., None] * phis).sum(axis=1), phis.transpose(0, 2, 1) @ phis)
        return u, g, {}

    def noise_std(self, horizon: int, batch: int, dim: int) -> float:
        """0: no noise."""
        return 0.0


def clip_data(phis: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Enforce Assumption 3.1 of Chowdhury & Zhou (ICML 2022) before any randomiser: ||phi||_2 <= 1, |y| <= 1.

    Chowdhury & Zhou (ICML 2022), Assumption 3.1: without clipping the sensitivity is unbounded.
    """
    norms = np.sqrt((phis * phis).sum(axis=-1, keepdims=True))
    phis = phis / np.maximum(norms, 1.0)
    return phis, np.clip(ys, -1.0, 1.0)


def private_regularizer(noise_std: float, dim: int, batches: int, alpha: float) -> float:
    """lambda = max(1, 2 Sigma_N), Sigma_N = sigma~ (sqrt(d) + sqrt(2 log(M/alpha))).

    Chowdhury & Zhou 2022, Lemma A.4: lambda = 2 Sigma_N with Sigma_N = c2 sigma~ (sqrt d +
    sqrt log(M/alpha)), the operator-norm bound of a symmetric sub-Gaussian noise matrix
    (Vershynin Cor 4.4.8); here c2 = 1 and the sqrt(2 log) form of a Gaussian tail. lambda >= 1
    keeps the non-private case dimension-free (Remark A.5).
    """
    sigma_n = noise_std * (math.sqrt(dim) + math.sqrt(2.0 * math.log(max(batches, 1) / alpha)))
    return max(1.0, 2.0 * sigma_n)


def confidence_radius(
    t: int, dim: int, lam: float, alpha: float, reward_sd: float, private: bool, scale: float = 1.0
) -> float:
    """beta_m = scale * (R sqrt(2 log(1/alpha) + d log(1 + t/(d lam_min))) + sqrt(lam_max) + nu).

    Chowdhury & Zhou 2022, Lemma A.2 with ||theta*|| <= 1 and noise regularity from Lemma A.4:
    lam_min = lam/2, lam_max = 3 lam/2, nu = sqrt(lam/2) when private (lambda = 2 Sigma_N); lam_min =
    lam_max = lam, nu = 0 when exact. R is the sub-Gaussian scale of the reward noise (1/2 for
    Bernoulli rewards).
    """
    lam_min, lam_max, nu = (lam / 2, 3 * lam / 2, math.sqrt(lam / 2)) if private else (lam, lam, 0.0)
    core = reward_sd * math.sqrt(2 * math.log(1 / alpha) + dim * math.log(1 + t / (dim * lam_min)))
    return scale * (core + math.sqrt(lam_max) + nu)


def code_width(
    gamma: float, dim: int, horizon: int, feature_norm: float = math.sqrt(2.0), reward_sd: float = 0.5
) -> float:
    """The fixed confidence width of Chowdhury & Zhou's (ICML 2022, §5 fn. 7) public code (LinBanditPrivate.py, every algorithm):

        cew = sqrt(Gamma) S + R sqrt(d log((1 + T L^2 / Gamma) / alpha)),  S = sqrt(d), R = 1/2, alpha = 1/T,

    with L the largest feature norm of its instances (sqrt(2)) and Gamma its per-algorithm scale (1 for LinUCB, whose
    ridge is 1e-4 Gamma; the private ones use Lambda = 2 Gamma). The UCB index is unchanged when features are divided
    by sqrt(2) and theta, Lambda multiplied by sqrt(2), 1/2 (`environment.authors_instances`): there it is this
    width with ridge Lambda/2.
    """
    check_positive(gamma, "gamma")
    dim = check_positive_int(dim, "dim")
    horizon = check_positive_int(horizon, "horizon")
    return math.sqrt(gamma) * math.sqrt(dim) + reward_sd * math.sqrt(
        dim * math.log((1.0 + horizon * feature_norm**2 / gamma) * horizon)
    )


def checkpoint_grid(horizon: int, points: int = 100) -> np.ndarray:
    """About `points` increasing rounds from 1 to `horizon` (evenly spaced, horizon included)."""
    horizon = check_positive_int(horizon, "horizon")
    return np.unique(np.linspace(1, horizon, min(points, horizon)).round().astype(np.int64))


@dataclasses.dataclass(frozen=True, eq=False)
class LinUCBResult:
    """One simulation of R runs.

    actions (R, T): chosen actions; regret (R, len(checkpoints)): cumulative pseudo-regret;
    released: per-batch released statistics stacked on axis 1 (only when recorded), e.g.
    "u" (R, M, d) and "V" (R, M, d, d); nonpd_batches: how many batch models had a direction with
    negative x^T V^{-1} x or a singular V (V not positive definite, Chowdhury & Zhou (ICML 2022), Assumption A.1; a
    singular V is solved by pseudo-inverse), counted once per batch over all runs.
    """

    actions: np.ndarray
    checkpoints: np.ndarray
    regret: np.ndarray
    released: dict[str, np.ndarray]
    regularizer: float
    nonpd_batches: int


def _actions(features: np.ndarray, theta: np.ndarray, vinv: np.ndarray, beta: float) -> tuple[np.ndarray, bool]:
    """UCB actions (R, n) of a block: argmax_a <x_a, theta> + beta ||x_a||_{V^{-1}}.

    Computed once per block when the features do not vary over its rounds (stride 0). Returns the
    actions and whether some squared bonus x^T V^{-1} x was negative (then clamped to 0).
    """
    fixed = features.strides[1] == 0  # broadcast block: the same features at every round
    x = features[:, :1] if fixed else features
    r, n, k, d = x.shape
    flat = x.reshape(r, n * k, d)
    mean = (flat @ theta[:, :, None])[..., 0]
    quad = ((flat @ vinv) * flat).sum(axis=2)
    bad = bool(np.any(quad < 0))
    acts = (mean + beta * np.sqrt(np.maximum(quad, 0.0))).reshape(r, n, k).argmax(axis=2)
    if fixed:
        acts = np.broadcast_to(acts, features.shape[:2])
    return acts, bad


def run_batched_linucb(
    env: Environment,
    release: Release,
    rng: np.random.Generator,
    batch: int = 1,
    regularizer: float | None = None,
    alpha: float | None = None,
    reward_sd: float = 0.5,
    width_scale: float = 1.0,
    record: bool = False,
    checkpoints: np.ndarray | None = None,
    width: float | None = None,
) -> LinUCBResult:
    """Run Algorithm 1 of Chowdhury & Zhou (ICML 2022) (batch size `batch`) with `release` at every batch end.

    `regularizer` defaults to `private_regularizer(release.noise_std(...))`, `alpha` to 1/T. `width`, when given,
    is a fixed confidence width beta used at every round instead of the radius beta_m (`width_scale` then unused).
    `rng` drives contexts and rewards and (through child generators) the release's noise.
    """
    horizon = check_positive_int(env.horizon, "horizon")
    batch = check_positive_int(batch, "batch")
    alpha = 1.0 / max(horizon, 2) if alpha is None else check_open_unit(alpha, "alpha")
    check_nonnegative(reward_sd, "reward_sd")
    check_positive(width_scale, "width_scale")
    if width is not None:
        check_positive(width, "width")
    runs, dim = env.runs, env.dim
    batches = horizon // batch
    if regularizer is None:
        lam = private_regularizer(release.noise_std(horizon, batch, dim), dim, batches, alpha)
    else:
        lam = check_positive(regularizer, "regularizer")
    private = not release.exact
    cps = checkpoint_grid(horizon) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    env_rng, noise_rng = rng.spawn(2)
    release.start(runs, dim, horizon, batch, noise_rng)

    theta = np.zeros((runs, dim))
    vinv = np.broadcast_to(np.eye(dim) / lam, (runs, dim, dim)).copy()
    eye = np.eye(dim)
    actions = np.empty((runs, horizon), dtype=np.int32)
    inst = np.empty((runs, horizon))
    recorded: dict[str, list[np.ndarray]] = {}
    nonpd = 0
    sequential_exact = release.exact and batch == 1
    block_len = 256 if sequential_exact else batch

    def radius(t: int, private_: bool) -> float:
        return width if width is not None else confidence_radius(t, dim, lam, alpha, reward_sd, private_, width_scale)

    beta = radius(0, private)
    t0 = 0
    while t0 < horizon:
        n = min(block_len, horizon - t0)
        blk: Block = env.block(t0, n, env_rng)
        if sequential_exact:
            acts = _sequential_block(blk, theta, vinv, release, env_rng, lambda t: radius(t, False))
        else:
            acts, bad = _actions(blk.features, theta, vinv, beta)
            nonpd += int(bad)
            if n == batch:
                phis, ys = clip_data(blk.chosen_features(acts), blk.rewards(acts, env_rng))
                u, g, stats = release.release(phis, ys, noise_rng)
                if record:
                    for key, val in stats.items():
                        recorded.setdefault(key, []).append(np.array(val))
                v = g + lam * eye
                rhs = np.concatenate([u[..., None], np.broadcast_to(eye, (runs, dim, dim))], axis=2)
                try:
                    sol = np.linalg.solve(v, rhs)
                except (
                    np.linalg.LinAlgError
                ):  # an exactly singular noisy V (Chowdhury & Zhou (ICML 2022), Assumption A.1 fails)
                    sol = np.linalg.pinv(v) @ rhs
                    nonpd += 1
                theta, vinv = sol[..., 0], sol[..., 1:]
                if record:
                    recorded.setdefault("theta", []).append(theta.copy())
                beta = radius(t0 + n, private)
        actions[:, t0 : t0 + n] = acts
        inst[:, t0 : t0 + n] = blk.regret(acts)
        t0 += n
    cum = np.cumsum(inst, axis=1)
    released = {k: np.stack(v, axis=1) for k, v in recorded.items()}
    return LinUCBResult(actions, cps, cum[:, cps - 1], released, lam, nonpd)


def _sequential_block(
    blk: Block,
    theta: np.ndarray,
    vinv: np.ndarray,
    release: Release,
    rng: np.random.Generator,
    radius: Callable[[int], float],
) -> np.ndarray:
    """Sequential exact LinUCB on one block, updating theta and V^{-1} in place (Sherman-Morrison).

    V^{-1} <- V^{-1} - (V^{-1}x)(V^{-1}x)^T / (1 + x^T V^{-1} x); theta = V^{-1} u.
    """
    runs, n = blk.features.shape[:2]
    acts = np.empty((runs, n), dtype=np.int64)
    fixed = blk.features.strides[1] == 0
    if fixed:  # x_k^T V^{-1} x_k for every arm, kept current by the same rank-one update
        x = blk.features[:, 0]
        quad = ((x @ vinv) * x).sum(axis=2)
    rows = np.arange(runs)
    for j in range(n):
        t = blk.t0 + j
        beta = radius(t)
        if not fixed:
            x = blk.features[:, j]  # (R, K, d)
            quad = ((x @ vinv) * x).sum(axis=2)
        mean = (x @ theta[:, :, None])[..., 0]
        a = (mean + beta * np.sqrt(np.maximum(quad, 0.0))).argmax(axis=1)
        acts[:, j] = a
        p = x[rows, a]
        if blk.table_rewards is None:
            y = (rng.random(runs) < blk.means[rows, j, a]).astype(float)
        else:
            tab = blk.table_rewards
            y = tab[rows if tab.shape[0] == runs else 0, j, a]
        phi, yy = clip_data(p[:, None], y[:, None])
        u, _, _ = release.release(phi, yy, rng)
        p = phi[:, 0]
        w = (vinv @ p[:, :, None])[..., 0]
        denom = 1.0 + (w * p).sum(axis=1)
        vinv -= w[:, :, None] * w[:, None, :] / denom[:, None, None]
        theta[:] = (vinv @ u[:, :, None])[..., 0]
        if fixed:
            quad -= (x @ w[:, :, None])[..., 0] ** 2 / denom[:, None]
    return acts


OBSERVABLES = ("released", "actions", "model")


@dataclasses.dataclass(frozen=True)
class LinearAlgorithm(abc.ABC):
    """Common parameters and entry points of the (batched) LinUCB family.

    batch: users per batch B (1 = sequential); regularizer: lambda (default from the release's
    noise, `private_regularizer`); width_scale: multiplies beta_m (1 = the theory radius); width: a fixed
    confidence width used at every round instead of beta_m (None: the radius; Chowdhury & Zhou's (ICML 2022, §5 fn. 7)
    public code fixes it at its cew(T), see `code_width`);
    reward_sd: sub-Gaussian scale of the rewards (1/2 for Bernoulli). Subclasses give `name`,
    `make_release(dim, horizon)` and `privacy(horizon, dim=dim)` (an `interface.PrivateAlgorithm`).
    """

    batch: int = 1
    regularizer: float | None = None
    width_scale: float = 1.0
    reward_sd: float = 0.5
    width: float | None = None
    name = "linear"

    def __post_init__(self) -> None:
        check_positive_int(self.batch, "batch")
        if self.regularizer is not None:
            check_positive(self.regularizer, "regularizer")
        check_positive(self.width_scale, "width_scale")
        check_nonnegative(self.reward_sd, "reward_sd")
        if self.width is not None:
            check_positive(self.width, "width")

    @abc.abstractmethod
    def make_release(self, dim: int, horizon: int) -> Release:
        """A fresh release (the privacy mechanism at every batch end) for one simulation."""

    @abc.abstractmethod
    def privacy(self, horizon: int, *, dim: int) -> Privacy:
        """The declared privacy at dimension `dim` and horizon `horizon`."""

    def default_regularizer(self, dim: int, horizon: int) -> float | None:
        """lambda when none is given; None selects `private_regularizer` (the theory rule)."""
        return None

    def run(self, env: Environment, rng: np.random.Generator, record: bool = False) -> LinUCBResult:
        """Simulate `env.runs` independent runs; `record` keeps every batch's released statistics."""
        return run_batched_linucb(
            env,
            self.make_release(env.dim, env.horizon),
            rng,
            batch=self.batch,
            regularizer=self.regularizer
            if self.regularizer is not None
            else self.default_regularizer(env.dim, env.horizon),
            reward_sd=self.reward_sd,
            width_scale=self.width_scale,
            record=record,
            width=self.width,
        )

    def target(self, observable: str = "released") -> Callable[[ContextTable, np.random.Generator, int], np.ndarray]:
        """An audit target `target(data, rng, size) -> array` with first axis `size`.

        data: a `ContextTable` (the same users in every run); observable: "released" (every
        batch's released statistics, flattened), "actions" (all actions), "model" (the final
        theta_M). Runs are the leading axis, so one call simulates `size` independent runs.
        """
        check_choice(observable, OBSERVABLES, "observable")

        def target(data: ContextTable, rng: np.random.Generator, size: int) -> np.ndarray:
            env = data.with_runs(check_positive_int(size, "size"))
            res = self.run(env, rng, record=observable != "actions")
            if observable == "actions":
                return res.actions
            if observable == "model" and "theta" in res.released:
                return res.released["theta"][:, -1]
            parts = [v.reshape(size, -1) for k, v in sorted(res.released.items()) if k != "theta"]
            if observable == "model" or not parts:
                raise ValueError(
                    f"{self.name} with batch={self.batch} on {data.horizon} users released no {observable!r} "
                    "(sequential exact LinUCB releases nothing, and a partial batch is never released); "
                    "use observable='actions'"
                )
            return np.concatenate(parts, axis=1)

        return target


@dataclasses.dataclass(frozen=True)
class LinUCB(LinearAlgorithm):
    """Non-private LinUCB (OFUL, Abbasi-Yadkori et al. 2011); batched LinUCB when batch > 1.

    Chowdhury & Zhou (ICML 2022) Remark A.5: Algorithm 1 with sigma~ = 0 and the dimension-free lambda = 1.
    """

    name = "linucb"

    def make_release(self, dim: int, horizon: int) -> Release:
        return ExactSums()

    def privacy(self, horizon: int, *, dim: int) -> Privacy:
        return NON_PRIVATE


def simulate_linear(
    algorithm: LinearAlgorithm,
    horizon: int,
    runs: int,
    seed: int,
    dim: int = 5,
    n_arms: int = 100,
    contexts: str = "fixed",
    instances: str = "random",
) -> RegretCurves:
    """Regret of `algorithm` on Chowdhury & Zhou's (ICML 2022, §5) random instances (one theta* and arm set per run);
    instances="authors": run r on the authors' code's instance r (`environment.authors_instances`).

    Pseudo-regret curves; the privacy declaration (claim and corrected) rides along as JSON.
    """
    horizon = check_positive_int(horizon, "horizon")
    runs = check_positive_int(runs, "runs")
    dim = check_positive_int(dim, "dim")
    n_arms = check_int_at_least(n_arms, 2, "n_arms")
    env_rng, alg_rng = np.random.default_rng(seed).spawn(2)
    env = linear_environment(env_rng, runs, horizon, dim, n_arms, contexts, instances)
    res = algorithm.run(env, alg_rng)
    params = {
        "dim": dim,
        "arms": n_arms,
        "contexts": contexts,
        "instances": instances,
        "seed": seed,
        "regularizer_used": res.regularizer,
    }
    params.update({f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm)})
    privacy = algorithm.privacy(horizon, dim=dim).to_json()
    privacy["nonpd_batches"] = res.nonpd_batches
    return RegretCurves(algorithm.name, res.checkpoints, res.regret, privacy, params)
