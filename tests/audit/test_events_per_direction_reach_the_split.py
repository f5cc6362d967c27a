"""`events_per_direction` reaches the split audit's event choice, both before and after a selection
extension: with several families applicable, more than the lead event is tested per direction."""

import numpy as np
import pytest

from dpaudit.audit import audit


def _laplace3(data: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return data + rng.laplace(0.0, 1.0, (size, 3))


@pytest.mark.parametrize(("shift", "extension"), [(1.0, 0.0), (0.2, 0.2)], ids=["no-extension", "extension"])
def test_three_events_per_direction_test_runner_ups(shift: float, extension: float) -> None:
    r = audit(
        _laplace3,
        shift,
        0.0,
        claim_epsilon=3.0,
        samples=4_000,
        events_per_direction=3,
        selection_extension=extension,
        executor="serial",
    )
    # a shift of 0.2 leaves the pilot unresolved, so the extension is taken
    assert any(d.events_tested > 1 for d in r.directions)
