"""Fetches no user waits on, run while the pages already fetched are read in time (see streams.queue_delay).

The lane is the worker's own memory: a request in it was taken off its topic, so a worker that dies loses what
its lane held. Only requests whose loss the pipeline already allows belong here (an item's page fetched for its
time: a read whose item pages never come is sent to the scheduler without their times at its page's next
revisit, agents.item_times); a stopping worker hands what is left to its caller to report.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from schemas.crawl import CrawlRequest

log = logging.getLogger(__name__)

# Requests the lane holds at most; past it, a request is fetched at once, as though there were no lane.
LANE_CAPACITY = 50_000
# Fetches of the lane under way at once (most of them wait for their host's turn in the fetcher).
LANE_IN_FLIGHT = 64
# How often a lane held back looks again whether the pipeline has caught up.
PAUSE_S = 0.05
# A request held this long goes regardless: a pipeline that never catches up (or a queue this worker does not
# see drain: its partitions' pages read by another worker) must not keep it for ever.
MAX_WAIT_S = 120.0
# While the pipeline is still behind, the requests past their longest hold go one per this many seconds, not all
# at once: in the 5,000-site soak the start-up's ~24,000 item pages, let go together at their hold's end while
# the first reads of the pages discovery found were still being tagged, stood ahead of revisit pages for 20–50 s.
OVERDUE_INTERVAL_S = 0.05
# A fetch of the lane that failed (its page not published: the broker away) is tried again after this.
RETRY_S = 1.0


class BackgroundLane:
    """Requests run by `run(request)` one after the other (up to `in_flight` at once), each started only while
    `behind()` is false, or once it has waited `max_wait_s` — those one per `overdue_interval_s` while behind."""

    def __init__(self, run: Callable[[CrawlRequest], Awaitable[object]], behind: Callable[[], bool],
                 capacity: int = LANE_CAPACITY, in_flight: int = LANE_IN_FLIGHT, pause_s: float = PAUSE_S,
                 retry_s: float = RETRY_S, max_wait_s: float = MAX_WAIT_S,
                 overdue_interval_s: float = OVERDUE_INTERVAL_S) -> None:
        self._run = run
        self._behind = behind
        self.capacity = capacity
        self.pause_s = pause_s
        self.retry_s = retry_s
        self.max_wait_s = max_wait_s
        self.overdue_interval_s = overdue_interval_s
        # When the latest request past its longest hold was let go while the pipeline was behind (monotonic).
        self._overdue_let_go_at = float("-inf")
        # (when it came in, on the monotonic clock; the request)
        self._waiting: deque[tuple[float, CrawlRequest]] = deque()
        self._arrived = asyncio.Event()
        self._room = asyncio.Semaphore(in_flight)
        self._running: dict[asyncio.Task, CrawlRequest] = {}
        self._drainer: asyncio.Task | None = None

    def __len__(self) -> int:
        """Requests in the lane, waiting or under way."""
        return len(self._waiting) + len(self._running)

    def offer(self, request: CrawlRequest) -> bool:
        """Queue `request`; False where the lane is full or closed (the caller runs it itself)."""
        if self._drainer is None or len(self) >= self.capacity:
            return False
        self._waiting.append((time.monotonic(), request))
        self._arrived.set()
        return True

    def start(self) -> None:
        if self._drainer is None:
            self._drainer = asyncio.create_task(self._drain())

    async def close(self) -> list[CrawlRequest]:
        """Stop the lane; the requests it had not run to the end (waiting, or cut off under way)."""
        if self._drainer is None:
            return []
        self._drainer.cancel()
        cut = dict(self._running)
        for task in cut:
            task.cancel()
        await asyncio.gather(self._drainer, *cut, return_exceptions=True)
        self._drainer = None
        left = [request for task, request in cut.items() if task.cancelled()] + [
            request for _, request in self._waiting]
        self._waiting.clear()
        return left

    async def _drain(self) -> None:
        while True:
            if not self._waiting:
                self._arrived.clear()
                await self._arrived.wait()
                continue
            if self._behind():
                now = time.monotonic()
                if (now - self._waiting[0][0] < self.max_wait_s
                        or now - self._overdue_let_go_at < self.overdue_interval_s):
                    await asyncio.sleep(self.pause_s)
                    continue
                self._overdue_let_go_at = now
            # Only this loop takes from the lane, so it still holds a request once there is room.
            await self._room.acquire()
            _, request = self._waiting.popleft()
            task = asyncio.create_task(self._run_one(request))
            self._running[task] = request

    async def _run_one(self, request: CrawlRequest) -> None:
        try:
            await self._run(request)
        except Exception:
            log.exception("a background fetch of %s failed before its page was out; it goes back in the lane",
                          request.url)
            await asyncio.sleep(self.retry_s)
            self._waiting.appendleft((time.monotonic(), request))
            self._arrived.set()
        finally:
            self._running.pop(asyncio.current_task(), None)
            self._room.release()
