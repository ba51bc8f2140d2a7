"""streams.ordered: events of different keys handled side by side, one key's in order, acked in arrival order,
each handling seeing its own event as Faust's current one (where its table writes go)."""

import asyncio
import weakref

import faust.streams
from faust.types.tuples import Message

from streams.ordered import KeyOrdered


class Event:
    """What KeyOrdered reads of a Faust event: its key and its message (a real Faust Message, refcount and all)."""

    def __init__(self, key: bytes, offset: int) -> None:
        self.key = key
        self.message = Message("pages.fetched", 0, offset, 0.0, 0, {}, key, b"", 0)
        self.message.incref()  # the stream's own reference, given back when it moves on


class Stream:
    """The stream's side: it gives back its reference when it moves on; `ack` records the order of the rest."""

    def __init__(self) -> None:
        self.acked: list[int] = []

    async def ack(self, event: Event) -> bool:
        self.acked.append(event.message.offset)
        return not event.message.decref()


async def _submit_all(ordered: KeyOrdered, events: list[Event]) -> None:
    for event in events:
        faust.streams._current_event.set(weakref.ref(event))  # as the stream sets it for the event it is on
        await ordered.submit(event)
        event.message.decref()  # the stream moves on


def test_keys_run_side_by_side_one_keys_events_in_order_acks_in_arrival_order():
    async def scenario():
        stream, running, log = Stream(), set(), []
        delays = {0: 0.05, 1: 0.0, 2: 0.01, 3: 0.0}  # offset 0 (key a) is the slow one

        async def handle(event):
            assert faust.streams.current_event() is event
            assert event.key not in running, "two events of one key at once"
            running.add(event.key)
            log.append(("start", event.message.offset))
            await asyncio.sleep(delays[event.message.offset])
            running.discard(event.key)
            log.append(("end", event.message.offset))

        ordered = KeyOrdered("test", stream, handle, limit=8)
        events = [Event(b"a", 0), Event(b"b", 1), Event(b"a", 2), Event(b"c", 3)]
        await _submit_all(ordered, events)
        while len(ordered):
            await asyncio.sleep(0.01)
        return stream.acked, log, events

    acked, log, events = asyncio.run(scenario())
    assert log.index(("end", 1)) < log.index(("end", 0)), "key b waited for key a"
    assert log.index(("end", 0)) < log.index(("start", 2)), "key a's second event ran before its first ended"
    assert acked == [0, 1, 2, 3], "acked out of arrival order"
    assert all(event.message.refcount == 0 for event in events)


def test_a_handling_cancelled_is_never_acked_nor_anything_after_it():
    async def scenario():
        stream = Stream()
        release = asyncio.Event()

        async def handle(event):
            if event.key == b"slow":
                await release.wait()

        ordered = KeyOrdered("test", stream, handle, limit=8)
        events = [Event(b"fast", 0), Event(b"slow", 1), Event(b"fast", 2)]
        await _submit_all(ordered, events)
        await asyncio.sleep(0.05)
        acked_before_close = list(stream.acked)
        await ordered.close()
        return acked_before_close, stream.acked, events

    before, after, events = asyncio.run(scenario())
    assert before == after == [0]  # offset 2 ended, but offset 1 before it never did
    assert [event.message.refcount for event in events] == [0, 1, 1]


def test_submit_waits_while_limit_handlings_are_unacked():
    async def scenario():
        stream, started = Stream(), []
        release = asyncio.Event()

        async def handle(event):
            started.append(event.message.offset)
            await release.wait()

        ordered = KeyOrdered("test", stream, handle, limit=2)
        submitting = asyncio.create_task(_submit_all(ordered, [Event(bytes([key]), key) for key in range(3)]))
        await asyncio.sleep(0.05)
        waiting = (list(started), submitting.done())
        release.set()
        await submitting
        while len(ordered):
            await asyncio.sleep(0.01)
        return waiting, started, stream.acked

    (started_while_full, done_while_full), started, acked = asyncio.run(scenario())
    assert started_while_full == [0, 1] and not done_while_full
    assert started == [0, 1, 2] and acked == [0, 1, 2]


def test_an_error_past_the_handlers_guard_is_logged_and_acked_so_the_key_goes_on():
    async def scenario():
        stream, handled = Stream(), []

        async def handle(event):
            if event.message.offset == 0:
                raise RuntimeError("past the guard")
            handled.append(event.message.offset)

        ordered = KeyOrdered("test", stream, handle, limit=8)
        await _submit_all(ordered, [Event(b"a", 0), Event(b"a", 1)])
        while len(ordered):
            await asyncio.sleep(0.01)
        return handled, stream.acked

    handled, acked = asyncio.run(scenario())
    assert handled == [1] and acked == [0, 1]
