"""Stage `extract_links`: pages.fetched → links.scored (the core is agents.links), and for a breadth-first crawl's
pages → crawl.requests (the frontier: agents.frontier.BfsFrontier). The pages of discovery episodes and topical
crawls are left to their own stages, which score and follow their links; an item's page fetched for its time
(reason "item_time") has no links to follow.

The frontier plans a page's links here, as they are found, rather than in a stage of its own reading them back
from links.scored: one hop through Kafka and one decoding of every page's anchors fewer (the links still go to
links.scored, for the sink). Its tables — the URLs each crawl has planned, the pages planned per crawl and site —
are written on the partition of the page's own event (its site's), so the state follows the site to whichever
worker owns it; BFS order holds because each page's children go out one level deeper than it.
"""

from __future__ import annotations

import faust

from agents.frontier import BfsFrontier
from agents.links import links_of
from schemas.crawl import ITEM_TIME_REASON, TOPICAL_REASON
from schemas.discovery import DISCOVER_REASON
from schemas.sites import site_of
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.retention import crawl_scoped, named_in
from streams.tables import OnEventPartition
from streams.topics import send, topic

# JSON both ways, so keys come back from the changelog as the same str they were written as.
_TABLE_OPTIONS = dict(
    partitions=settings.topic_partitions,
    schema=faust.Schema(key_type=str, value_type=int, key_serializer="json", value_serializer="json"),
)
# Keyed by crawl and URL (a URL of the site only), and by crawl and site.
seen_urls = crawl_scoped(app.Table("frontier-seen", **_TABLE_OPTIONS), "pages.fetched",
                         lambda key: site_of(named_in(key)))
pages_planned = crawl_scoped(app.Table("frontier-planned", **_TABLE_OPTIONS), "pages.fetched", named_in)


@app.agent(topic("pages.fetched"))
async def extract_links(stream):
    async for events in stream.take_events(64, within=0.1):
        async with kept_if_failed("extract_links", "pages.fetched", events):
            for event in events:
                for page in await decode_events("pages.fetched", [event]):
                    crawl = progress.of(page.crawl_id)
                    own_stage = page.reason in (DISCOVER_REASON, TOPICAL_REASON, ITEM_TIME_REASON)
                    links = links_of(page) if not own_stage else None
                    if links is not None:
                        metrics.count("links_found", "extract_links", len(links.anchors))
                        crawl.link_sets_sent += 1
                        await send("links.scored", links)
                        frontier = BfsFrontier(OnEventPartition(seen_urls, event),
                                               OnEventPartition(pages_planned, event))
                        requests = frontier.next_requests(links)
                        metrics.count("requests_planned", "extract_links", len(requests))
                        for request in requests:
                            crawl.requests_sent += 1
                            await send("crawl.requests", request)
                        crawl.link_sets_planned += 1
                    crawl.pages_parsed += 1
