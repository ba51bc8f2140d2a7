"""What the stages' tables let go of, so that a worker that runs for months holds what is still of use.

Crawl-scoped tables keep state per crawl, keyed `<crawl id>\\x00…` in the partition of the site it concerns:
the BFS frontier's seen URLs and pages planned per site, a list's followed pages and their digests, discovery
episodes, topical crawls. A crawl needs it while its messages can still come (a redelivered page must find
its episode ended, a link its URL seen); kept for ever, it grows with every crawl — each revisit hour is a
crawl of its own (its read-ons), a daily crawl of a thousand sites adds some 200,000 seen URLs — in every
worker's memory and in what a restarted worker reads back from the changelogs. A crawl this worker has done
nothing for in `crawl_state_keep_hours` (default: the topics' retention, so none of its messages can come
again) is let go of.

Timestamped tables hold a time (ms since the epoch) per key that their stage moves on while the key is in use
— the record stage's known items, marked as still listed by the reads that list them: a key whose time is
older than the table's keep is let go of.

Each worker deletes such keys in the partitions it owns, with a tombstone on the key's changelog partition, so
no worker recovers them; a standby copy drops them as it applies the tombstones.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import faust

from streams import metrics, progress
from streams.app import app, settings
from streams.tables import delete
from streams.topics import topic

log = logging.getLogger(__name__)
# Keys looked at between two yields to the event loop (a table of a million keys must not stall heartbeats).
SWEEP_CHUNK = 10_000
# How often the tables are swept at most (and a quarter of the shortest keep where that is shorter).
SWEEP_SECONDS = 600.0


@dataclass(frozen=True)
class Retained:
    table: faust.Table
    # The topic the stage writing the table consumes: a key lives in that topic's partition of its site.
    topic: str
    site_of_key: Callable[[str], str]
    # None: keyed by crawl, kept while the crawl is not idle; else values are times (ms), kept this long.
    keep_seconds: float | None = None


_retained: list[Retained] = []


def crawl_scoped(table: faust.Table, consumed: str, site_of_key: Callable[[str], str]) -> faust.Table:
    """Register a table keyed by crawl (`<crawl id>\\x00…`), written by a stage consuming `consumed`, whose keys
    name their site as `site_of_key` reads it."""
    _retained.append(Retained(table, consumed, site_of_key))
    return table


def timestamped(table: faust.Table, consumed: str, site_of_key: Callable[[str], str],
                keep_seconds: float) -> faust.Table:
    """Register a table whose values are times (ms since the epoch) its stage moves on while a key is in use: a
    key is let go of once its time is `keep_seconds` old."""
    _retained.append(Retained(table, consumed, site_of_key, keep_seconds))
    return table


def crawl_of(key: str) -> str:
    return key.partition("\x00")[0]


def named_in(key: str) -> str:
    """What a key names after its first part (up to the next separator): a site, a URL, a source."""
    return key.split("\x00", 2)[1] if "\x00" in key else ""


def keys_to_drop(items: Iterable[tuple[str, object]], expired: Callable[[str, object], bool],
                 partition_of: Callable[[str], int | None]) -> list[tuple[str, int]]:
    """(key, its partition) for each expired key in a partition this worker owns (`partition_of`: None for a key
    in another worker's partition — a standby copy — or one whose partition is not known yet)."""
    dropped = []
    for key, value in items:
        if expired(key, value) and (partition := partition_of(key)) is not None:
            dropped.append((key, partition))
    return dropped


def older_than(keep_seconds: float, now_ms: float) -> Callable[[str, object], bool]:
    return lambda _, value: isinstance(value, int | float) and now_ms - value > keep_seconds * 1000


def crawl_idle(keep_seconds: float) -> Callable[[str, object], bool]:
    idle: dict[str, bool] = {}

    def expired(key: str, _: object) -> bool:
        crawl = crawl_of(key)
        if crawl not in idle:
            idle[crawl] = progress.idle_seconds(crawl) >= keep_seconds
        return idle[crawl]

    return expired


def _owned_partition(retained: Retained) -> Callable[[str], int | None]:
    name = topic(retained.topic).get_topic_name()
    own = {tp.partition for tp in app.assignor.assigned_actives() if tp.topic == name}

    def partition_of(key: str) -> int | None:
        partition = app.consumer.key_partition(name, retained.site_of_key(key).encode("utf-8"))
        return partition if partition in own else None

    return partition_of


async def let_go(crawl_keep_seconds: float) -> Counter[str]:
    """Delete every expired key of each registered table (in this worker's partitions); the keys dropped per
    table."""
    by_crawl = crawl_idle(crawl_keep_seconds)
    dropped: Counter[str] = Counter()
    for retained in _retained:
        expired = by_crawl if retained.keep_seconds is None else older_than(retained.keep_seconds,
                                                                             time.time() * 1000)
        data = retained.table.data
        keys = list(data)
        partition_of = _owned_partition(retained)
        for start in range(0, len(keys), SWEEP_CHUNK):
            # Each chunk read as it is now: the stages may have written or deleted keys while the sweep yielded.
            items = [(key, data[key]) for key in keys[start:start + SWEEP_CHUNK] if key in data]
            for key, partition in keys_to_drop(items, expired, partition_of):
                delete(retained.table, partition, key)
                dropped[retained.table.name] += 1
            await asyncio.sleep(0)
    for crawl in progress.idle_for(crawl_keep_seconds):
        progress.forget(crawl)
    return dropped


def sweep_seconds() -> float:
    """A quarter of the shortest keep, SWEEP_SECONDS at most, a second at least."""
    keeps = [settings.crawl_state_keep_hours * 3600, *(r.keep_seconds for r in _retained if r.keep_seconds)]
    return max(min(min(keeps) / 4, SWEEP_SECONDS), 1.0)


_next_sweep = [0.0]


# Faust fixes a timer's interval when it is declared, before the stages register their tables: this one wakes
# every second and sweeps when a sweep is due.
@app.timer(interval=1.0)
async def sweep_tables() -> None:
    if time.monotonic() < _next_sweep[0]:
        return
    dropped = await let_go(settings.crawl_state_keep_hours * 3600)
    _next_sweep[0] = time.monotonic() + sweep_seconds()
    for table, keys in dropped.items():
        metrics.count("table_keys_dropped", "retention", keys, table=table)
    if dropped:
        log.info("let go of %s", ", ".join(f"{keys} keys of {table}" for table, keys in sorted(dropped.items())))
