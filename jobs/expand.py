"""`sourcewatch expand`: domain discovery (DWDBRM) over the local index of fetched pages, its rounds sent to
`expansion.rounds` (hence ClickHouse's `expansion_rounds`), and the sites it found handed to discovery.

The rounds run here, on the index the worker that owns the stores keeps (models.expansion.rounds over
models.expansion.index); the forward crawl fetches the out-links the index lacks with the project's fetcher
(robots.txt, per-host politeness, caps, the address guard) and indexes them; the found sites' homepages then
go through Kafka as a discovery crawl (reason `discover`), so the stream does the rest — discovery, reading,
watching — as for any homepage.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import aiohttp

from agents.fetching.fetcher import Fetcher
from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import send_messages
from infra.searxng import searxng_search
from infra.settings import Settings
from models.expansion.index import PageIndex
from models.expansion.rounds import Expansion
from models.web.links import canonical_url
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest, PageFetched
from schemas.expansion import ExpansionRound
from schemas.sites import site_of


T = TypeVar("T")
# The reason of the forward crawl's fetches.
EXPAND_REASON = "expand"


class NotIndexed(ValueError):
    pass


class ExpansionWeb:
    """The web for the expansion's synchronous rounds, on an event loop of its own thread: the project's
    Fetcher for the forward crawl (a round's pages fetched at once; robots.txt and politeness per host still
    apply) and, where one is configured, a SearXNG instance for keyword search past the index."""

    def __init__(self, settings: Settings, crawl_id: str, searxng: str = "") -> None:
        self.crawl_id, self.searxng = crawl_id, searxng
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="expand-web", daemon=True)
        self.fetcher = Fetcher.from_settings(settings)
        self.search_session: aiohttp.ClientSession | None = None

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def __enter__(self) -> ExpansionWeb:
        self.thread.start()
        self._run(self.fetcher.start())
        return self

    def __exit__(self, *exc: object) -> None:
        self._run(self.fetcher.close())
        if self.search_session is not None:
            self._run(self.search_session.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()

    def fetch(self, urls: list[str]) -> dict[str, str]:
        async def fetch_all() -> list[PageFetched]:
            return await asyncio.gather(*(self.fetcher.fetch(CrawlRequest(
                crawl_id=self.crawl_id, url=url, site=site_of(url), reason=EXPAND_REASON)) for url in urls))

        pages = self._run(fetch_all())
        return {url: page.body for url, page in zip(urls, pages, strict=True) if page.ok and page.body}

    def search(self, words: list[str], page: int) -> list[str]:
        async def ask() -> list[str]:
            if self.search_session is None:
                self.search_session = aiohttp.ClientSession()
            return await searxng_search(self.search_session, self.searxng, " ".join(words), page)

        return self._run(ask())


def expand(settings: Settings, samples: list[str], budget: int,
           searxng: str | None = None) -> tuple[Expansion, list[ExpansionRound]]:
    """The rounds from these sample pages, which must be in the index (a page sourcewatch has fetched);
    keyword search also asks the SearXNG instance at `searxng` (default: settings.searxng_url; empty: none)."""
    if not settings.page_index.is_file():
        raise NotIndexed(f"no page index at {settings.page_index}: turn indexing on "
                         "(SOURCEWATCH_PAGE_INDEX_ENABLED=true, or page_index_enabled in sourcewatch.toml) for the "
                         "workers, then crawl some sites")
    index = PageIndex(settings.page_index)
    urls = [canonical_url(url) for url in samples]
    indexed = {page.url for page in index.pages(urls)}
    missing = [url for url in urls if url not in indexed]
    if missing:
        pages = len(index)
        index.close()
        raise NotIndexed(f"not in the page index ({pages} pages): {', '.join(missing)} — crawl them first "
                         f"(`sourcewatch crawl --seeds URL`)")
    expansion_id = uuid.uuid4().hex
    searxng = settings.searxng_url if searxng is None else searxng
    with ExpansionWeb(settings, f"expand-{expansion_id[:12]}", searxng) as web:
        expansion = Expansion(index, urls, fetch=web.fetch, web_search=web.search if searxng else None)
        rounds = expansion.run(budget)
    site = site_of(urls[0])
    messages = [ExpansionRound(event_id=derived_event_id(expansion_id, str(r.number)), site=site,
                               expansion_id=expansion_id, round=r.number, operator=r.operator, returned=r.returned,
                               new_pages=r.new, reward=r.reward,
                               arm_scores={arm: score for arm, score in r.arm_scores.items() if score is not None},
                               seeds=r.seeds, end=expansion.end if r is rounds[-1] else "")
                for r in rounds]
    index.close()
    return expansion, messages


def send_rounds(settings: Settings, messages: list[ExpansionRound]) -> None:
    asyncio.run(send_messages(bootstrap_address(settings), settings.topic_prefix, settings.topic_partitions,
                              [("expansion.rounds", message) for message in messages]))
