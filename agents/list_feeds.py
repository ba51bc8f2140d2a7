"""Stage `extract_records`' reading of a watched page's list where a feed holds it, not the page
(models.records.list_feeds: the calendar it embeds, its section's feed).

Each read of such a source page — the first read and every revisit — fetches that feed through the fetch stage
and its politeness like any page (reason LIST_FEED_REASON, keyed by the page's site so its records land in the
partition that holds the source's tables), and reads its entries as the source's records: the first read seeds
them, a revisit reports those added since. A revisit's outcome waits for them, as it waits for a list's next
pages (agents.item_times.HeldOutcomes).
"""

from __future__ import annotations

from agents.records import fetched_at, record_messages, source_of
from models.records.extraction import Extraction
from models.records.list_feeds import list_feed_records, list_feed_urls
from schemas.base import derived_event_id
from schemas.crawl import LIST_FEED_REASON, CrawlRequest, PageFetched
from schemas.records import RecordExtracted

# Reads of a source's own page (not a later page of its list) look for a feed holding its list.
_SOURCE_READS = ("source", "revisit")


def list_feed_requests(page: PageFetched, extraction: Extraction) -> list[CrawlRequest]:
    """The fetches of the feeds that hold a source page's list, where its read found no list in the page."""
    if page.reason not in _SOURCE_READS or not extraction.no_list:
        return []
    return [CrawlRequest(
        event_id=derived_event_id(page.event_id, LIST_FEED_REASON, feed), site=page.site, url=feed,
        # Read, not crawled: a feed's links are its items, not pages to plan.
        crawl_id=page.crawl_id, depth=page.depth, max_depth=page.depth, max_pages=page.max_pages,
        stop_at_ms=page.stop_at_ms, source_url=source_of(page), tick_at=page.tick_at, reason=LIST_FEED_REASON,
        referrer=page.final_url,
    ) for feed in list_feed_urls(page.body, page.final_url, extraction.no_list)]


def list_feed_record_messages(page: PageFetched) -> list[RecordExtracted]:
    """The records of a fetched feed, for the source page whose list it holds. Raises ValueError
    (models.records.list_feeds.list_feed_records)."""
    return record_messages(page, list_feed_records(page.body, page.final_url, source_of(page), fetched_at(page)))
