"""The one privacy declaration: validation, immutability, JSON shape, accounted epsilon."""

import json
import math

import dp_accounting
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.privacy import NON_PRIVATE, RELATIONS, TRUST_MODELS, Guarantee, Privacy

CLAIM = Guarantee("approx", 1.0, 1e-5, source="test")
GAUSS = dp_accounting.GaussianDpEvent(2.0)


@given(relation=st.sampled_from(sorted(RELATIONS)), trust=st.sampled_from(sorted(TRUST_MODELS)))
def test_every_relation_and_trust_model_is_accepted_and_serialised(relation, trust):
    p = Privacy(relation, trust, GAUSS, CLAIM)
    out = p.to_json()
    assert (out["relation"], out["trust_model"], out["relation_text"]) == (relation, trust, RELATIONS[relation])
    json.dumps(out, allow_nan=False)


@given(name=st.text(min_size=1).filter(lambda s: s not in RELATIONS and s not in TRUST_MODELS))
def test_unknown_relation_or_trust_model_is_named(name):
    with pytest.raises(ValueError, match="relation"):
        Privacy(name, "central", GAUSS, CLAIM)
    with pytest.raises(ValueError, match="trust_model"):
        Privacy("user", name, GAUSS, CLAIM)


def test_field_types_are_checked():
    with pytest.raises(TypeError, match="claim"):
        Privacy("user", "central", GAUSS, {"notion": "approx"})
    with pytest.raises(TypeError, match="corrected"):
        Privacy("user", "central", GAUSS, CLAIM, corrected=2.0)
    with pytest.raises(TypeError, match="paper_event"):
        Privacy("user", "central", GAUSS, CLAIM, paper_event="Gaussian")
    with pytest.raises(TypeError, match="implied"):
        Privacy("user", "central", GAUSS, CLAIM, implied={"theorem": 1.0})


def test_implied_is_a_read_only_mapping_and_pairs_are_accepted():
    p = Privacy("user", "shuffle", GAUSS, CLAIM, implied=[("jdp", CLAIM)])
    assert dict(p.implied) == {"jdp": CLAIM}
    with pytest.raises(TypeError):
        p.implied["ldp"] = CLAIM
    assert p.to_json()["implied"] == {"jdp": CLAIM.to_json()}


def test_json_keeps_the_keys_the_cli_and_reports_read():
    p = Privacy(
        "unit",
        "central",
        GAUSS,
        CLAIM,
        Guarantee("approx", 3.0, 1e-5),
        "note",
        paper_event=dp_accounting.GaussianDpEvent(4.0),
    )
    out = p.to_json()
    assert out["type"] == "Privacy" and out["claim"]["epsilon"] == 1.0 and out["corrected"]["epsilon"] == 3.0
    assert out["paper_event"] == {"type": "GaussianDpEvent", "noise_multiplier": 4.0}
    assert out["proof_step"] is None and out["lower_event"] is None
    assert NON_PRIVATE.to_json()["claim"] == {"type": "Guarantee", "notion": "none", "source": "non-private baseline"}


def test_accounted_epsilon_of_each_part():
    p = Privacy("user", "central", GAUSS, CLAIM, paper_event=dp_accounting.GaussianDpEvent(4.0))
    assert p.accounted_epsilon("paper_event") < p.accounted_epsilon() < math.inf
    assert p.accounted_epsilon("proof_step") is None
    with pytest.raises(ValueError, match="part"):
        p.accounted_epsilon("claim")
    with pytest.raises(ValueError, match="accountant"):
        p.accounted_epsilon(accountant="exact")
