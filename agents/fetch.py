"""Stage `fetch_pages`: crawl.requests → pages.fetched.

The core is agents.fetching.Fetcher; this shell feeds it batches, caps each
page's body to what a Kafka message carries (flagging `truncated`), and counts
outcomes. Several actors run at once so one slow host does not hold the rest, and each page goes out as soon
as it is fetched (after the pages of its own site asked for before it): a batch's requests wait for their hosts'
turns (per-host delay, Retry-After, a hung server up to the total timeout), and a page held until the batch's
slowest one was, its items reached ClickHouse that much later.
A request of a crawl whose time limit has passed by its host's turn is not
fetched (the crawl's command has stopped; its requests still in the topic, or
waiting for their host, would go on with it).

Requests no user waits on (BACKGROUND_REASONS: items' own pages, fetched for their times) go to the worker's
background lane (agents.fetching.background) and are fetched while the pages already fetched are read within
streams.queue_delay's target: a watch's start-up asks for thousands at once, and fetched at once they stood in
pages.fetched ahead of the revisits that find new items. They are the one exception to a site's pages coming
out in the order they were asked for.

A bulk crawl's fetches (PACED_REASONS: a crawl's seeds and the pages its frontier plans, a topical crawl's) wait,
a batch at a time, while the pages already fetched wait over that target: the fetch path runs several times faster
than the stages that read its pages, so fetched at full speed a crawl's pages stood seconds in pages.fetched —
in front of any watched page's revisit — and reached ClickHouse that much later (`sourcewatch bench crawl`: 4–5 s
at p50 before, 1.5–1.9 s since, at the same pages a second).
The batch stays on its topic while it waits (nothing is lost), and waits at most PACE_LONGEST_S: a stage that
never catches up slows a crawl, it does not stop it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from agents.fetching.background import BackgroundLane
from agents.fetching.fetcher import CrawlEnded, Fetcher
from schemas.crawl import (BACKGROUND_REASONS, LISTING_REASONS, PACED_REASONS, RECORD_REASONS, TOPICAL_REASON,
                           CrawlRequest, PageFetched)
from schemas.discovery import DISCOVER_REASON
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.queue_delay import fetched_pages
from streams.topics import send, topic

log = logging.getLogger(__name__)
FETCH_BATCH = 64
FETCH_ACTORS = 4
# A bulk crawl's batch waits at most this long for the pipeline to catch up.
PACE_LONGEST_S = 2.0
fetcher = Fetcher.from_settings(settings)


async def _fetched(request: CrawlRequest, published_before: asyncio.Future | None) -> PageFetched | None:
    """The request's page, published once fetched and once the pages of its site requested before it in the batch
    are out (`published_before`: the last of them): a site's pages reach the later stages in the order they were
    asked for, as a list's feed before the list's next revisit. None where its crawl ended by its time limit before
    the fetch (nothing fetched)."""
    try:
        page = await fetcher.fetch(request)
    except CrawlEnded:
        page = None
    if published_before is not None:
        await asyncio.wait([published_before])
    if page is not None:
        await _publish(page)
    return page


async def _publish(page: PageFetched) -> None:
    metrics.count("pages_fetched", "fetch", error=page.error.value, status=str(page.status))
    metrics.count("fetch_ms", "fetch", page.fetch_ms)
    fetched_pages.published()
    await send("pages.fetched", page.with_body_capped(settings.max_message_body_bytes))
    crawl = progress.of(page.crawl_id)
    crawl.pages_fetched += 1
    if page.reason in LISTING_REASONS:
        crawl.pages_to_tag += 1
    if page.reason in RECORD_REASONS:
        crawl.pages_to_extract += 1
    if page.reason == DISCOVER_REASON:
        crawl.pages_to_discover += 1
    if page.reason == TOPICAL_REASON:
        crawl.pages_to_crawl_topically += 1
    if progress.indexing_pages:
        crawl.pages_to_index += 1


async def _fetched_in_background(request: CrawlRequest) -> None:
    _count_dropped([request], [await _fetched(request, None)])


background = BackgroundLane(_fetched_in_background, fetched_pages.behind)


def _count_dropped(requests: list[CrawlRequest], pages: list[PageFetched | None]) -> None:
    ended = Counter(request.crawl_id for request, page in zip(requests, pages, strict=True) if page is None)
    for crawl_id, dropped in ended.items():
        log.info("%d requests of crawl %s not fetched: the crawl's time limit has passed", dropped, crawl_id)
        metrics.count("requests_dropped", "fetch", dropped, reason="crawl_ended")


def _count_under_way_at_retry_after() -> None:
    """Requests already under way when their host's Retry-After was read, by host (the soak holds them against
    the arrivals its server counts after asking for time)."""
    for host, under_way in fetcher.under_way_at_retry_after.items():
        metrics.count("requests_under_way_at_retry_after", "fetch", under_way, host=host)
    fetcher.under_way_at_retry_after.clear()


def _for_now(requests: list[CrawlRequest]) -> list[CrawlRequest]:
    """The requests to fetch now: the rest go to the background lane (while it has room)."""
    now = []
    for request in requests:
        if request.reason in BACKGROUND_REASONS and background.offer(request):
            metrics.count("requests_to_background", "fetch", reason=request.reason)
        else:
            now.append(request)
    return now


async def _paced(requests: list[CrawlRequest]) -> None:
    """Wait, for a batch of a bulk crawl only, until the pages already fetched are read in time."""
    if requests and all(request.reason in PACED_REASONS for request in requests):
        waited_s = await fetched_pages.caught_up(PACE_LONGEST_S)
        metrics.count("fetch_paced_ms", "fetch", round(waited_s * 1000))


async def _close_background() -> None:
    if left := await background.close():
        log.info("%d background requests not fetched: the worker stopped (their reads go to the scheduler "
                 "without them at the next revisit)", len(left))
        metrics.count("requests_dropped", "fetch", len(left), reason="worker_stopped")


@app.agent(topic("crawl.requests"), concurrency=FETCH_ACTORS)
async def fetch_pages(stream):
    await fetcher.start()
    background.start()
    try:
        async for events in stream.take_events(FETCH_BATCH, within=0.1):
            async with kept_if_failed("fetch_pages", "crawl.requests", events):
                requests = _for_now(await decode_events("crawl.requests", events))
                await _paced(requests)
                # Each page goes out as soon as it is fetched (after its site's earlier ones); the batch ends (and
                # its events are acked) once all of them are out. A failed send fails the batch only then, none of
                # its fetches left running.
                publishing, last_of_site = [], {}
                for request in requests:
                    publishing.append(asyncio.ensure_future(_fetched(request, last_of_site.get(request.site))))
                    last_of_site[request.site] = publishing[-1]
                fetched = await asyncio.gather(*publishing, return_exceptions=True)
                if failed := next((outcome for outcome in fetched if isinstance(outcome, BaseException)), None):
                    raise failed
                _count_dropped(requests, fetched)
                _count_under_way_at_retry_after()
    finally:
        # The worker is stopping.
        await _close_background()
        await fetcher.close()
