"""Stage `extract_records`' reach past a busy list's first page.

A revisit reads a watched listing's first page only. When every item it lists is new, more may have appeared
than the page shows, and those were pushed onto the list's next page before the read: they are published,
and a scheduler that came too late must not lose them. The list keeps moving while its pages are fetched
one after the other, so a next page may open with items the first page just showed; those are no sign that
the rest is old (agents.records.ChangeDetector). So such a read (`overflowed`) has its page's
pagination tagged (as stage `tag_pagination` tags it, a "Load more" link the tagger leaves untagged found by
its URL) and the list's next page fetched (reason
OVERFLOW_REASON, through the fetch stage and its politeness), read with the list's template; on it the items
before the first one known before the revisit are the pushed-off new ones (ChangeDetector), and while the
pages meet no such item the next page follows — up to the read-on's page budget (settings.overflow_max_pages,
the first page included: a burst, not the list's archive, so larger than a first read's) — and past it, up to
settings.overflow_dated_max_pages, while every item a page shows is dated since the list's last read: a burst
larger than the budget, whose dates say it is new, where a list misread as all new would walk its archive.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from agents.pagination import later_page_refusal, shared_tagger, tag_pages
from agents.records import read_mark
from models.pagination.data import clickable_urls
from models.pagination.tagger import model_name
from models.records.dates import in_utc
from models.web.dom import parse_html
from schemas.base import derived_event_id
from schemas.crawl import OVERFLOW_REASON, CrawlRequest, PageFetched
from schemas.pagination import TaggedLink
from schemas.records import ItemDiscovered, RecordExtracted


def overflowed(records: Sequence[RecordExtracted], new_items: Sequence[ItemDiscovered], reached_known: bool,
               next_page: bool) -> bool:
    """Whether what follows a read of the list may be new too: it met no item known before the list's latest
    first-page read (ChangeDetector.reached_known), and it reported new items — or it is a `next_page` of the
    list whose items the revisit's own pages already showed: the list moved on by a page or more between the
    two fetches (a burst), and the items pushed further lie beyond. A first read only seeds (nothing new)."""
    return bool(records) and not reached_known and (bool(new_items) or next_page)


class KnownNextPages:
    """The next page each list page led to when it was last read on, by the page's URL — most recent first,
    up to `capacity` pages. A watched list overflows again and again in a burst, and its pages' next links
    stay (`?page=2` after the first page); tagging the whole page again costs the sentence encoder of every
    new item's title, the most of what a read-on costs the worker. Kept only while the page still links it (a
    cursor that moves with the list, `?before=<id>`, is tagged anew). Several threads read on at once."""

    def __init__(self, capacity: int = 20_000) -> None:
        self._capacity = capacity
        self._next: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, page_url: str) -> str | None:
        with self._lock:
            return self._next.get(page_url)

    def remember(self, page_url: str, next_url: str) -> None:
        with self._lock:
            self._next[page_url] = next_url
            self._next.move_to_end(page_url)
            while len(self._next) > self._capacity:
                self._next.popitem(last=False)


_known_next_pages = KnownNextPages()


def next_page_url(page: PageFetched, tagger_path: Path | None,
                  known: KnownNextPages = _known_next_pages) -> str | None:
    """The URL of the list's page after `page`: the one it led to when last read on, while it still links it;
    else its NEXT link (a "Load more" link the tagger leaves untagged included: agents.pagination.untagged_next_link),
    else — on a numbered pager without one — the page numbered next after it; None when the page shows no later
    page of its list."""
    last = known.get(page.final_url)
    if last is not None and last in clickable_urls(parse_html(page.body), page.final_url):
        return last
    found = _tagged_next_page_url(page, tagger_path)
    if found is not None:
        known.remember(page.final_url, found)
    return found


def _tagged_next_page_url(page: PageFetched, tagger_path: Path | None) -> str | None:
    tags = tag_pages(shared_tagger(tagger_path), model_name(tagger_path), [page])[0]
    behind = {page.url, page.final_url, page.source_url}

    def ahead(url: str) -> bool:
        return bool(url) and url not in behind and not later_page_refusal(url, page.site, page.source_url or page.url)

    return next((link.url for link in tags.links if link.label == "NEXT" and ahead(link.url)), None) \
        or _following_numbered_page(tags.links, page, ahead)


def _following_numbered_page(links: Sequence[TaggedLink], page: PageFetched, ahead: Callable[[str], bool]
                             ) -> str | None:
    """On a pager without a NEXT link, the page numbered one after this one (its own number's node leads
    nowhere or back to it; else its number is its place in the list, `page.depth` + 1). Not any other: the
    pager's other pages lie behind it — the first, the one before — and on its last page the numbers left are
    those behind it, or a page-size choice ("10 20 50 per page"): the list ends there, and a read-on that
    went back would read what it has read. A pager that shows no number leads on by its first page link (a
    blog's "Older posts" the tagger took for a page link; on its last page, "Newer posts": one page read in
    vain, its items known)."""
    numbered = [(int(link.text), link.url) for link in links
                if link.label == "PAGE" and link.text.strip().isdigit() and len(link.text.strip()) <= 6]
    if not numbered:
        return next((link.url for link in links if link.label == "PAGE" and ahead(link.url)), None)
    own = next((number for number, url in numbered if not url or url in (page.url, page.final_url)), page.depth + 1)
    return next((url for number, url in numbered if number == own + 1 and ahead(url)), None)


# Slack on both sides of dated_since's span: a date written without its time (midnight), a time zone.
DATE_SLACK = timedelta(days=1)


def dated_since(records: Sequence[RecordExtracted], since: datetime | None, until: datetime | None) -> bool:
    """Whether every record is dated within the list's last read (`since`) and this read (`until`), a day's
    slack either way: items published in between. Not an archive's older items, nor a calendar's events to
    come; false where either time is unknown or a record shows no date."""
    if since is None or until is None or not records:
        return False
    low, high = in_utc(since) - DATE_SLACK, in_utc(until) + DATE_SLACK
    return all(record.date is not None and low <= in_utc(record.date) <= high for record in records)


def read_on_budget(page: PageFetched, records: Sequence[RecordExtracted], max_pages: int,
                   dated_max_pages: int) -> int:
    """The list's page budget for reading on past `page`: `max_pages`, or `dated_max_pages` where every item
    the page shows is dated since the list's last read (dated_since)."""
    if dated_since(records, page.list_read_before, page.tick_at):
        return max(max_pages, dated_max_pages)
    return max_pages


def next_page_request(page: PageFetched, url: str, max_pages: int) -> CrawlRequest | None:
    """The fetch of the list's next page after an overflowed read of `page` (None: the list's page budget is
    spent — `page.depth` is its place in the list, the first page's 0)."""
    if page.depth + 1 >= max_pages:
        return None
    return CrawlRequest(
        event_id=derived_event_id(page.event_id, OVERFLOW_REASON, url), site=page.site, url=url,
        # As deep as the crawl may go: the page is read, its links are not crawled (the frontier plans links
        # only from pages above their crawl's depth).
        crawl_id=page.crawl_id, depth=page.depth + 1, max_depth=page.depth + 1, max_pages=max_pages,
        stop_at_ms=page.stop_at_ms, source_url=page.source_url or page.url, tick_at=page.tick_at,
        list_read_at_ms=page.list_read_at_ms or read_mark(page), list_read_before=page.list_read_before,
        reason=OVERFLOW_REASON,
        referrer=page.final_url)
