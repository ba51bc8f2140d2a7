"""Stage `tag_pagination`'s core: tag a listing page's pagination and choose the next pages of the list.

`tag_pages` runs the tagger over a batch of fetched pages and turns the PAGE and
NEXT nodes into absolute links; on a page where it tags none that could be a later
page of the list, a "Load more" link that names the list's next slice in its URL
is taken as NEXT (`untagged_next_link`). `shows_list_top` tells a later page that
is the first page in another page size ("10 20 50 per page"), whose items the
change detector reads as starting at the list's newest. `PaginationFollower`
decides which of them to fetch: same-site targets only, NEXT before PAGE, each URL once per list, at most
`max_pages` pages per source page (the source page included), never another
site's page or a page above the list (`later_page_refusal`), and nothing from
a page whose content repeats an earlier page of the same list — the sign of a
pagination trap (`?page=999` answering with the last page again, a calendar
that pages forever through empty months, a session id in every link). URLs
longer than MAX_URL_CHARS are traps too. In the worker its three mappings are
Faust tables keyed within the site's partition.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import MutableMapping, Sequence
from functools import cache
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import lxml.html

from models.pagination.continuation import next_slice_link
from models.pagination.data import clickable_nodes, node_target
from models.pagination.tagger import MAX_TAGGED_NODES, PaginationTagger, load_tagger
from models.web.dom import normalize_space, parse_html, text_content
from models.web.links import resolve_href
from schemas.base import derived_event_id
from schemas.crawl import CrawlRequest, PageFetched
from schemas.pagination import PaginationTags, TaggedLink
from schemas.sites import site_of

log = logging.getLogger(__name__)

MAX_URL_CHARS = 1000
# The tagger runs in executor threads of two stages (tag_pagination's batches, a revisit reading on,
# agents.overflow): one at a time, so the model and its text encoder's caches are never used by two threads.
_TAGGING = threading.Lock()
FOLLOW_ORDER = ("NEXT", "PAGE")


def _tagged_links(labelled: list[tuple[lxml.html.HtmlElement, str]], base_url: str) -> list[TaggedLink]:
    links = []
    for node, label in labelled:
        if label == "OTHER":
            continue
        href = node_target(node)
        url = resolve_href(base_url, href) if href else None
        links.append(TaggedLink(url=url or "", text=normalize_space(text_content(node))[:200], label=label))
    return links


def content_digest(root: lxml.html.HtmlElement | None, links: Sequence[TaggedLink]) -> str:
    """A digest of a page's text without its pagination, equal for two pages that list the same items."""
    if root is None:
        return ""
    pagination_text = {link.text for link in links}
    texts = [text for text in (normalize_space(t) for t in root.itertext()) if text and text not in pagination_text]
    return hashlib.blake2b("\n".join(texts).encode("utf-8"), digest_size=12).hexdigest()


@cache
def shared_tagger(path: Path | None) -> PaginationTagger:
    """One pagination tagger per worker, whichever of its stages loads it first."""
    with _TAGGING:
        return load_tagger(path)


def tag_pages(model: PaginationTagger, model_name: str, pages: Sequence[PageFetched]) -> list[PaginationTags]:
    """The pagination of each fetched page (one batch through the model)."""
    started = time.monotonic()
    roots = [parse_html(page.body) for page in pages]
    with _TAGGING:
        labelled = model.label_nodes(roots, [page.final_url for page in pages])
    per_page_ms = (time.monotonic() - started) * 1000 / max(len(pages), 1)
    tagged = []
    for page, root, nodes in zip(pages, roots, labelled):
        links = _tagged_links(nodes, page.final_url)
        # A tagged link that cannot be a later page of the list is no pager: beside a footer's "首页" ("first
        # page", also "homepage": the site's root), a "Load more" still names the list's next slice.
        list_url = page.source_url or page.url
        if not any(link.url and not later_page_refusal(link.url, page.site, list_url) for link in links) and (
                more := untagged_next_link(page, root)) is not None:
            links.append(more)
        clickable = len(clickable_nodes(root)) if root is not None else 0
        if clickable > len(nodes):
            log.warning("%s: %d links and buttons, more than the tagger reads (%d): the first and last %d tagged",
                        page.url, clickable, MAX_TAGGED_NODES, MAX_TAGGED_NODES // 2)
        tagged.append(PaginationTags(
            event_id=derived_event_id(page.event_id, "pagination"), site=page.site, crawl_id=page.crawl_id,
            depth=page.depth, max_depth=page.max_depth, max_pages=page.max_pages, stop_at_ms=page.stop_at_ms,
            source_url=page.source_url or page.url, page_url=page.url, final_url=page.final_url,
            model=model_name, nodes=clickable, links=links, content_digest=content_digest(root, links),
            tagging_ms=round(per_page_ms, 2),
        ))
    return tagged


def untagged_next_link(page: PageFetched, root: lxml.html.HtmlElement | None) -> TaggedLink | None:
    """On a page where the tagger tagged no pager: the link that names the list's next slice in its URL — a
    "Load more" the labelled data never marked (models.pagination.continuation) — as a NEXT link."""
    found = next_slice_link(root, page.body, page.final_url)
    if found is None:
        return None
    index, url = found
    node = clickable_nodes(root)[index]
    return TaggedLink(url=url, text=normalize_space(text_content(node))[:200], label="NEXT")


def later_page_refusal(url: str, site: str, list_url: str) -> str:
    """Why `url`, linked from a pager of the list first read at `list_url`, cannot be a later page of that list
    ('' when it can): another site's page, a URL longer than a trap's bound, or a page above the list."""
    if site_of(url) != site:
        return "other_site"
    if len(url) > MAX_URL_CHARS:
        return "url_too_long"
    if above_the_list(url, list_url):
        return "above_the_list"
    return ""


# A directory's index file is the directory: "/index.html" is the site's root.
_DIRECTORY_INDEX = re.compile(r"/(?:index|default|home)\.[a-z]{2,5}$", re.IGNORECASE)


def above_the_list(url: str, list_url: str) -> bool:
    """Whether `url` is the site's root or a page above the list in its path, with no query: never the list's
    next page, however a pager labels it — a Chinese pager's "首页" ("first page", also "homepage") links the
    site's root, and reading the homepage as the list's next page streamed its menu as new items."""
    target, listing = urlsplit(url), urlsplit(list_url)
    path, list_path = _DIRECTORY_INDEX.sub("", target.path).rstrip("/"), listing.path.rstrip("/")
    return not target.query and (list_path + "/").startswith(path + "/")


# Query parameters that set how many items a page shows, not where in the list it starts (named without case,
# "_" or "-"): the "10 | 20 | 50 per page" links beside a list's pager, which a tagger reads as page numbers.
_PAGE_SIZE_PARAMETERS = frozenset({"size", "pagesize", "perpage", "limit", "itemsperpage", "resultsperpage",
                                   "postsperpage", "ipp", "rows"})


def shows_list_top(url: str, list_url: str) -> bool:
    """Whether `url`, a later page of the list first read at `list_url`, is that first page in another page size:
    the same address with only page-size parameters set otherwise. Its items start at the list's newest, as the
    first page's do, so an item it shows above all those the first page showed was published since."""
    target, listing = urlsplit(url), urlsplit(list_url)
    if (target.netloc.lower(), target.path.rstrip("/")) != (listing.netloc.lower(), listing.path.rstrip("/")):
        return False
    changed = set(parse_qsl(target.query, keep_blank_values=True)) ^ set(parse_qsl(listing.query,
                                                                                  keep_blank_values=True))
    return bool(changed) and all(re.sub(r"[-_]", "", name.lower()) in _PAGE_SIZE_PARAMETERS for name, _ in changed)


def _key(crawl_id: str, source: str, item: str = "") -> str:
    return f"{crawl_id}\x00{source}\x00{item}"


class PaginationFollower:
    def __init__(self, seen: MutableMapping[str, int], planned: MutableMapping[str, int],
                 fingerprints: MutableMapping[str, int], max_pages: int) -> None:
        # Per crawl and source page — seen: URL → 1; planned: pages of the list planned so far;
        # fingerprints: content digest → 1.
        self.seen = seen
        self.planned = planned
        self.fingerprints = fingerprints
        self.max_pages = max_pages

    def next_requests(self, tags: PaginationTags) -> tuple[list[CrawlRequest], str]:
        """The further pages of the list to fetch, and why no more were taken ('' when none was refused)."""
        source = tags.source_url or tags.page_url
        for url in (tags.page_url, tags.final_url):
            self.seen[_key(tags.crawl_id, source, url)] = 1
        if tags.content_digest:
            digest = _key(tags.crawl_id, source, tags.content_digest)
            if digest in self.fingerprints:
                return [], "repeated_content"
            self.fingerprints[digest] = 1
        planned = self.planned.get(_key(tags.crawl_id, source)) or 1  # the source page is the list's first page
        requests: list[CrawlRequest] = []
        stop = ""
        candidates = sorted(tags.links, key=lambda link: FOLLOW_ORDER.index(link.label))
        for link in candidates:
            if not link.url or _key(tags.crawl_id, source, link.url) in self.seen:
                continue
            refusal = later_page_refusal(link.url, tags.site, source)
            if refusal:
                stop = stop or refusal
                continue
            if planned >= self.max_pages:
                stop = "page_budget"
                break
            self.seen[_key(tags.crawl_id, source, link.url)] = 1
            planned += 1
            requests.append(CrawlRequest(
                event_id=derived_event_id(tags.event_id, link.url), site=tags.site, url=link.url,
                crawl_id=tags.crawl_id, depth=tags.depth + 1, max_depth=tags.max_depth, max_pages=tags.max_pages,
                stop_at_ms=tags.stop_at_ms, source_url=source, reason="paginate", referrer=tags.final_url,
            ))
        self.planned[_key(tags.crawl_id, source)] = planned
        return requests, stop
