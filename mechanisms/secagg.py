"""Secure-aggregation protocols of Chowdhury & Zhou ("Distributed Differential Privacy
in Multi-Armed Bandits", ICLR 2023, Alg. 1): local randomizer R -> secure aggregation S -> analyzer A.

One release aggregates the rewards x_i in [0, 1] of the n users of one (batch, arm):
  R: x̂_i = floor(x_i g) + Bernoulli(x_i g - floor(x_i g))   (unbiased randomized rounding, in 0..g)
     y_i = (x̂_i + eta_i) mod m                               (Alg. 1 lines 18-22)
  S: ŷ = (sum_i y_i) mod m                                     (lines 23-25; the server's view)
  A: z = (ŷ - m)/g if ŷ > n g + tau else ŷ/g                   (lines 26-31; underflow correction)
Variants (the noise eta and where it is added; parameters of Chowdhury & Zhou 2023, Thms 1, 2, 4, 5, 6):
  PolyaSecAgg            Dist-DP-SE, Thm 1: eta_i = Pólya(1/n, θ) - Pólya(1/n, θ), θ = e^(-eps/g);
                         sum = DLap(g/eps): pure eps-DP for the server's view.
  SkellamSecAgg          Dist-RDP-SE, Thm 2: eta_i ~ Sk(0, g²/(n eps²)); sum = Sk(0, g²/eps²): RDP.
  DiscreteGaussianSecAgg Dist-CDP-SE, Thm 4: eta_i ~ N_Z(0, g²/(n eps²)); zCDP (Kairouz et al.).
  CentralSecAgg          CDP-SE, App. H.1 Thm 5: no user noise, A adds DLap(g/eps) before decoding.
  LocalSecAgg            LDP-SE, App. H.2 Thm 6: eta_i ~ DLap(g/eps) per user: eps-LDP messages.
Arrays: rewards have shape (*batch, k) with k <= n users on the last axis; every leading axis is
a batch of independent runs. `run` simulates user by user; `run_fast` draws each release's total
noise at once where its law is the same (a sum of Pólya shares is a discrete Laplace, drawn with
the exact sampler; a sum of Skellam shares is a Skellam; a sum of discrete Laplace shares is a
difference of two negative binomials). The server's view ŷ has the same law on both paths.

Known-buggy variants (bugs of the authors' public code, Chowdhury & Zhou (ICLR 2023), Sec. 7 footnote 5, and
implementation bugs an audit must catch), selected by `bug=`, keep the
*claimed* event of the correct protocol, so that an audit shows the gap; see `BUGS`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import dp_accounting
import numpy as np
from dp_accounting import dp_event
from scipy import optimize

from dpaudit.accounting.events import SkellamDpEvent
from dpaudit.mechanisms import discrete, samplers
from dpaudit.validation import (
    check_choice,
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
)

__all__ = [
    "BUGS",
    "CentralSecAgg",
    "DiscreteGaussianSecAgg",
    "LocalSecAgg",
    "PolyaSecAgg",
    "SecAggParameters",
    "SecAggRelease",
    "SkellamSecAgg",
    "analyze",
    "check_rewards",
    "derive_parameters",
    "encode",
    "kairouz_epsilon_hat",
    "modular_messages",
    "polya_difference",
    "pure_dp_tau",
    "secure_sum",
]

INT64_MAX = 2**63 - 1

BUGS: dict[str, str] = {
    "inverted_polya": (
        "In the authors' public code (MABPrivate.py `polya`): Gamma scale (1-θ)/θ instead of "
        "θ/(1-θ), i.e. Pólya(1/n, 1-θ) shares; total noise DLap with e^(-1/λ') = 1 - e^(-eps/g), "
        "effective eps = g log(1/(1 - e^(-eps/g))) (17.1 at eps=1, n=64)."
    ),
    "noise_ignores_precision": (
        "noise calibrated to sensitivity 1 instead of g (DLap(1/eps), Skellam variance "
        "1/eps², discrete Gaussian variance 1/(n eps²)); effective eps = g eps."
    ),
    "shared_user_noise": (
        "every user of a release adds the same noise draw (e.g. one seed for all clients); "
        "the total is n * eta_1, mostly 0 for Pólya shares: privacy collapses."
    ),
    "encoding_off_by_one": (
        "ceil(x g) + Bernoulli(frac) encoding reaches g + 1, so the sensitivity is g + 1 and "
        "the effective eps is eps (g+1)/g."
    ),
}


# ---------------------------------------------------------------------------- building blocks


@dataclass(frozen=True)
class SecAggParameters:
    """n users, precision g, accuracy tau, modulus m; m >= n g + 2 tau + 1 and n m < 2^63."""

    n: int
    g: int
    tau: int
    m: int

    def __post_init__(self) -> None:
        check_int_at_least(self.n, 1, "n")
        check_int_at_least(self.g, 1, "g")
        check_int_at_least(self.tau, 0, "tau")
        check_int_at_least(self.m, 2, "m")
        need = self.n * self.g + 2 * self.tau + 1
        if self.m < need:
            raise ValueError(f"m = {self.m} is too small to hold the sum: need m >= n*g + 2*tau + 1 = {need}")
        if self.n * self.m > INT64_MAX:
            raise ValueError(
                f"n*m = {self.n * self.m} overflows int64 (n = {self.n}, g = {self.g}, m = {self.m}); reduce n or g"
            )


@dataclass(frozen=True)
class SecAggRelease:
    """One protocol run per batch entry.

    messages: the users' y_i in Z_m (user-by-user path only, else None), shape (*batch, k);
    aggregate: the SecAgg output ŷ (the server's view), shape (*batch,);
    released: the integer the analyzer decodes (ŷ, or ŷ plus the central noise, mod m);
    estimate: z = A(released), the private sum of rewards.
    """

    messages: np.ndarray | None
    aggregate: np.ndarray
    released: np.ndarray
    estimate: np.ndarray


def encode(rng: np.random.Generator, x: Any, g: int, off_by_one: bool = False) -> np.ndarray:
    """x̂ = floor(x g) + Bernoulli(x g - floor(x g)) in 0..g (Chowdhury & Zhou (ICLR 2023), Alg. 1 line 20).

    Unbiased: E x̂ = x g. `off_by_one` is the bug "encoding_off_by_one" (ceil instead of floor).
    """
    arr = np.asarray(x, dtype=float)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("rewards x must lie in [0, 1] (no NaN)")
    xg = arr * g
    base = np.floor(xg)
    frac = xg - base
    if off_by_one:
        base = np.ceil(xg)
    return base.astype(np.int64) + (rng.random(arr.shape) < frac)


def modular_messages(xhat: np.ndarray, noise: np.ndarray, m: int) -> np.ndarray:
    """y_i = (x̂_i + eta_i) mod m, in 0..m-1 for negative sums too (Alg. 1 line 22)."""
    return np.mod(np.asarray(xhat, dtype=np.int64) + np.asarray(noise, dtype=np.int64), m)


def secure_sum(messages: np.ndarray, m: int) -> np.ndarray:
    """ŷ = (sum_i y_i) mod m over the last (users) axis (Alg. 1 line 25).

    Messages must lie in 0..m-1; with k m < 2^63 the int64 sum cannot overflow.
    """
    y = np.asarray(messages, dtype=np.int64)
    if y.size and (y.min() < 0 or y.max() >= m):
        raise ValueError(f"messages must lie in 0..m-1 = 0..{m - 1}")
    if y.shape[-1] * m > INT64_MAX:
        raise ValueError(f"{y.shape[-1]} messages mod m = {m} overflow int64")
    return np.mod(y.sum(axis=-1), m)


def analyze(released: np.ndarray, params: SecAggParameters) -> np.ndarray:
    """z = (y - m)/g if y > n g + tau else y/g (Alg. 1 lines 28-30).

    Exact inverse of the wrap whenever the noisy sum lies in [-tau, n g + tau].
    """
    y = np.asarray(released, dtype=np.int64)
    wrapped = y > params.n * params.g + params.tau
    return np.where(wrapped, y - params.m, y) / params.g


def _log_term(p: float) -> float:
    return math.log(2.0 / check_open_unit(p, "p"))


def _paper_g(epsilon: float, n: int, s: float) -> int:
    """g = ceil(s eps sqrt(n)) (s = 1 for the pure-DP variants)."""
    return max(1, math.ceil(s * epsilon * math.sqrt(n)))


def _check_int_override(value: Any, name: str, minimum: int) -> int | None:
    return None if value is None else check_int_at_least(value, minimum, name)


def pure_dp_tau(g: int, epsilon: float, p: float) -> int:
    """tau = ceil((g/eps) log(2/p)): the (1-p)-bound on |DLap(g/eps)| (Chowdhury & Zhou (ICLR 2023), Thm 1, Thm 5)."""
    return math.ceil(g / epsilon * _log_term(p))


def derive_parameters(
    epsilon: float,
    n: Any,
    s: float,
    g: Any,
    tau: Any,
    m: Any,
    default_tau: Callable[[int], int],
) -> SecAggParameters:
    """The protocol parameters of Chowdhury & Zhou 2023 (Thms 1, 2, 4, 5, 6), each overridable:
    g = ceil(s eps sqrt(n)), tau = default_tau(g) (the variant's tail bound, evaluated only when
    tau is not given), m = n g + 2 tau + 1."""
    n = check_int_at_least(n, 1, "n")
    g = _check_int_override(g, "g", 1) or _paper_g(epsilon, n, s)
    tau = _check_int_override(tau, "tau", 0)
    if tau is None:
        tau = default_tau(g)
    m = n * g + 2 * tau + 1 if m is None else check_int_at_least(m, 2, "m")
    return SecAggParameters(n, g, tau, m)


def polya_difference(rng: np.random.Generator, r: Any, theta: float, shape: tuple[int, ...]) -> np.ndarray:
    """Pólya(r, θ) - Pólya(r, θ), independent and exact: n such shares with r = 1/n sum to
    DLap(-1/log θ) (Chowdhury & Zhou (ICLR 2023), Fact 1; Goryczka & Xiong 2015)."""
    return samplers.polya(rng, r, theta, shape) - samplers.polya(rng, r, theta, shape)


def check_rewards(x: Any, n: int) -> np.ndarray:
    """Rewards as a float array with 1..n users on the last axis (ValueError naming x otherwise)."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim < 1 or not 1 <= arr.shape[-1] <= n:
        raise ValueError(
            f"rewards x must have the users on the last axis, 1..n = 1..{n} of them, got shape {arr.shape}"
        )
    return arr


# ---------------------------------------------------------------------------- the protocols


class _Protocol(abc.ABC):
    """R -> S -> A for one release per batch entry; subclasses define the noise and the event."""

    trust_model: str = "distributed"
    supported_bugs: tuple[str, ...] = ()

    def __init__(self, epsilon: float, params: SecAggParameters, bug: str | None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.params = params
        if bug is not None:
            check_choice(bug, self.supported_bugs, "bug")
        self.bug = bug

    def __repr__(self) -> str:
        p = self.params
        return (
            f"{type(self).__name__}(epsilon={self.epsilon!r}, n={p.n}, g={p.g}, tau={p.tau}, m={p.m}, bug={self.bug!r})"
        )

    # --- noise laws
    @abc.abstractmethod
    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Independent per-user noise shares eta_i of the given shape."""

    @abc.abstractmethod
    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        """The law of sum_{i<=k} eta_i drawn at once, shape `batch`."""

    # --- guarantees
    @abc.abstractmethod
    def event(self) -> dp_accounting.DpEvent:
        """The claimed per-release DpEvent in the protocol's trust model (sensitivity g)."""

    def server_view_event(self) -> dp_accounting.DpEvent:
        """What the server's view (the SecAgg output ŷ) reveals about one user."""
        return self.event()

    def _dlap_event(self) -> dp_event.DiscreteLaplaceDpEvent:
        """DLap(g/eps) at sensitivity g: pure eps-DP (the claim of Thms 1, 5 and 6)."""
        g = self.params.g
        return dp_event.DiscreteLaplaceDpEvent(noise_parameter=self.epsilon / g, sensitivity=g)

    @property
    def noise_g(self) -> int:
        """The precision the noise is calibrated to: g, or 1 under bug="noise_ignores_precision"."""
        return 1 if self.bug == "noise_ignores_precision" else self.params.g

    # --- protocol steps
    def encode(self, rng: np.random.Generator, x: Any) -> np.ndarray:
        return encode(rng, x, self.params.g, off_by_one=self.bug == "encoding_off_by_one")

    def _shares(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.bug == "shared_user_noise":
            one = self.user_noise(rng, shape[:-1] + (1,))
            return np.broadcast_to(one, shape)
        return self.user_noise(rng, shape)

    def randomize(self, rng: np.random.Generator, x: Any) -> np.ndarray:
        """The local randomizer R applied to every user: messages y_i in Z_m."""
        arr = check_rewards(x, self.params.n)
        return modular_messages(self.encode(rng, arr), self._shares(rng, arr.shape), self.params.m)

    def aggregate(self, messages: np.ndarray) -> np.ndarray:
        """The secure aggregation S: (sum of messages) mod m."""
        return secure_sum(messages, self.params.m)

    def finalize(self, rng: np.random.Generator, aggregate: np.ndarray) -> np.ndarray:
        """What the analyzer decodes (identity except in the central model)."""
        return aggregate

    def analyze(self, released: np.ndarray) -> np.ndarray:
        """The analyzer A: underflow correction, then division by g."""
        return analyze(released, self.params)

    def run(self, rng: np.random.Generator, x: Any) -> SecAggRelease:
        """User by user: every user randomizes, SecAgg sums mod m, the analyzer decodes."""
        messages = self.randomize(rng, x)
        agg = self.aggregate(messages)
        released = self.finalize(rng, agg)
        return SecAggRelease(messages, agg, released, self.analyze(released))

    def run_fast(self, rng: np.random.Generator, x: Any) -> SecAggRelease:
        """Same law of the server's view, with each release's total noise drawn at once."""
        arr = check_rewards(x, self.params.n)
        k = arr.shape[-1]
        total = self.encode(rng, arr).sum(axis=-1)
        if self.bug == "shared_user_noise":
            noise = k * self.user_noise(rng, arr.shape[:-1])
        else:
            noise = self.total_noise(rng, arr.shape[:-1], k)
        agg = np.mod(total + noise, self.params.m)
        released = self.finalize(rng, agg)
        return SecAggRelease(None, agg, released, self.analyze(released))


def _dlap_scale_from_theta(theta: float) -> float:
    """DLap scale lambda with e^(-1/lambda) = theta."""
    return -1.0 / math.log(theta)


class _PureProtocol(_Protocol):
    """The pure-DP variants' parameters (Chowdhury & Zhou (ICLR 2023), Thm 1 and App. H.1 Thm 5): g = ceil(eps sqrt(n)),
    tau = ceil((g/eps) log(2/p)), m = n g + 2 tau + 1, each overridable."""

    def __init__(
        self,
        epsilon: float,
        n: int,
        p: float,
        g: int | None = None,
        tau: int | None = None,
        m: int | None = None,
        bug: str | None = None,
    ) -> None:
        eps = check_epsilon(epsilon)
        params = derive_parameters(eps, n, 1.0, g, tau, m, lambda g_: pure_dp_tau(g_, eps, p))
        super().__init__(eps, params, bug)


class PolyaSecAgg(_PureProtocol):
    """Dist-DP-SE (Chowdhury & Zhou (ICLR 2023), Sec. 4, Thm 1): pure eps-DP for the server's view.

    eta_i = Pólya(1/n, θ) - Pólya(1/n, θ), θ = exp(-eps/g); n shares sum to DLap(g/eps)
    (Fact 1, Goryczka & Xiong 2015). g = ceil(eps sqrt(n)), tau = ceil((g/eps) log(2/p)),
    m = n g + 2 tau + 1; p = 1/T in the theory, 0.1 in the paper's experiments.
    """

    supported_bugs = ("inverted_polya", "noise_ignores_precision", "shared_user_noise", "encoding_off_by_one")

    @property
    def scale(self) -> Fraction:
        """The claimed total noise scale g/eps (exact rational)."""
        return Fraction(self.params.g) / Fraction(self.epsilon)

    @property
    def theta(self) -> float:
        """The Pólya parameter the shares use (the buggy one under `bug`)."""
        theta = math.exp(-self.epsilon / self.noise_g)
        return 1.0 - theta if self.bug == "inverted_polya" else theta

    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        r = 1.0 / self.params.n
        return polya_difference(rng, r, self.theta, shape)

    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        if k < self.params.n:  # dropouts (fewer than n users report): a difference of Pólya(k/n) laws
            r = k / self.params.n
            return polya_difference(rng, r, self.theta, batch)
        if self.bug is None or self.bug == "encoding_off_by_one":
            return discrete.discrete_laplace(rng, self.scale, batch)
        if self.bug == "noise_ignores_precision":
            return discrete.discrete_laplace(rng, 1 / Fraction(self.epsilon), batch)
        return discrete.discrete_laplace(rng, _dlap_scale_from_theta(self.theta), batch)

    def event(self) -> dp_event.DiscreteLaplaceDpEvent:
        """DLap(g/eps) at sensitivity g: pure eps-DP (Thm 1)."""
        return self._dlap_event()


class SkellamSecAgg(_Protocol):
    """Dist-RDP-SE (Chowdhury & Zhou (ICLR 2023), Sec. 5, Thm 2): RDP for the server's view.

    eta_i ~ Sk(0, g²/(n eps²)), sum Sk(0, g²/eps²); g = ceil(s eps sqrt(n)),
    tau = ceil((2g/eps) sqrt(log(2/p)) + sqrt(2) log(2/p)) (Prop. 1; `tau_formula="code"` is the
    authors' code's ceil((2g/eps) log(2/p) + sqrt(2) log(2/p)), larger), m = n g + 2 tau + 1.
    Event: SkellamDpEvent(g²/eps², g, g), i.e. Lemma 3 at the actual integer g.
    """

    supported_bugs = ("noise_ignores_precision", "shared_user_noise", "encoding_off_by_one")

    def __init__(
        self,
        epsilon: float,
        n: int,
        p: float,
        s: float = 10.0,
        g: int | None = None,
        tau: int | None = None,
        m: int | None = None,
        tau_formula: str = "paper",
        bug: str | None = None,
    ) -> None:
        eps = check_epsilon(epsilon)
        check_int_at_least(n, 1, "n")
        self.s = check_positive(s, "s")
        check_choice(tau_formula, ("paper", "code"), "tau_formula")

        def default_tau(g_: int) -> int:
            lt = _log_term(p)
            spread = math.sqrt(lt) if tau_formula == "paper" else lt
            return math.ceil(2 * g_ / eps * spread + math.sqrt(2) * lt)

        super().__init__(eps, derive_parameters(eps, n, self.s, g, tau, m, default_tau), bug)

    @property
    def total_variance(self) -> float:
        """The claimed variance of the summed noise, g²/eps²."""
        return self.params.g**2 / self.epsilon**2

    @property
    def user_variance(self) -> float:
        """Variance of one user's noise, g²/(n eps²) with g = `noise_g`."""
        return self.noise_g**2 / (self.params.n * self.epsilon**2)

    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return samplers.skellam(rng, self.user_variance, shape)

    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        return samplers.skellam(rng, k * self.user_variance, batch)

    def event(self) -> SkellamDpEvent:
        g = float(self.params.g)
        return SkellamDpEvent(self.total_variance, g, g)


def kairouz_epsilon_hat(sensitivity: float, sigma: float, n: int) -> float:
    """eps_hat with the sum of n i.i.d. N_Z(0, sigma²) at l2-sensitivity D being ½eps_hat²-CDP:

    eps_hat = min(sqrt(D²/(n sigma²) + xi/2), D/(sqrt(n) sigma) + xi),
    xi = 10 sum_{k=1}^{n-1} exp(-2 pi² sigma² k/(k+1)); requires sigma >= 1/2.
    Kairouz, Liu, Steinke, "The Distributed Discrete Gaussian Mechanism for Federated Learning
    with Secure Aggregation" (ICML 2021), Prop. 13; Chowdhury & Zhou (ICLR 2023), Lemma 4.
    """
    d = check_positive(sensitivity, "sensitivity")
    sig = check_positive(sigma, "sigma")
    if sig < 0.5:
        raise ValueError(f"sigma must be >= 1/2 for the Kairouz et al. bound, got {sigma!r}")
    n = check_int_at_least(n, 1, "n")
    k = np.arange(1, n, dtype=float)
    xi = 10.0 * float(np.sum(np.exp(-2 * math.pi**2 * sig**2 * k / (k + 1))))
    base = d**2 / (n * sig**2)
    return min(math.sqrt(base + xi / 2), math.sqrt(base) + xi)


class DiscreteGaussianSecAgg(_Protocol):
    """Dist-CDP-SE (Chowdhury & Zhou (ICLR 2023), App. F, Thm 4): zCDP for the server's view.

    eta_i ~ N_Z(0, sigma_i²), sigma_i = g/(eps sqrt(n)) taken as the float it rounds to (exact
    sampler at that rational value); g = ceil(s eps sqrt(n)),
    tau = ceil((g/eps) sqrt(2 log(2/p))), m = n g + 2 tau + 1. A sum of discrete Gaussians is
    not a discrete Gaussian: no fast path (run_fast draws the shares too).
    Event: ZCDpEvent(rho = eps_hat²/2) with eps_hat of Kairouz et al. Prop. 13 at the actual
    n and sigma_i (Thm 4's uniform statement is `dpaudit.algorithms.mab.claims.dist_cdp_paper_event`).
    """

    supported_bugs = ("noise_ignores_precision", "shared_user_noise", "encoding_off_by_one")

    def __init__(
        self,
        epsilon: float,
        n: int,
        p: float,
        s: float = 10.0,
        g: int | None = None,
        tau: int | None = None,
        m: int | None = None,
        bug: str | None = None,
    ) -> None:
        eps = check_epsilon(epsilon)
        check_int_at_least(n, 1, "n")
        self.s = check_positive(s, "s")
        params = derive_parameters(
            eps, n, self.s, g, tau, m, lambda g_: math.ceil(g_ / eps * math.sqrt(2 * _log_term(p)))
        )
        super().__init__(eps, params, bug)
        if self.sigma < 0.5:
            raise ValueError(
                f"per-user sigma = g/(eps sqrt(n)) = {self.sigma:.4g} must be >= 1/2 "
                "(Kairouz et al. Prop. 13); increase s or g"
            )

    @property
    def sigma(self) -> float:
        """The claimed per-user sigma_i = g/(eps sqrt(n))."""
        return self.params.g / (self.epsilon * math.sqrt(self.params.n))

    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        sig = self.sigma / self.params.g if self.bug == "noise_ignores_precision" else self.sigma
        return discrete.discrete_gaussian(rng, sig, shape)

    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        return self.user_noise(rng, batch + (k,)).sum(axis=-1)

    def event(self) -> dp_accounting.ZCDpEvent:
        eps_hat = kairouz_epsilon_hat(self.params.g, self.sigma, self.params.n)
        return dp_accounting.ZCDpEvent(rho=eps_hat**2 / 2)


class CentralSecAgg(_PureProtocol):
    """CDP-SE (Chowdhury & Zhou (ICLR 2023), App. H.1, Algs. 2-3, Thm 5): pure eps-DP in the central model.

    R: y_i = x̂_i mod m (no noise); S: any secure sum; A: eta ~ DLap(g/eps) (exact sampler),
    y = (ŷ + eta mod m) mod m, then the usual decoding. g = ceil(eps sqrt(n)),
    tau = ceil((g/eps) log(2/p)), m = n g + 2 tau + 1. The trusted server sees ŷ without noise.
    """

    trust_model = "central"
    supported_bugs = ("noise_ignores_precision", "encoding_off_by_one")

    @property
    def scale(self) -> Fraction:
        """The noise scale g/eps (1/eps under bug="noise_ignores_precision"), exact rational."""
        return Fraction(self.noise_g) / Fraction(self.epsilon)

    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=np.int64)

    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        return np.zeros(batch, dtype=np.int64)

    def finalize(self, rng: np.random.Generator, aggregate: np.ndarray) -> np.ndarray:
        eta = discrete.discrete_laplace(rng, self.scale, np.shape(aggregate))
        return np.mod(aggregate + np.mod(eta, self.params.m), self.params.m)

    def event(self) -> dp_event.DiscreteLaplaceDpEvent:
        """The analyzer's output: DLap(g/eps) at sensitivity g, pure eps-DP (Thm 5)."""
        return self._dlap_event()

    def server_view_event(self) -> dp_accounting.DpEvent:
        """The trusted server sees the exact sum ŷ: no privacy against it."""
        return dp_accounting.NonPrivateDpEvent()


def _dlap_sum_tail_tau(scale: float, n: int, p: float) -> int:
    """Smallest integer t with P(|sum of n i.i.d. DLap(scale)| > t) <= p by the Chernoff bound
    2 min_u exp(n log M(u) - u (t+1)), M(u) = (1-q)² / ((1 - q e^u)(1 - q e^-u)), q = e^(-1/scale).

    Replaces the unspecified constant c of Chowdhury & Zhou's (ICLR 2023) Lemma 5 (Chowdhury & Zhou (ICLR 2023), implementation hint).
    """
    gamma = 1.0 / scale
    log1mq = math.log(-math.expm1(-gamma))

    def log_tail(t: float) -> float:
        def f(u: float) -> float:
            logm = 2 * log1mq - math.log1p(-math.exp(u - gamma)) - math.log1p(-math.exp(-u - gamma))
            return n * logm - u * (t + 1)

        res = optimize.minimize_scalar(f, bounds=(1e-12 * gamma, gamma * (1 - 1e-9)), method="bounded")
        return math.log(2.0) + min(res.fun, 0.0)

    target = math.log(p)
    hi = 1
    while log_tail(hi) > target:
        hi *= 2
    return discrete.bisect_last_true(lambda t: log_tail(t) > target, 0, hi) + 1


class LocalSecAgg(_Protocol):
    """LDP-SE (Chowdhury & Zhou (ICLR 2023), App. H.2, Algs. 4-5, Thm 6): every message is eps-LDP.

    R: y_i = (x̂_i + DLap(g/eps)) mod m (exact sampler); S: the sum mod m; A: the usual decoding.
    g = ceil(eps sqrt(n)); tau: the paper's ceil((c g/eps) sqrt(2 n log(2/p))) has an unspecified
    constant c (Lemma 5); by default tau is the exact Chernoff (1-p)-bound on |sum of n DLap(g/eps)|
    (pass `c` to use the paper's form instead). m = n g + 2 tau + 1.
    """

    trust_model = "local"
    supported_bugs = ("noise_ignores_precision", "shared_user_noise", "encoding_off_by_one")

    def __init__(
        self,
        epsilon: float,
        n: int,
        p: float,
        g: int | None = None,
        tau: int | None = None,
        m: int | None = None,
        c: float | None = None,
        bug: str | None = None,
    ) -> None:
        eps = check_epsilon(epsilon)
        n = check_int_at_least(n, 1, "n")

        def default_tau(g_: int) -> int:
            if c is None:
                return _dlap_sum_tail_tau(g_ / eps, n, check_open_unit(p, "p"))
            cc = check_positive(c, "c")
            return math.ceil(cc * g_ / eps * math.sqrt(2 * n * _log_term(p)))

        super().__init__(eps, derive_parameters(eps, n, 1.0, g, tau, m, default_tau), bug)

    @property
    def scale(self) -> Fraction:
        """The noise scale g/eps (1/eps under bug="noise_ignores_precision"), exact rational."""
        return Fraction(self.noise_g) / Fraction(self.epsilon)

    def user_noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return discrete.discrete_laplace(rng, self.scale, shape)

    def total_noise(self, rng: np.random.Generator, batch: tuple[int, ...], k: int) -> np.ndarray:
        """Sum of k DLap(lambda) = Pólya(k, q) - Pólya(k, q), q = e^(-1/lambda), both drawn exactly (`samplers.polya`)."""
        q = math.exp(-1.0 / float(self.scale))
        return polya_difference(rng, k, q, batch)

    def event(self) -> dp_event.DiscreteLaplaceDpEvent:
        """One user's message: DLap(g/eps) at sensitivity g, eps-LDP (Thm 6)."""
        return self._dlap_event()
