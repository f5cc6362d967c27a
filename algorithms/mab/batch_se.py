"""Private batch-based successive elimination (Chowdhury & Zhou, ICLR 2023, Algorithm 1) on its protocols.

Batch b = 1, 2, ...: every active arm is recommended to l(b) = base^b fresh users in index
order (Chowdhury & Zhou (ICLR 2023) uses base 2 in the paper, 4 in its public code for Figs. 1-3). Each batch and arm
is one release of a secure-aggregation protocol of `dpaudit.mechanisms.secagg` (encoding with
precision g, noise shares, sum mod m, analyzer): the server's view is y = (sum x_hat + sum eta) mod m
and the private sum is z = A(y). mu_hat = z / l(b) uses this batch only; arm a is kept iff
mu_hat_a + beta(b) >= max (mu_hat - beta(b)),
    beta(b) = sqrt(log(4|Phi| b^2/p)/(2l)) + sigma sqrt(log(2|Phi| b^2/p))/l + h log(2|Phi| b^2/p)/l
(Lemma 2 / App. C; (sigma, h) per protocol in `_sigma_h`). p defaults to 1/T (theory); the
experiments use 0.1.

Protocols (Chowdhury & Zhou (ICLR 2023); g, tau, m as in mechanisms.secagg):
- 'dist-dp'  Dist-DP-SE (Thm 1), PolyaSecAgg; polya='inverted' is the authors' public code (Pólya parameter
             inverted: Pólya(1/n, 1-θ) shares; Sec. 7 footnote 5).
- 'dist-rdp' Dist-RDP-SE (Thm 2), SkellamSecAgg with scaling s.
- 'dist-cdp' Dist-CDP-SE (Thm 4), DiscreteGaussianSecAgg with scaling s (shares always drawn one by one).
- 'central'  CDP-SE (Thm 5), CentralSecAgg: the analyzer adds DLap(g/eps).
- 'local'    LDP-SE (Thm 6), LocalSecAgg: every user adds DLap(g/eps).
- 'shuffle'  P_Shuffle (Thm 3, App. D.2), mechanisms.ShuffleSum: Pólya shares at eps' = eps/2, unary
             randomized-response bits, shuffled; the server sees the count of ones. The count depends on
             every user's wrap-around mod m, so this protocol always runs user by user (rewards from
             env.window, ShuffleSum.run_fast: the count drawn as two binomials, the same law as the bits).
             Its p' = q = p/2 (1/(2T) by default, as in Thm 3).
Every run records two statistics per (batch, arm): "aggregates", the SecAgg output y (the server's
view), and "releases", what the protocol releases to the party its trust model does not trust:
y for the distributed protocols, y for 'local' (the sum of the users' eps-LDP messages, a
post-processing of them), the count of ones for 'shuffle', and (y + DLap(g/eps)) mod m for
'central', whose server is trusted and sees y without noise (App. H.1, Thm 5).
`path="batch"` draws each release's noise total from its exact law (`total_noise`), `path="users"`
every user's share (`user_noise`), for audits that change one user and to check the fast path.
`noise_source` ('dist-dp' on the batch path): what draws that total, DLap(g/eps), the law of the n Pólya
shares' sum (Fact 1); default dpaudit's exact sampler, a DP library's with `dpaudit.adapters.noise`.
The encoded sum sum x_hat comes from the environment (g * Binomial for Bernoulli rewards, user by
user otherwise), which is the same law as encoding user by user.

Returning users (App. I): a user may take part in `returning` = B batches; pure protocols run each
batch at eps/B (basic composition, Remark 9), RDP/zCDP ones at eps/sqrt(B) (rho adds up).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import dp_accounting
import numpy as np
from dp_accounting import dp_event

from dpaudit import accounting
from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.mab.base import Algorithm
from dpaudit.algorithms.mab.claims import dist_cdp_paper_event, shuffle_sum_proof_event
from dpaudit.algorithms.mab.elimination import eliminate
from dpaudit.algorithms.mab.outcome import Outcome
from dpaudit.algorithms.mab.shuffle_view import shuffle_count_epsilon, shuffle_count_event, shuffle_count_lower_epsilon
from dpaudit.mechanisms.noise_source import DPAUDIT_NOISE, NoiseSource, check_noise_source
from dpaudit.mechanisms.secagg import (
    CentralSecAgg,
    DiscreteGaussianSecAgg,
    LocalSecAgg,
    PolyaSecAgg,
    SecAggParameters,
    SkellamSecAgg,
)
from dpaudit.mechanisms.shuffle_sum import ShuffleSum
from dpaudit.privacy import Guarantee, Privacy
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = ["BATCH_NAMES", "PATHS", "POLYA_VARIANTS", "PROTOCOLS", "BatchSE"]

PROTOCOLS = ("dist-dp", "dist-rdp", "dist-cdp", "central", "local", "shuffle")
BATCH_NAMES = {
    "dist-dp": "dist-dp-se",
    "dist-rdp": "dist-rdp-se",
    "dist-cdp": "dist-cdp-se",
    "central": "cdp-se",
    "local": "ldp-se",
    "shuffle": "shuffle-se",
}
PATHS = ("batch", "users")
POLYA_VARIANTS = ("correct", "inverted")
_CHUNK = 1 << 21


@dataclasses.dataclass(frozen=True)
class BatchSE(Algorithm):
    """Chowdhury & Zhou's (ICLR 2023) Algorithm 1 with one of its protocols (see the module docstring).

    c: the constant of Lemma 5 for LDP-SE; None takes secagg's exact Chernoff tau and sqrt(2) in
    the radius (the Gaussian-tail constant of a sum of n DLap(g/eps) shares).
    """

    protocol: str = "dist-dp"
    epsilon: float = 1.0
    s: float = 10.0
    p: float | None = None
    base: int = 2
    returning: int = 1
    path: str = "batch"
    polya: str = "correct"
    c: float | None = None
    noise_source: NoiseSource = DPAUDIT_NOISE

    def __post_init__(self) -> None:
        check_choice(self.protocol, PROTOCOLS, "protocol")
        check_epsilon(self.epsilon)
        if check_positive(self.s, "s") < 1:
            raise ValueError(f"s must be >= 1, got {self.s!r}")
        if self.p is not None:
            check_open_unit(self.p, "p")
        check_int_at_least(self.base, 2, "base")
        check_int_at_least(self.returning, 1, "returning")
        check_choice(self.path, PATHS, "path")
        check_choice(self.polya, POLYA_VARIANTS, "polya")
        if self.polya == "inverted" and self.protocol != "dist-dp":
            raise ValueError(
                "polya='inverted' (the authors' inverted Pólya parameter) applies to protocol 'dist-dp' only"
            )
        if self.c is not None:
            check_positive(self.c, "c")
        if check_noise_source(self.noise_source) != DPAUDIT_NOISE and not (self._sourced and self.path == "batch"):
            raise ValueError(
                "noise_source: another source than dpaudit's applies to protocol 'dist-dp' with "
                "polya='correct' and path='batch' (the total noise DLap(g/eps) of a release)"
            )

    @property
    def _sourced(self) -> bool:
        """Whether the batch path's total noise is drawn from `noise_source`: DLap(g/eps) of 'dist-dp'."""
        return self.protocol == "dist-dp" and self.polya == "correct"

    @property
    def name(self) -> str:  # type: ignore[override]
        return BATCH_NAMES[self.protocol]

    @property
    def batch_epsilon(self) -> float:
        """Per-batch eps: eps/B for pure protocols, eps/sqrt(B) for RDP/zCDP ones (App. I)."""
        if self.protocol in ("dist-rdp", "dist-cdp"):
            return self.epsilon / math.sqrt(self.returning)
        return self.epsilon / self.returning

    def _p(self, horizon: int) -> float:
        return 1.0 / horizon if self.p is None else self.p

    @functools.lru_cache(maxsize=128)  # noqa: B019  (frozen, hashable instances; the cache is bounded)
    def secagg(self, n: int, horizon: int):
        """The mechanisms.secagg protocol of one release of n users."""
        eps, p = self.batch_epsilon, self._p(horizon)
        if self.protocol == "dist-dp":
            return PolyaSecAgg(eps, n, p, bug="inverted_polya" if self.polya == "inverted" else None)
        if self.protocol == "dist-rdp":
            return SkellamSecAgg(eps, n, p, s=self.s)
        if self.protocol == "dist-cdp":
            return DiscreteGaussianSecAgg(eps, n, p, s=self.s)
        if self.protocol == "central":
            return CentralSecAgg(eps, n, p)
        if self.protocol == "shuffle":
            return ShuffleSum(eps, n, p=p / 2)
        return LocalSecAgg(eps, n, p, c=self.c)

    def batch_params(self, n: int, horizon: int) -> SecAggParameters:
        """g, tau, m for a batch of n users (Chowdhury & Zhou (ICLR 2023), the parameters of Thms 1, 2, 4, 5, 6)."""
        return self.secagg(n, horizon).params

    def _sigma_h(self, n: int) -> tuple[float, float]:
        """(sigma, h) of Assumption 1 for this protocol (Lemma 2 table, Chowdhury & Zhou (ICLR 2023))."""
        eps, s = self.batch_epsilon, self.s
        if self.protocol == "dist-rdp":
            return 2 / eps + math.sqrt(2) / (s * eps), 1 / (s * eps)  # as in the authors' code
        if self.protocol == "dist-cdp":
            return math.sqrt(2) / eps + math.sqrt(2) / (s * eps), 0.0
        if self.protocol == "local":
            c = math.sqrt(2) if self.c is None else self.c
            return c * math.sqrt(2 * n) / eps + math.sqrt(2) / eps, 2 * c / eps
        if self.protocol == "shuffle":  # Dist-DP-SE's noise at eps' = eps/2
            return 2 * math.sqrt(2) / eps, 2 / eps
        return math.sqrt(2) / eps, 1 / eps

    def noise_total(self, rng: np.random.Generator, rows: int, n: int, horizon: int) -> np.ndarray:
        """Sum of one release's noise shares for `rows` runs (zero for 'central': the analyzer adds it)."""
        proto = self.secagg(n, horizon)
        if self.path == "batch" and self._sourced:  # n Pólya(1/n, θ) differences sum to DLap(g/eps) (Fact 1)
            return self.noise_source.discrete_laplace(rng, np.zeros(rows, dtype=np.int64), proto.scale)
        if self.path == "batch":
            return proto.total_noise(rng, (rows,), n)
        out = np.zeros(rows, dtype=np.int64)
        step = max(1, _CHUNK // n)
        for i in range(0, rows, step):
            k = min(step, rows - i)
            out[i : i + k] = proto.user_noise(rng, (k, n)).sum(axis=1)
        return out

    # ---- the run ---------------------------------------------------------------------------------
    def _run(self, env, rng, size, horizon) -> Outcome:
        p = self._p(horizon)

        def length(e, n_active):
            return np.full(n_active.shape, min(self.base**e, 4 * horizon), dtype=np.int64)

        def release(rng, env, active, start, lens, e):
            n = self.base**e
            proto = self.secagg(n, horizon)
            z = np.zeros(active.shape)
            agg = np.zeros(active.shape)
            rel = np.zeros(active.shape)
            for a in range(active.shape[1]):
                rows = np.flatnonzero(active[:, a])
                if rows.size == 0:
                    continue
                if self.protocol == "shuffle":
                    # window draws for every run (per-run means are indexed by position), then keeps the active ones
                    x = env.window(rng, np.full(active.shape[0], a), start[:, a], int(lens[rows[0]]))[rows]
                    out = proto.run_fast(rng, x)
                    agg[rows, a], z[rows, a] = out.ones, out.estimate  # the server's view: the count of ones
                    rel[rows, a] = out.ones
                    continue
                enc = env.rounded_segment_sums(
                    rng, np.full(rows.size, a), start[rows, a], lens[rows], proto.params.g, rows
                )
                y = np.mod(enc + self.noise_total(rng, rows.size, n, horizon), proto.params.m)  # server's view
                released = proto.finalize(rng, y)  # 'central': the trusted analyzer adds DLap(g/eps) here
                agg[rows, a], rel[rows, a] = y, released
                z[rows, a] = proto.analyze(released)
            return z, {"aggregates": agg, "releases": rel}

        def radius(e, n_active, users):
            sigma, h = self._sigma_h(self.base**e)
            lg4 = np.log(4 * n_active * e**2 / p)
            lg2 = np.log(2 * n_active * e**2 / p)
            return np.sqrt(lg4 / (2 * users)) + sigma * np.sqrt(lg2) / users + h * lg2 / users

        return eliminate(env, rng, size, horizon, length=length, release=release, radius=radius)

    # ---- privacy ---------------------------------------------------------------------------------
    def _batches(self, horizon: int) -> range:
        top = max(1, math.floor(math.log(max(horizon, self.base)) / math.log(self.base) + 1e-12))
        return range(1, top + 1)

    def batch_event(self, n: int, horizon: int) -> dp_accounting.DpEvent:
        """The DpEvent of one release as implemented (sensitivity g: one user's x_hat moves in {0..g}).

        For the inverted-Pólya variant this is the event of the noise actually drawn, not the claim.
        """
        proto = self.secagg(n, horizon)
        if self.polya == "inverted":
            g = proto.params.g
            return dp_event.DiscreteLaplaceDpEvent(noise_parameter=-math.log(proto.theta), sensitivity=g)
        return proto.event()

    def _composed(self, events: list[dp_accounting.DpEvent]) -> dp_accounting.DpEvent:
        """Parallel over batches (each user in one release), self-composed over `returning` batches."""
        event: dp_accounting.DpEvent = ParallelComposedDpEvent(events)
        return dp_accounting.SelfComposedDpEvent(event, self.returning) if self.returning > 1 else event

    def _shuffle_privacy(self, horizon: int) -> Privacy:
        """Thm 3's pure eps claim, and the exact pure eps of what the server sees: each release's count of ones C of
        mechanisms.ShuffleSum's shuffled unary bits (`shuffle_view.shuffle_count_epsilon`, log f(0)/f(g) for the
        Pólya-difference pmf f; within `shuffle_count_lower_epsilon` of the exact eps of C), composed as the other
        protocols' releases are (`_composed`: parallel over the batches, `returning` batches basic)."""
        protos = [self.secagg(self.base**b, horizon) for b in self._batches(horizon)]
        event = self._composed([shuffle_count_event(pr) for pr in protos])
        sound = accounting.epsilon(event, delta=0.0)
        worst = max(protos, key=shuffle_count_epsilon)
        gap = shuffle_count_epsilon(worst) - shuffle_count_lower_epsilon(worst)
        thm = " + App. I basic composition" if self.returning > 1 else ""
        basis = " + basic composition over the returning user's batches" if self.returning > 1 else ""
        return Privacy(
            "user-reward",
            "shuffle",
            event,
            Guarantee("pure", self.epsilon, source=f"Chowdhury & Zhou 2023, Thm 3 (P_Shuffle){thm}"),
            Guarantee(
                "pure",
                sound,
                source="exact pure eps of the server's count of ones per release, log f(0)/f(g) "
                f"for the Pólya-difference pmf f, at the largest batch (n = {worst.params.n}, g = {worst.params.g}, "
                f"m = {worst.params.m}; exact to {gap:.1e}), parallel over the batches{basis}",
            ),
            "the count of ones reveals sum_i y_i over the integers, not only mod m: the eps~-relaxed security "
            "Thm 3 assumes is not established for this instantiation; the worst count is 0 (every share 0), e^eps "
            "times likelier when the changed user's reward is 0 than when it is 1; at delta > 0 the same eps is "
            "valid but loose (no (eps, delta) profile of the count, which spans n(m-1) values, is computed)",
            paper_event=self._composed([shuffle_sum_proof_event(pr) for pr in protos]),
        )

    def privacy(self, horizon: int) -> Privacy:
        """Parallel over the batches of a run of `horizon` users (each user in one release), self-composed
        over `returning` batches. The shuffle protocol's unary messages overflow int64 beyond T ~ 10^5."""
        check_positive_int(horizon, "horizon")
        if self.protocol == "shuffle":
            return self._shuffle_privacy(horizon)
        event = self._composed([self.batch_event(self.base**b, horizon) for b in self._batches(horizon)])
        eps, B = self.epsilon, self.returning
        trust = {"central": "central", "local": "local"}.get(self.protocol, "distributed")
        corrected = None
        note = "each user is in exactly one release; the release is the protocol's central mechanism at sensitivity g"
        if self.protocol == "dist-rdp":
            claim = Guarantee(
                "rdp",
                eps,
                rho=eps * eps / 2,
                source="Chowdhury & Zhou 2023, Thm 2: eps(a) = a eps^2/2 + min((2a-1)eps^2/(4s^2) + 3eps/(2s^3), 3eps^2/(2s)), integer a",
            )
        elif self.protocol == "dist-cdp":
            proto = self.secagg(self.base, horizon)
            rho = dist_cdp_paper_event(proto.epsilon, proto.s, max(horizon, 2)).rho
            claim = Guarantee("zcdp", rho=B * rho, source="Chowdhury & Zhou 2023, Thm 4 (xi over n <= T/2, sigma >= s)")
        else:
            thm = {"dist-dp": "Thm 1", "central": "Thm 5", "local": "Thm 6"}[self.protocol]
            claim = Guarantee(
                "pure",
                eps,
                source=f"Chowdhury & Zhou (ICLR 2023), {thm}" + (" + App. I basic composition" if B > 1 else ""),
            )
            if self.polya == "inverted":
                worst = max(
                    self.batch_event(self.base**b, horizon).noise_parameter * self.batch_params(self.base**b, horizon).g
                    for b in self._batches(horizon)
                )
                corrected = Guarantee(
                    "pure",
                    B * worst,
                    source="Pólya(1/n, 1-θ) shares in the public code of Chowdhury & Zhou (ICLR 2023, Sec. 7 footnote 5; footnote 3 wants Pólya(1/n, θ)): total noise DLap(-1/log(1-θ))",
                )
                note = "authors' code draws Polya(1/n, 1-theta): the total is DLap(-1/log(1-theta)), eps_eff = g log(1/(1-e^{-eps/g}))"
        return Privacy("user-reward", trust, event, claim, corrected, note)
