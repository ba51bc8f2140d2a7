"""Stage `extract_records`' core: read a fetched listing page's records and tell which items are new.

`read_records` turns one fetched page into `records.extracted` messages (using
the template of its list's first page for the list's further pages, so every
page of a list is read from the same region; the first page's list is chosen
with the site's other pages, kept by `SiteWitnesses`, as witnesses of what
is template). `ChangeDetector` keeps, per
source page, the items seen so far: the first read of a source — its first
crawl, the source page and its pagination pages alike — only seeds that set;
every later read emits the items not in it as `changes.detected`, once each.
In the worker its mappings are Faust tables keyed within the site's
partition, so the state follows the site to whichever worker owns it.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import lxml.html

from models.records.extraction import ExtractedRecord, Extraction, item_link, record_key
from models.records.main_list import extract_records
from models.records.witnesses import WITNESS_PAGES, Fingerprint, merged, page_fingerprint
from models.web.dom import parse_html
from schemas.base import derived_event_id
from schemas.crawl import BFS_REASON, LATER_PAGE_REASONS, PageFetched
from schemas.discovery import DISCOVER_REASON
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.revisit import RevisitOutcome


@dataclass(frozen=True)
class PageRecords:
    page: PageFetched
    extraction: Extraction
    records: list[RecordExtracted]
    extraction_ms: float
    # Every link the page shows (link_digest), where the read was asked for them (ListTemplates.wants_links).
    links: frozenset[str] = frozenset()


def source_of(page: PageFetched) -> str:
    return page.source_url or page.url


def fetched_at(page: PageFetched) -> datetime:
    return datetime.fromtimestamp(page.fetched_at_ms / 1000, UTC) if page.fetched_at_ms else page.created_at


def read_mark(page: PageFetched) -> int:
    """When a read of the page saw its records (ms since the epoch): a read of a list's first page marks the
    items known before it (ChangeDetector)."""
    return _ms(fetched_at(page))


def read_records(page: PageFetched, template: str = "", witness: Fingerprint = frozenset(),
                 with_links: bool = False) -> PageRecords:
    """The records of one fetched page (read with the list's template when it has one, else chosen with the
    site's other pages as witnesses of its template); `with_links`: and every link the page shows."""
    started = time.monotonic()
    root = parse_html(page.body)
    # Before the extraction, which changes the tree.
    links = _page_links(root, page.final_url) if with_links and root is not None else frozenset()
    extraction = extract_records(root, page.final_url, template, witness=witness)
    return PageRecords(page, extraction, record_messages(page, extraction.records),
                       round((time.monotonic() - started) * 1000, 2), links)


def _page_links(root: lxml.html.HtmlElement, base_url: str) -> frozenset[str]:
    return frozenset(link_digest(link) for anchor in root.iter("a")
                     if (link := item_link(base_url, anchor.get("href"))))


def link_digest(url: str) -> str:
    """A short digest of a link, as ListTemplates keeps the links a page showed (a page's few hundred links
    collide once in ~10^9 with 48 bits)."""
    return hashlib.blake2b(url.encode("utf-8"), digest_size=6).hexdigest()


def record_messages(page: PageFetched, records: Sequence[ExtractedRecord]) -> list[RecordExtracted]:
    """The `records.extracted` messages of the records read from `page`, for its source."""
    seen_at = fetched_at(page)
    return [RecordExtracted(
        event_id=derived_event_id(page.event_id, "record", record_key(record)), site=page.site,
        crawl_id=page.crawl_id, depth=page.depth, max_depth=page.max_depth, max_pages=page.max_pages,
        source_url=source_of(page), page_url=page.final_url, item_url=record.item_url, title=record.title,
        date=record.date, snippet=record.snippet, place=record.place, published=record.published,
        event_start=record.event_start, position=record.position, seen_at=seen_at,
    ) for record in records]


class SiteWitnesses:
    """The fingerprints (models.records.witnesses) of the first WITNESS_PAGES pages a crawl fetched on each
    site on its way to the site's listings. The homepage is not one: it often shows the newest items of the
    very list it links to, which would pass for template. In the worker the mapping (site → {url: sorted
    hashes}) is a Faust table in the site's partition."""

    REASONS = (BFS_REASON, DISCOVER_REASON)
    # Hashes kept per page: a page's template is a few hundred text nodes and paths; a huge page must not make
    # a huge table value.
    MAX_NODES = 8000

    def __init__(self, table: MutableMapping[str, dict[str, list[int]]]) -> None:
        self.table = table

    def wants(self, page: PageFetched) -> bool:
        return page.reason in self.REASONS and len(self.table.get(page.site) or {}) < WITNESS_PAGES

    @classmethod
    def fingerprint(cls, page: PageFetched) -> list[int]:
        return sorted(page_fingerprint(parse_html(page.body)))[: cls.MAX_NODES]

    def add(self, page: PageFetched, fingerprint: list[int]) -> None:
        pages = dict(self.table.get(page.site) or {})
        if len(pages) < WITNESS_PAGES and fingerprint:
            pages[page.final_url] = fingerprint
            self.table[page.site] = pages

    def of(self, page: PageFetched) -> Fingerprint:
        """The witnesses of a listing page: the site's other pages kept (not the page itself)."""
        own = {page.url, page.final_url, source_of(page)}
        return merged(frozenset(hashes) for url, hashes in (self.table.get(page.site) or {}).items()
                      if url not in own)


class Settled(NamedTuple):
    """What a read's choice of list did to its source (ListTemplates.settle)."""

    # The read chose another list than the earlier, provisional choice: its items' novelty is in question.
    reseed: bool = False
    # The links the page showed when the source's links began to be kept, and those its provisional choices
    # read as items' links since: an item whose link is neither came since (None: not known — a kept choice).
    links_before: frozenset[str] | None = None


class ListTemplates:
    """Which list of a source page is read: the first read's choice, kept for every later read (a later page of
    the list, and the same page read again, have their items in the same list — the ranker choosing afresh on a
    revisit could read another list and report its items as new, or miss the new). But a first read that
    finds fewer than LOCKED_AT records may have found no list at all (a new page with one item yet: any two
    links built alike pass for a list, and read so for ever, the page's real items are never seen), and so
    may one whose choice lies in a navigation landmark (the menu of a page whose list has one item: the ranker
    ranks the candidates there are, and a menu may be the only one). Until a read chooses a list that long
    outside the navigation the choice stays provisional: each read chooses afresh, and a choice that differs
    re-seeds the source's items (what the earlier reads followed was another list; its items' novelty is
    unknown — ChangeDetector) — save those a kept record of the page's links tells came since: while the
    choice is provisional the entry keeps every link the page showed at its first read and the item links
    its choices read since (the 5,000-site week: a young list first read as its one event's fields, chosen
    anew at three events, took the two published in between for old). In the worker the mapping (source →
    {"template", "kept", "page_links", "read_links"}) is a Faust table in the site's partition."""

    LOCKED_AT = 3
    # A page showing more links than this keeps none (its entry is written on every provisional read).
    MAX_LINKS = 1000

    def __init__(self, table: MutableMapping[str, dict | str]) -> None:
        self.table = table

    def _entry(self, source: str) -> dict:
        entry = self.table.get(source)
        # A plain template is what the table held before choices could be provisional: a kept one.
        return {"template": entry, "kept": True} if isinstance(entry, str) else dict(entry or {})

    def _kept(self, entry: dict) -> bool:
        # Entries written before "kept" was stored hold their record count instead, kept on that alone.
        return entry.get("kept", entry.get("records", 0) >= self.LOCKED_AT)

    def for_read(self, source: str, reason: str) -> str:
        """The template to read this source's page with ("": the ranker chooses): the kept one, and for a page
        of the list the provisional one too."""
        entry = self._entry(source)
        return entry.get("template", "") if self._kept(entry) or reason in LATER_PAGE_REASONS else ""

    def wants_links(self, source: str, reason: str) -> bool:
        """Whether a read of the source should bring its page's links (read_records' `with_links`)."""
        return reason not in LATER_PAGE_REASONS and not self._kept(self._entry(source))

    def settle(self, source: str, reason: str, extraction: Extraction,
               page_links: frozenset[str] = frozenset()) -> Settled:
        """Record a read's choice (a source's own page only, not a later page of its list; `page_links`: the
        page's links, read_records' `links`)."""
        entry = self._entry(source)
        if reason in LATER_PAGE_REASONS or self._kept(entry):
            return Settled()
        items = {link_digest(record.item_url) for record in extraction.records if record.item_url}
        links_before = self._links_before(entry, page_links - items)
        if not extraction.template and entry:
            return Settled(links_before=links_before)
        kept = len(extraction.records) >= self.LOCKED_AT and not extraction.in_navigation
        settled = {"template": extraction.template, "kept": kept}
        if not kept:
            # Kept from the first read showing links on (any read may begin them: what it shows counts as old).
            first = entry.get("page_links") or sorted(page_links)
            # Once too many (None), unknown for good: starting them afresh would report items earlier choices read.
            read_before = entry.get("read_links", ())
            read = None if read_before is None else set(read_before) | items
            settled |= {"page_links": first if len(first) <= self.MAX_LINKS else None,
                        "read_links": sorted(read) if read is not None and len(read) <= self.MAX_LINKS else None}
        if settled != entry:
            self.table[source] = settled
        return Settled(reseed=bool(entry.get("template")) and entry["template"] != extraction.template,
                       links_before=links_before)

    @staticmethod
    def _links_before(entry: dict, beside: frozenset[str]) -> frozenset[str] | None:
        """`beside`: the page's links but its items'."""
        first, read = entry.get("page_links"), entry.get("read_links")
        if not first or read is None:
            return None
        # The same page grown, or another (a maintenance page first, the site's real page now — what it showed
        # says nothing of what is new): the links beside this read's items most of them those the page showed.
        if len(beside.intersection(first)) * 2 < len(beside.union(first)):
            return None
        return frozenset(first).union(read)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


class ChangeDetector:
    def __init__(self, known: MutableMapping[str, int], first_crawl: MutableMapping[str, str],
                 still_listed_every: timedelta = timedelta(days=30)) -> None:
        # known: source + item digest (or + page digest, for the list pages read) → when it was first seen, or
        # last marked as still listed (ms since the epoch); first_crawl: source → the crawl whose read seeded it.
        self.known = known
        self.first_crawl = first_crawl
        # An item a read of the list's first page shows is marked as still listed once its time is this old (a
        # write to the table's changelog, not one per item per read), so an item's time tells the table's
        # retention (streams.retention) which items no read has listed for long.
        self.still_listed_every = int(still_listed_every.total_seconds() * 1000)

    def new_items(self, records: Sequence[RecordExtracted], source: str, crawl_id: str,
                  reseed: bool = False, overflow: bool = False, later_page: bool = False, list_top: bool = False,
                  read_at_ms: int | None = None, links_before: frozenset[str] | None = None) -> list[ItemDiscovered]:
        """The records' items this source never listed before (none while its first read is seeding, or when
        `reseed`: the source's list was chosen anew). The records are one page's; a page of the list never
        read before (one the first read did not reach) seeds too: its items are unknown, not new. An
        `overflow` read (agents.overflow: the list's next page, read because the page before it was all new)
        reports the items before the first one known before the list's latest first-page read — pushed off
        the page before — and those between two such items (inserted below the first page), and seeds the
        rest, older items that page never showed; an item that read itself
        first saw (the list moved on between the two fetches) marks nothing. A list chosen anew that holds an
        item the source already knows is the list read before in part (a young list whose first read took two
        of its items for another structure, read whole once it grew): it is read as an overflow is, not
        seeded — a burst of items that made it choosable would be lost. A `later_page` (one the list's pager
        leads to) that seeds is fetched after the first page: the unknown items it shows above an item that
        first page showed were published in between (a page-size variant, the first page's items and more, or
        a next page the list moved onto), so they are reported; the rest seed. A `list_top` page (the first page
        in another page size: agents.pagination.shows_list_top) starts at the list's newest item, so the
        unknown items it shows above all the first page showed are new too — a burst in between that outgrew
        the page. `read_at_ms`: the overflow's chain's own first-page read (CrawlScoped.list_read_at_ms), which
        marks its items instead of the source's latest read: a busy list's next revisit reads the first page
        again while the chain is on its way, and what the chain's own pages showed is then known before that
        read, but not before its own.
        `links_before` (ListTemplates' Settled): a read of the source's own page after its first that seeds
        (its list chosen anew, or a list on a page read before without one) still reports the items whose
        link the page did not show before — they came since."""
        keys = _item_keys(records, source)
        if records and not overflow and not later_page:
            self.known[_read_key(source)] = _ms(records[0].seen_at)
        if reseed and any(key in self.known or titled in self.known or whole in self.known
                          for key, titled, whole in keys):
            reseed, overflow = False, True
        first_read = self.first_crawl.setdefault(source, crawl_id) == crawl_id
        seeding = first_read or reseed
        if records:
            page = f"{source}\x00page\x00{_digest(records[0].page_url)}"
            seeding |= page not in self.known and not overflow
            self.known[page] = _ms(records[0].seen_at)
        moved_on = seeding and later_page and not overflow
        came_since = links_before if seeding and not first_read and not later_page and not overflow else None
        found: list[ItemDiscovered] = []
        # On an overflow page, the unknown items met after an item known before this read, until the next such
        # item: listings run newest first, so what follows a known item is older — seeded — unless another
        # known item follows it too: an item between two the list showed before was inserted there (an events
        # list ordered by date: a new event dated between two listed ones), below the first page.
        # On a later page that seeds, only the items above the first page's first item are reported: inserted
        # between two of them in the seconds of the walk is too rare to risk reporting old items where the
        # two reads split the list's records differently. An item that another later page of the walk showed
        # first is no mark either way: what follows it may still stand above the first page's items.
        between: list[ItemDiscovered] | None = [] if moved_on else None
        for record, (key, titled, whole) in zip(records, keys):
            if known := self.known.get(key) or self.known.get(titled) or self.known.get(whole):
                read_at = _ms(record.seen_at)
                if not overflow and read_at - known > self.still_listed_every:
                    # Still listed, and known before this read (marked just before it: an overflow read of the
                    # list's next page takes it for an item older than the read).
                    self.known[key] = read_at - 1
                elif key not in self.known:
                    self.known[key] = known
                # An item first seen by this read of the list's first page (or a next page of it) is no mark:
                # the list moved on between the two fetches, and what follows it is new too.
                if overflow and self._known_before_read(source, key, read_at_ms):
                    found.extend(between or [])
                    between = []
                elif moved_on and self._known_by_read(source, key):
                    found.extend(between)
                    moved_on, between = False, None
                continue
            self.known[key] = _ms(record.seen_at)
            if seeding and not moved_on and not (came_since is not None and record.item_url
                                                 and link_digest(record.item_url) not in came_since):
                continue
            (found if between is None else between).append(ItemDiscovered(
                event_id=derived_event_id(record.event_id, "new"), site=record.site, crawl_id=record.crawl_id,
                depth=record.depth, max_depth=record.max_depth, max_pages=record.max_pages, source_url=source,
                page_url=record.page_url, item_url=record.item_url, title=record.title, date=record.date,
                published=record.published, event_start=record.event_start, first_seen=record.seen_at,
            ))
        if moved_on and list_top and _read_key(source) in self.known:
            # No item the first page showed, the page's end included: all it shows came since (where the first
            # page showed no list, nothing tells).
            found.extend(between)
        return found

    def reached_known(self, records: Sequence[RecordExtracted], source: str, read_at_ms: int | None = None) -> bool:
        """Whether a read (after `new_items`) showed an item known before the source's latest read of its first
        page (or before `read_at_ms`, an overflow chain's own): the list's items from there on were seen
        before, so its next page holds nothing new."""
        return any(self._known_before_read(source, key, read_at_ms) for key, _, _ in _item_keys(records, source))

    def _known_by_read(self, source: str, key: str) -> bool:
        """Whether the item was known when the source's first page was last read (that read's own items too)."""
        read = self.known.get(_read_key(source))
        return read is not None and self.known.get(key, read + 1) <= read

    def _known_before_read(self, source: str, key: str, read_at_ms: int | None = None) -> bool:
        read = read_at_ms if read_at_ms is not None else self.known.get(_read_key(source))
        # No mark of the latest read: the state was written before marks were kept (a worker of the previous
        # version read the first page) — every known item then counts as older, the old rule, not none of them.
        return read is None or self.known.get(key, 0) < read


def _read_key(source: str) -> str:
    """The key under which the detector keeps when the source's first page was last read."""
    return f"{source}\x00read"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _item_keys(records: Sequence[RecordExtracted], source: str) -> list[tuple[str, str, str]]:
    """Each record's item as the detector knows it: (its key, the key it had before keys read titles by their
    ASCII letters — items known under it stay known, and take the new key at their next read —, the key of
    the whole record). An item whose link no other record of the page shares is its link and the ASCII
    letters and digits of its title: its listed date may read differently from one read to the next (a
    relative date, a changed day-first reading), and a page served one day in a broken encoding garbles
    every other letter ("Tag der offenen T?r" for "Tür": the 5,000-site soak with faults reported such items
    again) — no new item either way. Records sharing a link (a series' meetings, talks linking to one
    conference) need their dates to be told apart."""
    links = Counter(record.item_url for record in records)
    keys = []
    for record in records:
        whole = f"{source}\x00{_digest(record_key(record))}"
        if links[record.item_url] > 1:
            keys.append((whole, whole, whole))
            continue
        letters = "".join(char for char in record.title if char.isascii() and char.isalnum())
        keys.append((f"{source}\x00{_digest(record.item_url + chr(0) + letters)}",
                     f"{source}\x00{_digest(record.item_url + chr(0) + record.title)}", whole))
    return keys


def revisit_outcome(page: PageFetched, new_items: Sequence[ItemDiscovered],
                    records: Sequence[RecordExtracted] = (), in_navigation: bool = False) -> RevisitOutcome:
    """What a revisit gave the scheduler: the new items and every item's listed time (and whether the records
    came from the site's navigation); a page not modified since the last fetch was read and has nothing new; a
    failed fetch says why."""
    read = page.ok or page.not_modified
    return RevisitOutcome(
        event_id=derived_event_id(page.event_id, "outcome"), site=page.site, page_url=source_of(page),
        tick_at=page.tick_at or fetched_at(page), read=read,
        error="" if read else (page.error_detail or f"{page.error.value} (status {page.status})"),
        new_items=len(new_items), published=[item.publication for item in new_items],
        listed=[record.publication for record in records], linked=sum(bool(record.item_url) for record in records),
        in_navigation=in_navigation and bool(records),
        etag=page.etag,
        last_modified=page.last_modified)
