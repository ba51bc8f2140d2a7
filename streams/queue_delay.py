"""How long this worker's fetched pages wait before their records are read.

A new item reaches ClickHouse only after its page's turn in pages.fetched, and a page's turn comes after every
page fetched before it in its partition. A watch's start-up fetches, in a minute, five item pages for each of
thousands of first reads (agents.item_times); read in turn, they held the revisit pages fetched behind them for
a minute (the 5,000-site soak: new items' rows 10 s after their fetch at p50, 65 s at p99, in its first quarter).
So the fetch stage holds the fetches no user waits on while the pages already fetched wait longer than the target
(agents.fetch), and lets them through as the queue runs short.

The wait is that of the oldest page not yet taken up: from the moment the stage took up its latest page was
produced (the Kafka message's timestamp, set as the fetch stage published it) to now — while a page published
after it is still to come. A stage that takes nothing up (another stage of the topic holding the partition's
delivery back) is behind all the more; one that has taken up every page published has no queue, however long
ago that was. A worker publishes the pages of the partitions it owns (crawl.requests and pages.fetched are
assigned together, both keyed by site), so both ends are seen in the one process.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

# A page may wait this long before the fetches no one waits on are held back: under it, a new item's row comes
# within about a second of its fetch (the sink's flush adds its half second).
TARGET_S = 0.5
# How often a fetch held back looks again whether the stage has caught up.
PAUSE_S = 0.05
# Kafka keeps a message's timestamp in whole milliseconds, so a page taken up may seem produced up to a
# millisecond before the moment its publisher noted: that close, it is the page published last.
SAME_MOMENT_S = 0.002


class QueueDelay:
    """The wait of the oldest page a stage has not taken up, and whether it is over the target."""

    def __init__(self, target_s: float = TARGET_S, clock: Callable[[], float] = time.time) -> None:
        self.target_s = target_s
        self._clock = clock
        self._published_at = float("-inf")
        self._taken_produced_at = float("-inf")
        # Since when the oldest page not taken up has waited, at the earliest; None while none waits.
        self._head_since: float | None = None

    def published(self) -> None:
        """A page is being published now (before its message is sent)."""
        self._published_at = self._clock()
        if self._head_since is None:
            self._head_since = self._published_at

    def observe(self, produced_at: float) -> None:
        """The stage is taking up a page produced at `produced_at` (epoch seconds)."""
        self._taken_produced_at = max(self._taken_produced_at, produced_at)
        if self._published_at <= self._taken_produced_at + SAME_MOMENT_S:
            self._head_since = None
        elif self._head_since is not None:
            # The pages come in the order they were published: the next was published after this one.
            self._head_since = max(self._head_since, produced_at)

    @property
    def waited_s(self) -> float:
        """How long the oldest page still to be taken up has waited; 0 when none is."""
        return 0.0 if self._head_since is None else max(0.0, self._clock() - self._head_since)

    def behind(self) -> bool:
        return self.waited_s > self.target_s

    async def caught_up(self, longest_s: float, pause_s: float = PAUSE_S) -> float:
        """Return once the stage is not behind, or after `longest_s`; how long that took (seconds)."""
        started = time.monotonic()
        while self.behind() and (waited := time.monotonic() - started) < longest_s:
            await asyncio.sleep(min(pause_s, longest_s - waited))
        return time.monotonic() - started


# The worker's pages.fetched, as stage extract_records takes them up (the stage new items come from).
fetched_pages = QueueDelay()
