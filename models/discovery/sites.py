"""Labelled sites served for discovery evaluation and training: site folders on loopback (infra.site_server),
or the simulated web in this process with its truth as labels; each with a fetch that reads every URL once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiohttp

from infra.site_server import SiteServer
from models.discovery.data import LabelledSite
from models.discovery.episode import Fetch
from models.web.links import canonical_url

FETCH_TIMEOUT_SECONDS = 10
STOPPED = 0.0  # the simulated clock's speed: simulated seconds per real second
MAX_PAGE_BYTES = 5 * 1024 * 1024


@asynccontextmanager
async def served(sites: list[LabelledSite]) -> AsyncIterator[tuple[dict[str, str], Fetch]]:
    """The sites served on loopback: their homepages and a fetch that reads each URL once (they are static)."""
    server = SiteServer([site.folder for site in sites])
    homepages = await server.start()
    try:
        async with _reading_once() as fetch:
            yield homepages, fetch
    finally:
        await server.stop()


@dataclass(frozen=True)
class SimulatedSite:
    """A site of the simulated web, labelled by its truth."""

    name: str
    source_urls: frozenset[str]
    # Every page of its source pages' lists and their visible items' pages (a topical crawl's relevant pages).
    listed_urls: frozenset[str] = frozenset()

    @property
    def negative(self) -> bool:
        return not self.source_urls

    @property
    def source_count(self) -> int:
        return len(self.source_urls)

    def is_source(self, url: str) -> bool:
        return canonical_url(url) in self.source_urls


@asynccontextmanager
async def simulated_web(count: int, seed: int) -> AsyncIterator[tuple[list[SimulatedSite], dict[str, str], Fetch]]:
    """The simulated web served in this process: its sites labelled by the truth, homepages, and a fetch. Its
    clock stands at its start: with it running (an hour a second), what a page showed depended on when it was
    first read — on how loaded the machine was — and so did what fine-tuning learned and what it scored (a
    learning test that passed alone failed in the full suite)."""
    from infra.simweb.server import SimWeb

    web = SimWeb(count, seed, speed=STOPPED)
    homepages = await web.start()
    try:
        sites = [_labelled(site.spec.name, site.truth(site.origin)["source_pages"]) for site in web.sites]
        async with _reading_once() as fetch:
            yield sites, homepages, fetch
    finally:
        await web.stop()


def _labelled(name: str, sources: list[dict]) -> SimulatedSite:
    listed = {canonical_url(url) for source in sources for url in source["pages"]}
    listed |= {canonical_url(item["url"]) for source in sources for item in source["items"] if item["visible"]}
    return SimulatedSite(name, frozenset(canonical_url(source["url"]) for source in sources), frozenset(listed))


@asynccontextmanager
async def _reading_once() -> AsyncIterator[Fetch]:
    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_SECONDS)
    pages: dict[str, tuple[str, str]] = {}
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async def fetch(url: str) -> tuple[str, str]:
            if url not in pages:
                pages[url] = await _fetch(session, url)
            return pages[url]

        yield fetch


async def _fetch(session: aiohttp.ClientSession, url: str) -> tuple[str, str]:
    try:
        async with session.get(url) as response:
            if response.status != 200 or "html" not in response.content_type:
                return str(response.url), ""
            body = await response.content.read(MAX_PAGE_BYTES)
            return str(response.url), body.decode(response.charset or "utf-8", errors="replace")
    except (aiohttp.ClientError, TimeoutError):
        return url, ""
