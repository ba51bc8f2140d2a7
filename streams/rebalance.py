"""A rebalance must not wait for messages that no agent will ever finish.

At a rebalance (and at shutdown) Faust stops the flow, drops the events queued for each agent and waits until
every message an agent has started on is acked (`Consumer.wait_empty`). A message that several agents read
(pages.fetched feeds four) holds one reference per agent. When one agent had handled it and another's queue
still held it, the dropped event never gives its reference back, and the message counts as started for as
long as anything holds an event of it — and Faust itself keeps each stream's last event. The worker then
waited for good: in the 2-worker soak with faults, the worker that took over a killed one's partitions never
finished the rebalance and every watched page stopped (faust-streaming 0.15.3).

Here every event that will never reach its agent — dropped from a queue, or delivered while the flow is
stopped (the agent skips it without an ack) — is counted against its message, and the wait lets go of a
message once all its remaining references are such events. It is not acked: its offset is not committed, so
whoever owns its partition next reads it again (Faust seeks back to the committed offsets) and every agent
handles it then. A message still in an agent's hands is waited for as before.

That reading again needs a seek, and after a rebalance Faust seeks each partition to its committed offset —
which aiokafka skips for a partition with nothing committed yet (a new group's, at start-up). Its fetch
position then stays past the dropped events, and once later offsets are acked, Faust commits past them: two
of 1,163 seeded pages were never watched in a 2-worker soak. Such a partition is sought to its beginning
instead — what a new owner does with no committed offset anyway (stages are idempotent).

And Faust's flow control empties every agent's queue each time it is resumed, even when it was already
flowing. Recovery resumes it once to read the changelogs and again after seeking the stream partitions to
their committed offsets; a message fetched between the seek and that second resume was dropped from every
queue, never handled, and once the messages after it were acked Faust committed past it (the first page of
the sink fault test, lost about one run in ten under CPU load: the new worker read it, then dropped it). A
resume now empties the queues only when the flow was stopped: what arrived while it flowed belongs to the
current assignment. A revocation still stops the flow and empties the queues itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

import faust
from faust.types import EventT
from mode.utils.objects import cached_property
from mode.utils.queues import FlowControlEvent, ThrowableQueue

from streams.held_offsets import HeldOffsets, committing_no_further


# Faust asks aiokafka for an idempotent producer only inside transactions. Without it, a batch whose
# acknowledgement was lost (the broker stopped or restarted mid-request) is sent again and written twice: the
# 2-worker soak with faults found 27 revisit decisions stored twice as identical records (same id, same
# timestamp, a few offsets apart) on the broker's restart. With it the broker drops the retry by its sequence
# number.
IDEMPOTENT_PRODUCER = {"acks": "all", "enable_idempotence": True}


class NeverHandled:
    """Per message, how many of its events will never reach their agent (weakly: a message forgotten by
    Faust is forgotten here)."""

    def __init__(self) -> None:
        self._counts: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def count(self, item: object) -> None:
        if isinstance(item, EventT):
            self._counts[item.message] = self._counts.get(item.message, 0) + 1

    def only_left(self, message: Any) -> bool:
        """Whether every reference the message still holds is an event that will never be handled."""
        return not message.acked and 0 < message.refcount <= self._counts.get(message, 0)


class AgentQueue(ThrowableQueue):
    """An agent's incoming queue that counts the events it will never hand to its agent."""

    def __init__(self, *args: Any, never_handled: NeverHandled, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._never_handled = never_handled
        # Events whose put waits for room: a clear cancels those puts.
        self._putting: list[object] = []
        # Ids of queued events already counted (delivered while the flow was stopped), so that the clear at
        # the flow's resumption does not count them twice.
        self._counted: set[int] = set()

    def _stranded(self, value: object) -> None:
        self._never_handled.count(value)
        self._counted.add(id(value))

    def put_nowait_enhanced(self, value: Any, **kwargs: Any) -> bool:
        if not self._flow_control.is_active():
            self._stranded(value)  # the agent's stream skips an event delivered while the flow is stopped
        return super().put_nowait_enhanced(value, **kwargs)

    async def put(self, value: Any) -> None:
        if not self._flow_control.is_active():
            self._stranded(value)
            await super().put(value)
            return
        self._putting.append(value)
        try:
            await super().put(value)
        finally:
            self._putting.remove(value)

    def clear(self) -> None:
        for item in [*self._queue, *self._putting]:  # type: ignore[attr-defined]
            if id(item) not in self._counted:
                self._never_handled.count(item)
        self._counted.clear()
        super().clear()


class FlowControl(FlowControlEvent):
    """Faust's flow control, whose resume empties the agents' queues only when the flow was stopped."""

    def resume(self) -> None:
        if not self.is_active():
            super().resume()


class App(faust.App):
    """faust.App whose rebalances let go of messages that no agent will finish (see the module), whose flow
    resumes without dropping what arrived while it flowed, whose commits keep away from held partitions
    (`streams.held_offsets`), and whose producer is idempotent (IDEMPOTENT_PRODUCER)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.never_handled = NeverHandled()
        self.held_offsets = HeldOffsets()

    @cached_property
    def flow_control(self) -> FlowControlEvent:
        return FlowControl(loop=self.loop)

    def FlowControlQueue(self, maxsize: int | None = None, *, clear_on_resume: bool = False) -> ThrowableQueue:
        return AgentQueue(maxsize=maxsize, flow_control=self.flow_control, clear_on_resume=clear_on_resume,
                          never_handled=self.never_handled)

    def _new_producer(self):
        producer = super()._new_producer()
        # Read when the producer starts (and again when it is rebuilt after a broker outage).
        producer._settings_extra = lambda: IDEMPOTENT_PRODUCER
        return producer

    def _new_consumer(self):
        consumer = super()._new_consumer()
        clean = consumer._clean_unacked_messages
        never_handled = self.never_handled

        # Consumer.wait_empty calls this after each wait for acks, then checks whether any message is left.
        def clean_unacked_messages() -> None:
            clean()
            consumer._unacked_messages -= {message for message in consumer._unacked_messages
                                           if never_handled.only_left(message)}

        consumer._clean_unacked_messages = clean_unacked_messages
        # The seeks run in the consumer's thread, as Faust's own do.
        consumer.seek_to_committed = partial(seek_to_committed_or_beginning, consumer._thread,
                                             consumer.seek_to_committed)
        consumer._commit = committing_no_further(consumer._commit, self.held_offsets)
        return consumer


async def seek_to_committed_or_beginning(thread, seek_to_committed: Callable[[], Awaitable[Mapping]]) -> Mapping:
    """Seek each assigned partition to its committed offset, or to its beginning where none is committed
    (see the module); the committed offsets, as Faust's own seek returns them."""
    committed = await seek_to_committed()
    unread = [partition for partition, offset in committed.items() if offset is None or offset <= 0]
    if unread:
        await thread.seek_to_beginning(*unread)
    return committed
