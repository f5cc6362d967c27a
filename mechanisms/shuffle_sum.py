"""P_Shuffle of Chowdhury & Zhou (ICLR 2023, App. D.2, Theorem 3): pure DP via shuffling.

The protocol is Dist-DP-SE's R with the shuffle-model parameters of Thm 3, followed by a relaxed
secure aggregation S = S~ o R~^n simulated by shuffling (Chowdhury & Zhou (ICLR 2023), App. D.2):
  eps~ = eps/4, eps' = eps/2, q = p' = 1/(2T)
  g = ceil(eps' sqrt(n)),  tau = ceil((g/eps') log(2/p')),  m = n g + 2 tau + 1
  R:  x̂_i = floor(x_i g) + Bernoulli(frac),  eta_i = Pólya(1/n, θ) - Pólya(1/n, θ),
      y_i = (x̂_i + eta_i) mod m,  θ = exp(-eps'/g)  (the text prints exp(-eps/g); the proof needs
      the modular sum to be eps'-DP, so dpaudit reads the prime as lost: `theta_reading="proof"`)
  R~: y_i -> d = m - 1 bit messages, the first y_i of them 1 (unary), each passed through binary
      randomized response (flipped with probability `flip`)
  S~: shuffles all k d bits of a release (k <= n users); the server sees the multiset, i.e. the
      number C of ones
  A:  de-biasing: ŷ = round((C - k d f) / (1 - 2f)) mod m (footnote 6: the sum of the decoded
      multiset mod m), then the analyzer of Alg. 1 (underflow correction, division by g).
The paper does not give R~ (it cites Cheu & Yan 2021, whose protocol needs O_eps(n^2.5) messages
per user by Ghazi-Kumar-Manurangsi's count). The unary randomized-response encoding above is this
module's explicit instantiation. Its default flip = q/(2 n d) makes a flip anywhere happen with
probability <= q/2 and a flip-free count decode exactly, so S is q-relaxed correct; but the count
reveals sum_i y_i over the integers, not only mod m, so the eps~-relaxed security the theorem
assumes is *not* established for it. Hence two events (the proof's own accounting, the modular sum plus 2 eps~ of two relaxed-security
simulations, is `dpaudit.algorithms.mab.claims.shuffle_sum_proof_event`):
  `event()`              the claim of Thm 3, pure (eps, 0);
  `server_view_event()`  what this instantiation provably gives: each user's d randomized-response
                         bits are eps0-DP with eps0 = (m-1) log((1-f)/f) (unary vectors of two
                         inputs differ in at most m-1 places), and the shuffled bits are a
                         post-processing of the shuffled user vectors: ShuffledDpEvent(eps0, n)
                         (Feldman-McMillan-Talwar amplification; valid, loose). Audits measure
                         the truth in between.
`run` simulates every bit and the shuffler; `run_fast` draws the count directly,
C = Bin(S, 1-f) + Bin(k d - S, f) with S = sum_i y_i: the same law of the server's view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import dp_accounting
import numpy as np
from dp_accounting import dp_event

from dpaudit.accounting.events import EpsilonDeltaDpEvent, ShuffledDpEvent
from dpaudit.mechanisms.secagg import (
    analyze,
    check_rewards,
    derive_parameters,
    encode,
    polya_difference,
    pure_dp_tau,
)
from dpaudit.mechanisms.shuffle import shuffle
from dpaudit.validation import check_choice, check_epsilon, check_int_at_least, check_open_unit

__all__ = ["THETA_READINGS", "ShuffleSum", "ShuffleSumRelease"]

THETA_READINGS = ("proof", "printed")  # θ = exp(-eps'/g) as the proof of Thm 3 needs, or exp(-eps/g) as printed


@dataclass(frozen=True)
class ShuffleSumRelease:
    """One protocol run per batch entry.

    messages: the users' y_i in Z_m (shape (*batch, k));
    bits: the shuffled bit messages (per-message path only, else None), shape (*batch, k d);
    ones: the number of ones in the shuffled multiset, the server's whole view, shape (*batch,);
    aggregate: the decoded modular sum ŷ; estimate: z = A(ŷ), the private sum of rewards.
    """

    messages: np.ndarray
    bits: np.ndarray | None
    ones: np.ndarray
    aggregate: np.ndarray
    estimate: np.ndarray


class ShuffleSum:
    """P_Shuffle (Chowdhury & Zhou (ICLR 2023), Thm 3) for one release per batch entry; module docstring.

    Give the horizon T (q = p' = 1/(2T)) or p' directly; g, tau, m and the flip probability are
    overridable. theta_reading: "proof" (θ = exp(-eps'/g), default: what the proof of Thm 3 needs,
    the modular sum eps'-DP) or "printed" (θ = exp(-eps/g), as App. D.2 prints it).
    """

    trust_model = "shuffle"

    def __init__(
        self,
        epsilon: float,
        n: int,
        horizon: int | None = None,
        p: float | None = None,
        g: int | None = None,
        tau: int | None = None,
        m: int | None = None,
        flip: float | None = None,
        theta_reading: str = "proof",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        n = check_int_at_least(n, 1, "n")
        if (horizon is None) == (p is None):
            raise ValueError("give exactly one of horizon (p' = 1/(2T)) and p")
        if horizon is not None:
            p = 1.0 / (2 * check_int_at_least(horizon, 1, "horizon"))
        self.p = check_open_unit(p, "p")
        self.theta_reading = check_choice(theta_reading, THETA_READINGS, "theta_reading")
        self.eps_tilde = self.epsilon / 4
        self.eps_prime = self.epsilon / 2
        self.params = derive_parameters(
            self.eps_prime, n, 1.0, g, tau, m, lambda g_: pure_dp_tau(g_, self.eps_prime, self.p)
        )
        m = self.params.m
        self.d = m - 1
        if int(n) * int(self.d) > 2**53:  # Python ints: exact at any size
            raise ValueError(
                f"n*d = {int(n) * int(self.d)} bit messages exceed 2^53: their count of ones is not exact "
                f"in float64 (decode) (n = {n}, m = {m})"
            )
        if flip is None:
            flip = self.p / (2 * n * self.d)
        if not isinstance(flip, (int, float)) or isinstance(flip, bool):
            raise TypeError(f"flip must be a real number in [0, 1/2), got {flip!r}")
        if not 0 <= flip < 0.5:
            raise ValueError(f"flip must lie in [0, 1/2), got {flip!r}")
        self.flip = float(flip)

    def __repr__(self) -> str:
        p = self.params
        return (
            f"ShuffleSum(epsilon={self.epsilon!r}, n={p.n}, g={p.g}, tau={p.tau}, m={p.m}, "
            f"flip={self.flip!r}, theta_reading={self.theta_reading!r})"
        )

    @property
    def theta(self) -> float:
        """The Pólya parameter of the shares: exp(-eps'/g) (theta_reading="proof": the prime read as lost) or exp(-eps/g) (as printed)."""
        eps = self.eps_prime if self.theta_reading == "proof" else self.epsilon
        return math.exp(-eps / self.params.g)

    # ---- guarantees
    def event(self) -> EpsilonDeltaDpEvent:
        """The claim of Thm 3: pure (eps, 0)-DP for the shuffled view (LLR <= 2 eps~ + eps')."""
        return EpsilonDeltaDpEvent(self.epsilon, 0.0)

    def modular_sum_event(self) -> dp_event.DiscreteLaplaceDpEvent:
        """What (sum_i y_i) mod m reveals: DLap(-1/log θ) at sensitivity g (eps' under theta_reading="proof",
        eps under "printed"); SIM(Sigma(y)) in the proof of Thm 3."""
        g = self.params.g
        return dp_event.DiscreteLaplaceDpEvent(noise_parameter=-math.log(self.theta), sensitivity=g)

    def local_epsilon(self) -> float:
        """eps0 = (m-1) log((1-f)/f): one user's d randomized-response bits, unary inputs differing
        in at most m-1 places (inf when flip = 0)."""
        f = self.flip
        return math.inf if f == 0 else self.d * math.log((1 - f) / f)

    def server_view_event(self) -> dp_accounting.DpEvent:
        """What this instantiation provably gives for the shuffled bits (module docstring)."""
        eps0 = self.local_epsilon()
        if not math.isfinite(eps0):
            return dp_accounting.NonPrivateDpEvent()
        return ShuffledDpEvent(eps0, self.params.n)

    # ---- protocol steps
    def randomize(self, rng: np.random.Generator, x: Any) -> np.ndarray:
        """R: y_i = (x̂_i + Pólya(1/n, θ) - Pólya(1/n, θ)) mod m (exact Pólya sampler)."""
        arr = check_rewards(x, self.params.n)
        r = Fraction(1, self.params.n)  # exact 1/n: the n shares sum to exactly Pólya(1, θ)
        eta = polya_difference(rng, r, self.theta, arr.shape)
        return np.mod(encode(rng, arr, self.params.g) + eta, self.params.m)

    def bit_messages(self, rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
        """R~: each y_i as d = m-1 unary bits (y_i ones), each flipped with probability `flip`;
        shape (*batch, k, d), int8."""
        unary = (np.arange(self.d) < np.asarray(y)[..., None]).astype(np.int8)
        flips = rng.random(unary.shape) < self.flip
        return unary ^ flips.astype(np.int8)

    def shuffle_bits(self, rng: np.random.Generator, bits: np.ndarray) -> np.ndarray:
        """S~: a uniform permutation of all k d bits of each release, shape (*batch, k d)."""
        batch = bits.shape[:-2]
        flat = bits.reshape((-1, bits.shape[-2] * bits.shape[-1]))
        return shuffle(rng, flat).reshape(batch + (flat.shape[-1],))

    def decode(self, ones: np.ndarray, k: int) -> np.ndarray:
        """ŷ = round((C - k d f)/(1 - 2f)) mod m: the de-biased count of ones, mod m."""
        f, total = self.flip, k * self.d
        est = np.rint((np.asarray(ones, dtype=float) - total * f) / (1 - 2 * f)).astype(np.int64)
        return np.mod(est, self.params.m)

    def analyze(self, aggregate: np.ndarray) -> np.ndarray:
        """A: z = (ŷ - m)/g if ŷ > n g + tau else ŷ/g (Alg. 1 lines 28-30)."""
        return analyze(aggregate, self.params)

    def run(self, rng: np.random.Generator, x: Any) -> ShuffleSumRelease:
        """Message by message: R, then R~ for every user, the shuffler, the de-biasing analyzer."""
        y = self.randomize(rng, x)
        bits = self.shuffle_bits(rng, self.bit_messages(rng, y))
        ones = bits.sum(axis=-1, dtype=np.int64)
        agg = self.decode(ones, y.shape[-1])
        return ShuffleSumRelease(y, bits, ones, agg, self.analyze(agg))

    def run_fast(self, rng: np.random.Generator, x: Any) -> ShuffleSumRelease:
        """Same law of the server's view: C = Bin(S, 1-f) + Bin(k d - S, f), S = sum_i y_i."""
        y = self.randomize(rng, x)
        s = y.sum(axis=-1, dtype=np.int64)
        total = y.shape[-1] * self.d
        ones = rng.binomial(s, 1 - self.flip) + rng.binomial(total - s, self.flip)
        ones = np.asarray(ones, dtype=np.int64)
        agg = self.decode(ones, y.shape[-1])
        return ShuffleSumRelease(y, None, ones, agg, self.analyze(agg))
