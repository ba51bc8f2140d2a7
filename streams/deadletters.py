"""Decode a batch of events; what does not validate goes to `deadletter` with its reason. And what an agent
failed to handle: a batch whose handling raised goes there too, with the error, and the agent goes on."""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from faust.types import EventT

from schemas.base import MAX_SITE_CHARS, Message, derived_event_id
from schemas.deadletter import DeadLetter, failure_reason
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


# The end of a failure's traceback kept in its dead letters: where it was raised, and what called that.
TRACEBACK_CHARS = 3_000


@asynccontextmanager
async def kept_if_failed(stage: str, name: str, events: Sequence[EventT]) -> AsyncIterator[None]:
    """Handle a batch of events from registry topic `name` in agent `stage`: where the handling raises, each
    event of the batch goes to `deadletter` with the error and its traceback, and the agent goes on with the
    next batch. Unguarded, Faust restarts a raising agent and acknowledges the events it held, so they would be
    lost without a trace. Events the batch handled before the error are dead-lettered too: resent, they are
    handled as a redelivery is (at least once; rows replace their earlier copies by id)."""
    try:
        yield
    except Exception as error:  # a task cancelled at shutdown raises CancelledError, not an Exception
        log.exception("%s failed on a batch of %d from %s; the batch is dead-lettered", stage, len(events), name)
        metrics.count("batches_failed", stage, error=type(error).__name__)
        reason = failure_reason(stage, error, "".join(traceback.format_exception(error))[-TRACEBACK_CHARS:])
        for event in events:
            await dead_letter(name, event, reason, stage)


async def dead_letter(name: str, event: EventT, reason: str, stage: str = "") -> None:
    """`stage`: the agent that failed to handle a valid message (empty for one that fails to validate: every
    agent reading the topic meets that alike, and one id makes them one row)."""
    raw_key = event.key if isinstance(event.key, bytes) else None
    log.warning("dead letter from %s[%s]@%s: %s", name, event.message.partition, event.message.offset,
                reason.splitlines()[0] if reason else reason)
    metrics.count("deadletters", stage=name)
    if name == "deadletter":
        return  # an unreadable dead letter is only logged and counted: re-sending it would loop forever
    await send(
        "deadletter",
        DeadLetter(
            event_id=derived_event_id(name, str(event.message.partition), str(event.message.offset),
                                      *([stage] if stage else [])),
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
