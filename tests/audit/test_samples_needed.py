"""The "use samples >= N" advice of a too-small audit is exact: N runs per input plan, N - 1 do not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit.options import AuditOptions, _samples_needed, plan_audit
from dpaudit.limits import MIN_SAMPLES


def _plans(samples: int, claim: float, fraction: float) -> bool:
    try:
        plan_audit(lambda d, rng, n: d, AuditOptions(claim_epsilon=claim, samples=samples, selection_fraction=fraction))
    except ValueError:
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(claim=st.floats(0.01, 8.0), fraction=st.floats(0.01, 0.95))
def test_the_advised_sample_size_is_the_least_that_plans(claim: float, fraction: float) -> None:
    need = _samples_needed(claim, 0.0, 0.05 / 4, fraction)
    assert _plans(need, claim, fraction)
    assert need == MIN_SAMPLES or not _plans(need - 1, claim, fraction)
