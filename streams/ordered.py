"""An agent's events handled concurrently across keys, one after the other within a key, acked in arrival order.

A stage that handles each event on its own (its tables write their changelog to the partition of the event
being handled) waits, event after event, for work it runs off the event loop; at the soak's load the wait of
one site's page held every other site's page in the queue behind it — seconds between a page's fetch and its
new items. Events of different keys (sites: the registry's topics are keyed by site) share no table entry,
so they may run side by side; events of one key still run in their arrival order.

Each event runs in its own task, created while the stream is on it, so the task's context carries Faust's
current event and a table write from it goes to that event's partition. The stream's own acknowledgement
comes when it moves on; the event keeps one more reference until its handling ends, and that reference is
given back in arrival order: Faust commits a partition up to the end of its first run of acked offsets even
past an unacked one while the partition has no commit yet (see `streams.held_offsets`), so an out-of-order
ack could commit a page that was never handled. A handling that is cancelled (the worker stops) is never
acked, nor is anything after it: the next owner of the partition reads those events again.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from faust.types import EventT, StreamT

from streams import metrics

log = logging.getLogger(__name__)


@dataclass
class _Handling:
    event: EventT
    task: asyncio.Task | None = None
    finished: bool = False


class KeyOrdered:
    """Runs `handle(event)` for a stream's events, up to `limit` at once, in order within each event key."""

    def __init__(self, stage: str, stream: StreamT, handle: Callable[[EventT], Awaitable[None]], limit: int) -> None:
        self._stage = stage
        self._stream = stream
        self._handle = handle
        self._limit = limit
        self._in_arrival: deque[_Handling] = deque()
        self._last_of_key: dict[object, asyncio.Task] = {}
        self._room = asyncio.Event()

    def __len__(self) -> int:
        return len(self._in_arrival)

    async def submit(self, event: EventT) -> None:
        """Start handling `event` (the stream's current one) after the handlings of its key already started;
        waits while `limit` handlings are unacked."""
        while len(self._in_arrival) >= self._limit:
            self._room.clear()
            await self._room.wait()
        event.message.incref()  # given back by _ack_finished, once this and every earlier handling ended
        handling = _Handling(event)
        before = self._last_of_key.get(event.key)
        handling.task = asyncio.create_task(self._run(handling, before))
        self._last_of_key[event.key] = handling.task
        self._in_arrival.append(handling)

    async def _run(self, handling: _Handling, before: asyncio.Task | None) -> None:
        if before is not None:
            await asyncio.wait([before])  # its outcome is its own: a failed handling was dead-lettered by it
        try:
            await self._handle(handling.event)
        except Exception:
            # The handler dead-letters what it fails on; an error past that is what Faust does with an agent that
            # raises: logged, and the event acked, so the key's later events and the partition's commits go on.
            log.exception("%s: handling an event of key %r failed past its own guard", self._stage, handling.event.key)
            metrics.count("events_failed_unguarded", self._stage)
        handling.finished = True
        if self._last_of_key.get(handling.event.key) is handling.task:
            del self._last_of_key[handling.event.key]
        await self._ack_finished()

    async def _ack_finished(self) -> None:
        while self._in_arrival and self._in_arrival[0].finished:
            await self._stream.ack(self._in_arrival.popleft().event)
            self._room.set()

    async def close(self) -> None:
        """Cancel the handlings still running (the worker stops): their events stay unacked."""
        tasks = [handling.task for handling in self._in_arrival if handling.task and not handling.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._in_arrival.clear()
        self._last_of_key.clear()
