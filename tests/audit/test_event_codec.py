"""The chosen event as JSON (`dpaudit.audit.event_codec`): every score the auditor fits survives the round
trip bit for bit, and decoding builds whitelisted classes only (a report is an untrusted CI artifact)."""

import base64
import json
import zlib

import numpy as np
import pytest

import dpaudit.audit.verdict as verdict_module
from dpaudit.audit import audit
from dpaudit.audit.event_codec import decode_event, decode_score, encode_event, encode_score
from dpaudit.audit.outputs import normalise
from dpaudit.audit.scores import Identity, Projection


def laplace(data, rng, size):
    return float(data) + rng.laplace(0.0, 1.0, size)


def rr_int(data, rng, size):
    """Randomized response of the bit as an integer scalar (atoms only)."""
    return ((rng.random(size) < 0.7) == bool(data)).astype(np.int64)


def rr_bits(data, rng, size):
    """Three randomized responses of the bit: integer vectors (row keys are raw bytes)."""
    return ((rng.random((size, 3)) < 0.6) == bool(data)).astype(np.int64)


def prefix_sums(data, rng, size):
    return np.cumsum(float(data) + rng.laplace(0.0, 2.0, (size, 4)), axis=1)


def spread(data, rng, size):
    return rng.normal(0.0, 1.0 + float(data), (size, 2))


def flag_value(data, rng, size):
    flag = (rng.random(size) < 0.6) == bool(data)
    return np.stack([flag.astype(float), np.where(flag, float(data) + rng.laplace(0.0, 2.0, size), -1000.0)], axis=1)


def grid_laplace(data, rng, size):
    q = np.exp(-0.25)
    return float(data) + 0.25 * (rng.geometric(1 - q, size) - rng.geometric(1 - q, size)).astype(float)


def rr_halting(data, rng, size):
    bits = ((rng.random((size, 4)) < np.exp(0.5) / (1 + np.exp(0.5))) == bool(data)).astype(np.int64)
    before = np.cumsum(bits, axis=1) - bits
    return np.where(before >= 2, -1, bits)


def sentinel_values(data, rng, size):
    released = (rng.random((size, 4)) < np.exp(0.25) / (1 + np.exp(0.25))) == bool(data)
    return np.where(released, float(data) + rng.laplace(0.0, 2.0, (size, 4)), 0.0)


CASES = [  # (family, target, options, score class the family fits)
    ("identity", laplace, {}, "Identity"),
    ("category-log-ratio", rr_int, {}, "CategoryLogRatio"),
    ("category-log-ratio", rr_bits, {}, "CategoryLogRatio"),
    ("difference-of-means", prefix_sums, {}, "Projection"),
    ("fisher-discriminant", prefix_sums, {}, "Projection"),
    ("coordinate", prefix_sums, {}, "Projection"),
    ("gaussian-log-ratio", spread, {}, "GaussianLogRatio"),
    ("coordinate-log-ratio", flag_value, {}, "CoordinateLogRatio"),
    ("whitened-coordinate-log-ratio", prefix_sums, {}, "CoordinateLogRatio"),
    ("atom-pattern-log-ratio", flag_value, {}, "AtomPatternLogRatio"),
    ("pattern-value-log-ratio", flag_value, {}, "PatternValueLogRatio"),
    ("float-bit-log-ratio", grid_laplace, {"float_bits": True}, "FloatBitLogRatio"),
    ("logistic-regression", flag_value, {}, "LogisticScore"),
    ("logistic-regression", prefix_sums, {}, "LogisticScore"),
    ("logistic-regression", grid_laplace, {"float_bits": True}, "LogisticScore"),
    ("chain-log-ratio", rr_halting, {}, "ChainLogRatio"),
    ("masked-value-log-ratio", sentinel_values, {}, "MaskedValueScore"),
    ("group-count-log-ratio", rr_bits, {}, "GroupCountLogRatio"),
]


def _encoded_events(monkeypatch) -> list:
    """Record every (score, sign, threshold, JSON) the auditor encodes."""
    seen = []

    def spy(score, sign, threshold, direction):
        text = encode_event(score, sign, threshold, direction)
        seen.append((score, sign, threshold, text))
        return text

    monkeypatch.setattr(verdict_module, "encode_event", spy)
    return seen


@pytest.mark.parametrize("family, target, options, cls", CASES, ids=[f"{c[0]}-{c[1].__name__}" for c in CASES])
def test_every_fitted_family_round_trips(monkeypatch, family, target, options, cls):
    # exact property: the decoded score gives bit-identical values on runs never seen by the audit
    seen = _encoded_events(monkeypatch)
    res = audit(
        target,
        1.0,
        0.0,
        claim_epsilon=1.0,
        samples=6_000,
        seed=2,
        executor="serial",
        progress=False,
        families=(family,),
        **options,
    )
    texts = {text for *_, text in seen}
    assert all(d.event_state in texts for d in res.directions)
    rng = np.random.default_rng(99)
    rows = np.concatenate([normalise(target(x, rng, 3_000), 3_000, "d")[0] for x in (1.0, 0.0)])
    kinds = set()
    for score, sign, threshold, text in seen:
        event = decode_event(json.loads(text))
        kinds.add(type(event.score).__name__)
        assert type(event.score) is type(score) and event.score.name == score.name
        assert (event.sign, event.threshold) == (sign, threshold)
        assert np.array_equal(event.score(rows), score(rows))
        assert event.count(rows) == int(np.count_nonzero(sign * score(rows) > threshold))
        assert encode_event(event.score, sign, threshold, event.direction) == text  # and back to the same text
    assert cls in kinds


def test_user_score_is_the_entry_option_again():
    res = audit(
        laplace, 1.0, 0.0, claim_epsilon=1.0, samples=4_000, executor="serial", progress=False, score=lambda x: -x
    )
    doc = json.loads(res.directions[0].event_state)
    assert doc["score"] == {"type": "user"}
    with pytest.raises(ValueError, match="user's own function"):
        decode_event(doc)
    event = decode_event(doc, user_score=lambda x: 2 * x)
    assert np.array_equal(event.score(np.array([1.0, -2.0])), [2.0, -4.0])


def test_crossfit_records_no_single_event():
    res = audit(laplace, 1.0, 0.0, claim_epsilon=1.0, samples=4_000, executor="serial", progress=False, crossfit=True)
    assert all(d.event_state == "" for d in res.directions)


def _array(dtype, data=b"\0" * 8, shape=(1,)):
    return {"array": {"dtype": dtype, "shape": list(shape), "data": base64.b64encode(zlib.compress(data)).decode()}}


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"type": "posix.system", "fields": {}}, "unknown score type"),
        ({"type": "Projection", "fields": {"weights": _array("<f8"), "name": "p"}}, "fields must be exactly"),
        ({"type": "Projection", "fields": {"weights": _array("|O"), "name": "p", "learned": True}}, "dtype"),
        (
            {"type": "Projection", "fields": {"weights": _array("<f8", shape=(2,)), "name": "p", "learned": True}},
            "bytes",
        ),
        ({"type": "Projection", "fields": {"weights": {"pickle": "x"}, "name": "p", "learned": True}}, "unexpected"),
    ],
)
def test_decoding_builds_whitelisted_classes_only(doc, match):
    event = {"codec": 1, "score": doc, "sign": 1, "threshold": 0.0, "direction": "d0>d1"}
    with pytest.raises(ValueError, match=match):
        decode_event(event)


def test_unknown_classes_are_not_encoded_and_values_survive():
    class Custom(Identity):
        pass

    with pytest.raises(TypeError):
        encode_score(Custom())
    p = Projection(weights=np.array([np.inf, -0.0, 1e-300]), name="difference-of-means")
    back = decode_score(json.loads(json.dumps(encode_score(p))))
    assert np.array_equal(back.weights, p.weights) and np.signbit(back.weights[1])
    event = decode_event(encode_event(Identity(), -1, -np.inf, "d1>d0"))
    assert event.threshold == -np.inf and event.count(np.array([1.0, 2.0])) == 2
