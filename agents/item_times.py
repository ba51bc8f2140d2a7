"""Stage `extract_records`' hold on a revisit's outcome until its items' own pages have told their times.

A listing that dates its items by day alone (or not at all) hides the hour they appeared, and the hour is what
the revisit scheduler learns a page's rhythm from. So for each such item a revisit found new — and, at the
first read of a source, for its newest listed items, so its hours are known from the first day — the item's
page is fetched (reason ITEM_TIME_REASON, through the fetch stage and its politeness), and the outcome goes to
the scheduler once every one of them is in, read or failed, with the times they gave
(models.records.item_time). Nothing waits on a fetch that never answers: the source's next revisit sends a
held outcome as it is first, so outcomes reach the scheduler in order whatever becomes of the item pages — save
a read whose list is in a feed (agents.list_feeds) still out: without the feed it read no list, so it goes as a
read that failed, not as a page that lists nothing (the feed's items, when it comes, are still reported).

A revisit that reads on past the list's first page (agents.overflow) is held too, until its last page is read:
the items pushed onto the next pages are the revisit's new items as much as the first page's, and a scheduler
told of the first page's alone learns that a busy list (dozens of items a day, five a page) changes rarely,
and comes back too late for its own read-on to reach them all. Its next pages' new items join the outcome
(`extend`), their item pages timed alike, up to NEW_ITEMS a revisit.

In the worker the mapping (source page → its held outcome, the item pages it waits for, the tick of a revisit
whose next pages are still being read, and whether its listed items were timed) is a Faust table in the
site's partition.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from models.records.dates import has_time_of_day
from schemas.base import derived_event_id
from schemas.crawl import ITEM_TIME_REASON, CrawlRequest, PageFetched
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.revisit import RevisitOutcome
from schemas.sites import site_of

# Listed items whose pages a source's first timed read fetches: enough to show its hours, few enough to be polite.
FIRST_READ_ITEMS = 5
# New items whose pages one revisit fetches (a burst of hundreds is one busy tick to the scheduler anyway).
NEW_ITEMS = 20
# Why a held read whose list's feed had not come in by the page's next revisit is sent as not read.
FEED_OVERTAKEN = "its list's feed was not read before the page's next revisit"


@dataclass
class Held:
    """What stage extract_records sends now: outcomes (in order) and item pages to fetch."""

    outcomes: list[RevisitOutcome] = field(default_factory=list)
    requests: list[CrawlRequest] = field(default_factory=list)
    # An earlier outcome still waiting for item pages is among the outcomes, sent without their times.
    flushed: bool = False
    # ... and it waited for the feed holding its list: sent as a read that failed (FEED_OVERTAKEN).
    feed_overtaken: bool = False


def _untimed(moment: datetime | None) -> bool:
    return moment is None or not has_time_of_day(moment)


def _item_page(url: str | None, page: PageFetched) -> bool:
    # A link into a page (a fragment: a calendar's event on the page that embeds it) is no page of its own.
    return bool(url) and "#" not in url and url not in (page.url, page.final_url) and site_of(url) == page.site


def items_to_time(page: PageFetched, new_items: Sequence[ItemDiscovered], records: Sequence[RecordExtracted],
                  first: bool) -> list[str]:
    """The item pages to fetch for a read: those of its new items without a time of day, and on a source's first
    timed read those of its newest listed items without one (listings run newest first)."""
    wanted = [item.item_url for item in new_items if _untimed(item.publication) and _item_page(item.item_url, page)]
    wanted = wanted[:NEW_ITEMS]
    if first:
        wanted += [record.item_url for record in records
                   if _untimed(record.publication) and _item_page(record.item_url, page)][:FIRST_READ_ITEMS]
    return list(dict.fromkeys(wanted))


class HeldOutcomes:
    """Revisit outcomes held for their items' times (see the module); `table`: source page → {"timed": whether
    its listed items were timed, "outcome": the held outcome or None, "waiting": the item pages still out}."""

    def __init__(self, table: MutableMapping[str, dict]) -> None:
        self.table = table

    def hold(self, page: PageFetched, outcome: RevisitOutcome, new_items: Sequence[ItemDiscovered],
             records: Sequence[RecordExtracted], reading_on: bool = False, feeds: int = 0) -> Held:
        """The outcome of a revisit read of `page`: sent at once when none of its items needs a time, its list's
        next page is not `reading_on` and no feed holding its list is being read (`feeds` of them:
        agents.list_feeds), else held (with requests for the item pages); an outcome the source still held is
        sent first (as not read where its list's feed is still out)."""
        entry = dict(self.table.get(outcome.page_url) or {"timed": False, "outcome": None, "waiting": []})
        held = Held()
        if entry["outcome"] is not None:
            earlier = RevisitOutcome.model_validate(entry["outcome"])
            if entry.get("feeds_out") and not entry.get("feed_listed"):
                # Its list is in a feed not read yet: the read showed nothing of the list, and sent as read it
                # would say the page lists nothing (a discovered page's first read would withdraw it).
                earlier = earlier.model_copy(update={
                    "read": False, "error": FEED_OVERTAKEN, "new_items": 0, "published": [], "listed": [],
                    "linked": 0, "in_navigation": False})
                held.feed_overtaken = True
            held.outcomes.append(earlier)
            held.flushed = True
        wanted = items_to_time(page, new_items, records, first=not entry["timed"]) if outcome.read else []
        entry["timed"] = entry["timed"] or bool(records)
        entry["outcome"], entry["waiting"], entry["reading_on"] = None, [], None
        entry["feeds_out"], entry["feed_listed"] = feeds, False
        reading_on = reading_on or feeds > 0
        if wanted or reading_on:
            positions = {url: [] for url in wanted}
            for name, items in (("published", new_items), ("listed", records)):
                for index, item in enumerate(items):
                    if item.item_url in positions:
                        positions[item.item_url].append((name, index))
            entry["outcome"], entry["waiting"] = outcome.model_dump(mode="json"), [
                [url, spots] for url, spots in positions.items()]
            entry["reading_on"] = outcome.tick_at.isoformat() if reading_on else None
            entry["requested"] = len(wanted)
            held.requests = _item_time_requests(page, outcome, wanted)
        else:
            held.outcomes.append(outcome)
        self.table[outcome.page_url] = entry
        return held

    def extend(self, page: PageFetched, new_items: Sequence[ItemDiscovered], reading_on: bool,
               listed_instead: Sequence[RecordExtracted] = (), feed: bool = False) -> Held:
        """Fold a next page of the list (read on from a held revisit: the same tick) into the revisit's outcome:
        its new items, their item pages to time; the outcome is sent once the list's last page is read (not
        `reading_on`) and no item page is out. A page of a revisit whose outcome is gone (a later revisit sent
        it) changes nothing. A `feed` that holds the page's list (agents.list_feeds) is one of those the read waits
        for, and its records (`listed_instead`) are the page's list: what the page itself listed (its menu, or
        nothing) gives way to the first feed's, and the next feeds' join them."""
        held = Held()
        entry = dict(self.table.get(page.source_url or "") or {})
        reading = entry.get("reading_on")
        if not entry.get("outcome") or not reading or datetime.fromisoformat(reading) != page.tick_at:
            return held
        outcome = RevisitOutcome.model_validate(entry["outcome"])
        waiting = entry["waiting"]
        # The detector reports an item new once, so none of these is among the pages already asked for.
        wanted = items_to_time(page, new_items, [], first=False)[:max(0, NEW_ITEMS - entry.get("requested", 0))]
        entry["requested"] = entry.get("requested", 0) + len(wanted)
        offset = len(outcome.published)
        for index, item in enumerate(new_items):
            if item.item_url in wanted:
                waiting.append([item.item_url, [("published", offset + index)]])
        outcome = outcome.model_copy(update={"new_items": outcome.new_items + len(new_items),
                                             "published": [*outcome.published, *(item.publication for item in new_items)]})
        if feed:
            entry["feeds_out"] = max(0, entry.get("feeds_out", 1) - 1)
            reading_on = reading_on or entry["feeds_out"] > 0
        if listed_instead:
            kept = outcome if entry.get("feed_listed") else outcome.model_copy(update={"listed": [], "linked": 0})
            outcome = kept.model_copy(update={
                "listed": [*kept.listed, *(record.publication for record in listed_instead)], "in_navigation": False,
                "linked": kept.linked + sum(bool(record.item_url) for record in listed_instead)})
            entry["feed_listed"] = True
            # The page's own listed items are gone: no item page is awaited for them.
            waiting = [[url, left] for url, spots in waiting
                       if (left := [spot for spot in spots if spot[0] != "listed"])]
        held.requests = _item_time_requests(page, outcome, wanted)
        entry["reading_on"] = entry["reading_on"] if reading_on else None
        if waiting or reading_on:
            entry["outcome"], entry["waiting"] = outcome.model_dump(mode="json"), waiting
        else:
            entry["outcome"], entry["waiting"] = None, []
            held.outcomes.append(outcome)
        self.table[outcome.page_url] = entry
        return held

    def waits_for(self, page: PageFetched) -> tuple[bool, datetime | None]:
        """Whether the item page is one a held outcome waits for, and the date its listing gave (None: none)."""
        entry = self.table.get(page.source_url or "") or {}
        for url, spots in entry.get("waiting", []):
            if url in (page.url, page.final_url):
                outcome = RevisitOutcome.model_validate(entry["outcome"])
                name, index = spots[0]
                return True, getattr(outcome, name)[index]
        return False, None

    def resolve(self, page: PageFetched, moment: datetime | None) -> RevisitOutcome | None:
        """Fold an item page's time (None: it gave none, or its fetch failed) into its source's held outcome;
        the outcome, once no item page is still out and the list's next pages are read."""
        entry = dict(self.table.get(page.source_url or "") or {})
        if not entry.get("outcome"):
            return None
        outcome = RevisitOutcome.model_validate(entry["outcome"])
        waiting = []
        for url, spots in entry["waiting"]:
            if url not in (page.url, page.final_url):
                waiting.append([url, spots])
            elif moment is not None:
                for name, index in spots:
                    getattr(outcome, name)[index] = moment
        if waiting or entry.get("reading_on"):
            entry["outcome"], entry["waiting"] = outcome.model_dump(mode="json"), waiting
            self.table[outcome.page_url] = entry
            return None
        entry["outcome"], entry["waiting"] = None, []
        self.table[outcome.page_url] = entry
        return outcome


def _item_time_requests(page: PageFetched, outcome: RevisitOutcome, urls: Sequence[str]) -> list[CrawlRequest]:
    return [CrawlRequest(
        event_id=derived_event_id(outcome.event_id, "item-time", url), site=page.site, url=url,
        crawl_id=page.crawl_id, depth=0, max_depth=0, max_pages=1, stop_at_ms=page.stop_at_ms,
        reason=ITEM_TIME_REASON, source_url=outcome.page_url, tick_at=page.tick_at, referrer=page.final_url)
        for url in urls]
