"""Bad input to the Python API: a ValueError naming the parameter, before the target runs."""

import functools
import re

import numpy as np
import pytest

from dpaudit.audit import AuditOptions, audit, run_audit

OPTS = dict(claim_epsilon=1.0, samples=2_000, executor="serial")


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


class Counting:
    """A target that counts its calls (options must be refused before the first one)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, data, rng, size):
        self.calls += 1
        return laplace(data, rng, size)


def width_zero(data, rng, size):
    return np.zeros((size, 0))


def ragged(data, rng, size):
    return [list(range(1 + i % 2)) for i in range(size)]


def huge_unsigned(data, rng, size):
    return rng.integers(0, 2, size).astype(np.uint64) + np.uint64(2**63)


def unsigned_small(data, rng, size):
    return (rng.random(size) < (0.6 if data else 0.4)).astype(np.uint64)


@pytest.mark.parametrize(
    "target, match",
    [
        (width_zero, "rows with no entries"),  # was ZeroDivisionError
        (ragged, "rows of different lengths"),  # was numpy's "inhomogeneous shape"
        (huge_unsigned, r"unsigned integers >= 2\*\*63"),  # was a silent wrap to negative int64
    ],
)
def test_unusable_outputs_are_named(target, match):
    with pytest.raises(ValueError, match=r"target\(d0.*" + match):
        audit(target, 0, 1, **OPTS)


def test_small_unsigned_outputs_are_used_exactly():
    result = audit(unsigned_small, 1, 0, **OPTS)
    assert result.discrete and result.output_shape == ()


@pytest.mark.parametrize(
    "curve, match",
    [
        (lambda eps: float("nan"), r"claim.*delta=nan at epsilon=1\.0"),  # was an empty message
        (lambda eps: 2.0, r"claim.*delta=2\.0"),
        (lambda eps: "x", r"claim.*failed at epsilon=1\.0"),
    ],
)
def test_broken_claimed_curves_fail_before_any_run(curve, match):
    target = Counting()
    with pytest.raises(ValueError, match=match):
        audit(target, 1.0, 0.0, claim=curve, **OPTS)
    assert target.calls == 0


@pytest.mark.parametrize(
    "options, name",
    [
        (dict(samples=1), "samples"),
        (dict(samples=2**51), "samples"),
        (dict(samples=10**9, chunk_size=1), "chunk_size"),
        (dict(executor="nonsense"), "executor"),
        (dict(executor=3), "executor"),
        (dict(progress="yes"), "progress"),
        (dict(checkpoint_dir=3), "checkpoint_dir"),
        (dict(target_name=""), "target_name"),
        (dict(score=3), "score"),
        (dict(workers=0), "workers"),
        (dict(claim_delta=1.5), "claim_delta"),
        (dict(claim_epsilon=float("inf")), "claim_epsilon"),
        (dict(confidence=0.0), "confidence"),
    ],
)
def test_bad_options_name_the_parameter_before_any_run(options, name):
    target = Counting()
    with pytest.raises(ValueError, match=name):
        audit(target, 1.0, 0.0, **{**OPTS, **options})
    assert target.calls == 0


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="sampels"):
        audit(laplace, 1.0, 0.0, sampels=10, **OPTS)


def test_options_object_validates_and_matches_the_keyword_call():
    with pytest.raises(ValueError, match="grid_size"):
        AuditOptions(claim_epsilon=1.0, grid_size=1)
    opts = AuditOptions.create(1.0, samples=2_000, executor="serial", seed=3)
    assert run_audit(laplace, 1.0, 0.0, opts) == audit(laplace, 1.0, 0.0, seed=3, **OPTS)


def test_every_option_is_an_explicit_keyword_with_the_options_default():
    """`audit` spells out every field of `AuditOptions` (for IDEs and type checkers), keyword-only after the
    first eight, with the same defaults; the docstring documents each."""
    import dataclasses
    import inspect

    params = inspect.signature(audit).parameters
    fields = {f.name: f for f in dataclasses.fields(AuditOptions) if f.name != "claim_parts"}
    assert list(params)[:3] == ["target", "d0", "d1"]
    assert set(params) - {"target", "d0", "d1"} == set(fields)
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params.values())
    for name, field in fields.items():
        default = None if name == "claim_epsilon" else field.default  # derived from `claim` when not given
        assert params[name].default == default, name
        assert (params[name].kind == params[name].KEYWORD_ONLY) == (list(params).index(name) >= 8), name
        # a Parameters entry ("name : type", alone or grouped "a, name : type"), or named in another's text
        assert re.search(rf"^ +(\w+, )*{name}(, \w+)* :", audit.__doc__, re.M) or f"`{name}`" in audit.__doc__, name


def test_positional_call_signature_is_kept():
    a = audit(laplace, 1.0, 0.0, 1.0, 0.0, 2_000, 0.95, 5, executor="serial")
    b = audit(
        laplace, 1.0, 0.0, claim_epsilon=1.0, claim_delta=0.0, samples=2_000, confidence=0.95, seed=5, executor="serial"
    )
    assert a == b


def test_partial_targets_are_accepted():
    target = functools.partial(lambda scale, data, rng, size: data + rng.laplace(0.0, scale, size), 1.0)
    assert audit(target, 1.0, 0.0, **OPTS).target.startswith("partial(")
