"""`sourcewatch crawl`: seed a crawl, run a worker until the crawl is idle, summarise it from ClickHouse."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from infra import queries
from models.web.links import canonical_url
from schemas.crawl import CrawlRequest
from schemas.discovery import DISCOVER_REASON
from schemas.sites import site_of

# The pipeline must stay idle this long before a crawl counts as finished.
QUIET_SECONDS = 1.0


@dataclass(frozen=True)
class CrawlPlan:
    seeds: list[str]
    max_pages: int
    max_depth: int
    # Stop after this many seconds even if pages remain (None: run until idle).
    time_limit: float | None = None
    # "seed": crawl from the seeds breadth-first; "source": the seeds are listing pages whose pagination
    # is tagged and followed; "discover": one discovery episode per seed homepage.
    reason: str = "seed"


def seed_requests(plan: CrawlPlan, crawl_id: str) -> list[CrawlRequest]:
    requests = []
    for seed in plan.seeds:
        url = canonical_url(seed.strip())
        if not site_of(url):
            raise ValueError(f"not an absolute http(s) URL: {seed!r}")
        requests.append(
            CrawlRequest(site=site_of(url), url=url, crawl_id=crawl_id, max_depth=plan.max_depth,
                         max_pages=plan.max_pages, reason=plan.reason,
                         source_url=url if plan.reason == "source" else None)
        )
    return requests


async def summarize(crawl_id: str, pages_fetched: int, seconds: float, timed_out: bool) -> dict:
    """The crawl's figures, read back from ClickHouse (so they prove the rows are there)."""
    from agents.sink import store

    clickhouse = store()
    _, by_status = await clickhouse.read_async(queries.crawl_fetches_by_status(crawl_id))
    _, latency = await clickhouse.read_async(queries.crawl_latency(crawl_id))
    _, links = await clickhouse.read_async(queries.crawl_links(crawl_id))
    _, pagination = await clickhouse.read_async(queries.crawl_pagination(crawl_id))
    _, seed_errors = await clickhouse.read_async(queries.crawl_seed_errors(crawl_id))
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


async def episodes_of(crawl_id: str) -> list[dict]:
    """The crawl's discovery episodes as ClickHouse holds them: how each ended, its clicks, what it found."""
    from agents.sink import store

    columns, rows = await store().read_async(queries.crawl_episodes(crawl_id))
    return [dict(zip(columns, row)) for row in rows]


async def metrics_written(timeout: float = 15.0) -> None:
    """Wait until the sink has written every metrics message this worker sent (the last flush too),
    so stopping the worker leaves none of them behind in the topic."""
    from agents.flush_metrics import sent
    from streams import progress

    deadline = time.monotonic() + timeout
    while progress.metrics_rows_written < sent() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


def run_crawl(plan: CrawlPlan, show_progress: bool = True) -> tuple[int, dict]:
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
        for request in requests:
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
        summary.update(await summarize(crawl_id, crawl.pages_fetched, seconds, timed_out))
        summary.update(records_read=crawl.records_sent, new_items=crawl.new_items_sent)
        if plan.reason == DISCOVER_REASON:
            summary["episodes"] = await episodes_of(crawl_id)
        # Table changes (the items each source has listed, the lists' templates) wait in the producer's
        # buffer; sent before the worker stops, the next worker recovers them from the changelog.
        await app.producer.flush()

    code = run_worker(drive)
    return code, summary
