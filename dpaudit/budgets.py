"""epsilon budgets of whole algorithms and of deployment plans, from their declared privacy.

An algorithm declares (`dpaudit.privacy.Privacy`) the `DpEvent` of what one run releases
about one user, the paper's claim and, where the paper's accounting fails, the corrected guarantee.
Here that event is handed to every accountant of `dpaudit.accounting` (epsilon at delta, or delta at
epsilon), next to the claim; `calibrate_algorithm` searches the algorithm's epsilon input for a
target; a plan composes several releases one user takes part in, sequentially (basic composition of
the events, Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", FnT TCS 2014, Thm 3.16;
every accountant then composes by its own theorem). Algorithms are found through `dpaudit.registry`,
which the plugins fill: this module never imports `dpaudit.algorithms`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import tomllib
from collections.abc import Callable
from typing import Any

import dp_accounting

from dpaudit import accounting
from dpaudit.registry import ALGORITHMS, AlgorithmEntry, load_plugins

__all__ = [
    "DEFAULT_DELTA",
    "Release",
    "accountant_rows",
    "algorithm_budget",
    "algorithm_entry",
    "best_row",
    "calibrate_algorithm",
    "cannot_answer",
    "correction_reason",
    "declared_privacy",
    "default_delta",
    "json_number",
    "load_plan",
    "no_finite_epsilon_reason",
    "plan_budget",
    "plan_event",
    "privacy_budget",
]

DEFAULT_DELTA = 1e-5
"""delta at which epsilon is reported when the claim names none (zCDP, RDP, no privacy)."""

CALIBRATION_RANGE = (1e-6, 100.0)
"""The searched range of an algorithm's epsilon input."""


def accountant_rows(
    event: dp_accounting.DpEvent,
    delta: float | None,
    epsilon: float | None,
    on_row: Callable[[dict], None] | None = None,
    accountants: list[str] | None = None,
) -> list[dict]:
    """One row per accountant: epsilon of `event` at `delta` (or delta at `epsilon`).

    An accountant that does not support the event, or runs out of memory or range on it, gives a row
    without a number (supported False, with the reason), never a guessed one.
    """
    if epsilon is None and delta is None:
        raise ValueError("give delta or epsilon")
    rows = []
    for name in accounting.ACCOUNTANTS if accountants is None else accountants:
        row: dict[str, Any] = {"accountant": name}
        try:
            if epsilon is not None:
                row["delta"] = float(accounting.delta(event, epsilon, name))
                row["supported"] = True
            elif delta is not None:
                row["epsilon"] = float(accounting.epsilon(event, delta, name))
                row["supported"] = True
                if math.isinf(row["epsilon"]):
                    row["reason"] = no_finite_epsilon_reason(name, delta)
        except accounting.UnsupportedEventError as exc:
            row["supported"] = False
            row["reason"] = exc.reason
        except (MemoryError, OverflowError) as exc:
            row["supported"] = False
            row["reason"] = _failure(exc)
            row["failed"] = True
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


_NO_PURE_EPSILON = {
    "pure": "the event is not private (a release without a privacy guarantee)",
    "approx": "its composition keeps a δ > 0 term (it is not pure DP as this accountant composes it)",
    "rdp": 'Rényi DP converts to (ε, δ) only for δ > 0 (Mironov, "Rényi Differential Privacy", CSF 2017, Prop. 3)',
    "zcdp": 'zCDP converts to (ε, δ) only for δ > 0 (Bun, Steinke, "Concentrated Differential Privacy", TCC 2016, '
    "Prop. 1.3)",
    "pld": "its privacy loss distribution keeps mass at an unbounded loss (a Gaussian's tails, or the tails "
    "discretisation and composition leave), so δ > 0 at every finite ε",
    "shuffle": "amplification by shuffling gives (ε, δ) only for δ > 0",
}


def no_finite_epsilon_reason(accountant: str, delta: float | None) -> str:
    """Why `accountant` gives no finite epsilon (its answer inf): at delta 0, the accountant's own limit; at a
    delta > 0, the event is not private at that delta under this accountant."""
    if delta == 0:
        return f"no answer at δ = 0: {_NO_PURE_EPSILON.get(accountant, 'no finite ε at δ = 0 from this accountant')}"
    return f"no finite ε at δ = {delta:g} under this accountant (the event is not private at this δ)"


def cannot_answer(accountant: str, event: dp_accounting.DpEvent, delta: float) -> str | None:
    """Why `accountant` cannot give a finite epsilon for events like `event` at `delta` (None: it can): the
    backend's unsupported reason, or at delta 0 an infinite answer on `event` (`no_finite_epsilon_reason`).
    Used to skip, before any search, an accountant that cannot answer."""
    try:
        value = accounting.epsilon(event, delta, accountant)
    except accounting.UnsupportedEventError as exc:
        return f"not supported: {exc.reason}"
    except (MemoryError, OverflowError) as exc:
        return _failure(exc)
    if delta == 0 and math.isinf(value) and not isinstance(event, dp_accounting.NonPrivateDpEvent):
        return no_finite_epsilon_reason(accountant, delta)
    return None


def _failure(exc: BaseException) -> str:
    """Why an accountant could not answer: what ran out (memory, or the range of a double) and the detail."""
    what = "ran out of memory" if isinstance(exc, MemoryError) else "overflowed (a number beyond the range of doubles)"
    detail = f": {exc}" if str(exc) else ""
    return f"this accountant {what} on this event ({type(exc).__name__}{detail})"


def best_row(rows: list[dict]) -> dict | None:
    """The smallest supported answer (every accountant's answer is a valid bound, so the least is too; inf when
    none is finite)."""
    key = "epsilon" if any("epsilon" in r for r in rows) else "delta"
    supported = [r for r in rows if r["supported"]]
    if not supported:
        return None
    best = min(supported, key=lambda r: r[key])
    return {"accountant": best["accountant"], key: best[key]}


def algorithm_entry(name: str) -> AlgorithmEntry:
    """The registered algorithm `name` (plugins loaded); ValueError naming the known ones on a miss,
    or when it declares no privacy for budgets."""
    load_plugins()
    entry = ALGORITHMS.get(name)
    _declaration(entry)
    return entry


def _declaration(entry: AlgorithmEntry) -> Callable[..., Any]:
    """`entry.privacy`; ValueError when the algorithm declares none."""
    if entry.privacy is None:
        raise ValueError(f"algorithm {entry.name!r} registers no privacy declaration (AlgorithmEntry.privacy)")
    return entry.privacy


def declared_privacy(name: str, horizon: int, params: dict | None = None) -> Any:
    """The `Privacy` algorithm `name` declares for a run of `horizon` rounds with `params`."""
    entry = algorithm_entry(name)
    known = {p.name for p in entry.params}
    unknown = sorted(set(params or {}) - known)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean --{close[0].replace('_', '-')}?)" if close else ""
        raise ValueError(
            f"{name} does not take {', '.join('--' + u.replace('_', '-') for u in unknown)}{hint}; "
            f"its parameters: {', '.join('--' + k.replace('_', '-') for k in sorted(known)) or 'none'}"
        )
    return _declaration(entry)(horizon=horizon, **(params or {}))


def default_delta(privacy: Any) -> float:
    """The claim's delta for a pure or (epsilon, delta) claim; DEFAULT_DELTA otherwise."""
    claim = privacy.claim
    return float(claim.delta) if claim.notion in ("pure", "approx") else DEFAULT_DELTA


def _event(privacy: Any) -> dp_accounting.DpEvent:
    return dp_accounting.NonPrivateDpEvent() if privacy.event is None else privacy.event


def privacy_budget(
    privacy: Any,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """The budget of one declared `Privacy` (any algorithm's, a user's own included): relation, trust
    model, the paper's claim, the corrected guarantee with the reason, and every accountant's answer for
    the declared event (epsilon at `delta`, default `default_delta`, or delta at `epsilon`).

    Each accountant's answer is a valid bound for the event, so the smallest (`best`) is too; the
    accountants and their sources are those of `dpaudit.accounting.epsilon`.

    Parameters
    ----------
    privacy : dpaudit.privacy.Privacy
        The declaration; its `event` is accounted for (a `NonPrivateDpEvent` when it is None).
    delta : float, optional
        The delta in [0, 1) at which epsilon is computed (keyword-only). Default: the claim's delta for a
        pure or (epsilon, delta) claim, else `DEFAULT_DELTA` (1e-5).
    epsilon : float, optional
        Compute delta at this epsilon in (0, inf) instead (keyword-only; not with `delta`).
    on_row : callable, optional
        Called with each accountant's row as soon as it is computed (for progress output).

    Returns
    -------
    dict
        `relation`, `relation_text`, `trust_model`, `trust_model_text`, `claim` and `corrected` (the
        guarantees as JSON, `corrected` None when the claim holds), `reason` (why they differ, or None),
        `delta` (or `epsilon`), `results` (one row per accountant: `accountant`, `epsilon` or `delta`,
        `supported`, and `reason` when there is no finite answer) and `best` (the smallest supported answer,
        None when no accountant supports the event).

    Raises
    ------
    TypeError
        `delta` or `epsilon` is not a real number.
    ValueError
        Both `delta` and `epsilon` given, or one out of range.

    Examples
    --------
    Five Laplace releases of scale 10 (in units of the sensitivity), claimed 0.5-DP:

    >>> import dp_accounting, dpaudit
    >>> releases = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(10.0), 5)
    >>> budget = dpaudit.privacy_budget(dpaudit.Privacy("user", "central", releases, dpaudit.Guarantee("pure", 0.5)))
    >>> budget["delta"], budget["best"]
    (0.0, {'accountant': 'pure', 'epsilon': 0.5})
    >>> [(row["accountant"], row.get("epsilon")) for row in budget["results"]]
    [('pure', 0.5), ('approx', 0.5), ('rdp', inf), ('zcdp', inf), ('pld', inf), ('shuffle', None)]
    """
    if delta is not None and epsilon is not None:
        raise ValueError("give delta or epsilon, not both")
    if epsilon is None and delta is None:
        delta = default_delta(privacy)
    declared = privacy.to_json()
    rows = accountant_rows(_event(privacy), delta, epsilon, on_row)
    out: dict[str, Any] = {
        **{k: declared[k] for k in ("relation", "relation_text", "trust_model", "trust_model_text")},
        "claim": declared["claim"],
        "corrected": declared["corrected"],
        "reason": correction_reason(privacy),
        ("delta" if epsilon is None else "epsilon"): delta if epsilon is None else epsilon,
        "results": rows,
        "best": best_row(rows),
    }
    return out


def correction_reason(privacy: Any) -> str | None:
    """Why the corrected guarantee differs from the claim, in one line with the paper it cites."""
    if privacy.corrected is None:
        return None
    text = privacy.note or "the paper's accounting does not hold for the implementation"
    return f"{text} [{privacy.corrected.source}]" if privacy.corrected.source else text


def algorithm_budget(
    name: str,
    horizon: int,
    params: dict | None = None,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """`privacy_budget` of the registered algorithm `name` run for `horizon` rounds with `params`.

    The algorithm declares its `Privacy` for the run (`AlgorithmEntry.privacy`); every accountant then
    answers for its event, next to the paper's claim and the corrected guarantee (`privacy_budget`).

    Parameters
    ----------
    name : str
        A registered algorithm (`dpaudit regret --list`; the plugins are loaded on first use).
    horizon : int
        The number of rounds (users) of the run, >= 1.
    params : dict, optional
        The algorithm's parameters by name (e.g. {"epsilon": 0.5}); its defaults for the others.
    delta : float, optional
        As for `privacy_budget` (keyword-only).
    epsilon : float, optional
        As for `privacy_budget` (keyword-only).
    on_row : callable, optional
        As for `privacy_budget` (keyword-only).

    Returns
    -------
    dict
        `algorithm`, `horizon` and `params`, then the keys of `privacy_budget`.

    Raises
    ------
    TypeError
        `horizon` is not an integer, or `delta`/`epsilon` not a real number.
    ValueError
        An unknown algorithm (the message lists the known ones), one that declares no privacy, a
        parameter it does not take, a value it rejects, or a bad `delta`/`epsilon`.

    Examples
    --------
    Hybrid-UCB (Hu, Huang, Mehta, arXiv:2102.07929, Thm 5) claims 0.5-DP at epsilon = 0.5; a leaf of its
    tree r lies in r + 1 released nodes (their Alg. 4), not r, so the sound guarantee is 0.75:

    >>> import dpaudit
    >>> budget = dpaudit.algorithm_budget("hybrid-ucb", 1000, {"epsilon": 0.5})
    >>> budget["claim"]["epsilon"], budget["corrected"]["epsilon"], budget["best"]
    (0.5, 0.75, {'accountant': 'pure', 'epsilon': 0.75})
    """
    privacy = declared_privacy(name, horizon, params)
    return {
        "algorithm": name,
        "horizon": horizon,
        "params": dict(params or {}),
        **privacy_budget(privacy, delta=delta, epsilon=epsilon, on_row=on_row),
    }


def _tuned(entry: AlgorithmEntry, params: dict) -> str:
    if entry.tuned is None:
        raise ValueError(f"algorithm {entry.name!r} has no privacy parameter to calibrate (it is not private)")
    if entry.tuned in params:
        raise ValueError(
            f"--{entry.tuned} is what calibrate computes for {entry.name}; do not give it "
            f"(to check a given value, use `dpaudit budget {entry.name} --{entry.tuned} ...`)"
        )
    return entry.tuned


def calibrate_algorithm(
    name: str,
    horizon: int,
    target_epsilon: float,
    target_delta: float,
    params: dict | None = None,
    *,
    accountant: str = "best",
) -> dict:
    """The largest value of algorithm `name`'s epsilon input (`AlgorithmEntry.tuned`) in CALIBRATION_RANGE
    whose declared event meets (target_epsilon, target_delta) under `accountant`.

    A walk over a half-decade grid of the range, from the grid value nearest the parameter's default
    (up while the target is met, down while it is not), finds the largest grid value that meets the
    target without evaluating far-off values (an accountant may be slow or give inf at an extreme);
    bracketing search (`dpaudit.accounting.calibration.calibrate`) then refines it towards the next grid
    value. The value returned was evaluated: its epsilon is recomputed here as `achieved_epsilon`
    (<= target). A parameter value the algorithm rejects counts as missing the target.

    Parameters
    ----------
    name : str
        A registered algorithm with an epsilon input (`AlgorithmEntry.tuned`).
    horizon : int
        The number of rounds (users) of the run, >= 1.
    target_epsilon : float
        The epsilon to meet, in (0, inf).
    target_delta : float
        The delta at which it is met, in [0, 1).
    params : dict, optional
        The algorithm's other parameters (not the one calibrated).
    accountant : str, default "best"
        One of `dpaudit.accounting.ACCOUNTANTS`, or "best" (keyword-only).

    Returns
    -------
    dict
        `accountant`, the tuned parameter's name mapped to the value found, and `achieved_epsilon`
        (its epsilon at `target_delta`, <= `target_epsilon`).

    Raises
    ------
    TypeError
        A target or `horizon` of the wrong type.
    ValueError
        An unknown algorithm, one with no epsilon input, the tuned parameter given in `params`, a bad
        parameter or target, or no value in `CALIBRATION_RANGE` meets the target.
    ArithmeticError
        The value found misses the target when re-checked (a safeguard: never expected).

    Examples
    --------
    Hybrid-UCB's real pure epsilon is 1.5 times its input (`algorithm_budget`), so a target of 1 needs 2/3:

    >>> import dpaudit
    >>> found = dpaudit.calibrate_algorithm("hybrid-ucb", 1000, 1.0, 0.0, accountant="pure")
    >>> round(found["epsilon"], 4), round(found["achieved_epsilon"], 4)
    (0.6667, 1.0)
    """
    import numpy as np

    from dpaudit.accounting.calibration import calibrate
    from dpaudit.validation import check_delta, check_epsilon

    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    entry = algorithm_entry(name)
    params = dict(params or {})
    tuned = _tuned(entry, params)
    declared_privacy(name, horizon, params)  # checks the other parameters and the horizon up front

    def make(x: float) -> dp_accounting.DpEvent:
        try:
            return _event(_declaration(entry)(horizon=horizon, **params, **{tuned: x}))
        except ValueError:  # outside the algorithm's domain: no guarantee, so it cannot meet the target
            return dp_accounting.NonPrivateDpEvent()

    def eps_at(x: float) -> float:
        try:
            return float(accounting.epsilon(make(x), target_delta, accountant))
        except (accounting.UnsupportedEventError, MemoryError, OverflowError):
            return math.inf

    lower, upper = CALIBRATION_RANGE
    grid = [float(x) for x in np.geomspace(lower, upper, 2 * round(math.log10(upper / lower)) + 1)]
    default = next((p.default for p in entry.params if p.name == tuned), None)
    start = default if isinstance(default, (int, float)) and default > 0 else 1.0
    i = min(range(len(grid)), key=lambda k: abs(math.log(grid[k] / start)))
    if eps_at(grid[i]) <= target_epsilon:
        while i + 1 < len(grid) and eps_at(grid[i + 1]) <= target_epsilon:
            i += 1
    else:
        while i > 0 and not eps_at(grid[i - 1]) <= target_epsilon:
            i -= 1
        if i == 0:
            raise ValueError(
                f"no {tuned} in [{lower:g}, {upper:g}] meets the target (epsilon {target_epsilon:g}, "
                f"delta {target_delta:g}) for {name} under accountant {accountant!r}: even "
                f"{tuned}={lower:g} gives epsilon {eps_at(lower):.6g}"
            )
        i -= 1
    value = grid[i]
    if i + 1 < len(grid):
        value = calibrate(
            make,
            target_epsilon,
            target_delta,
            lower=grid[i],
            upper=grid[i + 1],
            larger_is_private=False,
            accountant=accountant,
            rtol=1e-3,
        )
    achieved = eps_at(value)
    if not achieved <= target_epsilon:  # calibrate returns an evaluated safe end; re-checked, never assumed
        raise ArithmeticError(f"calibration returned {tuned}={value!r} with epsilon {achieved!r} > {target_epsilon!r}")
    return {"accountant": accountant, tuned: value, "achieved_epsilon": achieved}


@dataclasses.dataclass(frozen=True)
class Release:
    """One line of a plan: `count` runs of an algorithm (`algorithm`, `horizon`, `params`) or `count`
    releases of a named mechanism (`mechanism`, `params`), each about the same user."""

    label: str
    event: dp_accounting.DpEvent
    count: int
    claim: dict | None = None


PLAN_KEYS = ("releases",)
"""The keys of a plan's top level."""

RELEASE_KEYS = ("algorithm", "mechanism", "horizon", "params", "count", "label")
"""The keys of one release of a plan."""

MAX_COUNT = 2**63 - 1
"""The most releases one plan line (or `dpaudit budget --count`) composes: numpy's largest integer."""


class PlanError(ValueError):
    """A bad plan file; the message names the file and the table."""


def _plan_error(where: str, message: str) -> PlanError:
    return PlanError(f"plan {where}: {message}")


def _check_keys(path: str, table: str, given: dict, known: Any) -> None:
    """Every key of the plan table `table` is one of `known`; else ValueError naming the file, the
    table and the key, with a close match and the known keys."""
    import difflib

    known = sorted(known)
    unknown = [str(k) for k in given if k not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise _plan_error(path, f"unknown key {unknown[0]!r} in {table}{hint}; its keys: {', '.join(known) or 'none'}")


def _read_plan(path: str | pathlib.Path, name: str) -> Any:
    """The parsed plan file (called `name` in messages): JSON for a .json name, TOML otherwise."""
    p = pathlib.Path(path)
    try:
        text = p.read_text()
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, or a NUL byte in the path
        raise _plan_error(name, f"cannot read the file ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except ValueError as exc:  # a decode error, or an integer of more digits than Python reads
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise _plan_error(name, f"not valid {kind} ({exc})") from None


def load_plan(path: str | pathlib.Path) -> list[Release]:
    """Read a plan: TOML (`[[releases]]` tables) or JSON (`{"releases": [...]}`), each release with
    `algorithm` (+ `horizon`) or `mechanism`, optional `params` (a table) and `count` (default 1,
    at most MAX_COUNT). A key no table takes, at any level, is an error (never silently ignored).

    Parameters
    ----------
    path : str or pathlib.Path
        The plan file: JSON when its name ends in .json, TOML otherwise.

    Returns
    -------
    list of Release
        One `Release` per table, in order: its `label` (default the algorithm and horizon, or the
        mechanism), `event` (one run or release about one user), `count` and `claim` (an algorithm's
        claimed guarantee as JSON; None for a mechanism).

    Raises
    ------
    PlanError
        A ValueError naming the file and the table: the file cannot be read or parsed, a key is unknown,
        a value has the wrong type or is out of range, or an algorithm or mechanism rejects its parameters.
    TypeError
        `path` is not a string or path.

    Examples
    --------
    >>> import pathlib, tempfile, dpaudit
    >>> plan = '{"releases": [{"mechanism": "laplace", "params": {"scale": 2.0}, "count": 3}]}'
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "plan.json")
    ...     _ = path.write_text(plan)
    ...     releases = dpaudit.load_plan(path)
    >>> releases
    [Release(label='laplace', event=LaplaceDpEvent(noise_multiplier=2.0), count=3, claim=None)]
    """
    from dpaudit.validation import shorten

    name = str(path) if len(str(path)) <= 120 else shorten(str(path))
    data = _read_plan(path, name)
    if isinstance(data, dict):
        _check_keys(name, "the top level", data, PLAN_KEYS)
    items = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise _plan_error(name, "needs a non-empty list `releases`")
    return [_release(name, f"releases[{i}]", item) for i, item in enumerate(items)]


def _release(path: str, where: str, item: Any) -> Release:
    """One release of the plan `path`, the table `where` of it; PlanError (a ValueError) naming both, for a bad
    value or a value of the wrong type alike: the file's content is the value."""
    if not isinstance(item, dict):
        raise _plan_error(f"{path}, {where}", f"must be a table, got {item!r}")
    _check_keys(path, where, item, RELEASE_KEYS)
    params = item.get("params", {})
    count = item.get("count", 1)
    try:
        if not isinstance(params, dict):
            raise TypeError(f"`params` must be a table, got {params!r}")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"`count` must be an integer in [1, 2**63 - 1], got {count!r}")
        if not 1 <= count <= MAX_COUNT:
            raise ValueError(f"`count` must be an integer in [1, 2**63 - 1], got {count!r}")
        if ("algorithm" in item) == ("mechanism" in item):
            raise ValueError("give exactly one of `algorithm`, `mechanism`")
        if "algorithm" in item:
            return _algorithm_release(item, params, count)
        return _mechanism_release(path, where, item, params, count)
    except PlanError:
        raise
    except (TypeError, ValueError) as exc:
        raise _plan_error(f"{path}, {where}", str(exc)) from None


def _algorithm_release(item: dict, params: dict, count: int) -> Release:
    horizon = item.get("horizon")
    if isinstance(horizon, bool) or not isinstance(horizon, int):
        raise TypeError(f"`horizon` must be an integer, got {horizon!r}")
    privacy = declared_privacy(str(item["algorithm"]), horizon, params)
    label = item.get("label", f"{item['algorithm']} T={horizon}")
    return Release(str(label), _event(privacy), count, privacy.claim.to_json())


def _mechanism_release(path: str, where: str, item: dict, params: dict, count: int) -> Release:
    from dpaudit.accounting.named import MECHANISMS, event_for

    if "horizon" in item:
        raise ValueError("`horizon` applies to algorithms only")
    mech = str(item["mechanism"])
    if mech not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mech!r}; choose one of {', '.join(MECHANISMS)}")
    _check_keys(path, f"{where}.params (mechanism {mech!r})", params, MECHANISMS[mech].params)
    return Release(str(item.get("label", mech)), event_for(mech, params), count)


def plan_event(releases: list[Release]) -> dp_accounting.DpEvent:
    """Every release about one user, composed sequentially (each `count` times)."""
    return dp_accounting.ComposedDpEvent([dp_accounting.SelfComposedDpEvent(r.event, r.count) for r in releases])


def plan_budget(
    releases: list[Release],
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    on_row: Callable[[dict], None] | None = None,
    on_part: Callable[[dict], None] | None = None,
) -> dict:
    """One epsilon per user (at `delta`, default DEFAULT_DELTA) or delta (at `epsilon`) under every
    accountant for all of `releases`, with each release's own best answer alongside (`on_part` sees each
    as it is computed, before any row of the whole plan).

    The releases compose sequentially (basic composition of the events, Dwork, Roth, "The Algorithmic
    Foundations of Differential Privacy", FnT TCS 2014, Thm. 3.16); each accountant then composes them by
    its own theorem, and the smallest answer (`best`) is valid because each is.

    Parameters
    ----------
    releases : list of Release
        The plan (`load_plan`).
    delta : float, optional
        The delta in [0, 1) at which epsilon is computed (keyword-only); default `DEFAULT_DELTA` (1e-5).
    epsilon : float, optional
        Compute delta at this epsilon in (0, inf) instead (keyword-only; not with `delta`).
    on_row : callable, optional
        Called with each accountant's row of the whole plan as soon as it is computed.
    on_part : callable, optional
        Called with each release's own entry of `releases` as soon as it is computed.

    Returns
    -------
    dict
        `releases` (per release: `label`, `count`, `claim`, `best`), `delta` (or `epsilon`), `results`
        (one row per accountant, as in `privacy_budget`) and `best` for the whole plan.

    Raises
    ------
    TypeError
        `delta` or `epsilon` is not a real number.
    ValueError
        Both `delta` and `epsilon` given, or one out of range.

    Examples
    --------
    Three Laplace releases of scale 2 and one binary randomized response with epsilon 0.5, about the same user:

    >>> import pathlib, tempfile, dpaudit
    >>> plan = ('{"releases": [{"mechanism": "laplace", "params": {"scale": 2.0}, "count": 3},'
    ...         ' {"mechanism": "rr", "params": {"epsilon0": 0.5}}]}')
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "plan.json")
    ...     _ = path.write_text(plan)
    ...     budget = dpaudit.plan_budget(dpaudit.load_plan(path), delta=0.0)
    >>> [(part["label"], part["best"]["epsilon"]) for part in budget["releases"]], budget["best"]
    ([('laplace', 1.5), ('rr', 0.5)], {'accountant': 'pure', 'epsilon': 2.0})
    """
    if delta is not None and epsilon is not None:
        raise ValueError("give delta or epsilon, not both")
    if delta is None and epsilon is None:
        delta = DEFAULT_DELTA
    parts = []
    for r in releases:
        own = best_row(accountant_rows(dp_accounting.SelfComposedDpEvent(r.event, r.count), delta, epsilon))
        parts.append({"label": r.label, "count": r.count, "claim": r.claim, "best": own})
        if on_part is not None:
            on_part(parts[-1])
    rows = accountant_rows(plan_event(releases), delta, epsilon, on_row)
    return {
        "releases": parts,
        ("delta" if epsilon is None else "epsilon"): delta if epsilon is None else epsilon,
        "results": rows,
        "best": best_row(rows),
    }


def json_number(x: Any) -> Any:
    """JSON has no infinity: inf (and nan) are written as strings, recursively."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: json_number(v) for k, v in x.items()}
    if isinstance(x, list):
        return [json_number(v) for v in x]
    return x
