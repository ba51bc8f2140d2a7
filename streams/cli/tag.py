"""`sourcewatch tag URL|FILE`: the PAGE and NEXT links of one page, fetched politely (the crawler's fetcher)
or read from disk, tagged by the stage's own core (agents.pagination).

The tagger's modules (torch among them) are imported when the command runs, as every command's heavy modules
are: the parser registers every command, and `sourcewatch sql …` should not wait two seconds for torch."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from infra.settings import Settings, get_settings
from streams.cli.base import Command, CommandError, add_allow_loopback, add_json, print_json

if TYPE_CHECKING:
    from schemas.crawl import PageFetched
    from schemas.pagination import PaginationTags


class TagInputError(RuntimeError):
    """The page could not be read or fetched; the message says why."""


def _canonical_link(body: str) -> str | None:
    from models.web.dom import parse_html

    root = parse_html(body)
    hrefs = root.xpath("//link[@rel='canonical']/@href | //base/@href") if root is not None else []
    return next((href.strip() for href in hrefs if href.strip().startswith(("http://", "https://"))), None)


def _page_from_file(path: Path, base_url: str | None) -> PageFetched:
    """A saved page; its links resolve against base_url, else the page's canonical link or <base>, else
    they stay unresolved (a file: URL is not crawlable)."""
    from models.web.decoding import decode_body, looks_binary
    from schemas.crawl import PageFetched

    raw = path.read_bytes()
    if looks_binary(raw):
        raise TagInputError(f"{path} is not a text page (binary content)")
    body, encoding = decode_body(raw)
    url = base_url or _canonical_link(body) or path.resolve().as_uri()
    return PageFetched(site="file", crawl_id="tag", url=url, final_url=url, status=200, body=body,
                       encoding=encoding, content_type="text/html", reason="source")


async def _fetch(url: str, settings: Settings) -> PageFetched:
    from agents.fetching.fetcher import Fetcher
    from schemas.crawl import CrawlRequest
    from schemas.sites import site_of

    fetcher = Fetcher.from_settings(settings)
    await fetcher.start()
    try:
        return await fetcher.fetch(CrawlRequest(site=site_of(url), url=url, crawl_id="tag", reason="source"))
    finally:
        await fetcher.close()


def tag_target(target: str, settings: Settings, model_path: Path | None = None,
               base_url: str | None = None) -> PaginationTags:
    """The pagination of a page given by URL (fetched with the crawler's politeness) or by file path."""
    from agents.pagination import tag_pages
    from models.pagination.tagger import load_tagger, model_name
    from models.web.links import canonical_url

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


class Tag(Command):
    name = "tag"
    help = "print the pagination links (PAGE, NEXT) of one page"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("target", metavar="URL|FILE", help="a page URL (fetched politely) or an HTML file")
        parser.add_argument("--model", help="pagination model file (default: the model shipped in the package)")
        add_allow_loopback(parser)
        parser.add_argument("--base-url", help="for a FILE: the URL its links resolve against (default: its "
                                               "canonical link or <base>, else links stay unresolved)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.model_files import ModelVersionError

        try:
            tags = tag_target(args.target, get_settings(), Path(args.model) if args.model else None, args.base_url)
        except (TagInputError, FileNotFoundError, ModelVersionError) as error:
            raise CommandError(str(error)) from None
        if args.json:
            print_json(tags.model_dump(mode="json", include={"final_url", "model", "nodes", "links", "tagging_ms"}))
            return 0
        print(f"{tags.final_url}: {tags.nodes} clickable nodes, {len(tags.links)} pagination links ({tags.model})")
        for link in tags.links:
            print(f"  {link.label:<4}  {link.text[:40]!r:<42} {link.url or '(no link)'}")
        return 0
