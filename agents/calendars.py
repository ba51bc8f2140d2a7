"""Stage `extract_records`' reading of the calendars a watched page embeds.

A source page whose list is a Google Calendar in a frame shows no list itself (models.records.no_list:
`in_a_frame`). Each read of it — the first read and every revisit — fetches the iCalendar feeds of the
calendars it embeds (models.records.calendars), through the fetch stage and its politeness like any page
(reason CALENDAR_REASON, keyed by the embedding page's site so its records land in the partition that holds
the source's tables), and reads their events as the source's records: the first read seeds them, a revisit
reports the events added since. A revisit's outcome waits for its calendar's new items, as it waits for a
list's next pages (agents.item_times.HeldOutcomes).
"""

from __future__ import annotations

from agents.records import fetched_at, record_messages, source_of
from models.records.calendars import calendar_feeds, calendar_records
from models.records.extraction import Extraction
from models.records.no_list import IN_A_FRAME
from schemas.base import derived_event_id
from schemas.crawl import CALENDAR_REASON, CrawlRequest, PageFetched
from schemas.records import RecordExtracted

# Reads of a source's own page (not a later page of its list) look for calendars.
_SOURCE_READS = ("source", "revisit")


def calendar_requests(page: PageFetched, extraction: Extraction) -> list[CrawlRequest]:
    """The fetches of the calendar feeds a source page embeds, where its read found no list in the page itself."""
    if page.reason not in _SOURCE_READS or extraction.no_list != IN_A_FRAME:
        return []
    return [CrawlRequest(
        event_id=derived_event_id(page.event_id, CALENDAR_REASON, feed), site=page.site, url=feed,
        # Read, not crawled: a feed has no links to plan.
        crawl_id=page.crawl_id, depth=page.depth, max_depth=page.depth, max_pages=page.max_pages,
        source_url=source_of(page), tick_at=page.tick_at, reason=CALENDAR_REASON, referrer=page.final_url,
    ) for feed in calendar_feeds(page.body, page.final_url)]


def calendar_record_messages(page: PageFetched) -> list[RecordExtracted]:
    """The records of a fetched calendar feed, for the source page that embeds it (its events linked there).
    Raises models.records.calendars.CalendarUnreadable."""
    return record_messages(page, calendar_records(page.body, source_of(page), fetched_at(page)))
