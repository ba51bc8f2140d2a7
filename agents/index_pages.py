"""Stage `index_pages`: pages.fetched → domain discovery's local full-text index (models.expansion.index).

With `settings.page_index_enabled` (off by default: on 2 cores it costs the pipeline about 40 % of its crawl
throughput), every readable HTML page fetched, by any crawl or revisit, goes into the SQLite index at
`settings.page_index` with its out-links, in one transaction per batch, off the event loop. Only the worker
that owns the stores runs it (role all or sink: one writer of the file); `sourcewatch expand` reads it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from functools import cache

from agents.links import is_html
from models.expansion.index import PageIndex
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.topics import topic

log = logging.getLogger(__name__)


@cache
def page_index() -> PageIndex:
    settings.page_index.parent.mkdir(parents=True, exist_ok=True)
    return PageIndex(settings.page_index)


progress.indexing_pages = settings.page_index_enabled


@app.agent(topic("pages.fetched"))
async def index_pages(stream):
    loop = asyncio.get_running_loop()
    async for events in stream.take_events(64, within=0.2):
        async with kept_if_failed("index_pages", "pages.fetched", events):
            if not settings.page_index_enabled:
                continue  # off by default: indexing costs the pipeline ~40 % of its pages/s on 2 cores (README)
            fetched = await decode_events("pages.fetched", events)
            pages = [(page.final_url, page.body) for page in fetched if page.ok and is_html(page) and page.body]
            if pages:
                try:
                    await loop.run_in_executor(None, page_index().add_many, pages)
                    metrics.count("pages_indexed", "index_pages", len(pages))
                except sqlite3.Error as error:
                    # The index is a search aid: the stream goes on without these pages (they are in ClickHouse).
                    log.warning("page index: %d pages not indexed: %s", len(pages), error)
                    metrics.count("pages_not_indexed", "index_pages", len(pages), error=type(error).__name__)
            for page in fetched:
                progress.of(page.crawl_id).pages_indexed += 1
