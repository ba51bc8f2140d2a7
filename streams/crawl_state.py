"""Letting go of the state of crawls long idle.

Some stages keep state per crawl, keyed `<crawl id>\\x00…` in the partition of the site it concerns: the BFS
frontier's seen URLs and pages planned per site, a list's followed pages and their digests, discovery
episodes, topical crawls. A crawl needs it while its messages can still come (a redelivered page must find
its episode ended, a link its URL seen); kept for ever, it grows with every crawl — each revisit hour is a
crawl of its own (its read-ons), a daily crawl of a thousand sites adds some 200,000 seen URLs — in every
worker's memory and in what a restarted worker reads back from the changelogs. A crawl this worker has done
nothing for in `crawl_state_keep_hours` (default: the topics' retention, so none of its messages can come
again) is let go of: each of its keys in the partitions this worker owns is deleted, with a tombstone on the
key's changelog partition, so no worker recovers it; a standby copy drops it as it applies the tombstone.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import faust

from streams import metrics, progress
from streams.app import app, settings
from streams.topics import topic

log = logging.getLogger(__name__)
# Keys looked at between two yields to the event loop (a table of a million keys must not stall heartbeats).
SWEEP_CHUNK = 10_000


@dataclass(frozen=True)
class CrawlScoped:
    table: faust.Table
    # The topic the stage writing the table consumes: a key lives in that topic's partition of its site.
    topic: str
    site_of_key: Callable[[str], str]


_scoped: list[CrawlScoped] = []


def crawl_scoped(table: faust.Table, consumed: str, site_of_key: Callable[[str], str]) -> faust.Table:
    """Register a table keyed by crawl (`<crawl id>\\x00…`), written by a stage consuming `consumed`, whose keys
    name their site as `site_of_key` reads it."""
    _scoped.append(CrawlScoped(table, consumed, site_of_key))
    return table


def crawl_of(key: str) -> str:
    return key.partition("\x00")[0]


def named_in(key: str) -> str:
    """What a crawl-scoped key names after its crawl id (up to the next separator): a site, a URL, a source."""
    return key.split("\x00", 2)[1] if "\x00" in key else ""


def keys_to_drop(keys: Iterable[str], idle: Callable[[str], bool], partition_of: Callable[[str], int | None]
                 ) -> list[tuple[str, int]]:
    """(key, its partition) for each key of an idle crawl in a partition this worker owns (`partition_of`:
    None for a key in another worker's partition — a standby copy — or one whose partition is not known yet)."""
    dropped = []
    for key in keys:
        if idle(crawl_of(key)) and (partition := partition_of(key)) is not None:
            dropped.append((key, partition))
    return dropped


def _owned_partition(scoped: CrawlScoped) -> Callable[[str], int | None]:
    name = topic(scoped.topic).get_topic_name()
    own = {tp.partition for tp in app.assignor.assigned_actives() if tp.topic == name}

    def partition_of(key: str) -> int | None:
        partition = app.consumer.key_partition(name, scoped.site_of_key(key).encode("utf-8"))
        return partition if partition in own else None

    return partition_of


async def let_go_of_idle_crawls(keep_seconds: float) -> Counter[str]:
    """Delete every key of the crawls idle here for `keep_seconds` from each crawl-scoped table (in this worker's
    partitions); the keys dropped per table."""
    idle: dict[str, bool] = {}

    def is_idle(crawl: str) -> bool:
        if crawl not in idle:
            idle[crawl] = progress.idle_seconds(crawl) >= keep_seconds
        return idle[crawl]

    dropped: Counter[str] = Counter()
    for scoped in _scoped:
        keys = list(scoped.table.data.keys())
        partition_of = _owned_partition(scoped)
        for start in range(0, len(keys), SWEEP_CHUNK):
            for key, partition in keys_to_drop(keys[start:start + SWEEP_CHUNK], is_idle, partition_of):
                scoped.table.data.pop(key, None)
                scoped.table.send_changelog(partition, key, None, value_serializer="raw")
                dropped[scoped.table.name] += 1
            await asyncio.sleep(0)
    for crawl in progress.idle_for(keep_seconds):
        progress.forget(crawl)
    return dropped


@app.timer(interval=max(min(settings.crawl_state_keep_hours * 3600 / 4, 600.0), 1.0))
async def sweep_crawl_state() -> None:
    dropped = await let_go_of_idle_crawls(settings.crawl_state_keep_hours * 3600)
    for table, keys in dropped.items():
        metrics.count("crawl_state_keys_dropped", "crawl_state", keys, table=table)
    if dropped:
        log.info("let go of %d keys of crawls idle for %.1f h or more (%s)", sum(dropped.values()),
                 settings.crawl_state_keep_hours,
                 ", ".join(f"{table} {keys}" for table, keys in sorted(dropped.items())))
