"""How long this worker's fetched pages wait before their records are read: the age of the page just taken up.

A new item reaches ClickHouse only after its page's turn in pages.fetched, and a page's turn comes after every
page fetched before it in its partition. A watch's start-up fetches, in a minute, five item pages for each of
thousands of first reads (agents.item_times); read in turn, they held the revisit pages fetched behind them for
a minute (the 5,000-site soak: new items' rows 10 s after their fetch at p50, 65 s at p99, in its first quarter).
So the fetch stage holds the fetches no user waits on while the pages already fetched wait longer than the target
(agents.fetch), and lets them through as the queue runs short.

The age is measured from the Kafka message's timestamp (its producer's clock, set as the fetch stage publishes the
page). An age seen a while ago says nothing of now: a stage that has taken up no page for `fresh_s` has an empty
queue, or is on one slow page, and neither is a queue of waiting pages.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# A page may wait this long before the fetches no one waits on are held back: under it, a new item's row comes
# within about a second of its fetch (the sink's flush adds its half second).
TARGET_S = 0.5
# An age older than this is no longer news of the queue.
FRESH_S = 2.0


class QueueDelay:
    """The latest wait a stage saw its pages make, and whether it is over the target."""

    def __init__(self, target_s: float = TARGET_S, fresh_s: float = FRESH_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.target_s = target_s
        self.fresh_s = fresh_s
        self._clock = clock
        self._seen_at = float("-inf")
        self._waited_s = 0.0

    def observe(self, produced_at: float) -> None:
        """A page produced at `produced_at` (epoch seconds) is being taken up now."""
        self._seen_at = self._clock()
        self._waited_s = max(0.0, self._seen_at - produced_at)

    @property
    def waited_s(self) -> float:
        """The latest page's wait; 0 where none was seen within `fresh_s`."""
        return self._waited_s if self._clock() - self._seen_at <= self.fresh_s else 0.0

    def behind(self) -> bool:
        return self.waited_s > self.target_s


# The worker's pages.fetched, as stage extract_records takes them up (the stage new items come from).
fetched_pages = QueueDelay()
