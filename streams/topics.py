"""Faust topic objects built from the registry, and the one way to send a message."""

from __future__ import annotations

from functools import cache

import faust

from schemas.base import Message
from schemas.registry import TOPICS, encode
from streams.app import app, settings


def topic_name(name: str) -> str:
    """The Kafka name of a registry topic (with the configured prefix)."""
    return f"{settings.topic_prefix}{name}"


@cache
def topic(name: str) -> faust.TopicT:
    spec = TOPICS[name]
    return app.topic(
        topic_name(name),
        key_type=bytes,
        value_type=bytes,
        partitions=spec.partitions or settings.topic_partitions,
    )


async def send(name: str, message: Message) -> None:
    """Send a message to a registry topic, keyed by its site."""
    await topic(name).send(key=message.site.encode("utf-8"), value=encode(message))
