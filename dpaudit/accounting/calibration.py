"""Calibration: the smallest noise (or largest local epsilon, or largest count) that meets a
target (epsilon, delta) under a chosen accountant.

Noise and local epsilons are searched by dp-accounting's `calibrate_dp_mechanism` with dpaudit's
accountants behind its `PrivacyAccountant` interface; counts by `search.largest_accepted_count`.
Every value returned was *evaluated* and meets the target, whatever the tolerance: monotonicity
of the guarantee in the parameter is assumed only for the tightness of the answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import dp_accounting

from dpaudit.accounting.accountants import epsilon as _epsilon
from dpaudit.accounting.named import MECHANISMS, event_for
from dpaudit.accounting.privacy_accountant import PrivacyAccountant, common_relation
from dpaudit.accounting.search import largest_accepted_count
from dpaudit.validation import check_delta, check_epsilon, check_int_at_least, check_positive

__all__ = ["calibrate", "calibrate_count", "calibrate_parameter"]


def calibrate(
    make_event: Callable[[float], dp_accounting.DpEvent],
    target_epsilon: float,
    target_delta: float,
    *,
    lower: float,
    upper: float,
    larger_is_private: bool = True,
    accountant: str = "best",
    rtol: float = 1e-4,
) -> float:
    """The parameter in [lower, upper] closest to the non-private side that meets the target.

    `larger_is_private=True` (noise): the smallest x with epsilon(make_event(x), target_delta) <= target_epsilon.
    `larger_is_private=False` (local epsilon): the largest such x. The search is dp-accounting's
    `calibrate_dp_mechanism` (Brent's method, then a check of the sign at the root) with dpaudit's
    `PrivacyAccountant(accountant)` under the neighbouring relation of the releases
    (`common_relation`); on log x to relative tolerance `rtol` when lower > 0, else on x to
    `rtol * max(|lower|, |upper|)`. The value returned is one whose epsilon was evaluated here and
    met the target, whatever the tolerance; monotonicity in x is assumed only for its tightness.

    Parameters
    ----------
    make_event : callable
        `make_event(x) -> dp_accounting.DpEvent`: what is released about one user at parameter x.
    target_epsilon : float
        The epsilon to meet, in (0, inf).
    target_delta : float
        The delta at which it is met, in [0, 1).
    lower, upper : float
        The bracket searched, lower < upper (keyword-only).
    larger_is_private : bool, default True
        True when privacy improves as x grows (a noise scale), False when it worsens (a local epsilon).
    accountant : str, default "best"
        One of `ACCOUNTANTS`, or "best".
    rtol : float, default 1e-4
        Relative tolerance of the search, > 0.

    Returns
    -------
    float
        The x found: the smallest (noise) or largest (local epsilon) that meets the target, within `rtol`.

    Raises
    ------
    TypeError
        `target_epsilon`, `target_delta` or `rtol` is not a real number.
    ValueError
        A target or `rtol` out of range, lower >= upper, an unknown `accountant`, or even the safe end of
        the bracket misses the target (widen the bracket).
    UnsupportedEventError
        `accountant` cannot account for the events `make_event` builds.

    Examples
    --------
    The Gaussian noise (in units of the l2 sensitivity) one release needs for (1, 1e-5)-DP: 3.73, the
    analytic Gaussian mechanism's (Balle, Wang, "Improving the Gaussian Mechanism for Differential
    Privacy", ICML 2018, Thm. 8), where the classical sqrt(2 ln(1.25/delta))/epsilon (Dwork, Roth, FnT TCS
    2014, Thm. A.1) gives 4.84:

    >>> import dp_accounting
    >>> from dpaudit.accounting.calibration import calibrate
    >>> sigma = calibrate(dp_accounting.GaussianDpEvent, 1.0, 1e-5, lower=0.1, upper=100.0, accountant="pld")
    >>> round(sigma, 2)
    3.73
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    if not (lower < upper):
        raise ValueError(f"need lower < upper, got lower={lower!r}, upper={upper!r}")
    rtol = check_positive(rtol, "rtol")
    geometric = lower > 0
    to_x: Callable[[float], float] = math.exp if geometric else float
    passed: dict[float, bool] = {}  # the x evaluated here, and whether each met the target

    def ok(x: float) -> bool:
        if x not in passed:
            passed[x] = _epsilon(make_event(x), target_delta, accountant) <= target_epsilon
        return passed[x]

    safe, unsafe = (upper, lower) if larger_is_private else (lower, upper)
    if not ok(safe):
        raise ValueError(
            f"target (epsilon={target_epsilon}, delta={target_delta}) is not met even at the bracket end {safe!r}"
            f" under accountant {accountant!r}; widen the bracket"
        )
    if ok(unsafe):
        return unsafe
    relation = common_relation(make_event(safe))
    ends = (math.log(lower), math.log(upper)) if geometric else (lower, upper)
    t = dp_accounting.calibrate_dp_mechanism(
        lambda: PrivacyAccountant(accountant, relation),
        lambda t: make_event(to_x(t)),
        target_epsilon,
        target_delta,
        bracket_interval=dp_accounting.ExplicitBracketInterval(*ends),
        tol=math.log1p(rtol) if geometric else rtol * max(abs(lower), abs(upper)),
    )
    x = to_x(t)
    # dp-accounting checks the sign at the value it returns; it is checked again here, and a value
    # that misses the target (never seen) gives way to the safe end, which was evaluated above
    return x if ok(x) else safe


def calibrate_parameter(
    mechanism: str,
    target_epsilon: float,
    target_delta: float,
    *,
    count: int = 1,
    params: dict | None = None,
    accountant: str = "best",
    lower: float | None = None,
    upper: float | None = None,
) -> float:
    """Calibrate the tuned parameter of a named mechanism (`named.MECHANISMS`: the noise of
    gaussian/laplace/discrete-laplace/discrete-gaussian/skellam, the local epsilon of rr/shuffle/
    epsilon-delta, the number of noise trials of binomial) for `count` releases. Default bracket:
    [1e-4, 1e6] for noise, [1e-6, 50] for epsilons; discrete-gaussian sigma [0.5, 1e6], skellam
    variance and binomial trials [1, 1e8]."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r}; choose one of {', '.join(MECHANISMS)}")
    mech = MECHANISMS[mechanism]
    count = check_int_at_least(count, 1, "count")
    base = dict(params or {})
    if mech.larger_is_private:
        lo0 = {"discrete-gaussian": 0.5, "skellam": 1.0, "binomial": 1.0}.get(mechanism, 1e-4)
        hi0 = {"skellam": 1e8, "binomial": 1e8}.get(mechanism, 1e6)
        lo, hi = (lo0 if lower is None else lower), (hi0 if upper is None else upper)
    else:
        lo, hi = (1e-6 if lower is None else lower), (50.0 if upper is None else upper)

    def make(x: float) -> dp_accounting.DpEvent:
        return dp_accounting.SelfComposedDpEvent(event_for(mechanism, {**base, mech.tuned: x}), count)

    value = calibrate(
        make,
        target_epsilon,
        target_delta,
        lower=lo,
        upper=hi,
        larger_is_private=mech.larger_is_private,
        accountant=accountant,
    )
    # binomial trials are rounded up when the event is built: report the count actually checked
    return float(math.ceil(value)) if mechanism == "binomial" else value


def calibrate_count(
    event: dp_accounting.DpEvent,
    target_epsilon: float,
    target_delta: float,
    *,
    accountant: str = "best",
    max_count: int = 10**7,
) -> int:
    """The largest k <= max_count such that k releases of `event` meet the target (0 if none)."""
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    max_count = check_int_at_least(max_count, 1, "max_count")

    def ok(k: int) -> bool:
        return _epsilon(dp_accounting.SelfComposedDpEvent(event, k), target_delta, accountant) <= target_epsilon

    return largest_accepted_count(ok, max_count)
