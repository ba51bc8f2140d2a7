"""Writing a Faust table from a batched agent.

A table write sends its changelog to the partition of the event being processed, and in a batch
(`take_events`) that is not necessarily the event a key came with. Writing the value and its changelog
explicitly, on the partition of the key's own event, keeps each key's state where its partition's next owner
recovers it.
"""

from __future__ import annotations

import faust


def store(table: faust.Table, event: faust.types.EventT, key: str, value: object) -> None:
    table.data[key] = value
    table.send_changelog(event.message.partition, key, value)
