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
split the auditor fits score functions and chooses, per direction (d0 vs d1 and d1 vs d0), one event
{sign * score > t} by a predicted-lower-bound objective; on the estimation split it counts the runs
in the chosen events and replaces p0, p1 by one-sided Clopper-Pearson bounds (scipy's incomplete
beta inverse, checked by a round trip and solved again where it fails: `dpaudit.audit.bounds`), with 1 - confidence split by Bonferroni over both directions
and both proportions.  Because the event is chosen on other runs, the search costs nothing on the
estimation split.  Score families: the output itself for scalars; for discrete outputs the
estimated likelihood ratio of each distinct row (thresholding it gives the likelihood-ratio sets of
outcomes); for vectors a difference-of-means and a Fisher-discriminant projection (and each
coordinate when there are few); or a user's `score`.  Sources: Jagielski, Ullman, Oprea, "Auditing
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

Confidence.  With 1 - confidence = a: the epsilon bound uses one-sided Clopper-Pearson bounds at
a/4 (two directions x two proportions); with a claimed curve, a/2 goes to the point bound and a/2
to the curve test (a/(4E) per proportion for E scanned events).  mu_lower uses a/4 per proportion.

Scale.  Runs are drawn in chunks seeded from one `numpy.random.SeedSequence` via `spawn`, so the
result is bit-identical in this process, a local process pool or a Dask cluster (the default
`executor=None` runs short work here and moves long work to a process pool); finished chunks can
be checkpointed and resumed (each chunk file carries its seed, index, sizes, target and inputs and a
checksum, checked on resume).  Pool workers exit with the audit process.  Options can be gathered
in an `AuditOptions` and run with `run_audit`; results name the target by `describe_target`
(module.qualname, no memory addresses).  Estimation chunks return only event counts; the selection split keeps
its raw rows (selection_fraction x samples rows per input).
"""

from dpaudit.audit.auditor import AuditOptions, audit, run_audit
from dpaudit.audit.describe import describe_target
from dpaudit.audit.result import AuditResult, CurveCheck, DirectionResult
from dpaudit.audit.one_run import OneRunResult, one_run

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
]
