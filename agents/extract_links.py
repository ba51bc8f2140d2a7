"""Stage `extract_links`: pages.fetched → links.scored (the core is agents.links) for the breadth-first
frontier. The pages of discovery episodes and topical crawls are left to their own stages, which score their
links; an item's
page fetched for its time (reason "item_time") has no links to follow."""

from __future__ import annotations

from agents.links import links_of
from schemas.crawl import ITEM_TIME_REASON, TOPICAL_REASON
from schemas.discovery import DISCOVER_REASON
from streams import metrics, progress
from streams.app import app
from streams.deadletters import decode_events, kept_if_failed
from streams.topics import send, topic


@app.agent(topic("pages.fetched"))
async def extract_links(stream):
    async for events in stream.take_events(64, within=0.1):
        async with kept_if_failed("extract_links", "pages.fetched", events):
            for page in await decode_events("pages.fetched", events):
                crawl = progress.of(page.crawl_id)
                own_stage = page.reason in (DISCOVER_REASON, TOPICAL_REASON, ITEM_TIME_REASON)
                links = links_of(page) if not own_stage else None
                if links is not None:
                    metrics.count("links_found", "extract_links", len(links.anchors))
                    crawl.link_sets_sent += 1
                    await send("links.scored", links)
                crawl.pages_parsed += 1
