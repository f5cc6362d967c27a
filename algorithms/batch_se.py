"""Private batch-based successive elimination (seed 004, Chowdhury & Zhou, Algorithm 1) and its protocols.

Batch b = 1, 2, ...: every active arm is recommended to l(b) = base^b fresh users in index
order (seed 004 uses base 2 in the paper, 4 in its public code for Figs. 1-3). Each user
encodes x_hat = floor(x g) + Ber(frac(x g)) in {0..g}, adds its noise share eta_i, and sends
(x_hat + eta_i) mod m; secure aggregation reveals only y = (sum x_hat + sum eta) mod m (the
server's view), and the analyzer returns z = (y - m)/g if y > n g + tau else y/g (lines 26-31).
mu_hat = z / l(b) uses this batch only; arm a is kept iff mu_hat_a + beta(b) >= max (mu_hat - beta(b)),
    beta(b) = sqrt(log(4|Phi| b^2/p)/(2l)) + sigma sqrt(log(2|Phi| b^2/p))/l + h log(2|Phi| b^2/p)/l
(Lemma 2 / App. C; (sigma, h) per protocol below). p defaults to 1/T (theory); the experiments use 0.1.

Protocols (n = l(b); digest 004 §3.3), with the batch total's exact law (`path="batch"`):
- 'dist-dp'  (Dist-DP-SE, Thm 1): g = ceil(eps sqrt n), eta_i = Polya(1/n, theta) - Polya(1/n, theta),
  theta = e^{-eps/g}; the total is DLap(g/eps) (Fact 1). tau = ceil((g/eps) log(2/p)).
  polya='inverted' is the authors' public code (bug B1): per-user Polya(1/n, 1-theta), whose total is
  DLap(-1/log(1-theta)), far too little noise.
- 'dist-rdp' (Dist-RDP-SE, Thm 2): g = ceil(s eps sqrt n), eta_i ~ Sk(g^2/(n eps^2)); total Sk(g^2/eps^2).
  tau = ceil((2g/eps) sqrt(log(2/p)) + sqrt(2) log(2/p)).
- 'dist-cdp' (Dist-CDP-SE, Thm 4): g = ceil(s eps sqrt n), eta_i ~ N_Z(0, g^2/(n eps^2)); a sum of discrete
  Gaussians is not one, so the shares are always drawn user by user. tau = ceil((g/eps) sqrt(2 log(2/p))).
- 'central'  (CDP-SE, Thm 5): g = ceil(eps sqrt n), the analyzer adds DLap(g/eps) to the aggregate.
- 'local'    (LDP-SE, Thm 6): g = ceil(eps sqrt n), each user adds DLap(g/eps) (total: difference of two
  Polya(n, theta)); tau = ceil((c g/eps) sqrt(2 n log(2/p))), c the unspecified constant of Lemma 5.
m = n g + 2 tau + 1 in all cases. `path="users"` draws every share (for audits that change one user
and to check the batch path). Randomized rounding is always per user except for {0,1} rewards.

Returning users (App. I): a user may take part in `returning` = B batches; pure protocols run each
batch at eps/B (basic composition, Remark 9), RDP/zCDP ones at eps/sqrt(B) (rho adds up).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import dp_accounting
from dp_accounting import dp_event
import numpy as np

from dpaudit.accounting.events import ParallelComposedDpEvent, SkellamDpEvent
from dpaudit.algorithms.elimination import eliminate
from dpaudit.algorithms.mab import Algorithm
from dpaudit.algorithms.outcome import Outcome
from dpaudit.algorithms.privacy import Guarantee, Privacy
from dpaudit.mechanisms import discrete_gaussian, discrete_laplace, polya, skellam
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
)

__all__ = ["BatchSE", "BatchParams", "PROTOCOLS", "PATHS", "POLYA_VARIANTS", "BATCH_NAMES", "cdp_xi"]

PROTOCOLS = ("dist-dp", "dist-rdp", "dist-cdp", "central", "local")
BATCH_NAMES = {"dist-dp": "dist-dp-se", "dist-rdp": "dist-rdp-se", "dist-cdp": "dist-cdp-se",
               "central": "cdp-se", "local": "ldp-se"}
PATHS = ("batch", "users")
POLYA_VARIANTS = ("correct", "inverted")
_CHUNK = 1 << 21


@dataclasses.dataclass(frozen=True)
class BatchParams:
    """Encoding precision g, accuracy tau and modulus m of one batch of n users."""

    n: int
    g: int
    tau: int
    m: int


@functools.lru_cache(maxsize=256)
def cdp_xi(n: int, sigma2: float) -> float:
    """xi_n = 10 sum_{k=1}^{n-1} exp(-2 pi^2 sigma^2 k/(k+1)) (Kairouz et al. 2021a, Prop. 13; seed 004 Lemma 4)."""
    if n < 2:
        return 0.0
    k = np.arange(1, n, dtype=float)
    return float(10.0 * np.exp(-2 * math.pi**2 * sigma2 * k / (k + 1)).sum())


def _cdp_eps_hat(eps: float, n: int, sigma2: float) -> float:
    """eps_hat = min(sqrt(eps^2 + xi/2), eps + xi) for n shares of N_Z(0, sigma^2) and Delta^2/(n sigma^2) = eps^2."""
    xi = cdp_xi(n, sigma2)
    return min(math.sqrt(eps * eps + xi / 2), eps + xi)


@dataclasses.dataclass(frozen=True)
class BatchSE(Algorithm):
    """Seed 004's Algorithm 1 with one of its protocols (see the module docstring)."""

    protocol: str = "dist-dp"
    epsilon: float = 1.0
    s: float = 10.0
    p: float | None = None
    base: int = 2
    returning: int = 1
    path: str = "batch"
    polya: str = "correct"
    c: float = 2.0

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
            raise ValueError("polya='inverted' (bug B1) applies to protocol 'dist-dp' only")
        check_positive(self.c, "c")

    @property
    def name(self) -> str:  # type: ignore[override]
        return BATCH_NAMES[self.protocol]

    @property
    def batch_epsilon(self) -> float:
        """Per-batch eps: eps/B for pure protocols, eps/sqrt(B) for RDP/zCDP ones (App. I)."""
        if self.protocol in ("dist-rdp", "dist-cdp"):
            return self.epsilon / math.sqrt(self.returning)
        return self.epsilon / self.returning

    def batch_params(self, n: int, horizon: int) -> BatchParams:
        """g, tau, m for a batch of n users (digest 004 §3.3)."""
        eps, p = self.batch_epsilon, self._p(horizon)
        lg = math.log(2 / p)
        if self.protocol in ("dist-rdp", "dist-cdp"):
            g = math.ceil(self.s * eps * math.sqrt(n))
        else:
            g = math.ceil(eps * math.sqrt(n))
        if self.protocol == "dist-rdp":
            tau = math.ceil((2 * g / eps) * math.sqrt(lg) + math.sqrt(2) * lg)
        elif self.protocol == "dist-cdp":
            tau = math.ceil((g / eps) * math.sqrt(2 * lg))
        elif self.protocol == "local":
            tau = math.ceil((self.c * g / eps) * math.sqrt(2 * n * lg))
        else:
            tau = math.ceil((g / eps) * lg)
        m = n * g + 2 * tau + 1
        if m >= 1 << 62:
            raise ValueError(f"modulus m = {m} overflows int64 for a batch of {n} users; lower the horizon")
        return BatchParams(n, g, tau, m)

    def _p(self, horizon: int) -> float:
        return 1.0 / horizon if self.p is None else self.p

    def _sigma_h(self, n: int) -> tuple[float, float]:
        """(sigma, h) of Assumption 1 for this protocol (Lemma 2 table, digest 004 §3.2)."""
        eps, s = self.batch_epsilon, self.s
        if self.protocol == "dist-rdp":
            return 2 / eps + math.sqrt(2) / (s * eps), 1 / (s * eps)  # as in the authors' code
        if self.protocol == "dist-cdp":
            return math.sqrt(2) / eps + math.sqrt(2) / (s * eps), 0.0
        if self.protocol == "local":
            return self.c * math.sqrt(2 * n) / eps + math.sqrt(2) / eps, 2 * self.c / eps
        return math.sqrt(2) / eps, 1 / eps

    # ---- noise of one batch: total over n users, for `rows` runs --------------------------------
    def _theta(self, g: int) -> float:
        theta = math.exp(-self.batch_epsilon / g)
        return 1.0 - theta if self.polya == "inverted" else theta

    def _per_user_total(self, rng, rows: int, n: int, draw) -> np.ndarray:
        out = np.zeros(rows, dtype=np.int64)
        step = max(1, _CHUNK // n)
        for i in range(0, rows, step):
            k = min(step, rows - i)
            out[i : i + k] = draw((k, n)).sum(axis=1)
        return out

    def noise_total(self, rng: np.random.Generator, rows: int, bp: BatchParams) -> np.ndarray:
        """Sum of the batch's noise (shares, or the analyzer's draw for 'central'), shape (rows,)."""
        n, g, eps = bp.n, bp.g, self.batch_epsilon
        users = self.path == "users"
        if self.protocol in ("dist-dp", "central"):
            theta = self._theta(g)
            if users and self.protocol == "dist-dp":
                return self._per_user_total(rng, rows, n, lambda shape: polya(rng, 1.0 / n, theta, shape) - polya(rng, 1.0 / n, theta, shape))
            return discrete_laplace(rng, -1.0 / math.log(theta), rows).astype(np.int64)
        if self.protocol == "dist-rdp":
            var = g * g / (eps * eps)
            if users:
                return self._per_user_total(rng, rows, n, lambda shape: skellam(rng, var / n, shape))
            return skellam(rng, var, rows).astype(np.int64)
        if self.protocol == "dist-cdp":
            sigma = g / (eps * math.sqrt(n))
            return self._per_user_total(rng, rows, n, lambda shape: discrete_gaussian(rng, sigma, shape))
        theta = math.exp(-eps / g)  # local: n shares of DLap(g/eps)
        if users:
            return self._per_user_total(rng, rows, n, lambda shape: discrete_laplace(rng, g / eps, shape))
        return polya(rng, float(n), theta, rows) - polya(rng, float(n), theta, rows)

    @staticmethod
    def analyze(y: np.ndarray, bp: BatchParams) -> np.ndarray:
        """Analyzer A (Alg. 1 lines 26-31): undo the modular wrap of a negative noisy sum, divide by g."""
        return np.where(y > bp.n * bp.g + bp.tau, y - bp.m, y) / bp.g

    # ---- the run ---------------------------------------------------------------------------------
    def _run(self, env, rng, size, horizon) -> Outcome:
        p = self._p(horizon)
        cache: dict[int, BatchParams] = {}

        def params(e: int) -> BatchParams:
            if e not in cache:
                cache[e] = self.batch_params(self.base**e, horizon)
            return cache[e]

        def length(e, n_active):
            l = self.base**e
            return np.full(n_active.shape, min(l, 4 * horizon), dtype=np.int64)

        def release(rng, env, active, start, lens, e):
            bp = params(e)
            z = np.zeros(active.shape)
            agg = np.zeros(active.shape)
            for a in range(active.shape[1]):
                rows = np.flatnonzero(active[:, a])
                if rows.size == 0:
                    continue
                enc = env.rounded_segment_sums(rng, np.full(rows.size, a), start[rows, a], lens[rows], bp.g, rows)
                y = np.mod(enc + self.noise_total(rng, rows.size, bp), bp.m)
                agg[rows, a] = y
                z[rows, a] = self.analyze(y, bp)
            return z, {"aggregates": agg}

        def radius(e, n_active, l):
            sigma, h = self._sigma_h(self.base**e)
            lg4 = np.log(4 * n_active * e**2 / p)
            lg2 = np.log(2 * n_active * e**2 / p)
            return np.sqrt(lg4 / (2 * l)) + sigma * np.sqrt(lg2) / l + h * lg2 / l

        return eliminate(env, rng, size, horizon, length=length, release=release, radius=radius)

    # ---- privacy ---------------------------------------------------------------------------------
    def _batches(self, horizon: int) -> range:
        top = max(1, int(math.floor(math.log(max(horizon, self.base)) / math.log(self.base) + 1e-12)))
        return range(1, top + 1)

    def batch_event(self, n: int, horizon: int) -> dp_accounting.DpEvent:
        """The DpEvent of one release (sensitivity g: one user's x_hat moves within {0..g})."""
        bp = self.batch_params(n, horizon)
        eps, g = self.batch_epsilon, bp.g
        if self.protocol in ("dist-dp", "central", "local"):
            return dp_event.DiscreteLaplaceDpEvent(noise_parameter=-math.log(self._theta(g)) if self.protocol == "dist-dp" else eps / g, sensitivity=g)
        if self.protocol == "dist-rdp":
            return SkellamDpEvent(variance=g * g / (eps * eps), l1_sensitivity=g, l2_sensitivity=g)
        eps_hat = _cdp_eps_hat(eps, n, g * g / (n * eps * eps))
        return dp_event.ZCDpEvent(rho=eps_hat**2 / 2)

    def privacy_for(self, horizon: int) -> Privacy:
        """Parallel over batches (each user in one release), self-composed over `returning` batches."""
        events = [self.batch_event(self.base**b, horizon) for b in self._batches(horizon)]
        event: dp_accounting.DpEvent = ParallelComposedDpEvent(events)
        if self.returning > 1:
            event = dp_accounting.SelfComposedDpEvent(event, self.returning)
        eps, B = self.epsilon, self.returning
        trust = {"central": "central", "local": "local"}.get(self.protocol, "distributed")
        corrected = None
        note = "each user is in exactly one release; the release is the protocol's central mechanism at sensitivity g"
        if self.protocol == "dist-rdp":
            claim = Guarantee("rdp", eps, rho=eps * eps / 2,
                              source="seed 004 Thm 2: eps(a) = a eps^2/2 + min((2a-1)eps^2/(4s^2) + 3eps/(2s^3), 3eps^2/(2s)), integer a")
        elif self.protocol == "dist-cdp":
            sigma2 = self.s**2
            xi = cdp_xi(max(horizon // 2, 1), sigma2)
            eps_hat = min(math.sqrt(self.batch_epsilon**2 + xi / 2), self.batch_epsilon + xi)
            claim = Guarantee("zcdp", rho=B * eps_hat**2 / 2, source="seed 004 Thm 4 (xi over n <= T/2, sigma >= s)")
        else:
            thm = {"dist-dp": "Thm 1", "central": "Thm 5", "local": "Thm 6"}[self.protocol]
            claim = Guarantee("pure", eps, source=f"seed 004 {thm}" + (" + App. I basic composition" if B > 1 else ""))
            if self.polya == "inverted":
                worst = max(self.batch_params(self.base**b, horizon).g * -math.log(self._theta(self.batch_params(self.base**b, horizon).g))
                            for b in self._batches(horizon))
                corrected = Guarantee("pure", B * worst, source="digest 004 caveat (i) / bug B1")
                note = "authors' code draws Polya(1/n, 1-theta): the total is DLap(-1/log(1-theta)), eps_eff = g log(1/(1-e^{-eps/g}))"
        return Privacy("user-reward", trust, event, claim, corrected, note)

    @property
    def privacy(self) -> Privacy:
        return self.privacy_for(10**6)
