"""`sourcewatch tag URL|FILE`: the pagination links of one page, fetched politely or read from disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.fetching.decoding import decode_body, looks_binary
from agents.fetching.fetcher import Fetcher
from agents.links import canonical_url
from agents.pagination import tag_pages
from infra.settings import Settings
from models.dom import parse_html
from models.pagination_tagger import load_tagger, model_name
from schemas.crawl import CrawlRequest, PageFetched
from schemas.pagination import PaginationTags
from schemas.sites import site_of


class TagInputError(RuntimeError):
    """The page could not be read or fetched; the message says why."""


def _canonical_link(body: str) -> str | None:
    root = parse_html(body)
    hrefs = root.xpath("//link[@rel='canonical']/@href | //base/@href") if root is not None else []
    return next((href.strip() for href in hrefs if href.strip().startswith(("http://", "https://"))), None)


def _page_from_file(path: Path, base_url: str | None) -> PageFetched:
    """A saved page; its links resolve against base_url, else the page's canonical link or <base>, else
    they stay unresolved (a file: URL is not crawlable)."""
    raw = path.read_bytes()
    if looks_binary(raw):
        raise TagInputError(f"{path} is not a text page (binary content)")
    body, encoding = decode_body(raw)
    url = base_url or _canonical_link(body) or path.resolve().as_uri()
    return PageFetched(site="file", crawl_id="tag", url=url, final_url=url, status=200, body=body,
                       encoding=encoding, content_type="text/html", reason="source")


async def _fetch(url: str, settings: Settings) -> PageFetched:
    fetcher = Fetcher.from_settings(settings)
    await fetcher.start()
    try:
        return await fetcher.fetch(CrawlRequest(site=site_of(url), url=url, crawl_id="tag", reason="source"))
    finally:
        await fetcher.close()


def tag_target(target: str, settings: Settings, model_path: Path | None = None,
               base_url: str | None = None) -> PaginationTags:
    """The pagination of a page given by URL (fetched with the crawler's politeness) or by file path."""
    if target.startswith(("http://", "https://")):
        page = asyncio.run(_fetch(canonical_url(target), settings))
        if not page.ok:
            raise TagInputError(f"fetching {target} failed: {page.error.value} {page.status} {page.error_detail}")
    else:
        path = Path(target)
        if not path.is_file():
            raise TagInputError(f"no such file: {target}")
        page = _page_from_file(path, base_url)
    [tags] = tag_pages(load_tagger(model_path), model_name(model_path), [page])
    return tags
