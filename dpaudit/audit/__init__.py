"""The empirical auditor: a confidence lower bound on epsilon for a black-box mechanism.

(Not to be confused with `dpaudit.audits`, one letter longer: the catalog pairing the papers'
algorithms with accountants and this auditor.)

    from dpaudit.audit import audit
    result = audit(target, d0, d1, claim_epsilon=1.0, claim_delta=0.0,
                   samples=100_000, confidence=0.95, seed=0)
    result.epsilon_lower   # lower bound on epsilon at claim_delta, valid with prob. >= confidence
    result.verdict         # "violation" if epsilon_lower > claim_epsilon else "consistent"

`target(data, rng, size)` returns `size` independent runs on `data` (first axis): scalars, integer
vectors (actions, decisions, halting patterns) or real vectors (released statistics).

Method.  For any event E, an (epsilon, delta)-DP mechanism has P[M(d0) in E] <= e^eps P[M(d1) in E]
+ delta, so epsilon >= log((p0 - delta)/p1).  The runs on each input are split: on the selection
split the auditor fits score functions and chooses, per direction (d0 vs d1 and d1 vs d0), the event
{sign * score > t} of the family with the best predicted lower bound and those of up to two runner-up
families (`events_per_direction`, default 3); on the estimation split it counts the runs
in the chosen events and replaces p0, p1 by one-sided Clopper-Pearson bounds (scipy's incomplete
beta inverse, checked by a round trip and solved again where it fails: `dpaudit.audit.bounds`), with 1 - confidence split by Bonferroni over both directions
(unevenly: see Confidence below), the events of a direction and both proportions.  Because the event is chosen on other runs, the search costs nothing on the
estimation split.  Score families: the output itself for scalars; for discrete outputs the
estimated likelihood ratio of each distinct row (thresholding it gives the likelihood-ratio sets of
outcomes); for vectors a difference-of-means and a Fisher-discriminant projection (and each
coordinate when there are few); or a user's `score`.  Engineered likelihood-ratio families
(`dpaudit.audit.features`): for vectors, a per-coordinate (naive-Bayes) log ratio, the sum over
coordinates of the estimated log ratio of each repeated value ("atom": flags, sentinels such as the
sparse vector technique's -1000, integers) or, for continuous values, of being continuous plus the
clipped shifted-Laplace term (|x - m1| - |x - m0|)/b with medians and scale fitted on the fit half
(fitted ratios and shifts soft-thresholded by one standard error); the same after whitening by the
inverse Cholesky factor of the pooled covariance (prefix sums: the independent increments); for
rows mixing atoms and continuous values, the joint log ratio of their discrete part (atoms, and
continuous entries coded alike or by quartile), and that ratio plus a rank term of the released
values given the pattern (beta * (F(x_j) - 1/2), F the pooled empirical CDF of the entry among the
rows of its pattern, one slope beta for all cells; events among 64 thresholds with tails), also on
the continuous and the wholly discrete coordinates alone; for vectors with a halting state (a code
that, once taken, holds for the rest of the row: the sparse vector technique's 'aborted'), the
chain-rule log ratio sum_j log P0(s_j | j, h_j) / P1(s_j | j, h_j), h_j the counts of each state
before j among the coordinates sharing codes (`dpaudit.audit.chain`; fitted and thresholded on the
whole selection split); and, with `float_bits=True`, for scalar float
outputs the log ratio of bit features (sign, exponent and trailing zero bits of the mantissa; the
low mantissa byte): the floating-point leak of x + Laplace in doubles (Mironov, "On Significance of
the Least Significant Bits for Differential Privacy", ACM CCS 2012).  Bit features are off by
default: numpy's float Laplace and Gaussian samplers (dpaudit.mechanisms.samplers included) really
do leak through them (benchmarks/peers.py: epsilon_lower near 7 against a claimed 0.1 at 10^5
runs), which is a property of the float implementation, not of the algorithm the accountants
describe; the catalog audits the algorithm, so they stay off there and a user who ships such a
sampler should audit with them on.  A learned classifier family (`dpaudit.audit.classifier`, in the
style of DP-Sniper: Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021): an L2-regularised logistic
regression, fitted on the fit half, on engineered features (per-coordinate atom indicators, sign and
clipped scaled deviations from the pooled median whose combinations span the shifted-Laplace log
ratio terms, bit features of scalar floats with `float_bits`), and for all-continuous vectors its
"pooled" variants (each feature summed over the coordinates, raw and whitened: one value released
several times, where per-coordinate shifts are below their standard errors).  The masked-value family
(`dpaudit.audit.masked`) is a logistic regression on a handful of summary features of rows that hide
real values among sentinels: the count of each sentinel and the sums of sign(u) and clip(u, -4, 4)
over the real entries only (u their scaled deviation from the pooled median); with few weights it
is fitted and thresholded on the whole selection split, like the chain family.  `families=(...)`
restricts the candidates to the named families (`dpaudit.audit.families.FAMILIES`).  The learned families chosen for a direction
(its lead and runner-up events) are refitted on the whole selection split (category families with
more than 64 categories excepted) and their thresholds chosen there again.  Whatever is fitted, the event is a function of the selection runs only.  Sources: Jagielski, Ullman, Oprea, "Auditing
Differentially Private Machine Learning: How Private is Private SGD?" (NeurIPS 2020); Nasr, Song,
Thakurta, Papernot, Carlini, "Adversary Instantiation: Lower Bounds for Differentially Private
Machine Learning" (IEEE S&P 2021); F. Lu, J. Munoz, M. Fuchs, et al., "A General Framework for Auditing
Differentially Private Machine Learning" (NeurIPS 2022).

Gaussian DP.  A mu-GDP mechanism has trade-off function G_mu(a) = Phi(Phi^-1(1-a) - mu) (Dong,
Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022), so every event gives
mu >= Phi^-1(p0) - Phi^-1(p1); the auditor reports a point estimate and a lower bound (a separate
event chosen for it, a separate statement at the same confidence) and the empirical trade-off
points (alpha, beta) of a grid of thresholds, for reports to draw against the claimed curve (point
estimates, read off the selection split unless a claimed curve is tested on the estimation split).

Curves.  With `claim=<DpEvent>` (via `dpaudit.accounting.delta`) or a callable eps -> delta, every
scanned threshold is tested against the whole claimed curve, with Bonferroni over all of them; half
of 1 - confidence goes to this test and half to the point bound.

Cross-fitting (`crossfit=True`; point bounds only, no claimed curve).  The runs are split into two
folds: A = the first half of the selection rows and the even-numbered estimation chunks, B = the
rest.  Events are chosen on each fold's selection rows; A's event is counted on every run of B, B's
on every run of A, and the two counts per proportion are added, so all `samples` runs per side are
counted (`nobs = samples`).  The total is a sum of two binomials with different success
probabilities; by Hoeffding, "On the Distribution of the Number of Successes in Independent Trials"
(Ann. Math. Statist. 1956, Thm. 4) its tails beyond one unit from the mean are no heavier than those
of the binomial with the mean probability, and a one-sided Clopper-Pearson bound at level <= 1/4 only
rejects in such tails (for n p >= 1: a binomial exceeds its mean with probability > 1/4, Greenberg,
Mohri, "Tight Lower Bound on the Probability of a Binomial Exceeding its Mean", Stat. Probab.
Lett. 2014), so the Clopper-Pearson bounds hold for the averaged probability p = (|B| P[E_A] +
|A| P[E_B]) / n, once a count of 1 is read as 0 for lower bounds and a count of n - 1 as n for upper
bounds (the only counts where n p < 1 or n (1 - p) < 1 can matter).  An (epsilon, delta)-DP mechanism satisfies p0 <= e^eps p1 + delta for each event,
hence for the average (and a mu-GDP one p0 <= Phi(Phi^-1(p1) + mu) by concavity), so the bounds and
the Bonferroni split below are unchanged.  No further correction is needed: each event is a function
of the runs it is not counted on.

Neighbour search (`audit_pairs(target, pairs, ...)`, `statdp_patterns(n)`: StatDP's input patterns,
Ding et al. ACM CCS 2018).  Every candidate pair gets a pilot audit on its own runs (seeds disjoint
from the final audit's); the pair with the best pilot bound is audited again on fresh runs.  The
choice is a function of runs independent of the final audit's, so its bound needs no correction for
the number of pairs (the search costs runs, not confidence); see `dpaudit.audit.search`.

Sequential audits (`audit_sequential(target, d0, d1, claim_epsilon, stages=(1e4, 1e5, 1e6))`).  Stage
k is an ordinary audit on fresh runs at error level a_k = a 2^k / (2^K - 1) (alpha spending, sum a);
it stops at the first stage whose bound exceeds the claim, or whose point estimate is below
`close` x claim, and reports the largest stage bound: valid by the union bound whatever the stopping
rule; see `dpaudit.audit.sequential`.

Confidence.  With 1 - confidence = a: the epsilon bound splits a by Bonferroni over the two
directions and their two proportions; when the selection split predicts one direction's event a
bound more than twice the other's, that direction gets `direction_share` (default 0.9) of a, the other the rest, so its one-sided
Clopper-Pearson bounds are at 0.9 a/2 and the other's at 0.1 a/2 (`direction_share=0.5`: a/4 each;
cross-fitted audits keep a/4, their folds may lead in different directions).  The lead is a function
of the selection runs only, and the levels add up to a, so the larger bound is valid by the union
bound (`dpaudit.audit.selection.direction_levels`).  A direction testing runner-up events as well
gives its lead event three quarters of its level and the runner-ups equal parts of the rest (3a/16
and a/32 each for two, at the even split); the largest bound is reported, valid by the union bound again.  With a claimed curve, a/2 goes to the point
bound and a/2 to the curve test (a/(4E) per proportion for E scanned events).  mu_lower uses a/4 per
proportion.

Scale.  Runs are drawn in chunks seeded from one `numpy.random.SeedSequence` via `spawn`, so the
result is bit-identical in this process, a local process pool or a Dask cluster (the default
`executor=None` runs short work here and moves long work to a process pool); finished chunks can
be checkpointed and resumed (each chunk file carries its seed, index, sizes, target and inputs and a
checksum, checked on resume).  Pool workers exit with the audit process.  Options can be gathered
in an `AuditOptions` and run with `run_audit`; results name the target by `describe_target`
(module.qualname, no memory addresses).  Estimation chunks return only event counts; the selection split keeps
its raw rows (selection_fraction x samples rows per input).
"""

import sys
import types
from typing import Any

from dpaudit.audit.auditor import AuditOptions, audit, run_audit
from dpaudit.audit.describe import describe_target
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult
from dpaudit.audit.one_run import OneRunResult, one_run
from dpaudit.audit.search import PairSearch, audit_pairs, statdp_patterns
from dpaudit.audit.sequential import SequentialAudit, audit_sequential

__all__ = [
    "audit",
    "run_audit",
    "AuditOptions",
    "describe_target",
    "AuditResult",
    "CurveCheck",
    "DirectionResult",
    "one_run",
    "OneRunResult",
    "audit_pairs",
    "statdp_patterns",
    "PairSearch",
    "audit_sequential",
    "SequentialAudit",
]


class _CallableModule(types.ModuleType):
    """This package, callable as its `audit` function: `dpaudit.audit(...)` is the front door's auditor
    whether or not the package was imported before (the import system binds `dpaudit.audit` to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> AuditResult:
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
