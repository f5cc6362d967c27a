"""The `families` option: validation, the family of each score name, and that it restricts the candidates."""

import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.families import FAMILIES, check_families, family_of


def laplace(data, rng, size):
    return float(data) + rng.laplace(0.0, 1.0, size)


def flag_value(data, rng, size):
    flag = (rng.random(size) < 0.6) == bool(data)
    return np.stack([flag.astype(float), np.where(flag, float(data) + rng.laplace(0.0, 2.0, size), -1000.0)], axis=1)


@pytest.mark.parametrize(
    "name, family",
    [
        ("identity", "identity"),
        ("coordinate-3", "coordinate"),
        ("coordinate-log-ratio", "coordinate-log-ratio"),
        ("whitened-coordinate-log-ratio", "whitened-coordinate-log-ratio"),
        ("atom-pattern-log-ratio-4", "atom-pattern-log-ratio"),
        ("pattern-value-log-ratio-mixed", "pattern-value-log-ratio"),
        ("logistic-regression-whitened-pooled", "logistic-regression"),
        ("user", None),
    ],
)
def test_family_of_a_score_name(name, family):
    assert family_of(name) == family


def test_unknown_family_is_rejected_with_the_known_ones_listed():
    with pytest.raises(
        ValueError,
        match=r"families: unknown family name.*'coordinate-log-ratios'.*known families are "
        r"identity, .*logistic-regression",
    ):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, families=("coordinate-log-ratios",))
    for bad in ((), ("identity", 4)):
        with pytest.raises(ValueError, match="families"):
            audit(laplace, 1.0, 0.0, claim_epsilon=1.0, families=bad)
    for bad in ("identity", 3):
        with pytest.raises(TypeError, match="families"):
            audit(laplace, 1.0, 0.0, claim_epsilon=1.0, families=bad)
    with pytest.raises(ValueError, match=r"families.*score="):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, families=("identity",), score=lambda x: x)
    assert check_families(["identity", "identity"]) == ("identity",)
    assert set(FAMILIES) >= {"identity", "logistic-regression", "float-bit-log-ratio"}


def test_families_restrict_the_chosen_events():
    kw = dict(claim_epsilon=1.0, samples=20_000, seed=3, executor="serial")
    for family in ("coordinate-log-ratio", "pattern-value-log-ratio", "logistic-regression", "coordinate"):
        res = audit(flag_value, 1.0, 0.0, families=(family,), **kw)
        for d in res.directions:
            assert family_of(d.event.split(" > ")[0].lstrip("-")) == family, (family, d.event)
        assert res.epsilon_lower <= 1.0 + 0.5  # true epsilon: log(0.6/0.4) + 1/2 < 1


def test_families_that_fit_nothing_on_these_outputs_are_an_error():
    with pytest.raises(ValueError, match=r"leaves no candidate score.*identity"):
        audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=2_000, families=("fisher-discriminant",), executor="serial")
