"""The auditor's chosen event {sign * score(x) > threshold} as JSON, and back.

A report is a CI artifact: reading one must never run code it holds, so there is no pickle here.
A fitted score (a frozen dataclass of `dpaudit.audit.scores`, `features`, `classifier`, `masked`,
`chain` or `grouped`) is written as {"type": class name, "fields": {...}} for classes of a fixed whitelist only;
its arrays as {"array": {"dtype", "shape", "data"}}, data the base64 of the zlib-compressed bytes
(plain numeric or raw-byte dtypes only); tuples as {"tuple": [...]}; non-finite floats as
{"float": "inf"}.  Decoding rebuilds only whitelisted classes, with exactly their declared fields.
A user's score function (`UserScore`) is written as {"type": "user"}: the function itself is the
entry's `score` option, supplied again when decoding (`decode_score(..., user_score=fn)`).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.chain import ChainLogRatio
from dpaudit.audit.classifier import LogisticScore
from dpaudit.audit.features import (
    AtomPatternLogRatio,
    CoordinateLogRatio,
    FloatBitLogRatio,
    PatternValueBlock,
    PatternValueLogRatio,
)
from dpaudit.audit.grouped import GroupCountLogRatio
from dpaudit.audit.masked import MaskedValueScore
from dpaudit.audit.scores import CategoryLogRatio, GaussianLogRatio, Identity, Projection, Score, UserScore

__all__ = ["CODEC_VERSION", "ChosenEvent", "decode_event", "decode_score", "encode_event", "encode_score"]

CODEC_VERSION = 1

#: The only classes a decoded document can build.
_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Identity,
        Projection,
        GaussianLogRatio,
        CategoryLogRatio,
        CoordinateLogRatio,
        AtomPatternLogRatio,
        PatternValueBlock,
        PatternValueLogRatio,
        FloatBitLogRatio,
        LogisticScore,
        MaskedValueScore,
        ChainLogRatio,
        GroupCountLogRatio,
    )
}
#: Array dtype kinds written and read: bool, signed and unsigned integers, floats, raw bytes (row keys).
_KINDS = "biufV"


@dataclass(frozen=True, eq=False)
class ChosenEvent:
    """The event {sign * score(x) > threshold} of one direction ("d0>d1": more likely under d0)."""

    score: Score
    sign: int
    threshold: float
    direction: str

    def count(self, outputs: np.ndarray) -> int:
        """How many rows of `outputs` (as the auditor normalises them) fall in the event."""
        values = self.sign * self.score(outputs)
        return int(np.count_nonzero(values > self.threshold))


def _encode_array(a: np.ndarray) -> dict[str, Any]:
    if a.dtype.kind not in _KINDS or a.dtype.fields is not None or a.dtype.hasobject:
        raise TypeError(f"cannot encode an array of dtype {a.dtype}")
    raw = zlib.compress(np.ascontiguousarray(a).tobytes(), 6)
    return {"array": {"dtype": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(raw).decode("ascii")}}


def _decode_array(d: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(str(d["dtype"]))
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.hasobject:
        raise ValueError(f"array dtype {d['dtype']!r} is not allowed")
    shape = tuple(int(s) for s in d["shape"])
    if any(s < 0 for s in shape):
        raise ValueError(f"bad array shape {shape}")
    raw = zlib.decompress(base64.b64decode(d["data"], validate=True))
    if len(raw) != dtype.itemsize * math.prod(shape):
        raise ValueError(f"array data holds {len(raw)} bytes, not {dtype.itemsize} x {shape}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.ndarray):
        return _encode_array(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else {"float": repr(float(value))}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if dataclasses.is_dataclass(value) and _CLASSES.get(type(value).__name__) is type(value):
        return {
            "type": type(value).__name__,
            "fields": {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    raise TypeError(f"cannot encode {type(value).__name__} (not a whitelisted score part)")


def _decode(value: Any, user_score: Callable | None) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise ValueError(f"unexpected value {str(value)[:80]!r}")
    if "array" in value:
        return _decode_array(value["array"])
    if "float" in value:  # "inf", "-inf", "nan" (or already read back as a float by a report loader)
        number = float(value["float"]) if isinstance(value["float"], (str, float)) else 0.0
        if math.isfinite(number):
            raise ValueError(f"bad non-finite float {value['float']!r}")
        return number
    if "tuple" in value:
        return tuple(_decode(v, user_score) for v in value["tuple"])
    if "type" in value:
        return decode_score(value, user_score)
    raise ValueError(f"unexpected value {str(value)[:80]!r}")


def encode_score(score: Score) -> dict[str, Any]:
    """The fitted `score` as a JSON-safe dict; {"type": "user"} for a user's function."""
    if isinstance(score, UserScore):
        return {"type": "user"}
    return _encode(score)


def decode_score(doc: Any, user_score: Callable | None = None) -> Any:
    """The score (or score part) `doc` describes, built only from whitelisted classes.

    {"type": "user"} becomes `UserScore(user_score)`; ValueError when `user_score` is None then,
    and for any unknown type, field or malformed value."""
    kind = doc.get("type") if isinstance(doc, dict) else None
    if kind == "user":
        if user_score is None:
            raise ValueError("the event's score is the user's own function, and no `score` is given now")
        return UserScore(fn=user_score)
    cls = _CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown score type {kind!r}; known: user, {', '.join(_CLASSES)}")
    fields = doc.get("fields")
    names = {f.name for f in dataclasses.fields(cls)}
    if not isinstance(fields, dict) or set(fields) != names:
        raise ValueError(f"{kind}: fields must be exactly {sorted(names)}")
    return cls(**{k: _decode(v, user_score) for k, v in fields.items()})


def encode_event(score: Score, sign: int, threshold: float, direction: str) -> str:
    """The event as JSON text (keys sorted, so equal events give equal text)."""
    doc = {
        "codec": CODEC_VERSION,
        "score": encode_score(score),
        "sign": int(sign),
        "threshold": _encode(float(threshold)),
        "direction": str(direction),
    }
    return json.dumps(doc, sort_keys=True, allow_nan=False, separators=(",", ":"))


def decode_event(doc: str | dict[str, Any], user_score: Callable | None = None) -> ChosenEvent:
    """The event `encode_event` wrote (its JSON text or the parsed dict); ValueError if malformed."""
    try:
        return _decode_event(json.loads(doc) if isinstance(doc, str) else doc, user_score)
    except (KeyError, TypeError, AttributeError, zlib.error, binascii.Error, json.JSONDecodeError) as exc:
        raise ValueError(f"malformed event ({type(exc).__name__}: {exc})") from None


def _decode_event(doc: Any, user_score: Callable | None) -> ChosenEvent:
    if not isinstance(doc, dict) or doc.get("codec") != CODEC_VERSION:
        raise ValueError(f"not an event of codec version {CODEC_VERSION}")
    sign = doc.get("sign")
    if sign not in (1, -1) or doc.get("direction") not in ("d0>d1", "d1>d0"):
        raise ValueError("an event needs sign 1 or -1 and direction 'd0>d1' or 'd1>d0'")
    threshold = _decode(doc.get("threshold"), None)
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError("an event needs a numeric threshold")
    score = decode_score(doc.get("score"), user_score)
    if not isinstance(score, Score):
        raise TypeError(f"{type(score).__name__} is not a score")
    return ChosenEvent(score=score, sign=int(sign), threshold=float(threshold), direction=doc["direction"])
