"""`LibraryEntry`: one primitive of a DP library, audited at its worst-case pair against the claim the library states.

An entry builds a `dpaudit.adapters.LibraryTarget` (the library's mechanism, its own claim, its neighbouring
pair) and makes one `dpaudit.audit.audit` call with `float_check="report"`.  Two claims are judged on it:

- "stated": the library's claim against the algorithmic bound (`result.epsilon_lower`): does the
  mechanism, as the mathematics describes it, keep its guarantee?
- "floating-point" (scalar float outputs only): the same claim against the bound of the audit with the
  IEEE 754 bit features (`result.floating_point.epsilon_lower`; Mironov, "On Significance of the Least
  Significant Bits for Differential Privacy", CCS 2012): does the implementation keep it?

The auditor splits 1 - confidence evenly between the two bounds, so one call holds both, and the CLI's
Bonferroni split counts it once.  `fp_expect` is "violation" for a configuration the literature or the
library's own documentation shows to leak through its low-order bits (the entry's `source` says which).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any, ClassVar

from dpaudit._interrupt import is_interrupt
from dpaudit.adapters import LibraryTarget
from dpaudit.entries import EXPECTS, Claim, LazyClaims
from dpaudit.entry_runner import entry_seed
from dpaudit.records import EntryRecord, audit_record, claim_record, entry_record, finish_record, record_error
from dpaudit.validation import check_choice, check_positive_int

__all__ = ["ALGORITHMIC", "FLOATING_POINT", "SAMPLES", "LibraryEntry"]

ALGORITHMIC = "stated"
FLOATING_POINT = "floating-point"

SAMPLES = 30_000
"""Runs per side of an entry: the four libraries' 20 primitive entries in about 1 min of CPU on one core.  The
expected verdicts hold with room at this size: diffprivlib's float Laplace and Gaussians (and python-dp's Gaussian)
give floating-point bounds of 4 to 7 against claims of 1 already at 2·10^4 to 3·10^4 runs, and a sound claim comes out "violation" with probability at most
1 - confidence whatever the size."""


@dataclasses.dataclass(frozen=True)
class LibraryEntry:
    """One library primitive: `build()` returns its `LibraryTarget` (built once, then kept).

    `library` and `version` name the installed distribution; `primitive` is what a bandit uses it for
    ("Laplace", "Gaussian", "geometric", "report noisy max", "snapping"); `float_output` says whether its
    runs are scalar floats (then the floating-point claim is judged too, expecting `fp_expect`).
    `samples`: runs per side (`SAMPLES`).  It has the interface `dpaudit audit` and `dpaudit list` use
    (`dpaudit.entries.Entry`).
    """

    name: str
    library: str
    version: str
    primitive: str
    build: Callable[[], LibraryTarget]
    description: str
    float_output: bool
    fp_expect: str = "consistent"
    source: str = ""
    samples: int = SAMPLES
    quick: bool = True
    claims: LazyClaims = dataclasses.field(init=False, repr=False, compare=False)

    catalog: ClassVar[str] = "libraries"
    observable: ClassVar[str] = "output"
    observable_description: ClassVar[str] = "the mechanism's output, as the library returns it"

    def __post_init__(self) -> None:
        if not self.name or any(c.isspace() for c in self.name):
            raise ValueError(f"name must be a non-empty word, got {self.name!r}")
        if not callable(self.build):
            raise TypeError(f"build must be a zero-argument callable returning a LibraryTarget, got {self.build!r}")
        check_choice(self.fp_expect, EXPECTS, "fp_expect")
        check_positive_int(self.samples, "samples")
        if not self.float_output and self.fp_expect != "consistent":
            raise ValueError("fp_expect: only a float output has a floating-point claim")
        object.__setattr__(self, "build", functools.cache(self.build))
        object.__setattr__(self, "claims", LazyClaims(self._build_claims, self.fp_expect))

    @property
    def algorithm(self) -> str:
        """'library version': the report's section for the library's entries."""
        return f"{self.library} {self.version}"

    @property
    def variant(self) -> str:
        """The library primitive audited."""
        return self.primitive

    @property
    def relations(self) -> tuple[str, ...]:
        """("one-user",): the inputs differ in one user's value."""
        return ("one-user",)

    @property
    def expect(self) -> str:
        """The expected outcome of the floating-point claim (`fp_expect`)."""
        return self.fp_expect

    def audit_calls(self) -> int:
        """One `dpaudit.audit.audit` call (both bounds come from it)."""
        return 1

    def _build_claims(self) -> tuple[Claim, ...]:
        """ "stated" (and "floating-point" for a float output): the library's own claim, read from the target."""
        target = self.build()
        kind = "privacy map" if self.library == "opendp" else "constructor arguments"
        accountant = f"{self.library} {kind}"
        claims = [
            Claim(
                ALGORITHMIC,
                delta=target.claim_delta,
                epsilon=target.claim_epsilon,
                accountant=accountant,
                source=f"{target.label}: {target.claim!r}",
            )
        ]
        if self.float_output:
            claims.append(
                Claim(
                    FLOATING_POINT,
                    delta=target.claim_delta,
                    epsilon=target.claim_epsilon,
                    accountant=accountant,
                    expect=self.fp_expect,
                    source=self.source,
                )
            )
        return tuple(claims)

    def run(
        self,
        *,
        samples: int | None = None,
        quick: bool = False,
        confidence: float = 0.95,
        seed: int = 0,
        executor: Any = None,
        regret: bool = True,
        baseline_events: dict[str, Any] | None = None,
    ) -> EntryRecord:
        """Audit the target on its neighbours at `samples` runs per side (default the entry's) and judge its
        claims; `quick`, `regret` and `baseline_events` are accepted for the catalog's interface and change
        nothing.  A failure (the library raising, a float output without a floating-point bound) is recorded
        as the entry's `error`, not raised."""
        from dpaudit.audit import audit

        n = check_positive_int(self.samples if samples is None else samples, "samples")
        start = time.perf_counter()
        base = entry_seed(seed, self.name)
        record = entry_record(self, base, [{"relation": "one-user", "description": "the target's neighbours"}])
        record["library"], record["version"] = self.library, self.version
        try:
            target = self.build()
            d0, d1 = target.neighbours
            record["target"], record["reproducible"] = target.label, target.reproducible
            record["pairs"] = [{"relation": "one-user", "description": f"d0 = {d0!r}, d1 = {d1!r}"}]
            claims = self.claims.claims
            began = time.perf_counter()
            result = audit(
                target,
                d0,
                d1,
                claim_epsilon=target.claim_epsilon,
                claim_delta=target.claim_delta,
                samples=n,
                confidence=confidence,
                seed=base,
                float_check="report",
                executor=executor,
                progress=False,
                target_name=target.label,
            )
            seconds = round(time.perf_counter() - began, 3)
            checks = [(ALGORITHMIC, result)]
            if self.float_output:
                if result.floating_point is None:
                    raise RuntimeError(
                        f"{target.label}: the auditor gave no floating-point bound for its float outputs"
                    )
                checks.append((FLOATING_POINT, result.floating_point))
            for check, res in checks:
                rec = audit_record(
                    res,
                    delta=target.claim_delta,
                    claim_epsilon=target.claim_epsilon,
                    samples=n,
                    confidence=confidence,
                    seed=base,
                    seconds=seconds,
                    pair=0,
                )
                rec["check"] = check
                record["audits"].append(rec)
            record["claims"] = [
                claim_record(c, [a for a in record["audits"] if a.get("check") == c.label]) for c in claims
            ]
        except BaseException as exc:  # the library's own exceptions too: recorded (ok = False), the suite goes on
            if is_interrupt(exc):
                raise
            record_error(record, exc)
        return finish_record(record, start)

    def summary(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "name": self.name,
            "library": self.library,
            "version": self.version,
            "primitive": self.primitive,
            "expect": self.expect,
            "float_output": self.float_output,
            "samples": self.samples,
            "description": self.description,
            "source": self.source,
        }
