"""Stage `plan_crawl`: links.scored (policy "bfs") → crawl.requests (the core is agents.frontier.BfsFrontier).

Events are handled one at a time because the frontier's tables write their
changelog to the partition of the event being processed, which keeps each
site's state on the site's partition.
"""

from __future__ import annotations

import faust

from agents.frontier import BfsFrontier
from schemas.sites import site_of
from streams import metrics, progress
from streams.app import app, settings
from streams.retention import crawl_scoped, named_in
from streams.deadletters import decode_events, kept_if_failed
from streams.topics import send, topic

# JSON both ways, so keys come back from the changelog as the same str they were written as.
_TABLE_OPTIONS = dict(
    partitions=settings.topic_partitions,
    schema=faust.Schema(key_type=str, value_type=int, key_serializer="json", value_serializer="json"),
)
# Keyed by crawl and URL (a URL of the site only), and by crawl and site.
seen_urls = crawl_scoped(app.Table("frontier-seen", **_TABLE_OPTIONS), "links.scored",
                         lambda key: site_of(named_in(key)))
pages_planned = crawl_scoped(app.Table("frontier-planned", **_TABLE_OPTIONS), "links.scored", named_in)


@app.agent(topic("links.scored"))
async def plan_crawl(stream):
    frontier = BfsFrontier(seen_urls, pages_planned)
    async for event in stream.events():
        async with kept_if_failed("plan_crawl", "links.scored", [event]):
            for links in await decode_events("links.scored", [event]):
                if links.policy != "bfs":
                    continue  # a discovery episode's scored links: the discovery stage clicks them
                requests = frontier.next_requests(links)
                metrics.count("requests_planned", "plan_crawl", len(requests))
                crawl = progress.of(links.crawl_id)
                for request in requests:
                    crawl.requests_sent += 1
                    await send("crawl.requests", request)
                crawl.link_sets_planned += 1
