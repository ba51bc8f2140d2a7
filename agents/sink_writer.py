"""The sink's write path: a batch goes into ClickHouse, however long that takes, or the sink waits.

The Faust shell (`agents/sink.py`) commits a batch's offsets only after this
returns, so a ClickHouse that refuses inserts (down, a dropped table, a full
disk) pauses that topic's sink and loses nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from infra.clickhouse import ClickHouse

log = logging.getLogger(__name__)

# A failing insert is tried again after 0.5 s, 1 s, 2 s, … at most every 30 s; after a minute of failures
# the sink says it has stopped.
RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0
STALLED_SECONDS = 60.0


async def store_until_accepted(clickhouse: ClickHouse, table: str, rows: list[dict],
                               on_failure: Callable[[], None] = lambda: None,
                               on_stalled: Callable[[bool], None] = lambda stalled: None,
                               stopping: Callable[[], bool] = lambda: False) -> bool:
    """Insert a batch, retrying with backoff until ClickHouse accepts it (True), or until the worker stops
    (False: the rows are left to the next worker); a missing table is created again between tries. Nothing
    is skipped: while it fails, this topic's sink consumes nothing more."""
    delay = RETRY_FIRST_SECONDS
    failing_since: float | None = None
    said_stalled = False
    while True:
        try:
            await clickhouse.insert_async(table, rows)
        except Exception as exc:  # whatever ClickHouse says, the rows are kept and the insert retried
            reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            on_failure()
            now = time.monotonic()
            if failing_since is None:
                failing_since = now
                log.error("sink %s: an insert of %d rows failed (%s); retrying with backoff, its topic waits",
                          table, len(rows), reason)
            elif not said_stalled and now - failing_since >= STALLED_SECONDS:
                said_stalled = True
                on_stalled(True)
                log.error("sink %s: inserts have failed for %.0f s (%s). Its topic is no longer consumed and "
                          "nothing is skipped: the rows stay in Kafka, uncommitted, and go in once ClickHouse "
                          "accepts them (or after a restart)", table, now - failing_since, reason)
            if not await _sleep_unless(stopping, delay):
                log.error("sink %s: the worker stops with %d rows not stored; they stay in Kafka, uncommitted, "
                          "for the next worker", table, len(rows))
                return False
            delay = min(delay * 2, RETRY_MAX_SECONDS)
            try:
                await clickhouse.migrate_async()
            except Exception as repair:  # the next insert says whether the store is back
                log.info("sink %s: schema check failed too: %s", table, repair)
            continue
        if failing_since is not None:
            on_stalled(False)
            log.warning("sink %s: inserts succeed again after %.0f s; nothing was lost", table,
                        time.monotonic() - failing_since)
        return True


async def _sleep_unless(stopping: Callable[[], bool], seconds: float) -> bool:
    """Sleep, waking early when `stopping` says so; False when it did."""
    deadline = time.monotonic() + seconds
    while not stopping():
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        await asyncio.sleep(min(left, 0.25))
    return False
