"""Stage `extract_records`' reading of a watched page's list where it is kept in a feed, not in the page.

A source page may show no list itself (models.records.no_list) while its list is a feed: a Google Calendar in
a frame (`in_a_frame`: the calendar's iCalendar feed, models.records.calendars), or the RSS/Atom feed of its
own section the page advertises where it shows only its menu, nothing visible, or no repeats
(models.records.page_feeds). Each read of such a page — the first read and every revisit — fetches that feed
through the fetch stage and its politeness like any page (reason LIST_FEED_REASON, keyed by the page's site so
its records land in the partition that holds the source's tables), and reads its entries as the source's
records: the first read seeds them, a revisit reports those added since. A revisit's outcome waits for them,
as it waits for a list's next pages (agents.item_times.HeldOutcomes).
"""

from __future__ import annotations

from agents.records import fetched_at, record_messages, source_of
from models.records.calendars import calendar_feeds, calendar_records, is_calendar
from models.records.extraction import Extraction
from models.records.no_list import IN_A_FRAME, MENU_ONLY, NO_REPEATS, NO_TEXT
from models.records.page_feeds import feed_records, own_feeds
from schemas.base import derived_event_id
from schemas.crawl import LIST_FEED_REASON, CrawlRequest, PageFetched
from schemas.records import RecordExtracted

# Reads of a source's own page (not a later page of its list) look for a feed holding its list.
_SOURCE_READS = ("source", "revisit")
# Where the page shows no list of its own, but a feed it advertises may hold it.
_FEED_STANDS_IN = (MENU_ONLY, NO_TEXT, NO_REPEATS)


def list_feed_requests(page: PageFetched, extraction: Extraction) -> list[CrawlRequest]:
    """The fetches of the feeds that hold a source page's list, where its read found no list in the page: the
    calendars it embeds, else the first feed of its own section it advertises."""
    if page.reason not in _SOURCE_READS:
        return []
    if extraction.no_list == IN_A_FRAME:
        feeds = calendar_feeds(page.body, page.final_url)
    elif extraction.no_list in _FEED_STANDS_IN:
        feeds = own_feeds(page.body, page.final_url)[:1]
    else:
        return []
    return [CrawlRequest(
        event_id=derived_event_id(page.event_id, LIST_FEED_REASON, feed), site=page.site, url=feed,
        # Read, not crawled: a feed's links are its items, not pages to plan.
        crawl_id=page.crawl_id, depth=page.depth, max_depth=page.depth, max_pages=page.max_pages,
        source_url=source_of(page), tick_at=page.tick_at, reason=LIST_FEED_REASON, referrer=page.final_url,
    ) for feed in feeds]


def list_feed_record_messages(page: PageFetched) -> list[RecordExtracted]:
    """The records of a fetched feed, for the source page whose list it holds (a calendar's events linked
    there). Raises ValueError (models.records.calendars.CalendarUnreadable,
    models.records.page_feeds.FeedUnreadable)."""
    if is_calendar(page.body):
        return record_messages(page, calendar_records(page.body, source_of(page), fetched_at(page)))
    return record_messages(page, feed_records(page.body, page.final_url))
