"""Partitions a worker must leave uncommitted from a given offset on: the sink's, when it stops with a batch
that ClickHouse has not accepted.

The rows stay in Kafka for the next worker only if nothing at or after the batch's offsets is committed.
Faust commits a partition up to the end of its first run of acked offsets, even past an earlier offset
that is not acked (while the partition has no commit yet, or is one offset behind it), and while a worker
shuts down its agents ack what they still hold by paths that are hard to rule out one by one: a 1-in-10
loss of the refused page in the sink fault test under CPU load (faust-streaming 0.15.3). So the rule is
kept where offsets reach Kafka: a held partition is never committed past its first held offset.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from faust.types import TP


class HeldOffsets:
    """Per partition, the first offset this worker must not commit past."""

    def __init__(self) -> None:
        self._first: dict[TP, int] = {}

    def hold(self, tp: TP, offset: int) -> None:
        self._first[tp] = min(offset, self._first.get(tp, offset))

    def clamp(self, offsets: Mapping[TP, int]) -> dict[TP, int]:
        """The offsets to commit: none of a held partition beyond its first held offset."""
        return {tp: min(offset, self._first[tp]) if tp in self._first else offset for tp, offset in offsets.items()}


def committing_no_further(commit: Callable[[Mapping[TP, int]], Awaitable[bool]],
                          held: HeldOffsets) -> Callable[[Mapping[TP, int]], Awaitable[bool]]:
    """A consumer's commit that never commits a held partition past its first held offset."""

    async def commit_held(offsets: Mapping[TP, int]) -> bool:
        return await commit(held.clamp(offsets))

    return commit_held
