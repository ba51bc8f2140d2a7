"""Decode a batch of events; what does not validate goes to `deadletter` with its reason."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from faust.types import EventT

from schemas.base import MAX_SITE_CHARS, Message, derived_event_id
from schemas.deadletter import DeadLetter
from schemas.registry import InvalidMessage, decode
from streams import metrics
from streams.topics import send

log = logging.getLogger(__name__)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", errors="replace") if raw else ""


async def decode_events(name: str, events: Sequence[EventT]) -> list[Message]:
    """The valid messages of a batch from registry topic `name`, in order."""
    messages: list[Message] = []
    for event in events:
        try:
            messages.append(decode(name, event.value))
        except InvalidMessage as invalid:
            await dead_letter(name, event, invalid.reason)
    return messages


async def dead_letter(name: str, event: EventT, reason: str) -> None:
    raw_key = event.key if isinstance(event.key, bytes) else None
    log.warning("dead letter from %s[%s]@%s: %s", name, event.message.partition, event.message.offset, reason)
    metrics.count("deadletters", stage=name)
    if name == "deadletter":
        return  # an unreadable dead letter is only logged and counted: re-sending it would loop forever
    await send(
        "deadletter",
        DeadLetter(
            # Every agent reading the topic meets the same bad message; one id makes them one row.
            event_id=derived_event_id(name, str(event.message.partition), str(event.message.offset)),
            # The key is a site when its producer followed the registry; a hostile one is cut to a site's length.
            site=_text(raw_key)[:MAX_SITE_CHARS] or "unknown",
            topic=name,
            partition=event.message.partition,
            offset=event.message.offset,
            reason=reason,
            key=_text(raw_key),
            value=_text(event.value)[:100_000],
        ),
    )
