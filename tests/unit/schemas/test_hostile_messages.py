"""Every registry topic refuses invalid and hostile values with a reason, and never with another error: the
values are generated from each topic's model (tests.hostile_messages), so a new topic is covered as it is added."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.base import MAX_SITE_CHARS
from schemas.registry import TOPICS, InvalidMessage, decode
from tests.hostile_messages import future_version, hostile_values, minimal_valid, required_fields, wrong_type

TOPIC_NAMES = sorted(TOPICS)
_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _refused(topic: str, raw: bytes) -> str:
    with pytest.raises(InvalidMessage) as refused:
        decode(topic, raw)
    assert refused.value.reason
    return refused.value.reason


@pytest.mark.parametrize("topic", TOPIC_NAMES)
def test_the_smallest_valid_message_is_read(topic):
    assert decode(topic, json.dumps(minimal_valid(topic)).encode()).site == "example.org"


@pytest.mark.parametrize("topic", TOPIC_NAMES)
def test_each_kind_of_hostile_value_is_refused_with_a_reason(topic):
    reasons = {kind: _refused(topic, raw) for kind, raw in hostile_values(topic)}
    assert "newer than" in reasons["a future schema version"]
    assert "site" in reasons["a huge site"]


@st.composite
def _hostile(draw, topic: str) -> bytes:
    valid = minimal_valid(topic)
    kind = draw(st.sampled_from(["missing", "wrong type", "future", "huge site", "unknown field", "bytes",
                                 "any JSON"]))
    if kind == "missing":
        field = draw(st.sampled_from(required_fields(topic)))
        return json.dumps({key: value for key, value in valid.items() if key != field}).encode()
    if kind == "wrong type":
        field = draw(st.sampled_from([name for name in required_fields(topic) if name != "site"] or ["site"]))
        value = wrong_type(topic, field) if field != "site" else draw(st.one_of(st.integers(), st.none(),
                                                                                  st.lists(st.text())))
        return json.dumps(valid | {field: value}).encode()
    if kind == "future":
        return json.dumps(valid | {"schema_version": draw(st.integers(future_version(topic), 2**62))}).encode()
    if kind == "huge site":
        return json.dumps(valid | {"site": "s" * draw(st.integers(MAX_SITE_CHARS + 1, 300_000))}).encode()
    if kind == "unknown field":
        name = draw(st.text(min_size=1).filter(lambda name: name not in TOPICS[topic].value_model.model_fields))
        return json.dumps(valid | {name: draw(st.integers())}).encode()
    if kind == "any JSON":
        # Any JSON value that is not an object with the required fields (lists, scalars, objects of junk).
        junk = st.recursive(st.none() | st.booleans() | st.floats() | st.text(),
                            lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20)
        return json.dumps(draw(junk)).encode()
    return draw(st.binary(max_size=5000))


@pytest.mark.parametrize("topic", TOPIC_NAMES)
def test_generated_hostile_values_are_refused_never_raised_otherwise(topic):
    @_settings
    @given(_hostile(topic))
    def refused(raw: bytes) -> None:
        _refused(topic, raw)

    refused()
