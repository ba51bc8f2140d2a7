"""Stages `tag_pagination` (pages.fetched → pagination.tags) and `follow_pagination` (→ crawl.requests).

Only source pages and the further pages of their lists are tagged (reasons in
LISTING_REASONS). Tagging is stateless and runs in batches off the event loop,
so the worker keeps heartbeating while the model works. Following is stateful
and handles one event at a time, because its tables write their changelog to
the partition of the event being processed (the site's), like the BFS
frontier's.
"""

from __future__ import annotations

import asyncio

import faust

from agents.links import is_html
from agents.pagination import PaginationFollower, shared_tagger, tag_pages
from models.pagination.tagger import MAX_TAGGED_NODES, model_name
from schemas.crawl import LISTING_REASONS
from schemas.sites import site_of
from streams import metrics, progress
from streams.app import app, settings
from streams.retention import crawl_scoped, named_in
from streams.deadletters import decode_events, kept_if_failed
from streams.topics import send, topic

TAG_BATCH = 16
_TABLE_OPTIONS = dict(
    partitions=settings.topic_partitions,
    schema=faust.Schema(key_type=str, value_type=int, key_serializer="json", value_serializer="json"),
)
# Keyed by crawl and source page (and a URL or digest of its list).
seen_pages, pages_planned, content_digests = (
    crawl_scoped(app.Table(name, **_TABLE_OPTIONS), "pagination.tags", lambda key: site_of(named_in(key)))
    for name in ("pagination-seen", "pagination-planned", "pagination-digests"))


@app.agent(topic("pages.fetched"))
async def tag_pagination(stream):
    # Loaded with the first listing page, so that workers that only crawl never pay for the model.
    model = None
    name = model_name(settings.pagination_model)
    loop = asyncio.get_running_loop()
    async for events in stream.take_events(TAG_BATCH, within=0.1):
        async with kept_if_failed("tag_pagination", "pages.fetched", events):
            pages = [page for page in await decode_events("pages.fetched", events) if page.reason in LISTING_REASONS]
            listings = [page for page in pages if page.ok and is_html(page)]
            if listings:
                model = model or await loop.run_in_executor(None, shared_tagger, settings.pagination_model)
                for tags in await loop.run_in_executor(None, tag_pages, model, name, listings):
                    metrics.count("pages_tagged", "tag_pagination")
                    if tags.nodes > MAX_TAGGED_NODES:
                        metrics.count("pages_cut", "tag_pagination", reason="more links than the tagger reads")
                    metrics.count("tagging_ms", "tag_pagination", tags.tagging_ms)
                    progress.of(tags.crawl_id).tag_sets_sent += 1
                    await send("pagination.tags", tags)
            for page in pages:
                progress.of(page.crawl_id).pages_tagged += 1


@app.agent(topic("pagination.tags"))
async def follow_pagination(stream):
    follower = PaginationFollower(seen_pages, pages_planned, content_digests, settings.pagination_max_pages)
    async for event in stream.events():
        async with kept_if_failed("follow_pagination", "pagination.tags", [event]):
            for tags in await decode_events("pagination.tags", [event]):
                requests, stop = follower.next_requests(tags)
                if requests and tags.depth == 0:
                    metrics.count("multipage_sources", "follow_pagination")
                if stop:
                    metrics.count("pagination_stops", "follow_pagination", reason=stop)
                crawl = progress.of(tags.crawl_id)
                for request in requests:
                    crawl.requests_sent += 1
                    await send("crawl.requests", request)
                crawl.tag_sets_followed += 1
