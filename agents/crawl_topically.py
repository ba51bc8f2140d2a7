"""Stage `crawl_topically`: pages.fetched (reason "topical") → crawl.requests (each site's next page),
links.scored (policy "qlearning": the page's links with their ranks) and the harvest metrics.

The core is agents.topical (over models.discovery.topical, the crawl `sourcewatch eval topical` runs). Each
site's crawl lives in the `topical-crawls` table, keyed by crawl and site in the site's partition, so a
restarted worker goes on with it from the changelog. Harvest rate over time is streamed as counters to
ClickHouse's metrics, labelled by crawl: `topical_pages` (label `relevant` yes/no) and `topical_sites` (label
`kind`: `crawled` at a site's seed page, `relevant` at its first relevant page).
"""

from __future__ import annotations

import logging

import faust

from agents.topical import TopicalCrawl, advance, crawl_key, open_crawl
from schemas.crawl import TOPICAL_REASON
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.retention import crawl_scoped, named_in
from streams.tables import store
from streams.topics import send, topic

log = logging.getLogger(__name__)
# A fetched page's JSON names its reason so (pydantic writes no spaces); most pages are not a topical crawl's
# and are passed over before decoding — this agent would otherwise decode every page the pipeline fetches.
_TOPICAL_MARK = f'"reason":"{TOPICAL_REASON}"'.encode()
crawls = crawl_scoped(app.Table("topical-crawls", partitions=settings.topic_partitions,
                                schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json")),
                      "pages.fetched", named_in)


@app.agent(topic("pages.fetched"))
async def crawl_topically(stream):
    async for events in stream.take_events(64, within=0.1):
        async with kept_if_failed("crawl_topically", "pages.fetched", events):
            for event in events:
                if not isinstance(event.value, bytes) or _TOPICAL_MARK not in event.value:
                    continue
                for page in await decode_events("pages.fetched", [event]):
                    if page.reason != TOPICAL_REASON:
                        continue
                    key = crawl_key(page.crawl_id, page.site)
                    value = crawls.get(key)
                    crawl = TopicalCrawl.model_validate(value) if value is not None else open_crawl(page)
                    if value is None:
                        metrics.count("topical_sites", "crawl_topically", crawl=page.crawl_id, kind="crawled")
                    step = advance(crawl, page)
                    store(crawls, event, key, crawl.model_dump(mode="json"))
                    counter = progress.of(page.crawl_id)
                    if step.links is not None and step.links.anchors:
                        await send("links.scored", step.links)
                    if step.request is not None:
                        counter.requests_sent += 1
                        await send("crawl.requests", step.request)
                    if step.relevant is not None:
                        metrics.count("topical_pages", "crawl_topically", crawl=page.crawl_id,
                                      relevant="yes" if step.relevant else "no")
                    if step.first_relevant:
                        metrics.count("topical_sites", "crawl_topically", crawl=page.crawl_id, kind="relevant")
                    if step.ended is not None:
                        log.info("topical crawl of %s ended (%s, %s): %d of %d pages relevant", page.site, step.ended,
                                 crawl.episode.reason, crawl.relevant, crawl.fetched)
                    counter.pages_crawled_topically += 1
