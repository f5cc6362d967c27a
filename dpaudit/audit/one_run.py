"""Auditing in one run: a confidence lower bound on epsilon from a single run with m random canaries.

    from dpaudit.audit import one_run
    result = one_run(mechanism, num_canaries=10_000, score=score, claim_epsilon=1.0)
    result.epsilon_lower   # lower bound on epsilon at claim_delta, valid with prob. >= confidence
    result.verdict         # "violation" if epsilon_lower > claim_epsilon else "consistent"

`mechanism(inclusion, rng)` runs the algorithm once with canary i present iff inclusion[i]
(booleans, shape (m,)); `score(output)` returns m floats, higher meaning "more likely included".
The bound is a bound for `output`, so `output` must be what the algorithm releases under its trust
model (e.g. a central algorithm's noisy release, never the trusted server's exact sum).  A family
that hosts canaries exposes `one_run_target(horizon, num_canaries, ...)` returning this
(mechanism, score) pair, its mechanism returning only the released view, so `one_run(*target, ...)`
style calls need no glue.

Method (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
Algorithm 1 and Theorem 3.1): dpaudit draws the inclusion vector with a fair coin per canary, runs
the mechanism once, guesses "in" for the k_+ highest and "out" for the k_- lowest scores (ties
broken by canary index, which the output does not influence), and turns the number of correct
guesses into a lower bound on epsilon with `dpaudit.audit.one_run_bound` (Theorem 3.1).
`analysis="fdp"` reads the same count with the f-DP analysis of Mahloujifar, Melis, Chaudhuri,
"Auditing f-Differential Privacy in One Run" (ICML 2025, Alg. 3; `dpaudit.audit.one_run_fdp`): it
tests a claimed trade-off curve (an (epsilon, delta), GDP mu or `DpEvent` claim) and reports the
largest GDP mu and (epsilon at claim_delta) that the count rejects.  `analysis="order-statistics"`
reads it with the order-statistics analysis of Xiang, Wang, Xiao, Tian, Wang, "Tight Privacy Audit in One
Run" (arXiv 2509.08704, 2025; `dpaudit.audit.one_run_order`): the same claims and figures, from the exact
law of the count of the k most confident guesses over independent canonical f-DP channels, so it holds for
mechanisms whose canaries do not interfere (each canary released through its own noise), and for every
mechanism under a pure epsilon claim.
The pair (k_+, k_-) is either fixed by the caller (no correction: it does not look at the
outcome) or the best of a grid of pairs, each tested at (1 - confidence) / grid size (Bonferroni);
`selection` in the result says which.  The default grid pairs every k in
{0} U {ceil(m / 2^j): j >= 1} on both sides.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import dp_accounting
import numpy as np

import dpaudit
from dpaudit.audit.one_run_bound import best_one_run_epsilon
from dpaudit.audit.one_run_fdp import (
    approx_dp_curve,
    event_curve,
    fdp_epsilon_lower,
    fdp_mu_lower,
    fdp_rejects,
    gaussian_curve,
)
from dpaudit.audit.one_run_order import (
    approx_dp_law,
    event_law,
    gaussian_law,
    order_epsilon_lower,
    order_mu_lower,
    order_rejects,
)
from dpaudit.privacy import event_to_json
from dpaudit.validation import check_choice, check_positive

__all__ = ["OneRunResult", "default_guess_grid", "one_run"]

Mechanism = Callable[[np.ndarray, np.random.Generator], Any]
Score = Callable[[Any], Any]


@dataclass(frozen=True)
class OneRunResult:
    """Outcome of `dpaudit.audit.one_run`.

    `epsilon_lower` is a lower bound on the epsilon of the mechanism at `claim_delta`, valid with
    probability >= `confidence` over the canary coins and the mechanism's noise; `verdict` is
    "violation" when it exceeds `claim_epsilon`, else "consistent".  The attacker guessed "in" for
    `guessed_in` (the k_plus highest scores, `correct_plus` of them right) and "out" for
    `guessed_out` (the k_minus lowest, `correct_minus` right).  `selection` is "fixed" (the caller's
    pair, tested at 1 - confidence) or "grid" (the best of `grid_size` pairs, each tested at
    `level` = (1 - confidence) / grid_size).  The bound is Theorem 3.1 of Steinke, Nasr, Jagielski,
    "Privacy Auditing with One (1) Training Run" (NeurIPS 2023); `dpaudit.audit.one_run` has an example.

    With `analysis` "fdp" (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run",
    ICML 2025, Alg. 3) `epsilon_lower` is the largest epsilon whose (epsilon, claim_delta)-DP curve the
    count rejects, `mu_lower` the largest GDP mu it rejects (the mechanism is not mu-GDP for mu <= it),
    and `verdict` is "violation" iff the claim's curve is rejected; the claim is `claim_epsilon` (with
    `claim_delta`), `claim_mu` or `claim_event` (JSON of the `DpEvent`), the others None.  The pair
    reported is the one that gives `epsilon_lower` for an epsilon claim, else `mu_lower`.  All figures
    of one result hold together with probability >= `confidence`.  `analysis` "order-statistics" (Xiang et
    al., "Tight Privacy Audit in One Run", arXiv 2509.08704, 2025) fills the same fields with the same
    meaning, for mechanisms whose canaries do not interfere (`dpaudit.audit.one_run_order`).
    """

    epsilon_lower: float
    verdict: str
    claim_epsilon: float | None
    claim_delta: float
    confidence: float
    seed: int
    num_canaries: int
    selection: str
    grid_size: int
    level: float
    k_plus: int
    k_minus: int
    guesses: int
    correct: int
    correct_plus: int
    correct_minus: int
    guessed_in: tuple[int, ...]
    guessed_out: tuple[int, ...]
    version: str
    analysis: str = "epsilon"
    mu_lower: float | None = None
    claim_mu: float | None = None
    claim_event: Any = dataclasses.field(default=None, hash=False)

    @property
    def accuracy(self) -> float:
        """correct / guesses (nan when no guess was made)."""
        return self.correct / self.guesses if self.guesses else math.nan

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (all fields, plus "type": "OneRunResult")."""
        out = dataclasses.asdict(self)
        out["guessed_in"] = list(self.guessed_in)
        out["guessed_out"] = list(self.guessed_out)
        out["type"] = "OneRunResult"
        return out

    def to_json(self, indent: int | None = 2) -> str:
        """The result as strict JSON text."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


def default_guess_grid(num_canaries: int) -> tuple[tuple[int, int], ...]:
    """Every (k_+, k_-) with k in {0} U {ceil(m / 2^j): j >= 1}, k_+ + k_- <= m, not both 0."""
    m = _positive_int("num_canaries", num_canaries)
    found, j = {0}, 1
    while 1 not in found:
        found.add(-(-m // 2**j))
        j += 1
    ks = sorted(found)
    return tuple((a, b) for a in ks for b in ks if 0 < a + b <= m)


def one_run(
    mechanism: Mechanism,
    num_canaries: int,
    score: Score,
    claim_epsilon: float | None = None,
    claim_delta: float = 0.0,
    confidence: float = 0.95,
    seed: int = 0,
    guesses: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
    *,
    analysis: str = "epsilon",
    claim_mu: float | None = None,
    claim_event: dp_accounting.DpEvent | None = None,
) -> OneRunResult:
    """Audit `mechanism` in one run with `num_canaries` canaries: a lower bound on its epsilon.

    Each canary is included by a fair coin; the attacker guesses "in" for the k_+ highest scores and
    "out" for the k_- lowest, and r correct guesses out of k = k_+ + k_- give epsilon_lower, the largest
    epsilon whose tail bound P[Binomial(k, e^eps / (1 + e^eps)) >= r] (plus the theorem's delta term) is
    still at most the test's level (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run",
    NeurIPS 2023, Algorithm 1 and Theorem 3.1). The coins come from `numpy.random.SeedSequence(seed)`;
    the mechanism gets an independent child generator.

    Parameters
    ----------
    mechanism : callable
        `mechanism(inclusion, rng) -> output`: one run of the algorithm with canary i present iff
        `inclusion[i]` (a boolean array of shape (num_canaries,)); `output` must be what it releases.
    num_canaries : int
        m, the number of canaries, >= 1.
    score : callable
        `score(output) -> array` of m floats (no NaN), higher meaning "more likely included".
    claim_epsilon : float, optional
        The claimed epsilon, finite and > 0; required for `analysis="epsilon"`.
    claim_delta : float, default 0.0
        The claimed delta, in [0, 1); with `analysis="fdp"` also the delta of `epsilon_lower`.
    confidence : float, default 0.95
        Probability, over the coins and the mechanism's noise, that the bound holds; in (0, 1).
    seed : int, default 0
        A non-negative integer: the same seed gives the same coins and the same result.
    guesses : pair or sequence of pairs, optional
        (k_plus, k_minus) fixed in advance (no correction), a sequence of pairs to search (Bonferroni
        over its length), or None for `default_guess_grid(num_canaries)`; 0 < k_plus + k_minus <= m.
    analysis : {"epsilon", "fdp", "order-statistics"}, default "epsilon"
        "epsilon": Steinke et al.'s Theorem 3.1.  "fdp": the f-DP recursion of Mahloujifar, Melis,
        Chaudhuri (ICML 2025, Alg. 3), which tests the claim's trade-off curve and adds `mu_lower`.
        "order-statistics": Xiang et al. (arXiv 2509.08704, 2025), the same claims and fields, tighter,
        valid when the canaries do not interfere (each released through its own independent noise) or
        the claim is pure epsilon (`dpaudit.audit.one_run_order`).
        The choice must be made before the run (choosing after seeing both voids the confidence).
    claim_mu : float, optional
        With `analysis="fdp"` or "order-statistics": a claimed GDP mu > 0 (f(a) = Phi(Phi^-1(1 - a) - mu)).
    claim_event : dp_accounting.DpEvent, optional
        With `analysis="fdp"` or "order-statistics": a claimed event, its curve the envelope of its
        (eps, delta(eps))-DP curves from dpaudit's pld accountant (`dpaudit.audit.one_run_fdp.event_curve`,
        `dpaudit.audit.one_run_order.event_law`).  With these analyses exactly one of `claim_epsilon`,
        `claim_mu`, `claim_event` is given.

    Returns
    -------
    OneRunResult
        `epsilon_lower`, valid with probability >= `confidence`, and `verdict` ("violation" when it
        exceeds `claim_epsilon`, else "consistent"), with the guesses that gave it.

    Raises
    ------
    ValueError
        A parameter of the wrong type or out of range (each named in the message), or `score(output)`
        of the wrong shape or with a NaN, or a claim missing or given twice.
    TypeError
        `analysis` not a string, `claim_mu` not a number or `claim_event` not a `DpEvent`.

    Examples
    --------
    Each canary moves its own coordinate by 1 under Laplace noise of scale 1/2, so the mechanism is
    2-DP for each canary, and a claim of 1 is refuted:

    >>> import dpaudit
    >>> def mechanism(inclusion, rng):
    ...     return inclusion + rng.laplace(0.0, 0.5, inclusion.size)
    >>> result = dpaudit.one_run(mechanism, 1000, score=lambda output: output, claim_epsilon=1.0, seed=0)
    >>> result.verdict, round(result.epsilon_lower, 2)
    ('violation', 1.47)

    The f-DP analysis of the same run: a 2-DP mechanism is no better than about 0.45-GDP here, so a
    claim of 0.25-GDP is refuted:

    >>> fdp = dpaudit.one_run(mechanism, 1000, score=lambda output: output, analysis="fdp", claim_mu=0.25)
    >>> fdp.verdict, round(fdp.mu_lower, 2), round(fdp.epsilon_lower, 2)
    ('violation', 0.45, 1.47)
    """
    analysis = check_choice(analysis, ("epsilon", "fdp", "order-statistics"), "analysis")
    m = _positive_int("num_canaries", num_canaries)
    curve, event_json = _claim_curve(analysis, claim_epsilon, claim_delta, confidence, claim_mu, claim_event)
    pairs, selection = _pairs(guesses, m)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")

    coin_seq, mech_seq = np.random.SeedSequence(int(seed)).spawn(2)
    inclusion = np.random.default_rng(coin_seq).random(m) < 0.5
    output = mechanism(inclusion.copy(), np.random.default_rng(mech_seq))
    scores = _scores(score(output), m)

    order = np.argsort(-scores, kind="stable")  # highest first; ties by canary index
    rev = order[::-1]  # lowest first: the k_+ top and k_- bottom never overlap when k_+ + k_- <= m
    hits_in = np.concatenate(([0], np.cumsum(inclusion[order])))
    hits_out = np.concatenate(([0], np.cumsum(~inclusion[rev])))

    kp = np.array([p[0] for p in pairs], dtype=np.int64)
    km = np.array([p[1] for p in pairs], dtype=np.int64)
    level = (1.0 - float(confidence)) / len(pairs)
    k_all, v_all = kp + km, hits_in[kp] + hits_out[km]
    mu_lower: float | None = None
    if curve is None:
        best, epsilon_lower = best_one_run_epsilon(m, k_all, v_all, float(claim_delta), level)
        violation = epsilon_lower > cast(float, claim_epsilon)
    elif analysis == "order-statistics":
        eps_best, epsilon_lower = order_epsilon_lower(m, k_all, v_all, float(claim_delta), level)
        mu_best, mu_lower = order_mu_lower(m, k_all, v_all, level)
        violation = bool(order_rejects(curve, m, k_all, v_all, level).any())
        best = eps_best if claim_epsilon is not None else mu_best
    else:
        eps_best, epsilon_lower = fdp_epsilon_lower(m, k_all, v_all, float(claim_delta), level)
        mu_best, mu_lower = fdp_mu_lower(m, k_all, v_all, level)
        violation = bool(fdp_rejects(curve, m, k_all, v_all, level).any())
        best = eps_best if claim_epsilon is not None else mu_best
    k_plus, k_minus = int(kp[best]), int(km[best])
    return OneRunResult(
        epsilon_lower=epsilon_lower,
        verdict="violation" if violation else "consistent",
        claim_epsilon=None if claim_epsilon is None else float(claim_epsilon),
        claim_delta=float(claim_delta),
        confidence=float(confidence),
        seed=int(seed),
        num_canaries=m,
        selection=selection,
        grid_size=len(pairs),
        level=level,
        k_plus=k_plus,
        k_minus=k_minus,
        guesses=k_plus + k_minus,
        correct=int(hits_in[k_plus] + hits_out[k_minus]),
        correct_plus=int(hits_in[k_plus]),
        correct_minus=int(hits_out[k_minus]),
        guessed_in=tuple(int(i) for i in np.sort(order[:k_plus])),
        guessed_out=tuple(int(i) for i in np.sort(rev[:k_minus])),
        version=dpaudit.__version__,
        analysis=analysis,
        mu_lower=mu_lower,
        claim_mu=None if claim_mu is None else float(claim_mu),
        claim_event=event_json,
    )


def _claim_curve(
    analysis: str,
    claim_epsilon: float | None,
    claim_delta: float,
    confidence: float,
    claim_mu: float | None,
    claim_event: dp_accounting.DpEvent | None,
) -> tuple[Any, Any]:
    """Check the claim; (None, None) for analysis "epsilon", else (the claim's trade-off curve, or its accuracy
    law for "order-statistics", and the event's JSON)."""
    given = [
        name
        for name, v in (("claim_epsilon", claim_epsilon), ("claim_mu", claim_mu), ("claim_event", claim_event))
        if v is not None
    ]
    if analysis == "epsilon":
        if given != ["claim_epsilon"]:
            raise ValueError(
                "analysis='epsilon' takes claim_epsilon only (claim_mu and claim_event need analysis='fdp' or "
                f"'order-statistics'), got {given}"
            )
        _check_claim(claim_epsilon, claim_delta, confidence)
        return None, None
    if len(given) != 1:
        raise ValueError(
            f"analysis={analysis!r} takes exactly one of claim_epsilon, claim_mu, claim_event, got {given}"
        )
    _check_claim(1.0 if claim_epsilon is None else claim_epsilon, claim_delta, confidence)
    order = analysis == "order-statistics"
    if claim_epsilon is not None:
        make = approx_dp_law if order else approx_dp_curve
        return make(float(claim_epsilon), float(claim_delta)), None
    if claim_mu is not None:
        mu = check_positive(claim_mu, "claim_mu")
        return (gaussian_law(mu) if order else gaussian_curve(mu)), None
    if not isinstance(claim_event, dp_accounting.DpEvent):
        raise TypeError(f"claim_event must be a dp_accounting.DpEvent, got {type(claim_event).__name__}")
    return (event_law(claim_event) if order else event_curve(claim_event)), event_to_json(claim_event)


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_claim(claim_epsilon: float | None, claim_delta: float, confidence: float) -> None:
    if not (
        isinstance(claim_epsilon, (int, float, np.floating)) and math.isfinite(claim_epsilon) and claim_epsilon > 0
    ):
        raise ValueError(f"claim_epsilon must be a finite number > 0, got {claim_epsilon!r}")
    if not (isinstance(claim_delta, (int, float, np.floating)) and 0.0 <= claim_delta < 1.0):
        raise ValueError(f"claim_delta must be in [0, 1), got {claim_delta!r}")
    if not (isinstance(confidence, (int, float, np.floating)) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _pairs(guesses: Any, m: int) -> tuple[tuple[tuple[int, int], ...], str]:
    if guesses is None:
        return default_guess_grid(m), "grid"
    arr = np.asarray(guesses)
    pairs: tuple[tuple[Any, ...], ...]
    if arr.shape == (2,):
        pairs, selection = (tuple(guesses),), "fixed"
    elif arr.ndim == 2 and arr.shape[1] == 2 and arr.shape[0] >= 1:
        pairs, selection = tuple(tuple(p) for p in guesses), "grid"
    else:
        raise ValueError(f"guesses must be a pair (k_plus, k_minus) or a sequence of pairs, got {guesses!r}")
    for kp, km in pairs:
        ok = all(not isinstance(k, bool) and isinstance(k, (int, np.integer)) and k >= 0 for k in (kp, km))
        if not ok or not 0 < kp + km <= m:
            raise ValueError(
                f"guesses must hold non-negative integers with 0 < k_plus + k_minus <= "
                f"num_canaries = {m}, got ({kp!r}, {km!r})"
            )
    return tuple((int(a), int(b)) for a, b in pairs), selection


def _scores(raw: Any, m: int) -> np.ndarray:
    scores = np.asarray(raw, dtype=float)
    if scores.shape != (m,):
        raise ValueError(f"score(output) must have shape ({m},) (one score per canary), got {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError(f"score(output) must not contain NaN, got {int(np.isnan(scores).sum())} NaN value(s)")
    return scores
