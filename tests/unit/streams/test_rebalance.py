"""A rebalance lets go of messages that no agent will finish (streams.rebalance), with Faust's own queues,
messages and consumer — no broker is needed before the consumer starts.

The scene is the one that hung the 2-worker soak: a message two agents read, handled by one, still queued for
the other when the rebalance drops the queues, and an event of it kept alive (Faust keeps each stream's last).
"""

from __future__ import annotations

import asyncio

import faust
import pytest
from faust.events import Event
from faust.types import TP
from faust.types.tuples import Message

from streams.rebalance import App

TOPIC = TP("pages", 0)


def _app(cls):
    return cls("test-rebalance", broker="kafka://127.0.0.1:1", store="memory://", autodiscover=False)


def _read_by_two(app, consumer):
    """A message delivered to two agents' queues and tracked as started (as a stream that took it does)."""
    app.flow_control.resume()  # as a started worker's
    message = Message(TOPIC.topic, TOPIC.partition, 7, 0.0, 0, {}, b"k", b"v", None)
    message.incref(2)
    consumer._unacked_messages.add(message)
    queues = [app.FlowControlQueue(maxsize=8, clear_on_resume=True) for _ in range(2)]
    events = [Event(app, b"k", b"v", {}, message) for _ in queues]
    for queue, event in zip(queues, events):
        queue.put_nowait_enhanced(event, on_pressure_high=lambda: None, on_pressure_drop=lambda: None)
    return message, queues, events


def _rebalance_starts(app) -> None:
    app.flow_control.suspend()
    app.flow_control.clear()


@pytest.fixture
def scene():
    app = _app(App)
    consumer = app.consumer
    message, queues, events = _read_by_two(app, consumer)
    return app, consumer, message, queues, events


def test_a_message_whose_other_event_was_dropped_is_let_go_of_without_an_ack(scene):
    app, consumer, message, queues, events = scene
    queues[0].get_nowait()
    message.ack(consumer)  # the first agent handled it; the second's event waits in its queue
    _rebalance_starts(app)
    consumer._clean_unacked_messages()
    assert message not in consumer._unacked_messages
    assert not message.acked and not consumer._acked[TOPIC]  # not committed: read again by the next owner
    del events


def test_a_message_in_an_agents_hands_is_waited_for_until_it_is_acked(scene):
    app, consumer, message, queues, events = scene
    queues[0].get_nowait()  # the first agent took it and is still working on it
    _rebalance_starts(app)
    consumer._clean_unacked_messages()
    assert message in consumer._unacked_messages
    message.ack(consumer)  # done: only the dropped event's reference is left
    consumer._clean_unacked_messages()
    assert message not in consumer._unacked_messages and not message.acked


def test_an_event_delivered_while_the_flow_is_stopped_counts_once(scene):
    app, consumer, message, queues, events = scene
    for queue in queues:
        queue.get_nowait()
    message.ack(consumer)
    app.flow_control.suspend()
    # Delivered after the stop (its stream will skip it), then cleared again when the flow resumes.
    queues[1].put_nowait_enhanced(events[1], on_pressure_high=lambda: None, on_pressure_drop=lambda: None)
    app.flow_control.resume()
    assert app.never_handled._counts[message] == 1
    consumer._clean_unacked_messages()
    assert message not in consumer._unacked_messages and not message.acked


def test_the_wait_for_started_messages_ends(scene):
    app, consumer, message, queues, events = scene
    queues[0].get_nowait()
    message.ack(consumer)
    _rebalance_starts(app)

    async def commit(*args, **kwargs):
        return False  # no broker here; the wait commits what is acked, which is nothing

    consumer.commit = commit
    app.loop.run_until_complete(asyncio.wait_for(consumer.wait_empty(), timeout=10))
    assert message not in consumer._unacked_messages


def test_faust_alone_keeps_waiting_for_such_a_message():
    """Why the module exists: the same scene in a plain faust.App keeps the message started."""
    app = _app(faust.App)
    consumer = app.consumer
    message, queues, events = _read_by_two(app, consumer)
    queues[0].get_nowait()
    message.ack(consumer)
    _rebalance_starts(app)
    consumer._clean_unacked_messages()
    assert message in consumer._unacked_messages


class _Partitions:
    """Where a consumer's partitions are sought (a stand-in for the broker's consumer thread)."""

    def __init__(self, committed: dict) -> None:
        self.committed = committed
        self.to_beginning: list = []

    async def seek_to_committed(self) -> dict:
        return self.committed

    async def seek_to_beginning(self, *partitions) -> None:
        self.to_beginning.extend(partitions)


def test_a_partition_with_nothing_committed_is_read_again_from_its_beginning():
    from streams.rebalance import seek_to_committed_or_beginning

    fresh, started, done = TP("pages", 0), TP("pages", 1), TP("pages", 2)
    partitions = _Partitions({fresh: None, started: 0, done: 12})
    committed = asyncio.run(seek_to_committed_or_beginning(partitions, partitions.seek_to_committed))
    assert committed == partitions.committed
    assert partitions.to_beginning == [fresh, started]


def test_the_app_s_consumer_seeks_that_way_in_its_thread():
    app = _app(App)
    seek = app.consumer.seek_to_committed
    assert seek.func.__name__ == "seek_to_committed_or_beginning"
    thread = seek.args[0]
    assert thread is app.consumer._thread and asyncio.iscoroutinefunction(thread.seek_to_beginning)


def _queued_while_flowing(app):
    """A worker's flow resumed for recovery, then a stream message queued for an agent (fetched after the
    seek to the committed offsets), then recovery's second resume."""
    app.flow_control.resume()
    queue = app.FlowControlQueue(maxsize=8, clear_on_resume=True)
    message = Message(TOPIC.topic, TOPIC.partition, 0, 0.0, 0, {}, b"k", b"v", None)
    queue.put_nowait_enhanced(Event(app, b"k", b"v", {}, message), on_pressure_high=lambda: None,
                              on_pressure_drop=lambda: None)
    app.flow_control.resume()
    return queue


def test_a_resume_while_the_flow_runs_keeps_what_the_agents_have_queued():
    assert _queued_while_flowing(_app(App)).qsize() == 1


def test_faust_alone_drops_it_at_that_resume():
    """Why: the dropped message was never handled, and Faust committed past it once later ones were acked."""
    assert _queued_while_flowing(_app(faust.App)).qsize() == 0


def test_a_resume_after_a_stop_still_empties_the_queues():
    app = _app(App)
    queue = _queued_while_flowing(app)
    app.flow_control.suspend()
    app.flow_control.resume()
    assert queue.qsize() == 0


def test_the_apps_producer_is_idempotent_where_fausts_is_not():
    """A batch re-sent after a lost acknowledgement (the broker stopped mid-request) is dropped by the broker
    only for an idempotent producer; Faust asks for one inside transactions alone."""

    async def producers():
        built = []
        for cls in (App, faust.App):
            client = _app(cls)._new_producer()._new_producer()
            built.append(client._txn_manager is not None)
            await client.stop()
        return built

    assert asyncio.run(producers()) == [True, False]
