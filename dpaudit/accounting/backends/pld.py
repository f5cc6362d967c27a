"""The `pld` accountant: dp-accounting's privacy loss distributions, pessimistic, with a cost check."""

from __future__ import annotations

import math

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpaudit.accounting import randomized_response
from dpaudit.accounting.backends.base import (
    BRANCH_PLD_CACHE_LIMIT,
    CACHE_LIMIT,
    PLD_CACHE_LIMIT,
    Backend,
    Keyed,
    cached,
)
from dpaudit.accounting.binomial import MAX_TRIALS
from dpaudit.accounting.binomial_loss import default_interval, loss_span, smallest_interval, windows_overlap
from dpaudit.accounting.curves import (
    MAX_ENUMERATED,
    ULP,
    binomial_enumerated,
    binomial_pld,
    gaussian_delta,
    gaussian_epsilon,
    skellam_pld,
)
from dpaudit.accounting.events import (
    BinomialDpEvent,
    DiscreteGaussianDpEvent,
    EpsilonDeltaDpEvent,
    KaryRandomizedResponseDpEvent,
    SkellamDpEvent,
)
from dpaudit.accounting.leaves import nonprivate, pure_epsilon, rr_parameters
from dpaudit.validation import check_positive

__all__ = ["PldBackend"]

# dp-accounting composes a sparse PLD of s points k times by k - 1 quadratic convolutions when
# s^k <= 1000 (so a one-point PLD, s^k = 1, loops k times: 1e18 releases never finish)
_SPARSE_COMPOSITIONS = 8


def _dg_truncation(leaf: DiscreteGaussianDpEvent) -> float:
    """dp-accounting's truncation of the discrete Gaussian noise to [-T, T], T = ceil(11.6 sigma) (mass
    outside below 1e-30), widened to the shift's half: it refuses a T below sensitivity/2."""
    return max(math.ceil(11.6 * leaf.sigma), math.ceil(leaf.sensitivity / 2))


def _dense(pld, count: int):
    """`pld` with dense PMFs when composing it `count` times sparsely would loop (more than
    `_SPARSE_COMPOSITIONS` times); dense self-composition is one FFT whatever the count."""
    if count <= _SPARSE_COMPOSITIONS or all(
        isinstance(p, pld_pmf.DensePLDPmf) for p in (pld._pmf_remove, pld._pmf_add)
    ):
        return pld
    remove = pld._pmf_remove.to_dense_pmf()
    add = None if pld._symmetric else pld._pmf_add.to_dense_pmf()
    return pld_lib.PrivacyLossDistribution(remove, add)


def _loss_grid(leaf) -> bool:
    """A binomial count too wide to enumerate, accounted on a grid of losses (`binomial_loss`)."""
    return (
        isinstance(leaf, BinomialDpEvent)
        and leaf.sensitivity <= leaf.trials <= MAX_TRIALS
        and not binomial_enumerated(leaf.trials, leaf.probability, leaf.sensitivity)
    )


class PldBackend(Backend):
    """Privacy loss distributions (dp-accounting's, pessimistic, discretisation interval
    `value_discretization_interval`): each distinct leaf's PLD is built once and self-composed
    `count` times (for randomized response too, which dp-accounting's PLD accountant does not
    do), then distinct leaves are composed. k-ary randomized response: `randomized_response.pld`,
    from eps0 and k (dp-accounting's reads the rounded noise parameter). Binomial counts too wide to
    enumerate: `binomial_loss.binomial_loss_pld`, on a grid of losses (`branch_vdi`)."""

    name = "pld"

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        super().__init__()
        self.vdi = check_positive(value_discretization_interval, "value_discretization_interval")
        self._leaf_pld = cached(self._composed_leaf_pld, PLD_CACHE_LIMIT)
        self._gaussian_pld = cached(
            lambda mu, vdi: pld_lib.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=vdi),
            PLD_CACHE_LIMIT,
        )
        # composed PLD per branch, keyed by the branch's (leaf key, count) pairs: a later
        # composition changes a count or adds a leaf, hence the key, so a stale PLD is never read
        self._branch_pld = cached(lambda keyed: self._compose_branch(*keyed.value), BRANCH_PLD_CACHE_LIMIT)
        # the cost check's FFT length per (leaf key, count, interval): dp-accounting's tail bounds
        # take seconds on a wide PMF, and every query of any accountant asks for the check
        self._points = cached(
            lambda keyed: self._composed_points(
                self.leaf_pld(keyed.key[0], keyed.value, 1, keyed.key[2]), keyed.key[1]
            ),
            CACHE_LIMIT,
        )

    # dp-accounting's Laplace PLD ("connect the dots") loses a relative ~1e-17/eps0 of delta (eps0 = 1e-8:
    # 3.6e-9 too low; 1e-17: delta 0); below this eps0 the binary randomized response of the same eps0,
    # which dominates every eps0-DP release (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1), is used
    MIN_LAPLACE_EPSILON = 1e-3

    # dp-accounting's PLDs evaluate e^loss (and e^interval when building a Laplace PLD): a release
    # whose privacy loss reaches beyond this overflows (OverflowError) or reads as inf; it is
    # accounted as non-private (epsilon inf, delta 1), which keeps calibration's searches going
    MAX_LOSS = 700.0

    # relative margin on the PLD's largest loss, its epsilon at delta 0 (see branch_epsilon)
    ZERO_DELTA_MARGIN = 1e-12

    def unsupported_reason(self, leaf):
        if nonprivate(leaf):
            return None
        if isinstance(
            leaf,
            (
                dp_accounting.GaussianDpEvent,
                dp_accounting.LaplaceDpEvent,
                dp_event.DiscreteLaplaceDpEvent,
                dp_accounting.RandomizedResponseDpEvent,
                KaryRandomizedResponseDpEvent,
                EpsilonDeltaDpEvent,
            ),
        ):
            return None
        if isinstance(leaf, DiscreteGaussianDpEvent):
            if not float(leaf.sensitivity).is_integer():
                return "the discrete Gaussian PLD needs an integer sensitivity"
            r = leaf.sensitivity / leaf.sigma
            if math.isinf(r * r):  # dp-accounting divides by sigma^2, which underflows to 0
                return (
                    "sigma is too small for dp-accounting's discrete Gaussian PLD (sensitivity/sigma squared overflows)"
                )
            if 2 * _dg_truncation(leaf) > MAX_ENUMERATED:
                return f"the discrete Gaussian PLD enumerates ±11.6 sigma outcomes, here more than {MAX_ENUMERATED}"
            return None
        if isinstance(leaf, BinomialDpEvent):
            if leaf.sensitivity > leaf.trials or binomial_enumerated(leaf.trials, leaf.probability, leaf.sensitivity):
                return None
            if leaf.trials > MAX_TRIALS:
                return (
                    f"more than {MAX_ENUMERATED} outcomes to enumerate, and the loss grid needs counts exact in "
                    "doubles (trials <= 2^52)"
                )
            if not windows_overlap(leaf.trials, leaf.probability, leaf.sensitivity):
                return (
                    "its two laws are disjoint within ±40 sd (delta 1 up to 1e-340; the approx accountant's is exact)"
                )
            if loss_span(leaf.trials, leaf.probability, leaf.sensitivity) > self.MAX_LOSS:
                return f"its privacy losses within ±40 sd reach beyond {self.MAX_LOSS:g}"
            return None
        if isinstance(leaf, SkellamDpEvent):
            if not (leaf.l1_sensitivity == leaf.l2_sensitivity and float(leaf.l1_sensitivity).is_integer()):
                return "the Skellam PLD is implemented for a scalar integer shift (l1 = l2, an integer) only"
            if 2 * (15 * math.sqrt(leaf.variance) + 50) + leaf.l1_sensitivity > MAX_ENUMERATED:
                return f"the Skellam PLD enumerates ±(15 sd + 50) outcomes, here more than {MAX_ENUMERATED}"
            return None
        if isinstance(leaf, dp_accounting.PoissonSampledDpEvent) and isinstance(
            leaf.event, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)
        ):
            return None
        return "no privacy loss distribution is implemented for it"

    def _single(self, leaf, v: float):
        """PLD of one release of a non-Gaussian leaf (Gaussians are merged in `branch_pld`)."""
        if isinstance(leaf, dp_accounting.LaplaceDpEvent) and 1.0 / leaf.noise_multiplier < self.MIN_LAPLACE_EPSILON:
            p = randomized_response.pld(1.0 / leaf.noise_multiplier, 2, v)  # dominates every eps0-DP release
        elif isinstance(leaf, dp_accounting.LaplaceDpEvent):
            p = pld_lib.from_laplace_mechanism(leaf.noise_multiplier, value_discretization_interval=v)
        elif isinstance(leaf, dp_event.DiscreteLaplaceDpEvent):
            p = pld_lib.from_discrete_laplace_mechanism(
                leaf.noise_parameter, sensitivity=int(leaf.sensitivity), value_discretization_interval=v
            )
        elif isinstance(leaf, (KaryRandomizedResponseDpEvent, dp_accounting.RandomizedResponseDpEvent)):
            rr = rr_parameters(leaf)  # from eps0 and k, never through the rounded noise parameter
            if rr is None:
                return pld_lib.identity(v)
            p = randomized_response.pld(*rr, v)
        elif isinstance(leaf, EpsilonDeltaDpEvent):
            p = pld_lib.from_privacy_parameters(
                pld_common.DifferentialPrivacyParameters(leaf.epsilon, leaf.delta), value_discretization_interval=v
            )
        elif isinstance(leaf, DiscreteGaussianDpEvent):
            p = pld_lib.from_discrete_gaussian_mechanism(
                leaf.sigma,
                sensitivity=int(leaf.sensitivity),
                truncation_bound=_dg_truncation(leaf),
                value_discretization_interval=v,
            )
        elif isinstance(leaf, SkellamDpEvent):
            p = skellam_pld(leaf.variance, int(leaf.l1_sensitivity), v)
        elif isinstance(leaf, BinomialDpEvent):
            p = binomial_pld(leaf.trials, leaf.probability, leaf.sensitivity, v)
        elif isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
            inner = leaf.event
            if isinstance(inner, dp_accounting.GaussianDpEvent):
                p = pld_lib.from_gaussian_mechanism(
                    inner.noise_multiplier, value_discretization_interval=v, sampling_prob=leaf.sampling_probability
                )
            else:
                p = pld_lib.from_laplace_mechanism(
                    inner.noise_multiplier, value_discretization_interval=v, sampling_prob=leaf.sampling_probability
                )
        else:  # pragma: no cover - guarded by unsupported_reason
            raise AssertionError(leaf)
        return p

    def _composed_leaf_pld(self, keyed: Keyed, count: int, vdi: float):
        one = self._single(keyed.value, vdi) if count == 1 else self._leaf_pld(keyed, 1, vdi)
        return _dense(one, count).self_compose(count) if count > 1 else one

    def leaf_pld(self, key, leaf, count: int, vdi: float):
        """The PLD of `count` releases of a leaf at interval `vdi`, cached by the leaf's key."""
        return self._leaf_pld(Keyed(key, leaf), count, vdi)

    # A leaf PLD spans privacy losses in [-eps0, eps0]; keep it to at most this many points by
    # coarsening the (still pessimistic) discretisation of branches with very large eps0.
    _MAX_POINTS = 20_000

    def branch_vdi(self, branch, leaves) -> float:
        """The branch's interval: `value_discretization_interval`, coarsened for a very large eps0. Binomial
        counts on the loss grid widen it to their `smallest_interval`; a branch of such counts alone is
        refined to their `default_interval` (min(1e-5, mu/200): each composition adds up to one interval to
        the losses, and their epsilons are often far below 1e-2) when the composition stays within
        `MAX_POINTS_COMPOSED`."""
        eps0 = max((pure_epsilon(leaves[k]) or 0.0 for k in branch), default=0.0)
        standard = max(self.vdi, eps0 / self._MAX_POINTS) if math.isfinite(eps0) else self.vdi
        grid = [leaves[k] for k in branch if _loss_grid(leaves[k])]
        if not grid:
            return standard
        floor = max(smallest_interval(g.trials, g.probability, g.sensitivity) for g in grid)
        coarse = max(standard, floor)
        if len(grid) < len(branch):
            return coarse
        fine = max(min([standard] + [default_interval(g.trials, g.probability, g.sensitivity) for g in grid]), floor)
        if fine < coarse and self._cost_at(branch, leaves, fine) is None:
            return fine
        return coarse

    # Self-composing a PLD is an FFT over the support dp-accounting's own tail bounds give the
    # result; on 2 cores it takes ~1 s per 2.5 million points of it (measured: 1e4 Laplace
    # releases of eps0 = 0.1 at interval 1e-4, 4.8e6 points, 6 s; 3000 binary randomized
    # responses of eps0 = log 3, 1.4e7 points, 19 s). Beyond this many points the accountant refuses.
    MAX_POINTS_COMPOSED = 2_500_000

    # dp-accounting self-composes a dense PLD as ifft(fft(p)^count): a Fourier coefficient off by an
    # ulp is off by count ulp after the power, so beyond this count a leaf is refused
    MAX_COMPOSITIONS = 10**9

    @classmethod
    def _composed_points(cls, pld, count: int) -> int:
        """Length of the FFT that `pld.self_compose(count)` runs (dp-accounting's
        `compute_self_convolve_bounds`, tail mass 1e-15 as in `self_compose`), summed over the
        PLD's remove and add distributions. The composed support is at least as wide as one PLD's:
        one wider than `MAX_POINTS_COMPOSED` is counted as it is, without the bounds (which take
        seconds on tens of millions of points)."""
        total = 0
        for pmf in {id(p): p for p in (pld._pmf_remove, pld._pmf_add)}.values():
            keys = list(getattr(pmf, "_loss_probs", {}))
            width = max(keys) - min(keys) + 1 if keys else pmf.to_dense_pmf()._probs.size
            if width > cls.MAX_POINTS_COMPOSED:
                total += width
                continue
            probs = pmf.to_dense_pmf()._probs
            lo, hi = pld_common.compute_self_convolve_bounds(probs, count, 1e-15)
            total += hi - lo + 1
        return total

    @staticmethod
    def _gaussian_width(mu: float) -> float:
        """Privacy-loss range of a Gaussian PLD with mu = sensitivity/sigma, tails cut at 10 sd:
        mu^2 + 20 mu."""
        return mu * mu + 20 * mu

    def cost_reason(self, branch, leaves):
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest or math.isinf(mu) or any(self._infinite(leaves[k]) for k in branch):
            return None  # analytic Gaussian, or non-private: nothing is composed
        return self._cost_at(branch, leaves, self.branch_vdi(branch, leaves))

    def _cost_at(self, branch, leaves, vdi: float):
        """`cost_reason` of a private branch at interval `vdi`."""
        mu, rest = self._gaussian_mu(branch, leaves)
        costs = {}
        for k, c in rest.items():
            leaf = leaves[k]
            if c > self.MAX_COMPOSITIONS:
                return leaf, (
                    f"{c:.3g} releases: self-composing a PLD raises its Fourier transform to the power "
                    f"of the count, whose round-off grows with it (beyond {self.MAX_COMPOSITIONS:.0e}: a "
                    "delta of 0 was read at 1e18)"
                )
            if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
                inner = leaf.event
                width = (
                    self._gaussian_width(1.0 / inner.noise_multiplier)
                    if isinstance(inner, dp_accounting.GaussianDpEvent)
                    else 2.0 / inner.noise_multiplier
                )
                if width / vdi > self.MAX_POINTS_COMPOSED:  # even one such PLD would be too large to build
                    costs[k] = width / vdi
                    continue
            costs[k] = self._points(Keyed((k, c, vdi), leaf)) if c > 1 else 0.0
        total = math.fsum(costs.values()) + (self._gaussian_width(mu) / vdi if mu > 0 else 0.0)
        if total <= self.MAX_POINTS_COMPOSED:
            return None
        worst = max(costs, key=lambda k: costs[k]) if costs else next(iter(rest))
        return leaves[worst], (
            f"composing these privacy loss distributions would take too long ({total:.3g} points > "
            f"{self.MAX_POINTS_COMPOSED:g}; {rest[worst]} releases of this one at "
            f"value_discretization_interval={vdi:g})"
        )

    @classmethod
    def _infinite(cls, leaf) -> bool:
        """Non-private (a binomial count shifted beyond its trials too), or with an epsilon beyond
        `MAX_LOSS` (pure, or an (epsilon, delta) box)."""
        if isinstance(leaf, BinomialDpEvent) and leaf.sensitivity > leaf.trials:
            return True  # the shifted and unshifted counts have disjoint supports: delta = 1
        pe = leaf.epsilon if isinstance(leaf, EpsilonDeltaDpEvent) else pure_epsilon(leaf)
        return nonprivate(leaf) or (pe is not None and pe > cls.MAX_LOSS)

    @staticmethod
    def _gaussian_mu(branch, leaves) -> tuple[float, dict]:
        """Gaussian leaves compose exactly into one Gaussian: mu^2 = sum count / nm^2
        (Dong, Roth, Su 2022, Cor. 3.3); returns mu and the remaining leaves.

        mu is summed relative to the largest 1/nm, so neither a square that underflows (1/nm ~ 1e-300,
        where mu = 0 would claim epsilon 0) nor one that overflows loses it; rounded up by 4 ulp."""
        inverses, rest = [], {}
        for k, c in branch.items():
            leaf = leaves[k]
            if isinstance(leaf, dp_accounting.GaussianDpEvent):
                inverses.append((1.0 / leaf.noise_multiplier, c))
            else:
                rest[k] = c
        top = max((inv for inv, _ in inverses), default=0.0)
        if top == 0.0 or math.isinf(top):
            return top, rest
        total = math.fsum(c * (inv / top) * (inv / top) for inv, c in inverses)
        return top * math.sqrt(total) * (1 + 4 * ULP), rest

    def branch_pld(self, branch, leaves):
        """The branch's composed PLD (None when a leaf is non-private), built once per branch:
        repeated epsilon/delta queries cost only the query."""
        return self._branch_pld(Keyed(frozenset(branch.items()), (branch, leaves)))

    def _compose_branch(self, branch, leaves):
        mu, rest = self._gaussian_mu(branch, leaves)
        if math.isinf(mu) or any(self._infinite(leaves[k]) for k in branch):
            return None
        vdi = self.branch_vdi(branch, leaves)
        pld = None
        if mu > 0:
            pld = self._gaussian_pld(mu, vdi)
        for k, c in rest.items():
            p = self.leaf_pld(k, leaves[k], c, vdi)
            pld = p if pld is None else pld.compose(p)
        return pld

    def branch_epsilon(self, branch, leaves, delta):
        """Gaussian-only branches: the exact analytic curve (Balle, Wang, "Improving the Gaussian
        Mechanism for Differential Privacy", ICML 2018, Thm 8); otherwise the composed pessimistic PLD's
        epsilon at `delta` less the FFT round-off allowance (a single release at delta = 0: its largest
        loss, raised by `ZERO_DELTA_MARGIN`; inf when no delta is left).
        """
        if not branch:
            return 0.0
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest:  # exact analytic profile, no discretisation (Balle, Wang 2018)
            return gaussian_epsilon(mu, delta) if delta > 0 else math.inf
        pld = self.branch_pld(branch, leaves)
        if pld is None:
            return math.inf
        single = sum(branch.values()) == 1  # one release: no composition, no FFT round-off to allow for
        budget = delta - (0.0 if single else self.fft_slack(pld))
        if budget > 0:
            return max(0.0, float(pld.get_epsilon_for_delta(budget)))
        if single and delta == 0:
            # the largest loss of the pessimistic PLD (inf where it keeps mass at infinity), raised by a relative
            # 1e-12: the grid loss k * interval and the losses behind it are computed in doubles, a few ulp low
            # (Laplace scale 4 reads 0.24999999999999992 for its exact 0.25)
            return max(0.0, float(pld.get_epsilon_for_delta(0.0)) * (1.0 + self.ZERO_DELTA_MARGIN))
        return math.inf

    def branch_delta(self, branch, leaves, epsilon):
        """Gaussian-only branches: the exact analytic curve (Balle, Wang, ICML 2018, Thm 8); otherwise the
        composed pessimistic PLD's delta at `epsilon` plus the FFT round-off allowance, capped at 1.
        """
        if not branch:
            return 0.0
        mu, rest = self._gaussian_mu(branch, leaves)
        if not rest:
            return gaussian_delta(mu, epsilon)
        pld = self.branch_pld(branch, leaves)
        if pld is None:
            return 1.0
        slack = self.fft_slack(pld) if sum(branch.values()) > 1 else 0.0  # one release: no FFT ran
        return min(1.0, float(pld.get_delta_for_epsilon(epsilon)) + slack)

    @staticmethod
    def fft_slack(pld) -> float:
        """A bound on the FFT round-off in a composed PLD's delta: each of its L probabilities is
        off by a few ulp (entries down to -2.6 ulp are seen), so the tail sums behind delta are off
        by at most 4 ulp * L. Without it, 1000 releases of (1, 0)-DP at interval 1e-2 read
        delta = 1e-12 where the exact value is 1.0124e-12 (KOV 2015 Thm 3.3)."""
        size = 0
        for pmf in {id(q): q for q in (pld._pmf_remove, pld._pmf_add)}.values():
            probs = getattr(pmf, "_probs", None)  # dense; a sparse one holds a dict of losses
            keys = list(getattr(pmf, "_loss_probs", {}))
            size += probs.size if probs is not None else (max(keys) - min(keys) + 1 if keys else 0)
        return 4 * ULP * size
