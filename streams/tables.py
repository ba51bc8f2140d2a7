"""Writing a Faust table from a batched agent.

A table write sends its changelog to the partition of the event being processed, and in a batch
(`take_events`) that is not necessarily the event a key came with. Writing the value and its changelog
explicitly, on the partition of the key's own event, keeps each key's state where its partition's next owner
recovers it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, MutableMapping

import faust


def store(table: faust.Table, event: faust.types.EventT, key: str, value: object) -> asyncio.Future:
    """Write a key; returns its changelog write, done once the broker has it. Faust queues table writes in its
    producer buffer, sent one by one behind the other tables' writes — under load seconds after a message sent
    beside them, which the broker already has: a stage whose output must not outrun its state awaits this."""
    table.data[key] = value
    return table.send_changelog(event.message.partition, key, value)


def delete(table: faust.Table, partition: int, key: str) -> None:
    """Delete a key, with a tombstone on its changelog partition (no worker recovers it)."""
    table.data.pop(key, None)
    table.send_changelog(partition, key, None, value_serializer="raw")


class OnEventPartition(MutableMapping):
    """A table as one event of a batch writes it: every write `store`d on that event's partition (a stage's core
    that takes a mapping writes the table so from a batched agent)."""

    def __init__(self, table: faust.Table, event: faust.types.EventT) -> None:
        self.table = table
        self.event = event

    def __getitem__(self, key: str) -> object:
        return self.table.data[key]

    def __setitem__(self, key: str, value: object) -> None:
        store(self.table, self.event, key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self.table.data:
            raise KeyError(key)
        delete(self.table, self.event.message.partition, key)

    def __contains__(self, key: object) -> bool:
        return key in self.table.data

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.data)

    def __len__(self) -> int:
        return len(self.table.data)
