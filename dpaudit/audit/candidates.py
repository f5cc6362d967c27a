"""The candidate scores fitted on the selection split, and the events chosen among them.

Learned score families are fitted on the first half of the selection split and judged on the second;
the chosen ones are refitted on the whole split and their thresholds chosen again there
(`refit_on_selection`); alternates that nearly repeat an earlier event are dropped (`distinct`).
Whether the pilot selection resolved its strongest event decides the selection extension (`resolved`).
Everything here reads the selection runs only, so the estimation split's bounds stay valid.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpaudit.audit.chain import fit_chain_scores
from dpaudit.audit.chunks import counts_above
from dpaudit.audit.classifier import fit_classifier_scores
from dpaudit.audit.families import family_of, keep_families
from dpaudit.audit.features import FitRows, fit_feature_scores
from dpaudit.audit.grouped import fit_group_scores
from dpaudit.audit.masked import fit_masked_scores
from dpaudit.audit.options import AuditOptions, Plan
from dpaudit.audit.scores import Score, ScoreValues, UserScore, fit_scores
from dpaudit.audit.selection import DIRECTIONS, EventPlan, choose_events

__all__ = [
    "RESOLVED_MIN_COUNT",
    "RESOLVED_SE",
    "Candidates",
    "binomial",
    "candidate_scores",
    "choose",
    "distinct",
    "pilot_ratio",
    "refit_on_selection",
    "resolved",
]

#: Category scores with more fitted categories than this are not refitted on the whole selection split.
REFIT_MAX_CATEGORIES = 64
#: Two events whose Jaccard index on the selection runs is at least this are the same event (`distinct`).
SAME_EVENT = 0.95
#: With `selection_extension`, the pilot is resolved when its predicted bound is at least this many
#: selection standard errors of the chosen event's log ratio (`resolved`).  Measured on the rows of
#: benchmarks/peers/ at 10^6 runs, six fresh selection draws each (benchmarks/figures/
#: extension_policy.txt): the 0.2 extension raised the expected bound of every row whose pilots sit
#: below 4 s.e. (SVT1 0.037 -> 0.042, SVT2 0.032 -> 0.047, LaplaceParallel 0.015 -> 0.018,
#: NumericalSVT 0.024 -> 0.027, SVT3 0.114 -> 0.120; worst draws 0.009 / 0.004 / 0.006 -> 0.033 /
#: 0.036 / 0.011), and did nothing for SVT6 (0.228 -> 0.226), whose pilots sit at 3.4-7.5 s.e., as do
#: Rappor's, PrefixSum's and SVT4's on the benchmark's seeds (4.1-16.7).  A pilot led by a coarse event
#: clears 1.5 s.e. while still poor: SVT1/SVT2 on seed 3, 3.6 s.e. and 0.019 / 0.027 in the end.
RESOLVED_SE = 4.0
#: ... or when one of its two selection counts is below this (`resolved`).
RESOLVED_MIN_COUNT = 20

#: A family's fitter: its scores fitted on (d0 rows, d1 rows) and their `FitRows` (only those of the given
#: names where it fits several), to refit a chosen one on more rows.
Refit = Callable[[np.ndarray, np.ndarray, FitRows, frozenset[str]], list[Score]]


@dataclass(frozen=True)
class Candidates:
    """The candidate scores with their values on the selection runs they are judged on (as
    `choose_events` takes them), for each learned one (by name) the fitter that refits it, and the
    `FitRows` of the whole selection split (its atoms already shared by the families fitted on it)."""

    scored: list[tuple[Score, np.ndarray, np.ndarray]]
    fitter: dict[str, Refit]
    whole: FitRows | None = None


def candidate_scores(
    score: Score | None,
    sel0: np.ndarray,
    sel1: np.ndarray,
    float_bits: bool = False,
    families: tuple[str, ...] | None = None,
) -> Candidates:
    """Candidate scores (see module docstring); only those of `families` when given
    (`dpaudit.audit.families`).

    Learned scores are fitted on the first half of the selection split and judged on the second;
    the engineered and classifier families are refitted on the whole split once chosen
    (`refit_on_selection`; the projections gain little and cost much).  The chain and masked
    families are fitted and judged on the whole split (few, well-populated parameters: halving their
    rows costs more than the in-sample choice, see `dpaudit.audit.chain.fit_chain_scores`).
    The families fitted on the same rows share their atoms and whitening (`FitRows`), and the scores
    judged on the same rows their coordinates (`ScoreValues`)."""
    if score is not None:
        return Candidates([(score, score(sel0), score(sel1))], {})
    half = len(sel0) // 2
    fit0, fit1 = sel0[:half], sel1[:half]
    refit_features: Refit = lambda a, b, rows, names: fit_feature_scores(a, b, float_bits, rows, names)  # noqa: E731
    refit_classifier: Refit = lambda a, b, rows, names: fit_classifier_scores(a, b, float_bits, rows)  # noqa: E731
    refit_groups: Refit = lambda a, b, rows, names: list(fit_group_scores(a, b, rows))  # noqa: E731
    fitted: list[tuple[Score, Refit | None]] = [(sc, None) for sc in fit_scores(fit0, fit1)]
    shared = FitRows(fit0, fit1)
    fitted += [(sc, refit_features) for sc in fit_feature_scores(fit0, fit1, float_bits, shared)]
    if families is None or "logistic-regression" in families:
        fitted += [(sc, refit_classifier) for sc in fit_classifier_scores(fit0, fit1, float_bits, shared)]
    if families is None or "group-count-log-ratio" in families:
        fitted += [(sc, refit_groups) for sc in fit_group_scores(fit0, fit1, shared)]
    del shared
    whole_rows = FitRows(sel0, sel1)
    whole = fit_chain_scores(sel0, sel1, whole_rows) if families is None or "chain-log-ratio" in families else []
    if families is None or "masked-value-log-ratio" in families:
        whole += fit_masked_scores(sel0, sel1, whole_rows)
    kept = [(sc, f) for sc, f in fitted if not families or family_of(sc.name) in families]
    kept_whole = keep_families(whole, families)
    if not kept and not kept_whole:
        found = sorted({str(family_of(sc.name)) for sc in [sc for sc, _ in fitted] + whole})
        raise ValueError(
            f"families={families!r} leaves no candidate score for these outputs; the families "
            f"fitted on them are {', '.join(found)}"
        )
    judged0, judged1 = ScoreValues(sel0[half:]), ScoreValues(sel1[half:])
    all0, all1 = ScoreValues(sel0), ScoreValues(sel1)
    scored: list[tuple[Score, np.ndarray, np.ndarray]] = []
    fitter: dict[str, Refit] = {}
    for sc, f in kept:
        a, b = (judged0, judged1) if sc.learned else (all0, all1)
        scored.append((sc, a(sc), b(sc)))
        if sc.learned and f is not None:
            fitter[sc.name] = f
    scored += [(sc, all0(sc), all1(sc)) for sc in kept_whole]
    return Candidates(scored, fitter, whole_rows)


def refit_on_selection(
    plans: dict[str, EventPlan], cands: Candidates, sel0: np.ndarray, sel1: np.ndarray, p: Plan, o: AuditOptions
) -> dict[str, EventPlan]:
    """Each chosen learned score with a refitter (leads and alternates) refitted on the whole
    selection split and its thresholds chosen again there (it was chosen on held-out runs; the refit
    only uses more runs).  Only for scores with few fitted values (`REFIT_MAX_CATEGORIES`): a
    category ratio over many rare rows would be chosen for its noise on the rows it was fitted on.
    Each family is refitted once, only its chosen scores, on rows shared with the other families
    (`FitRows`); a score chosen in both directions is evaluated, and its events chosen, once.

    The estimation split is untouched, so its Clopper-Pearson bounds stay valid."""

    def refitter(plan: EventPlan) -> Refit | None:
        fit = cands.fitter.get(plan.score.name)
        return None if fit is None or len(getattr(plan.score, "keys", ())) > REFIT_MAX_CATEGORIES else fit

    wanted: dict[int, set[str]] = {}  # per refitter, the names of the scores it refits
    for d in DIRECTIONS:
        for plan in (plans[d], *plans[d].alternates):
            fit = refitter(plan)
            if fit is not None:
                wanted.setdefault(id(fit), set()).add(plan.score.name)
    values0, values1 = ScoreValues(sel0), ScoreValues(sel1)
    refits: dict[int, dict[str, Score]] = {}
    events: dict[int, dict[str, EventPlan]] = {}  # per refitted score (by id), its events

    def final(plan: EventPlan) -> EventPlan:
        chosen = plan.score
        fit = refitter(plan)
        if fit is None:
            return plan
        if id(fit) not in refits:
            rows = cands.whole if cands.whole is not None else FitRows(sel0, sel1)
            refits[id(fit)] = {r.name: r for r in fit(sel0, sel1, rows, frozenset(wanted[id(fit)]))}
        sc = refits[id(fit)].get(chosen.name)
        if sc is None or type(sc) is not type(chosen):
            return plan
        if id(sc) not in events:
            events[id(sc)] = choose_events(
                [(sc, values0(sc), values1(sc))], p.n_est, o.claim_delta, p.level_eps, o.grid_size, ratio=binomial(o)
            )
        return events[id(sc)][plan.direction]

    def merged(plan: EventPlan) -> EventPlan:
        # The twin (`EventPlan.twin`) of a refitted score is its uncharged best event on the whole split:
        # the refitted plan's own twin, or its lead when the two agree (none if that is the lead itself).
        lead = final(plan)
        twin = next((a for a in plan.alternates if a.twin), None)
        refit = final(twin) if twin is not None else lead
        twin = next((a for a in refit.alternates if a.twin), None if refit is lead else refit)
        twins = () if twin is None else (dataclasses.replace(twin, twin=True, alternates=()),)
        others = (dataclasses.replace(final(a), alternates=()) for a in plan.alternates if not a.twin)
        return dataclasses.replace(lead, alternates=(*twins, *others))

    return {d: merged(plans[d]) for d in DIRECTIONS}


def distinct(
    plan: EventPlan,
    sel0: np.ndarray,
    sel1: np.ndarray,
    alternates: int,
    rows: tuple[ScoreValues, ScoreValues] | None = None,
) -> EventPlan:
    """`plan` with at most `alternates` alternates, dropping each whose epsilon event nearly repeats
    the lead's or an earlier alternate's on the selection runs (Jaccard index >= `SAME_EVENT`): a
    repeat costs Bonferroni level and cannot give a different bound.  `rows`, the `ScoreValues` of
    sel0 and of sel1, shares score values between calls (each input's rows scored as the events were
    chosen on them, without a copy of the selection split)."""
    if rows is None:
        rows = (ScoreValues(sel0), ScoreValues(sel1))

    def event(p: EventPlan) -> np.ndarray:
        return np.concatenate([p.sign * values(p.score) > p.threshold for values in rows])

    kept: list[EventPlan] = []
    seen = [event(plan)]
    for alt in plan.alternates:
        if len(kept) == alternates:
            break
        e = event(alt)
        if any(np.count_nonzero(e & f) >= SAME_EVENT * max(int(np.count_nonzero(e | f)), 1) for f in seen):
            continue
        kept.append(alt)
        seen.append(e)
    return dataclasses.replace(plan, alternates=tuple(kept))


def resolved(plans: dict[str, EventPlan], sel0: np.ndarray, sel1: np.ndarray) -> bool:
    """Whether the pilot's strongest event stands out of the selection split's noise.

    For the direction with the larger predicted bound (`EventPlan.predicted`), with a, b the fractions
    of the n selection runs of its first and second input in its epsilon event (add-1/2 smoothed),
    the selection split's standard error of log(a / b) is

        se = sqrt((1 - a) / (n a) + (1 - b) / (n b))       (delta method, two independent binomials),

    and the pilot counts as resolved when predicted >= `RESOLVED_SE` * se: the event was then not
    picked among candidates whose estimates are mostly noise.  It also counts as resolved when either
    count is below `RESOLVED_MIN_COUNT`: the delta method does not describe such counts, and an event
    that one input almost never gives (ReportNoisyMax4 of benchmarks/peers/: 27 against 8 of 10^5
    runs, a loss that is in fact infinite) is limited by the estimation split's size, which an
    extension would shorten.
    """
    return bool(pilot_ratio(plans, sel0, sel1) >= RESOLVED_SE)


def pilot_ratio(plans: dict[str, EventPlan], sel0: np.ndarray, sel1: np.ndarray) -> float:
    """predicted / se of the lead event (`resolved`); inf when a count is below `RESOLVED_MIN_COUNT`."""
    lead = max(DIRECTIONS, key=lambda d: (plans[d].predicted, -DIRECTIONS.index(d)))
    plan = plans[lead]
    n = len(sel0)
    k0 = int(counts_above(plan.score(sel0), plan.sign, np.array([plan.threshold]))[0])
    k1 = int(counts_above(plan.score(sel1), plan.sign, np.array([plan.threshold]))[0])
    first, second = (k0, k1) if lead == DIRECTIONS[0] else (k1, k0)
    if min(first, second) < RESOLVED_MIN_COUNT:
        return math.inf
    a, b = (first + 0.5) / (n + 1), (second + 0.5) / (n + 1)
    se = math.sqrt((1 - a) / (n * a) + (1 - b) / (n * b))
    return plan.predicted / se


def binomial(o: AuditOptions) -> bool:
    """Whether the thinned ratio test may bound the epsilon events (`dpaudit.audit.ratio`): delta = 0, and
    each count is binomial (not the sum of two folds' counts of cross-fitting)."""
    return o.claim_delta == 0.0 and not o.crossfit


def choose(
    user_score: UserScore | None,
    sel0: np.ndarray,
    sel1: np.ndarray,
    o: AuditOptions,
    p: Plan,
    n_counted: int,
    events: int = 1,
) -> dict[str, EventPlan]:
    """The events chosen on these selection rows (learned families fitted on their first half,
    refitted on all), with up to `events` - 1 alternates per direction."""
    cands = candidate_scores(user_score, sel0, sel1, o.float_bits, o.families)
    # spare runner-ups: some may repeat the lead's event once refitted (`distinct`)
    plans = choose_events(
        cands.scored, n_counted, o.claim_delta, p.level_eps, o.grid_size, 2 * (events - 1), binomial(o)
    )
    cands = dataclasses.replace(cands, scored=[])  # the candidates' values are not needed by the refits
    plans = refit_on_selection(plans, cands, sel0, sel1, p, o)
    del cands
    rows = (ScoreValues(sel0), ScoreValues(sel1))  # both directions' events on the same runs
    return {d: distinct(plans[d], sel0, sel1, events - 1, rows) for d in DIRECTIONS}
