"""`sourcewatch crawl`: seed a crawl, follow it until idle, summarise it from ClickHouse.

With workers running (members in the consumer group), the crawl is produced to them and followed from
outside — its fetches in ClickHouse and the group's lag on the crawl's topics; with none, this process runs
a worker of its own for the crawl and follows its counters."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass

from aiokafka.errors import KafkaError
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from collections.abc import Awaitable, Callable

from infra import queries
from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import consumer_group, group_members, lags_of, queue_positions, send_messages
from infra.settings import Settings, get_settings
from infra.sql_owner import read_clickhouse
from models.web.links import canonical_url
from schemas.crawl import SEED_REASON, TOPICAL_REASON, CrawlRequest, CrawlTopic
from schemas.discovery import DISCOVER_REASON
from schemas.sites import site_of

log = logging.getLogger(__name__)
# The pipeline must stay idle this long before a crawl counts as finished: in the crawl's own worker (its
# counters are exact), and followed from outside (the sink writes in batches, offsets are committed every
# few seconds).
QUIET_SECONDS = 1.0
QUIET_BESIDE_SECONDS = 6.0
# A discovery crawl beside running workers stops waiting once its fetches have stood this long (see
# DiscoveryStall).
DISCOVERY_STALL_SECONDS = 60.0
# The topics a crawl's messages pass through.
CRAWL_TOPICS = ("crawl.requests", "pages.fetched", "links.scored", "sources.found", "discovery.episodes",
                "pagination.tags", "records.extracted", "changes.detected")


@dataclass(frozen=True)
class CrawlPlan:
    seeds: list[str]
    max_pages: int
    max_depth: int
    # Stop after this many seconds even if pages remain (None: run until idle).
    time_limit: float | None = None
    # "seed": crawl from the seeds breadth-first; "source": the seeds are listing pages whose pagination
    # is tagged and followed; "discover": one discovery episode per seed homepage; "topical": each seed's
    # site crawled by the Q-learning frontier towards `topic`.
    reason: str = SEED_REASON
    topic: CrawlTopic | None = None


# (topic, partition) → (a consumer group's committed offset, the end offset), for each group followed.
Positions = dict[tuple[str, int], tuple[int, int]]


async def _crawl_positions(bootstrap: str, prefix: str, topics: set[str]) -> dict[str, Positions] | None:
    """The queue positions on the crawl's topics of the processing workers' group and of the sink workers'
    (when they run apart, role sink); None when the broker does not answer — restarting, or too busy to answer
    within the client's timeout: the crawl goes on meanwhile, and its command asks again a second later."""
    positions = {}
    try:
        for role in ("all", "sink"):
            group = consumer_group(prefix, role)
            positions[group] = {partition: offsets for partition, offsets
                                in (await queue_positions(bootstrap, group)).items() if partition[0] in topics}
    except KafkaError as error:
        log.warning("the broker gave no queue positions (%s); asking again", error.__class__.__name__)
        return None
    return positions


@dataclass
class DiscoveryStall:
    """Whether a discovery crawl followed beside running workers has stalled (an episode that will not end: a
    worker gone, a message lost), so that its command stops waiting. Beside a running watch the crawl topics are
    never caught up, so "nothing queued" cannot tell; and a busy watch (the first reads of thousands of pages)
    may hold an episode's next click in the queue for minutes — no stall. So the clock starts only once the
    workers have handled every message that was queued on the crawl's topics when its fetches stopped growing
    (its next clicks among them), and it is a stall after `seconds` more without a new fetch; or after
    `seconds` in which the workers handled nothing at all."""

    seconds: float = DISCOVERY_STALL_SECONDS
    # The end offsets when the fetches stopped growing, and when the workers had handled up to them.
    _queued_at_stop: dict[tuple[str, tuple[str, int]], int] | None = None
    _caught_up_at: float | None = None
    _committed: dict[tuple[str, tuple[str, int]], int] | None = None
    _moved_at: float = 0.0

    def stalled(self, now: float, fetches_grew: bool, positions: dict[str, Positions]) -> bool:
        """One look (`positions` by consumer group); True once the crawl counts as stalled."""
        committed = _each_partition(positions, 0)
        if committed != self._committed or fetches_grew:
            self._committed, self._moved_at = committed, now
        if fetches_grew:
            self._queued_at_stop = self._caught_up_at = None
            return False
        if self._queued_at_stop is None:
            self._queued_at_stop = _each_partition(positions, 1)
        if self._caught_up_at is None and all(committed.get(key, end) >= end
                                              for key, end in self._queued_at_stop.items()):
            self._caught_up_at = now
        return (self._caught_up_at is not None and now - self._caught_up_at >= self.seconds) \
            or now - self._moved_at >= self.seconds


def _each_partition(positions: dict[str, Positions], which: int) -> dict[tuple[str, tuple[str, int]], int]:
    """(group, (topic, partition)) → its committed offset (`which` 0) or end offset (1)."""
    return {(group, partition): offsets[which]
            for group, by_partition in positions.items() for partition, offsets in by_partition.items()}


def seed_requests(plan: CrawlPlan, crawl_id: str) -> list[CrawlRequest]:
    requests = []
    for seed in plan.seeds:
        url = canonical_url(seed.strip())
        if not site_of(url):
            raise ValueError(f"not an absolute http(s) URL: {seed!r}")
        requests.append(
            CrawlRequest(site=site_of(url), url=url, crawl_id=crawl_id, max_depth=plan.max_depth,
                         max_pages=plan.max_pages, reason=plan.reason,
                         source_url=url if plan.reason == "source" else None, topic=plan.topic)
        )
    return requests


def sent_now(requests: list[CrawlRequest], plan: CrawlPlan) -> list[CrawlRequest]:
    """The seeds as they are sent: a crawl with a time limit carries its end from now (CrawlScoped.stop_at_ms),
    so that no worker goes on with it once its command has stopped — workers running beside it, or the next
    worker on the topics where its own worker left requests."""
    if plan.time_limit is None:
        return requests
    stop_at_ms = int((time.time() + plan.time_limit) * 1000)
    return [request.model_copy(update={"stop_at_ms": stop_at_ms}) for request in requests]


# Read = an async query on ClickHouse: the worker's own client, or infra.sql_owner beside running workers.
Read = Callable[[queries.Query], Awaitable[tuple[list[str], list[list]]]]


def _worker_store_read() -> Read:
    from agents.sink import store

    return store().read_async


async def summarize(crawl_id: str, pages_fetched: int, seconds: float, timed_out: bool, read: Read) -> dict:
    """The crawl's figures, read back from ClickHouse (so they prove the rows are there)."""
    _, by_status = await read(queries.crawl_fetches_by_status(crawl_id))
    _, latency = await read(queries.crawl_latency(crawl_id))
    _, links = await read(queries.crawl_links(crawl_id))
    _, pagination = await read(queries.crawl_pagination(crawl_id))
    _, seed_errors = await read(queries.crawl_seed_errors(crawl_id))
    rows = sum(row[2] for row in by_status)
    statuses: dict[str, int] = {}
    errors: dict[str, int] = {}
    for status, error, count in by_status:
        statuses[str(status)] = statuses.get(str(status), 0) + count
        if error != "none":
            errors[error] = errors.get(error, 0) + count
    p50, p99, sink_p50, sink_p99 = (round(float(v or 0), 2) for v in latency[0])
    return {
        "crawl_id": crawl_id,
        "pages_fetched": pages_fetched,
        "clickhouse_fetch_rows": rows,
        "pages_ok": sum(row[2] for row in by_status if row[1] == "none" and 200 <= row[0] < 300),
        "pages_per_s": round(pages_fetched / seconds, 2) if seconds > 0 else 0.0,
        "seconds": round(seconds, 2),
        "timed_out": timed_out,
        "by_status": statuses,
        "errors": errors,
        "seed_errors": [{"url": url, "error": error, "detail": detail} for url, error, detail in seed_errors],
        "links_found": links[0][0],
        "unique_links": links[0][1],
        "pages_tagged": pagination[0][0],
        "multipage_sources": pagination[0][1],
        "pagination_links": pagination[0][2],
        "fetch_ms_p50": p50,
        "fetch_ms_p99": p99,
        "fetch_to_clickhouse_ms_p50": sink_p50,
        "fetch_to_clickhouse_ms_p99": sink_p99,
    }


async def episodes_of(crawl_id: str, read: Read) -> list[dict]:
    """The crawl's discovery episodes as ClickHouse holds them: how each ended, its clicks, what it found."""
    columns, rows = await read(queries.crawl_episodes(crawl_id))
    return [dict(zip(columns, row)) for row in rows]


async def topical_harvest(crawl_id: str, read: Read) -> dict:
    """A topical crawl's harvest rate as its metrics in ClickHouse count it: relevant / fetched, pages and
    sites (the topic similarity judges each page)."""
    _, rows = await read(queries.crawl_topical_harvest(crawl_id))
    pages, relevant, sites, relevant_sites = (int(value or 0) for value in rows[0])
    return {"pages": pages, "relevant_pages": relevant, "sites": sites, "relevant_sites": relevant_sites,
            "harvest_rate": round(relevant / pages, 4) if pages else None,
            "harvest_rate_sites": round(relevant_sites / sites, 4) if sites else None}


async def _add_mode_figures(summary: dict, plan: CrawlPlan, crawl_id: str, read: Read) -> None:
    if plan.reason == DISCOVER_REASON:
        summary["episodes"] = await episodes_of(crawl_id, read)
        _, rows = await read(queries.crawl_finds(crawl_id))
        summary["find_scores"] = {url: round(float(score), 4) for url, score in rows}
    if plan.reason == TOPICAL_REASON:
        summary["topical"] = await topical_harvest(crawl_id, read)


async def metrics_written(timeout: float = 15.0) -> None:
    """Wait until the sink has written every metrics message this worker sent (the last flush too),
    so stopping the worker leaves none of them behind in the topic."""
    from agents.flush_metrics import sent
    from streams import progress

    deadline = time.monotonic() + timeout
    while progress.metrics_rows_written < sent() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


def run_crawl(plan: CrawlPlan, show_progress: bool = True) -> tuple[int, dict]:
    """Run the crawl to the end: on the running workers when there are (and the settings allow it), else in a
    worker of this process; (exit code, summary)."""
    settings = get_settings()
    if settings.attach_to_running_workers and asyncio.run(workers_running(settings)):
        return 0, asyncio.run(_crawl_on_running_workers(plan, settings, show_progress))
    return _crawl_in_own_worker(plan, show_progress)


async def workers_running(settings: Settings) -> int:
    """How many workers are in the consumer group now."""
    return len(await group_members(bootstrap_address(settings), consumer_group(settings.topic_prefix)))


async def _crawl_on_running_workers(plan: CrawlPlan, settings: Settings, show_progress: bool) -> dict:
    """Produce the crawl to the running workers and follow it: over once its fetches stop growing and the
    group has caught up on the crawl's topics (QUIET_BESIDE_SECONDS), or at the time limit. A discovery crawl
    is over once every homepage's episode has ended, or once it has stalled (DiscoveryStall)."""
    crawl_id = uuid.uuid4().hex
    requests = seed_requests(plan, crawl_id)
    bootstrap = bootstrap_address(settings)
    await send_messages(bootstrap, settings.topic_prefix, settings.topic_partitions,
                        [("crawl.requests", request) for request in sent_now(requests, plan)])

    async def read(query: queries.Query):
        return await asyncio.to_thread(read_clickhouse, settings, query)

    started, fetched, quiet_since, timed_out, stalled = time.monotonic(), -1, None, False, False
    stall = DiscoveryStall()
    topics = {settings.topic_prefix + name for name in CRAWL_TOPICS}
    with Progress(TextColumn("crawling on the running workers"), TextColumn("{task.completed} fetched"),
                  TimeElapsedColumn(), disable=not show_progress, transient=True) as bar:
        task = bar.add_task("crawl", total=None)
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            _, rows = await read(queries.crawl_fetch_count(crawl_id))
            positions = await _crawl_positions(bootstrap, settings.topic_prefix, topics)
            # Positions unknown (the broker did not answer): the workers may be busy; nothing is judged stalled.
            busy = rows[0][0] != fetched or positions is None or any(
                any(lags_of(group).values()) for group in positions.values())
            if plan.reason == DISCOVER_REASON:
                _, ended = await read(queries.crawl_episode_count(crawl_id))
                if ended[0][0] >= len({request.url for request in requests}):
                    quiet_since = quiet_since or now
                    break
                if positions is not None and stall.stalled(now, rows[0][0] != fetched, positions):
                    stalled = True
                    break
            fetched = rows[0][0]
            bar.update(task, completed=fetched)
            if plan.time_limit is not None and now - started > plan.time_limit:
                timed_out = True
                break
            quiet_since = None if busy else (quiet_since or now)
            if fetched and quiet_since is not None and now - quiet_since >= QUIET_BESIDE_SECONDS:
                break
    seconds = (quiet_since or time.monotonic()) - started
    summary = await summarize(crawl_id, fetched, seconds, timed_out, read)
    _, new_items = await read(queries.crawl_new_item_count(crawl_id))
    summary.update(records_read=None, new_items=new_items[0][0], workers="running")
    if plan.reason == DISCOVER_REASON:
        summary["stalled"] = stalled
    await _add_mode_figures(summary, plan, crawl_id, read)
    return summary


def _crawl_in_own_worker(plan: CrawlPlan, show_progress: bool) -> tuple[int, dict]:
    """Run the crawl to the end in a worker of this process: (exit code, summary)."""
    from agents.flush_metrics import flush
    from streams import progress
    from streams.app import app
    from streams.topics import send
    from streams.worker import run_worker

    crawl_id = uuid.uuid4().hex
    requests = seed_requests(plan, crawl_id)
    summary: dict = {}

    async def drive() -> None:
        crawl = progress.of(crawl_id)
        started = time.monotonic()
        for request in sent_now(requests, plan):
            crawl.requests_sent += 1
            await send("crawl.requests", request)
        with Progress(
            TextColumn("crawling"), BarColumn(), TextColumn("{task.completed} fetched / {task.total} planned"),
            TimeElapsedColumn(), disable=not show_progress, transient=True,
        ) as bar:
            task = bar.add_task("crawl", total=len(requests))
            quiet_since: float | None = None
            timed_out = False
            while True:
                await asyncio.sleep(0.2)
                bar.update(task, completed=crawl.pages_fetched, total=crawl.requests_sent)
                now = time.monotonic()
                if plan.time_limit is not None and now - started > plan.time_limit:
                    timed_out = True
                    break
                if crawl.idle() and crawl.written():
                    quiet_since = quiet_since or now
                    if now - quiet_since >= QUIET_SECONDS:
                        break
                else:
                    quiet_since = None
        seconds = (quiet_since or time.monotonic()) - started
        await flush()
        await metrics_written()
        read = _worker_store_read()
        summary.update(await summarize(crawl_id, crawl.pages_fetched, seconds, timed_out, read))
        summary.update(records_read=crawl.records_sent, new_items=crawl.new_items_sent, workers="own")
        await _add_mode_figures(summary, plan, crawl_id, read)
        # Table changes (the items each source has listed, the lists' templates) wait in the producer's
        # buffer; sent before the worker stops, the next worker recovers them from the changelog.
        await app.producer.flush()

    code = run_worker(drive)
    return code, summary
