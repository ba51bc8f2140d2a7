"""Invalid and hostile values for any registry topic, built from its model's JSON schema, so that a new topic is
covered without writing a test: the smallest valid message, and mutations of it that must be refused — a field
missing or of the wrong type, an unknown field, a future schema version, a huge site, broken UTF-8, truncated
JSON, JSON that is not an object, NUL bytes, random bytes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from schemas.base import MAX_SITE_CHARS, Message
from schemas.registry import TOPICS

_INSTANT = "2026-11-24T12:00:00Z"


def _value_for(schema: dict, definitions: dict) -> object:
    """A valid value for one property's schema."""
    if "$ref" in schema:
        return _value_for(definitions[schema["$ref"].rsplit("/", 1)[-1]], definitions)
    if "anyOf" in schema:
        return _value_for(next(option for option in schema["anyOf"] if option.get("type") != "null"), definitions)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "string":
        # .invalid never resolves: a worker given the message fetches nothing on the web.
        return _INSTANT if schema.get("format") == "date-time" else "https://example.invalid/x"
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {name: _value_for(schema["properties"][name], definitions) for name in schema.get("required", [])}
    raise ValueError(f"no value for schema {schema}")


def minimal_valid(topic: str) -> dict:
    """The topic's smallest valid message: its required fields only, site example.org."""
    schema = TOPICS[topic].value_model.model_json_schema()
    value = _value_for(schema, schema.get("$defs", {}))
    return value | {"site": "example.org"}


def required_fields(topic: str) -> list[str]:
    return list(TOPICS[topic].value_model.model_json_schema().get("required", []))


def wrong_type(topic: str, field: str) -> object:
    """A value no field of that type accepts: text for lists and objects, an object for anything else."""
    kind = TOPICS[topic].value_model.model_json_schema()["properties"][field].get("type")
    return "not of its type" if kind in ("array", "object") else {"not": ["of", "its", "type"]}


def future_version(topic: str) -> int:
    model: type[Message] = TOPICS[topic].value_model
    return model.model_fields["schema_version"].default + 1


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def hostile_values(topic: str, seed: int = 0) -> Iterator[tuple[str, bytes]]:
    """(what is wrong, the raw value) for each kind of hostile value, each required field, seeded."""
    rng = random.Random(seed)
    valid = minimal_valid(topic)
    for field in required_fields(topic):
        yield f"missing {field}", _json({key: value for key, value in valid.items() if key != field})
        if field != "site":
            yield f"{field} of the wrong type", _json(valid | {field: wrong_type(topic, field)})
    yield "an unknown field", _json(valid | {"surprise": 1})
    yield "a future schema version", _json(valid | {"schema_version": future_version(topic)})
    yield "a huge site", _json(valid | {"site": "a" * (MAX_SITE_CHARS + rng.randint(1, 200_000))})
    yield "broken UTF-8", _json(valid).replace(b'"example.org"', b'"example\xff\xfe.org"')
    whole = _json(valid)
    yield "truncated JSON", whole[: rng.randint(1, len(whole) - 1)]
    yield "JSON that is not an object", rng.choice([b"[1, 2, 3]", b"null", b"42", b'"text"'])
    yield "NUL bytes", b"\x00" * rng.randint(1, 1000)
    yield "random bytes", rng.randbytes(rng.randint(1, 5000))
