"""Privacy of DP-ConSE (Li, Shi, Simchi-Levi (ICML 2024)): the paper's claim and a component-level corrected accounting.

Claim (Theorem 3.5, App. A.5.4): DP-ConSE is (ε, 1/n)-private (anticipating DP on the actions after t and
DP of the CATE vector), with ε/2 for the phase-1 releases and ε/2 for the phase-2 releases.

Corrected (dpaudit's analysis of Li, Shi, Simchi-Levi (ICML 2024), Alg. 2 and the proof of Thm 3.5 in App. A.5.4, with
coupling arguments written out here): for each
neighbour kind the worst unit t touches these releases, composed sequentially:
- reward: one Laplace-noised mean (an epoch mean or Δ̂) with sensitivity 1/N, N ≥ ν·(length): ε/(2ν);
- context, phase 1: two epoch lengths (the unit leaves type j, joins type k; coupling R'^j_e = R^j_e ∓ 1
  costs ε/2 each), the two affected epoch means (ε/(2ν) each), and the M RCT lengths T_1..T_M, all
  centred on the same ⌈T_min⌉ which moves by one: M·λ(c) with λ the exact Lap+ unit-shift loss;
- context, phase 2: two RCT end points (ε/2 each) and the two estimates, each with its mean change
  (ε/(2ν)·T/(T-1)) and the mismatch of the Laplace scales 2/(εT) vs 2/(ε(T-1)) (log(T/(T-1)) + η, failing
  with probability exp(-η T));
- "both" is the worse of the two context cases (the reward rides with the unit into type k's mean).
δ collects the conditioning events: per-arm counts N ≥ ν·(length) in the touched releases, T_j ≥ T_lo,
and Lap+ draws of 0 (where the unit coupling breaks). All are computed exactly from the binomial and Lap+
laws; the counts condition assumes every type has at least T_j phase-2 arrivals (Assumption 1.1 regime).

That component accounting holds at a δ far above the claim's 1/n. The declaration's `corrected` is instead the
whole output at δ = 1/n (`whole_algorithm_guarantees`): per neighbour kind, a mixture or dominating-pair
bound of what it changes, over every T_min and position, composed exactly where it composes; the worst kind.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import dp_accounting
import numpy as np
from scipy import signal, sparse, stats

from dpaudit.accounting.events import EpsilonDeltaDpEvent
from dpaudit.accounting.search import first_accepted_doubling, smallest_accepted
from dpaudit.algorithms.conse.algorithm import ConSEParams, epoch_schedule
from dpaudit.privacy import Guarantee, Privacy
from dpaudit.validation import check_epsilon, check_int_at_least, check_open_unit, check_positive

__all__ = [
    "cate_mixture_delta",
    "cate_mixture_epsilon",
    "composed_delta",
    "conse_privacy",
    "context_phase1_epsilon",
    "context_phase2_epsilon",
    "context_phase2_side_deltas",
    "context_phase2_view_epsilon",
    "count_shortfall_probability",
    "lap_plus_pmf",
    "lap_plus_shift_loss",
    "laplace_shift_delta",
    "rct_lengths_view_delta",
    "rct_lengths_view_epsilon",
    "reward_phase1_epsilon",
    "reward_phase2_epsilon",
    "whole_algorithm_guarantees",
]


def lap_plus_pmf(epsilon: float, centre: float, values: np.ndarray) -> np.ndarray:
    """P(Lap+_ε(m) = v) = q^{|v-c|} (1-q) / (1 + q - q^{c+1}), c = ⌈m⌉, q = e^{-ε/2}, v ≥ 0 (App. A.4)."""
    q = math.exp(-epsilon / 2)
    c = math.ceil(centre)
    v = np.asarray(values)
    p = q ** np.abs(v - c) * (1 - q) / (1 + q - q ** (c + 1))
    return np.where(v >= 0, p, 0.0)


def lap_plus_shift_loss(epsilon: float, centre: int) -> float:
    """max_v |log P_c(v)/P_{c+1}(v)| = ε/2 + log(1 + q^{c+1}(1-q)/(1+q-q^{c+1})), q = e^{-ε/2}."""
    check_epsilon(epsilon)
    c = check_int_at_least(centre, 0, "centre")
    q = math.exp(-epsilon / 2)
    return epsilon / 2 + math.log1p(q ** (c + 1) * (1 - q) / (1 + q - q ** (c + 1)))


def count_shortfall_probability(epsilon: float, centre: float, fraction: float, base: float) -> float:
    """P(Bin(L, 1/2) < fraction·base) for L ~ Lap+_ε(centre): a fair-coin arm count falls short.

    Summed exactly over L up to where the Lap+ tail is below 1e-300; the remaining tail is added whole.
    """
    c = math.ceil(centre)
    width = int(2 * 700 / epsilon) + 1
    lengths = np.arange(0, c + width + 1)
    pmf = lap_plus_pmf(epsilon, centre, lengths)
    need = math.ceil(fraction * base)
    short = stats.binom.cdf(need - 1, lengths, 0.5)
    return float(min(1.0, np.sum(pmf * short) + max(0.0, 1.0 - pmf.sum())))


def _basic_composition(event: dp_accounting.DpEvent, leaf: Callable[[dp_accounting.DpEvent], float]) -> float:
    """Sum of leaf(e) over the leaves e of Composed / SelfComposed events (basic composition)."""
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return sum(_basic_composition(e, leaf) for e in event.events)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return event.count * _basic_composition(event.event, leaf)
    return leaf(event)


def _pure_epsilon(event: dp_accounting.DpEvent) -> float:
    """Sum of the pure-ε parts of a composed event built by `conse_privacy`."""

    def leaf(e: dp_accounting.DpEvent) -> float:
        if isinstance(e, EpsilonDeltaDpEvent):
            return e.epsilon
        raise ValueError(f"event {e!r} is not one conse_privacy builds")

    return _basic_composition(event, leaf)


def composed_delta(event: dp_accounting.DpEvent) -> float:
    """δ of a corrected ConSE event by basic composition: the sum of its (ε, δ) components' δ."""
    return _basic_composition(event, lambda e: e.delta if isinstance(e, EpsilonDeltaDpEvent) else 0.0)


def _largest_fraction(shortfall, target: float) -> tuple[float, float]:
    """The largest ν on a 0.01 grid in (0, 1] whose shortfall probability is ≤ target (else ν = 0.01)."""
    grid = np.round(np.arange(1.0, 0.0, -0.01), 2)
    for nu in grid:
        p = shortfall(nu)
        if p <= target:
            return float(nu), p
    return 0.01, shortfall(0.01)


def _phase1_events(
    params: ConSEParams, n: int, target: float
) -> tuple[EpsilonDeltaDpEvent, EpsilonDeltaDpEvent, float, float]:
    """(epoch length event, epoch mean event, ν, count-shortfall probability) of `conse_privacy`."""
    eps = params.dp_epsilon
    # phase-1 epochs: the touched epoch may be any e that fits in phase 1; R_1 is the shortest
    r_1 = float(epoch_schedule(params, n, 1)[0][0])
    centre = params.length_centre * r_1
    nu_e, epoch_short = _largest_fraction(lambda nu: count_shortfall_probability(eps, centre, nu, r_1), target)
    epoch_zero = float(lap_plus_pmf(eps, centre, np.array([0]))[0])
    # an epoch mean: Laplace scale 2/(ε R_e), sensitivity 1/N ≤ 1/(ν R_e) unless its arm count falls short
    mean_event = EpsilonDeltaDpEvent(eps / (2 * nu_e), epoch_short)
    # an epoch length: coupling R' = R ∓ 1 of a two-sided geometric with q = e^{-ε/2}; breaks at R = 0
    length_event = EpsilonDeltaDpEvent(eps / 2, epoch_zero)
    return length_event, mean_event, nu_e, epoch_short


def _listed(views: dict[str, Guarantee]) -> str:
    """'reward phase1 0.521, ...': each kind's ε, for the declaration's note."""
    return ", ".join(f"{k.replace('_', ' ')} {g.epsilon:.3g}" for k, g in views.items() if k != "whole")


def conse_privacy(
    params: ConSEParams,
    horizon: int,
    num_types: int,
    rct_length_floor: float | None = None,
    delta_target: float | None = None,
) -> Privacy:
    """Claimed and corrected privacy of DP-ConSE with `params` at horizon n and M types.

    `corrected` is the whole output at the claim's δ = 1/n (`whole_algorithm_guarantees`, the worst neighbour
    kind) and `event` the same (ε, δ) black box; `implied` holds it ("whole"), each kind's view bound
    ("view_reward_phase1", ..., "view_context_phase2") and the component accounting per kind ("reward",
    "context_phase1", "context_phase2": basic composition, δ well above 1/n). Where the whole output is not
    computed (the no-reset variant; ⌈T_min⌉ ranging over more than 1500 values) the component accounting of
    the worst kind is declared, as the note says. `paper_event` is the paper's split (ε/2 phase 1 + ε/2 phase 2).

    Each conditioning event of the corrected accounting is given failure probability ≤ delta_target
    (default 1/(10 n)): the count fractions ν (per-arm count ≥ ν·R_e for epoch means, ≥ ν·T_j for estimates)
    are the largest that meet it, and η = log(1/delta_target)/T_lo for the scale mismatch.
    rct_length_floor: a lower bound on T_min (default its floor log n, the worst case; pass the scenario's
    f_min^{1-α} when that is known to be larger).
    """
    if not params.private:
        raise ValueError("conse_privacy needs a private ConSEParams (epsilon set); ConSE claims no privacy")
    n = check_int_at_least(horizon, 2, "horizon")
    m = check_int_at_least(num_types, 1, "num_types")
    target = 1.0 / (10 * n) if delta_target is None else check_open_unit(delta_target, "delta_target")
    eps = params.dp_epsilon
    floor = math.log(n) / eps if params.tmin_floor == "log_n_over_eps" else math.log(n)
    if rct_length_floor is not None:
        floor = max(floor, check_positive(rct_length_floor, "rct_length_floor"))
    c_min = math.ceil(floor)

    paper_composition = dp_accounting.ComposedDpEvent(
        [EpsilonDeltaDpEvent(eps / 2, 0.0), EpsilonDeltaDpEvent(eps / 2, 1.0 / n)]
    )

    length_event, mean_event, nu_e, epoch_short = _phase1_events(params, n, target)

    # phase 2: T_j ~ Lap+_ε(T_min), T_min ≥ c_min; condition on T_j ≥ T_lo and N_{j,a} ≥ ν T_j
    t_lo = max(2, math.ceil(c_min / 2))
    rct_low = float(lap_plus_pmf(eps, c_min, np.arange(0, t_lo)).sum())
    lengths = np.arange(t_lo, c_min + int(1400 / eps) + 2)
    pmf = lap_plus_pmf(eps, c_min, lengths)

    def rct_shortfall(nu: float) -> float:
        return float(np.sum(pmf * stats.binom.cdf(np.ceil(nu * lengths) - 1, lengths, 0.5)))

    nu_t, rct_short = _largest_fraction(rct_shortfall, target)
    eta = math.log(1.0 / target) / t_lo
    rct_loss = lap_plus_shift_loss(eps, c_min)
    end_event = EpsilonDeltaDpEvent(eps / 2, min(0.999, rct_low))
    estimate_event = EpsilonDeltaDpEvent(
        eps / (2 * nu_t) * t_lo / (t_lo - 1) + math.log(t_lo / (t_lo - 1)) + eta,
        min(0.999, rct_short + rct_low + target),
    )
    reward = dp_accounting.ComposedDpEvent(
        [EpsilonDeltaDpEvent(eps / (2 * min(nu_e, nu_t)), min(0.999, max(epoch_short, rct_short + rct_low)))]
    )
    context_p1 = dp_accounting.ComposedDpEvent(
        [
            length_event,
            length_event,
            mean_event,
            mean_event,
            dp_accounting.SelfComposedDpEvent(EpsilonDeltaDpEvent(rct_loss, 0.0), m),
        ]
    )
    context_p2 = dp_accounting.ComposedDpEvent([end_event, end_event, estimate_event, estimate_event])
    corrected = {
        "reward": reward,
        "context_phase1": context_p1,
        "context_phase2": context_p2,
    }
    by_kind = {
        kind: Guarantee(
            "approx",
            _pure_epsilon(event),
            min(0.999, composed_delta(event)),
            source=f"conse_privacy, {kind.replace('_', ' ')} neighbour (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2 components composed)",
        )
        for kind, event in corrected.items()
    }
    worst = max(by_kind, key=lambda kind: by_kind[kind].dp_epsilon)
    claim = Guarantee("approx", eps, 1.0 / n, source="Li, Shi, Simchi-Levi, Theorem 3.5")
    basic = (
        f"components composed sequentially, δ by basic composition: ({by_kind[worst].epsilon:.4g}, "
        f"{by_kind[worst].delta:.3g}), worst kind {worst!r}"
    )
    try:
        views = whole_algorithm_guarantees(params, n, m, 1.0 / n, rct_length_floor)
    except ValueError as exc:  # a variant or a T_min range the exact views do not cover: the components stand
        return Privacy(
            "unit",
            "central",
            corrected[worst],
            claim,
            by_kind[worst],
            note=f"{basic}; no whole-output figure ({exc})",
            paper_event=paper_composition,
            implied=by_kind,
        )
    whole = views["whole"]
    return Privacy(
        "unit",
        "central",
        EpsilonDeltaDpEvent(whole.dp_epsilon, whole.delta),
        claim,
        whole,
        note=f"every neighbour kind's released view at the claim's δ, the worst taken ({_listed(views)}); {basic}",
        paper_event=paper_composition,
        implied={**by_kind, **{f"view_{k}": g for k, g in views.items() if k != "whole"}, "whole": whole},
    )


# ---- exact accounting of single released views (the audits' upper sides)

_ROUND_UP = 1e-12  # relative and absolute slack added to every computed δ: round-off can only loosen


def _epsilon_at(delta_of: Callable[[float], float], delta: float) -> float:
    """Smallest ε found (bisection, rounded up) with delta_of(ε) ≤ delta; inf if none up to 1e4."""
    check_open_unit(delta, "delta")

    def accept(e: float) -> bool:
        return delta_of(e) <= delta

    if accept(0.0):
        return 0.0
    hi = first_accepted_doubling(accept, 0.125, 1e4)
    if math.isinf(hi):
        return hi
    return smallest_accepted(accept, 0.0 if hi == 0.125 else hi / 2, hi, rtol=1e-9)


def laplace_shift_delta(loss: np.ndarray | float, epsilon: float) -> np.ndarray:
    """δ(ε) of Lap(b) against Lap(b) shifted by s, with η = s/b its pure ε (both directions alike):

    δ(ε) = max(0, 1 - exp((ε - η)/2)); the hockey-stick divergence of two Laplace laws, attained by the
    set {x < (s - bε)/2} where the log ratio (s - 2x)/b exceeds ε (integrated in closed form here; the
    tests check it against dp-accounting's Laplace privacy-loss distribution).
    """
    eta = np.asarray(loss, dtype=float)
    return np.where(eta > epsilon, -np.expm1((epsilon - eta) / 2), 0.0)


def _lengths_losses(epsilon: float, c_min: int, num_types: int, exact_centres: int) -> tuple[np.ndarray, np.ndarray]:
    """(losses, weights), one row per (centre, direction) of `rct_lengths_view_delta`: the M lengths'
    loss shift + sign·(ε/2)(2K - M) at K = 0..M and its Bin(M, p) weights."""
    check_epsilon(epsilon)
    c0 = check_int_at_least(c_min, 0, "c_min")
    m = check_int_at_least(num_types, 1, "num_types")
    k_exact = check_int_at_least(exact_centres, 0, "exact_centres")
    q = math.exp(-epsilon / 2)
    k = np.arange(m + 1)
    rows: list[tuple[float, float, float]] = []  # (shift, p, sign)
    for c in range(c0, c0 + k_exact + 1):
        u = q ** (c + 1)
        a = math.log1p(u * (1 - q) / (1 + q - u))
        p_rev = q * (1 - u) / (1 + q - q * u)
        if c < c0 + k_exact:  # exact centre c against c + 1, both directions
            rows += [(m * a, (1 - u) / (1 + q - u), 1.0), (-m * a, p_rev, -1.0)]
        else:  # every centre from C = c_min + exact_centres on, dominated
            rows += [(m * a, 1 / (1 + q), 1.0), (0.0, p_rev, -1.0)]
    shift, p, sign = (np.array(x)[:, None] for x in zip(*rows))
    return shift + sign * epsilon / 2 * (2 * k - m), stats.binom.pmf(k, m, p)


def _lengths_delta(losses: np.ndarray, weights: np.ndarray, eps_prime: float) -> float:
    worst = float(np.max(np.sum(weights * np.maximum(-np.expm1(eps_prime - losses), 0.0), axis=1)))
    return float(min(1.0, worst * (1 + _ROUND_UP) + _ROUND_UP))


def rct_lengths_view_delta(
    epsilon: float, c_min: int, num_types: int, eps_prime: float, exact_centres: int = 64
) -> float:
    """Sound δ(ε') of DP-ConSE's released RCT lengths (T_1..T_M), every neighbouring pair of datasets.

    T_j ~ Lap+_ε(T_min) independently (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2 line 13), and one unit's
    change moves c = ⌈T_min⌉ ≥ c_min by at most one (phase-1 counts move by one; the other changes leave
    T_min alone). For centres c vs c+1 the loss of one T_j is two-valued: with q = e^{-ε/2},
    Z_c = (1 + q - q^{c+1})/(1 - q) and a_c = log(Z_{c+1}/Z_c) > 0,
      log P_c(v)/P_{c+1}(v) = +ε/2 + a_c for v ≤ c, -ε/2 + a_c for v > c,
    so the loss of the M lengths is M a_c + (ε/2)(2K - M), K ~ Bin(M, p_c), p_c = P_c(T ≤ c)
    = (1 - q^{c+1})/(1 + q - q^{c+1}); the reverse direction (P_{c+1} against P_c) has loss
    -M a_c + (ε/2)(M - 2K'), K' ~ Bin(M, p'_c), p'_c = q(1 - q^{c+1})/(1 + q - q^{c+2}).
    The centres c_min .. c_min + exact_centres - 1 are computed exactly; beyond them δ(ε') =
    E[(1 - e^{ε' - loss})_+], nondecreasing in a, in p and in -p', is bounded with the largest a, p and
    the smallest p' over c ≥ C = c_min + exact_centres: a_C, 1/(1 + q) forward and -a → 0, p'_C backward
    (a_c decreases and p_c, p'_c increase with c).
    """
    return _lengths_delta(*_lengths_losses(epsilon, c_min, num_types, exact_centres), eps_prime)


def rct_lengths_view_epsilon(epsilon: float, c_min: int, num_types: int, delta: float) -> float:
    """ε at `delta` of the released RCT lengths (`rct_lengths_view_delta`, bisection rounded up).

    At most M·λ(c_min) (pure composition, `lap_plus_shift_loss`); at δ = 1/n much less, as the M
    lengths reach their joint loss only when all fall on the same side of the centre.
    """
    losses, weights = _lengths_losses(epsilon, c_min, num_types, 64)
    return _epsilon_at(lambda e: _lengths_delta(losses, weights, e), delta)


def _cate_losses(epsilon: float, t_min: float, arrivals: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(weights, losses, tail) of `cate_mixture_delta`: P(T = t, N_a = k + 1) and ε t/(2(k + 1)) over
    t ≥ 1 up to where the Lap+ tail is below 1e-16, and that tail's mass (counted whole as δ)."""
    check_epsilon(epsilon)
    check_positive(t_min, "t_min")
    n_arr = check_int_at_least(arrivals, 1, "arrivals")
    c = math.ceil(t_min)
    lengths = np.arange(1, c + int(2 * 37 / epsilon) + 2)
    p_len = lap_plus_pmf(epsilon, t_min, lengths)
    tail = max(0.0, 1.0 - float(p_len.sum()) - float(lap_plus_pmf(epsilon, t_min, np.array([0]))[0]))
    weights, losses = [], []
    for t, pt in zip(lengths, p_len):
        inside = min(int(t), n_arr)
        k = np.arange(inside)
        weights.append(pt * stats.binom.pmf(k, inside - 1, 0.5))
        losses.append(epsilon * t / (2 * (k + 1.0)))
    return np.concatenate(weights), np.concatenate(losses), tail


def cate_mixture_delta(epsilon: float, t_min: float, arrivals: int, eps_prime: float) -> float:
    """Sound δ(ε') of one released CATE estimate Δ̂(X_j) under a change of one unit's outcomes.

    Δ̂ = m_1 - m_0 + Lap(2/(ε T)) over the type's first min(T, L) phase-2 arrivals (L = `arrivals`),
    T ~ Lap+_ε(T_min) (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2 lines 13 and 34). The changed unit, when
    inside the RCT, moves the mean of its arm a by at most 1/N_a, N_a - 1 ~ Bin(min(T, L) - 1, 1/2)
    (fair coins), so given (T, coins) the two outputs are Laplace laws shifted by at most 1/N_a, loss
    η = ε T/(2 N_a). T and the coins have the same law under both datasets, and the hockey-stick
    divergence is jointly convex, so δ(ε') ≤ E_{T, N_a}[`laplace_shift_delta`(η, ε')] (the mixture an
    observer who knew T and N_a would face; the unit first in the RCT is the worst position, and
    fewer arrivals L only shrink N_a, so pass the fewest a type can have).
    """
    weights, losses, tail = _cate_losses(epsilon, t_min, arrivals)
    total = float(np.sum(weights * laplace_shift_delta(losses, eps_prime))) + tail
    return float(min(1.0, total * (1 + _ROUND_UP) + _ROUND_UP))


def cate_mixture_epsilon(epsilon: float, t_min: float, arrivals: int, delta: float) -> float:
    """ε at `delta` of one released CATE estimate (`cate_mixture_delta`, bisection rounded up)."""
    weights, losses, tail = _cate_losses(epsilon, t_min, arrivals)

    def delta_of(e: float) -> float:
        total = float(np.sum(weights * laplace_shift_delta(losses, e))) + tail
        return min(1.0, total * (1 + _ROUND_UP) + _ROUND_UP)

    return _epsilon_at(delta_of, delta)


def _approx_dp_pair_losses(events: list[EpsilonDeltaDpEvent]) -> tuple[np.ndarray, np.ndarray]:
    """Losses and P-probabilities of the product of the (ε_i, δ_i)-DP dominating pairs: each is +inf
    with probability δ_i, ±ε_i with (1 - δ_i) e^{±ε_i}/(1 + e^{ε_i}) (Kairouz, Oh, Viswanath, "The
    Composition Theorem for Differential Privacy", ICML 2015, the (ε, δ) pair)."""
    losses, probs = np.zeros(1), np.ones(1)
    for ev in events:
        e, d = ev.epsilon, ev.delta
        lo = np.array([math.inf, e, -e])
        pr = np.array([d, (1 - d) / (1 + math.exp(-e)), (1 - d) / (1 + math.exp(e))])
        losses = (losses[:, None] + lo[None, :]).ravel()
        probs = (probs[:, None] * pr[None, :]).ravel()
    return losses, probs


def context_phase1_epsilon(
    params: ConSEParams, horizon: int, num_types: int, delta: float, delta_target: float | None = None
) -> float:
    """ε at `delta` of the releases a phase-1 context change touches, composed exactly instead of basically.

    The components are those of `conse_privacy`'s "context_phase1" (two epoch lengths and two epoch
    means, each (ε_i, δ_i)-DP, and the M RCT lengths); the M lengths enter with their exact binomial
    loss (`rct_lengths_view_delta`, every centre ≥ ⌈floor⌉), the four others through their (ε_i, δ_i)
    dominating pairs. Dominating pairs compose under adaptive composition (Zhu, Dong, Wang, "Optimal
    Accounting of Differential Privacy via Characteristic Function", AISTATS 2022, Thm 10), and the
    lengths are drawn independently of the epochs' outputs, so for one direction
      δ(ε') ≤ max_rows Σ_K w_K H_{e^{ε' - L_K}}(pairs),  H_α(P‖Q) = E_P[(1 - α e^{-L})_+],
    which is nondecreasing in the lengths' loss L_K, so the dominated rows of the lengths bound the
    centres beyond the exact ones. Every quantity is a finite sum; ε is found by bisection, rounded up.
    """
    if not params.private:
        raise ValueError("context_phase1_epsilon needs a private ConSEParams (epsilon set)")
    n = check_int_at_least(horizon, 2, "horizon")
    m = check_int_at_least(num_types, 1, "num_types")
    target = 1.0 / (10 * n) if delta_target is None else check_open_unit(delta_target, "delta_target")
    length_event, mean_event, _, _ = _phase1_events(params, n, target)
    pair_losses, pair_probs = _approx_dp_pair_losses([length_event, length_event, mean_event, mean_event])
    floor = math.log(n) / params.dp_epsilon if params.tmin_floor == "log_n_over_eps" else math.log(n)
    t_losses, t_weights = _lengths_losses(params.dp_epsilon, math.ceil(floor), m, 64)
    finite = np.isfinite(pair_losses)
    inf_mass = float(pair_probs[~finite].sum())

    def delta_of(e: float) -> float:
        x = e - t_losses[:, :, None] - pair_losses[None, None, finite]
        h = np.sum(pair_probs[finite] * np.maximum(-np.expm1(x), 0.0), axis=2) + inf_mass
        worst = float(np.max(np.sum(t_weights * h, axis=1)))
        return min(1.0, worst * (1 + _ROUND_UP) + _ROUND_UP)

    return _epsilon_at(delta_of, delta)


# ---- the whole algorithm at the claim's δ: every neighbour kind's released view, composed where it composes
#
# A unit's change touches, by kind (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2; the actions after t and the CATE
# vector are post-processings of what is listed, given the other units' data):
#   reward in phase 1: one epoch mean (`reward_phase1_epsilon`);
#   reward in phase 2: one estimate (`reward_phase2_epsilon`);
#   type in phase 1: two epoch lengths, two epoch means, the M RCT lengths (`context_phase1_epsilon`);
#   type in phase 2: the RCT (end and estimate) of the type it leaves and of the type it joins
#   (`context_phase2_epsilon`; a change of type and outcomes together is covered, the shift bounds holding
#   for any outcome).
# Each kind is bounded over every T_min the phase-1 counts allow: ⌈T_min⌉ ∈ [c_lo, c_hi] with c_lo the floor's
# ceiling and c_hi = ⌈max(floor, (⌊n/2⌋/M)^(1-α))⌉ (min_j f̂_j <= ⌊n/2⌋/M). The types' phase-2 streams are assumed
# at least as long as their RCTs (the regime of Assumption 1.1, as `conse_privacy`).

_LENGTH_TAIL = 37.0  # Lap+ lengths beyond centre + 2·37/ε (mass < e^-37) count as infinite loss
_GRID = 0.01  # loss grid of `context_phase2_epsilon`; each type's losses are rounded up to it
_LOSS_LOW, _LOSS_HIGH = -5.0, 40.0  # losses below go to the lowest point, above to infinity
_TINY = 1e-12
_MAX_CENTRES = 1500  # beyond this many values of ⌈T_min⌉ the whole-output figure is not computed


def _centre_range(params: ConSEParams, n: int, m: int, rct_length_floor: float | None) -> tuple[int, int]:
    """[c_lo, c_hi]: every value ⌈T_min⌉ can take, T_min = max{floor, min_j f̂_j^(1-α)} (Alg. 2 line 22)."""
    floor = math.log(n) / params.dp_epsilon if params.tmin_floor == "log_n_over_eps" else math.log(n)
    if rct_length_floor is not None:
        floor = max(floor, check_positive(rct_length_floor, "rct_length_floor"))
    top = max(floor, (n // 2 / m) ** (1.0 - params.alpha))
    return math.ceil(floor), math.ceil(top)


def _lap_plus_rows(epsilon: float, centres: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(P(T = v) for v = 0..size-1, P(T >= size)) per centre: the Lap+_ε pmf (App. A.4) and its tail
    q^(size-c)/(1 + q - q^(c+1)) (size > c)."""
    q = math.exp(-epsilon / 2)
    c = np.asarray(centres, dtype=float)[:, None]
    v = np.arange(size)[None, :]
    z = 1 + q - q ** (c + 1)
    rows = q ** np.abs(v - c) * (1 - q) / z
    return rows, (q ** (size - c) / z)[:, 0]


def _arm_counts(tau: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(N, P(N)) for N = 1 + Bin(τ - 1, 1/2) (the changed unit's arm count among τ fair coins) within 12 standard
    deviations of the mean; the mass below (< 10^-31) is returned as the third value, to count as infinite loss,
    the mass above is merged into the largest N kept (a smaller loss, rounded up)."""
    half = (tau - 1) / 2
    spread = 12.0 * math.sqrt(max(tau - 1, 1)) / 2
    lo, hi = max(0, math.floor(half - spread)), min(tau - 1, math.ceil(half + spread))
    k = np.arange(lo, hi + 1)
    w = stats.binom.pmf(k, tau - 1, 0.5)
    w[-1] += float(stats.binom.sf(hi, tau - 1, 0.5))
    return k + 1.0, w, float(stats.binom.cdf(lo - 1, tau - 1, 0.5))


@functools.lru_cache(maxsize=64)
def _arm_count_table(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_arm_counts` for τ = 1..size-1 as flat arrays (τ, N, P(N)) and the masses set aside per τ (index τ)."""
    taus, counts, weights, aside = [], [], [], np.zeros(size)
    for tau in range(1, size):
        n_arm, w, aside[tau] = _arm_counts(tau)
        taus.append(np.full(n_arm.size, tau))
        counts.append(n_arm)
        weights.append(w)
    if not taus:
        return np.zeros(0), np.zeros(0), np.zeros(0), aside
    return np.concatenate(taus), np.concatenate(counts), np.concatenate(weights), aside


def _cate_length_deltas(epsilon: float, size: int, eps_prime: float) -> np.ndarray:
    """D_τ(ε') = E[δ of Lap shifted by ε τ/(2N)] over N = 1 + Bin(τ - 1, 1/2), τ = 0..size-1 (D_0 = 0: no
    estimate); the binomial masses set aside count as δ = 1."""
    taus, counts, weights, aside = _arm_count_table(size)
    terms = weights * laplace_shift_delta(epsilon * taus / (2 * counts), eps_prime)
    return np.bincount(taus.astype(np.int64), weights=terms, minlength=size) + aside


def reward_phase2_epsilon(
    params: ConSEParams, horizon: int, num_types: int, delta: float, rct_length_floor: float | None = None
) -> float:
    """ε at δ of one released estimate Δ̂(X_j) under a change of one phase-2 unit's outcomes, every ⌈T_min⌉.

    Given T = τ and the coins (the same law under both datasets) the two estimates are Laplace laws of
    scale 2/(ετ) shifted by at most 1/N, N = 1 + Bin(τ - 1, 1/2) the unit's arm count; by joint convexity
    δ(ε') <= Σ_τ P_c(T = τ) D_τ(ε') (`cate_mixture_delta` with the unit in the RCT whatever τ >= 1, its worst
    position), maximised over c ∈ [c_lo, c_hi] (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2 lines 13, 34-36)."""
    n = check_int_at_least(horizon, 2, "horizon")
    m = check_int_at_least(num_types, 1, "num_types")
    c_lo, c_hi = _centre_range(params, n, m, rct_length_floor)
    eps = params.dp_epsilon
    size = c_hi + math.ceil(2 * _LENGTH_TAIL / eps) + 1
    rows, tails = _lap_plus_rows(eps, np.arange(c_lo, c_hi + 1), size)

    def delta_of(e: float) -> float:
        worst = float(np.max(rows @ _cate_length_deltas(eps, size, e) + tails))
        return min(1.0, worst * (1 + _ROUND_UP) + _ROUND_UP)

    return _epsilon_at(delta_of, delta)


@functools.lru_cache(maxsize=64)
def reward_phase1_epsilon(params: ConSEParams, horizon: int, delta: float) -> float:
    """ε at δ of the epoch mean a change of one phase-1 unit's outcomes moves, over every epoch and position.

    Given the epoch lengths and the coins (the same law under both datasets) the mean is a Laplace law of
    scale 2/(ε R_e) shifted by at most 1/N, N = 1 + Bin(L - 1, 1/2), L the noisy length (Lap+_ε(ℓ R_e), ℓ the
    length centre; a length 0 lasts one arrival). Which epoch holds the unit depends on the earlier lengths,
    and holding it conditions its own length on L >= ℓ0; so δ(ε') <= max_e sup_ℓ0 E[D_e(L) | L >= ℓ0]
    (joint convexity; Li, Shi, Simchi-Levi, ICML 2024, Alg. 2 lines 7-11). D_e(L) = E[δ_Lap(ε R_e/(2N), ε')]
    is non-increasing in L (N grows stochastically with L, the loss falls with N), so the supremum is at
    ℓ0 = 1: E[D_e(L)]. Lengths below the centre - 2·37/ε count as δ = 1, those above it + 2·37/ε as the
    window's last D. Epochs with R_e > n end within phase 1 (L <= n/2) with probability below
    2 q^(ℓ R_e - n/2), counted as δ."""
    if not params.reset_means:
        raise ValueError("reward_phase1_epsilon assumes means zeroed at every epoch end (reset_means=True)")
    n = check_int_at_least(horizon, 2, "horizon")
    eps = params.dp_epsilon
    r_e = epoch_schedule(params, n, 64)[0]
    q = math.exp(-eps / 2)
    inside = r_e[r_e <= n]
    beyond = float(sum(2 * q ** max(0.0, params.length_centre * r - n / 2) for r in r_e[r_e > n]))
    width = math.ceil(2 * _LENGTH_TAIL / eps)
    laws = []
    for r in inside:
        centre = math.ceil(params.length_centre * r)
        lengths = np.arange(max(1, centre - width), centre + width + 1)
        p = lap_plus_pmf(eps, centre, lengths)
        below = float(lap_plus_pmf(eps, centre, np.arange(0, lengths[0])).sum())  # counted as δ = 1
        above = max(0.0, 1.0 - float(p.sum()) - below)  # counted as δ = 1
        laws.append((float(r), p, below, above, [_arm_counts(int(length)) for length in lengths]))

    def delta_of(e: float) -> float:
        worst = beyond
        for r, p, below, above, arms in laws:
            d = np.array([float(np.sum(w * laplace_shift_delta(eps * r / (2 * k), e))) + a for k, w, a in arms])
            worst = max(worst, below + float(p @ d) + above * float(d[-1]))
        return min(1.0, worst * (1 + _ROUND_UP) + _ROUND_UP)

    return _epsilon_at(delta_of, delta)


def _tail_kernel(kind: str, tau: int, size: int) -> np.ndarray:
    """Tail of one loss law at grid offsets d = -size+1..size-1 from its (grid) location, at points lowered by
    `_TINY`: "minus" a - E/τ, "plus" b + E/(τ-1) (E ~ Exp(1)), "clip" s + clip(η + 2Z, 0, η) seen from s + η
    (Z standard Laplace; the part at or below s is added by the caller)."""
    d = np.arange(-size + 1, size) * _GRID - _TINY  # the point minus the location
    if kind == "minus":  # P(a - E/τ >= a + d) = P(E <= -τ d)
        return np.where(d < 0, -np.expm1(np.minimum(tau * d, 0.0)), 0.0)
    if kind == "plus":  # P(b + E/(τ-1) >= b + d)
        return np.where(d <= 0, 1.0, np.exp(-(tau - 1) * np.maximum(d, 0.0)))
    return np.where(d <= 0, 1.0 - 0.5 * np.exp(np.minimum(d, 0.0) / 2), 0.0)  # P(s + clip >= s + η + d), above s


def _on_grid(values: np.ndarray, weights: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """Weights at the grid index of each value rounded up (below the grid: its lowest point), and the weight of
    values beyond the grid's top (to count as infinite loss)."""
    idx = np.maximum(np.ceil((values - _LOSS_LOW) / _GRID - 1e-9).astype(np.int64), 0)
    top = idx >= size
    return np.bincount(idx[~top], weights=weights[~top], minlength=size), float(weights[top].sum())


def _located_tails(values: np.ndarray, weights: np.ndarray, kernel: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """Σ weight·tail(point - value) at the grid points, each value rounded up to the grid (every law here has
    tails non-decreasing in its location), by FFT convolution with a round-off margin; and the weight beyond."""
    hist, beyond = _on_grid(values, weights, size)
    full = signal.fftconvolve(hist, kernel)  # index i + size - 1: Σ_k hist[k] kernel[(i - k) + size - 1]
    tails = full[size - 1 : 2 * size - 1] + 1e-13 * (1.0 + float(hist.sum()))
    return np.minimum(tails, float(hist.sum()) + beyond), beyond


@functools.lru_cache(maxsize=4096)
def _half_binomial(trials: int) -> np.ndarray:
    """Bin(trials, 1/2)'s pmf on 0..trials."""
    return stats.binom.pmf(np.arange(trials + 1), trials, 0.5)


def _swap_laws(epsilon: float, tau: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """(η, weight) of the W = r branch of `context_phase2_epsilon` for T = τ and position r <= τ: X ~ Bin(r - 1,
    1/2) units before t on the exploitation arm A, m = τ - r coins after t all A (weight 2^-m), t's own coin A
    or not (1/2 each); the RCTs {1..τ} and {1..τ+1} minus t differ by a swap of t for the next arrival, of arm A:
    shift <= 1/(X + 1 + m) if t's arm is A, else 1/(r - X) + 1/(X + m + 1), η = shift·ετ/2."""
    x = np.arange(r)
    w = _half_binomial(r - 1) * 2.0 ** -(tau - r) / 2
    sig = np.concatenate([1.0 / (x + 1 + tau - r), 1.0 / (r - x) + 1.0 / (x + tau - r + 1)])
    return epsilon * tau * sig / 2, np.concatenate([w, w])


def _swap_entries(epsilon: float, tau: int, r: int, size: int, shift: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(grid index of shift + η rounded up, weight, weight beyond the grid) of `_swap_laws`: the loss of a
    Laplace pair of one scale shifted by at most η·scale is below shift + clip(η + 2Z, 0, η) (Z standard
    Laplace) for every shift, both directions (negative losses raised to 0); shift log 2 on D's side, -log 2 on D''s."""
    eta, w = _swap_laws(epsilon, tau, r)
    idx = np.maximum(np.ceil((shift + eta - _LOSS_LOW) / _GRID - 1e-9).astype(np.int64), 0)
    inside = idx < size
    return idx[inside], w[inside], float(w[~inside].sum())


def _clip_tails(hist: np.ndarray) -> np.ndarray:
    """Σ_k hist[k] P(clip law located at grid point k >= grid point i), for every row: a law at s + η has tail
    1 - e^((x - s - η)/2)/2 on (s, s + η] (`_tail_kernel` "clip"), so the sum is a suffix sum minus half a
    geometric filter (ratio e^(-grid/2)), both run backwards along the grid."""
    rev = hist[:, ::-1]
    suffix = np.cumsum(rev, axis=1)
    geometric = signal.lfilter([1.0], [1.0, -math.exp(-_GRID / 2)], rev, axis=1)
    return (suffix - 0.5 * geometric)[:, ::-1]


def _remove_laws(epsilon: float, tau: int, rising: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(a_N, b_N, P(N), mass set aside) of the W > r branch for T = τ >= 2, N = 1 + Bin(τ - 1, 1/2) (the branch's
    conditioning dropped: a larger measure): D's RCT {1..τ} against D''s {1..τ} minus t at T' = τ - 1, Laplace
    scales b = 2/(ετ) and b' = 2/(ε(τ - 1)), shift s <= 1/N, and ρ = log(p_τ/p_{τ-1}) = ε/2 for τ <= c (`rising`),
    -ε/2 above the centre c of Lap+:
      D's side: ρ + log(b'/b) - |x - s|/b + |x|/b' <= a_N - E/τ, a_N = ρ + log(τ/(τ-1)) + ε(τ-1)/(2N),
      D''s side: <= b_N + E/(τ-1), b_N = -ρ + log((τ-1)/τ) + ετ/(2N),  E ~ Exp(1)
    (|x| <= |s| + |x - s| with x = s + bZ, resp. |x - s| <= |x| + |s| with x = b'Z)."""
    n_arm, w, aside = _arm_counts(tau)
    rho = epsilon / 2 if rising else -epsilon / 2
    a = rho + math.log(tau / (tau - 1)) + epsilon * (tau - 1) / (2 * n_arm)
    b = -rho + math.log((tau - 1) / tau) + epsilon * tau / (2 * n_arm)
    return a, b, w, aside


def _remove_tails(
    epsilon: float, tau: int, size: int, rising: bool
) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """(D's tails, D''s tails, finite mass, infinite mass on D's side, on D''s side) of `_remove_laws` at the grid
    points (the binomial masses set aside are infinite)."""
    a, b, w, aside = _remove_laws(epsilon, tau, rising)
    rem_p, inf_p = _located_tails(a, w, _tail_kernel("minus", tau, size), size)
    rem_q, inf_q = _located_tails(b, w, _tail_kernel("plus", tau, size), size)
    return rem_p, rem_q, float(w.sum()), inf_p + aside, inf_q + aside


def _measure(tails: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masses on the grid from tails at its points (losses in [y_(i-1), y_i) rounded up to y_i, below y_0 to
    y_0) and the mass at infinity (losses >= the top point), per row; each mass raised by the tails' round-off."""
    masses = np.concatenate([total[:, None] - tails[:, :1], tails[:, :-1] - tails[:, 1:]], axis=1)
    return np.maximum(masses, 0.0) + 1e-13, tails[:, -1]


_SWAP_SPAN = 50  # the swap branch of T = τ has weight 2^-(τ - r): τ > r + 50 counts as infinite loss


@functools.lru_cache(maxsize=16)
def _context_phase2_laws(epsilon: float, c_lo: int, c_hi: int) -> tuple[np.ndarray, ...]:
    """Per centre c: the grid, then D's side and D''s side each as (grid masses, infinite mass).

    For position r the loss measure of one side is Σ_τ p_τ M_τ(r): loss 0 (mass 1) for τ < r, the swap branch
    for τ = r, the remove branch (over-counted to its unconditioned law) plus the swap branch for τ > r. Its
    tails are built for every r, from r = top down (suffix sums of the remove branch over τ > r; the swap
    histograms of τ = r..r+50 mixed by the Lap+ weights, then convolved with the clip kernel), and the bound is
    their pointwise maximum over r. Every loss law here has tails that only grow with its location, so
    rounding locations up to the grid is pessimistic."""
    size = round((_LOSS_HIGH - _LOSS_LOW) / _GRID) + 1
    grid = _LOSS_LOW + _GRID * np.arange(size)
    points = grid - _TINY
    top = c_hi + math.ceil(2 * _LENGTH_TAIL / epsilon) + 1  # lengths 0..top-1; longer ones: infinite loss
    rows, beyond = _lap_plus_rows(epsilon, np.arange(c_lo, c_hi + 1), top)
    zero = (points <= 0).astype(float)
    centres = np.arange(c_lo, c_hi + 1)
    removes = {
        (tau, up): _remove_tails(epsilon, tau, size, up)
        for tau in range(2, top)
        for up in (True, False)
        if (up and tau <= c_hi) or (not up and tau > c_lo)
    }
    out: list[np.ndarray] = [grid]
    for side, shift in ((0, math.log(2.0)), (1, -math.log(2.0))):
        best = (rows.sum(axis=1)[:, None] * zero[None, :]).copy()  # r >= top: every τ below r, loss 0
        best_total, best_inf = rows.sum(axis=1), np.zeros(rows.shape[0])
        suffix, suffix_total, suffix_inf = np.zeros_like(best), np.zeros(rows.shape[0]), np.zeros(rows.shape[0])
        below = rows.sum(axis=1)
        for r in range(top - 1, 0, -1):
            below = below - rows[:, r]  # Σ_{τ < r}
            if r + 1 < top:  # the remove branch of τ = r + 1 joins the suffix τ > r, ρ = ±ε/2 as τ <= c or not
                tau = r + 1
                for up, pick in ((True, tau <= centres), (False, tau > centres)):
                    if pick.any():
                        tails_d, tails_d1, finite, inf_d, inf_d1 = removes[(tau, up)]
                        weight = np.where(pick, rows[:, tau], 0.0)
                        suffix += weight[:, None] * (tails_d, tails_d1)[side][None, :]
                        suffix_total += weight * finite
                        suffix_inf += weight * (inf_d, inf_d1)[side]
            taus = list(range(r, min(top, r + _SWAP_SPAN + 1)))
            entries = [_swap_entries(epsilon, tau, r, size, shift) for tau in taus]
            col = np.concatenate([np.full(e[0].size, j) for j, e in enumerate(entries)])
            idx, w = np.concatenate([e[0] for e in entries]), np.concatenate([e[1] for e in entries])
            mix = rows[:, taus]
            onehot = sparse.csr_matrix((w, (np.arange(idx.size), idx)), shape=(idx.size, size))
            hist = np.asarray((onehot.T @ mix[:, col].T).T)
            swap_w = hist.sum(axis=1)
            swap = np.where(
                points[None, :] <= shift, swap_w[:, None], _clip_tails(hist) + 1e-12 * (1.0 + swap_w[:, None])
            )
            spill = rows[:, r + _SWAP_SPAN + 1 :].sum(axis=1) * 2.0 ** -(_SWAP_SPAN + 1)  # τ > r + 50
            best = np.maximum(best, below[:, None] * zero[None, :] + suffix + swap)
            best_total = np.maximum(best_total, below + suffix_total + swap_w)
            best_inf = np.maximum(best_inf, suffix_inf + mix @ np.array([e[2] for e in entries]) + spill)
        masses, at_top = _measure(best, best_total)
        out += [masses, at_top + best_inf + beyond]
    return tuple(out)


def context_phase2_side_deltas(epsilon: float, centre: int, eps_prime: float) -> tuple[float, float]:
    """δ(ε') of one type's view alone at ⌈T_min⌉ = centre, as `context_phase2_epsilon` bounds it: (the type the unit
    leaves, D against D'; the type it joins, D' against D), every position and every outcome."""
    c = check_int_at_least(centre, 0, "centre")
    grid, mp, ip, mq, iq = _context_phase2_laws(check_epsilon(epsilon), c, c)
    weight = -np.expm1(np.minimum(eps_prime - grid, 0.0))
    return float(mp[0] @ weight + ip[0]), float(mq[0] @ weight + iq[0])


def context_phase2_epsilon(
    params: ConSEParams, horizon: int, num_types: int, delta: float, rct_length_floor: float | None = None
) -> float:
    """ε at δ of what a phase-2 unit's change of type (j to k, outcomes free) shows: the actions after it and
    the estimates Δ̂(X_j), Δ̂(X_k), every position and every ⌈T_min⌉ (Li, Shi, Simchi-Levi, ICML 2024, Alg. 2
    lines 31-39).

    For the type it leaves (D has it at position r of the type's phase-2 arrivals, D' does not), the observer
    sees, after t, coins while the RCT lasts, then the type's phase-1 arm A, and Δ̂. Let W be the last unit
    after t whose action differs from A (r if none). Two couplings of D's T with D''s T' make a dominating
    pair (the observer is told the pair's index; Zhu, Dong, Wang, "Optimal Accounting of Differential Privacy
    via Characteristic Function", AISTATS 2022, Thm 10, composes such pairs):
      W > r: T' = T - 1 (the same units after t in both RCTs): weights p_T/p_(T-1) = e^(±ε/2), RCTs {1..T} and
      {1..T} minus t, scales 2/(εT) and 2/(ε(T-1)), shift <= 1/N (`_remove_tails`);
      W = r: T' = T for T >= r (D''s RCT takes the next arrival, which showed A: weight ratio 2), scales equal,
      a swap (`_swap_entries`); T < r: identical views.
    Each Laplace pair's loss is bounded stochastically, for every shift the data allow, by a law that does
    not depend on them; mixed over T ~ Lap+_ε(c), the laws are bounded over every position r
    (`_context_phase2_laws`). The type it joins has the pair reversed (D''s side). The two types' views are
    independent given the data, so
    δ(ε') <= E[(1 - e^(ε' - L_P - L_Q))_+] over independent losses (the bound is non-decreasing in each),
    computed by convolution on a 0.01 grid (losses rounded up; masses over-counted, never dropped), the
    largest over c ∈ [c_lo, c_hi]; ε is found by bisection.
    """
    n = check_int_at_least(horizon, 2, "horizon")
    m = check_int_at_least(num_types, 1, "num_types")
    return _phase2_epsilon(params.dp_epsilon, *_centre_range(params, n, m, rct_length_floor), delta)


def context_phase2_view_epsilon(epsilon: float, centre: int, delta: float) -> float:
    """`context_phase2_epsilon` at one value of ⌈T_min⌉ (every position, every outcome)."""
    c = check_int_at_least(centre, 0, "centre")
    return _phase2_epsilon(check_epsilon(epsilon), c, c, delta)


def _phase2_epsilon(epsilon: float, c_lo: int, c_hi: int, delta: float) -> float:
    """The bisection of `context_phase2_epsilon` over the centres c_lo..c_hi."""
    grid, mp, ip, mq, iq = _context_phase2_laws(epsilon, c_lo, c_hi)
    tot_p, tot_q = mp.sum(axis=1), mq.sum(axis=1)
    sums = np.array([signal.fftconvolve(a, b) for a, b in zip(mp, mq)])
    values = 2 * grid[0] + _GRID * np.arange(sums.shape[1])
    slack = 1e-12 * (tot_p + ip) * (tot_q + iq)  # round-off of the FFT convolution

    def delta_of(e: float) -> float:
        weight = -np.expm1(np.minimum(e - values, 0.0))
        finite = np.maximum(sums, 0.0) @ weight
        worst = float(np.max(finite + ip * (tot_q + iq) + iq * tot_p + slack))
        return min(1.0, worst * (1 + _ROUND_UP) + _ROUND_UP)

    return _epsilon_at(delta_of, delta)


def whole_algorithm_guarantees(
    params: ConSEParams, horizon: int, num_types: int, delta: float | None = None, rct_length_floor: float | None = None
) -> dict[str, Guarantee]:
    """(ε, δ) of DP-ConSE's whole output per neighbour kind, and the worst of them ("whole"), at δ (default the
    claim's 1/n): the tightest sound accounting dpaudit computes (section comment above). One type (M = 1) has
    no change of type. Raises for the no-reset variant (a reward enters every later mean) and where ⌈T_min⌉
    may take more than 1500 values."""
    n = check_int_at_least(horizon, 2, "horizon")
    delta = 1.0 / n if delta is None else check_open_unit(delta, "delta")
    src = "Li, Shi, Simchi-Levi, ICML 2024, Alg. 2"
    m = check_int_at_least(num_types, 1, "num_types")
    c_lo, c_hi = _centre_range(params, n, m, rct_length_floor)
    if c_hi - c_lo > _MAX_CENTRES:
        raise ValueError(f"⌈T_min⌉ may range over {c_lo}..{c_hi}, more than {_MAX_CENTRES} centres to compute")
    kinds: dict[str, tuple[Callable[[], float], str]] = {
        "reward_phase1": (
            lambda: reward_phase1_epsilon(params, n, delta),
            "one epoch mean, mixture over its length and arm count",
        ),
        "reward_phase2": (
            lambda: reward_phase2_epsilon(params, n, m, delta, rct_length_floor),
            "one estimate, mixture over T and the arm count, every T_min",
        ),
    }
    if m > 1:  # one type: no unit can change its type
        kinds["context_phase1"] = (
            lambda: context_phase1_epsilon(params, n, m, delta),
            "epoch lengths and means, the M RCT lengths, composed exactly",
        )
        kinds["context_phase2"] = (
            lambda: context_phase2_epsilon(params, n, m, delta, rct_length_floor),
            "both types' RCT ends and estimates, dominating pairs composed by convolution",
        )
    out = {
        k: Guarantee("approx", max(value(), 1e-12), delta, source=f"{k.replace('_', ' ')}: {why} ({src})")
        for k, (value, why) in kinds.items()
    }
    worst = max(out, key=lambda k: out[k].dp_epsilon)
    out["whole"] = Guarantee(
        "approx",
        out[worst].epsilon,
        delta,
        source=f"the whole output, worst neighbour kind {worst.replace('_', ' ')} ({src})",
    )
    return out
