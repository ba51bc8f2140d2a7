"""Stage `extract_records`: pages.fetched → records.extracted (one message per record) and changes.detected.

Reads source pages, the further pages of their lists and revisits (reasons in
RECORD_REASONS), and keeps a few of each site's other pages as witnesses of its
template (SiteWitnesses); a revisit's outcome (read or not, its new items) goes to
revisit.outcomes for the scheduler — once the pages of its items dated without a time have told theirs
(HeldOutcomes: they are fetched as crawl.requests, reason "item_time") and the list's next pages it read on to
have added their new items. Each page is handled as its own event, because the stage's tables (a list's
template, the items each source has listed) write their changelog to the partition of the event being
processed — the site's; the extraction and a pager's tagging run off the event loop so the worker keeps
heartbeating, and pages of different sites are handled side by side while one site's pages keep their order
(streams.ordered), so one page's wait does not hold the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import faust

from agents.item_times import Held, HeldOutcomes
from agents.links import is_html
from agents.list_feeds import list_feed_record_messages, list_feed_requests
from agents.overflow import next_page_request, next_page_url, overflowed, read_on_budget
from agents.pagination import shows_list_top
from agents.records import ChangeDetector, ListTemplates, SiteWitnesses, read_records, revisit_outcome, source_of
from models.records.item_time import published_time
from models.records.no_list import DESCRIPTIONS as NO_LIST_DESCRIPTIONS, FEED_UNREAD
from models.web.dom import parse_html
from schemas.crawl import (ITEM_TIME_REASON, LATER_PAGE_REASONS, LIST_FEED_REASON, OVERFLOW_REASON, RECORD_REASONS,
                           PageFetched)
from schemas.records import ItemDiscovered, RecordExtracted
from schemas.sites import site_of
from streams import metrics, progress
from streams.app import app, settings
from streams.deadletters import decode_events, kept_if_failed
from streams.ordered import KeyOrdered
from streams.queue_delay import fetched_pages
from streams.retention import timestamped
from streams.topics import send, topic

log = logging.getLogger(__name__)
_TABLE_OPTIONS = dict(
    partitions=settings.topic_partitions,
    schema=faust.Schema(key_type=str, key_serializer="json", value_serializer="json"),
)
# Pages of this many sites read at once (one site's pages one after the other: streams.ordered): enough that a
# page waiting for its extraction or its pager's tagging off the event loop does not hold the other sites' pages.
EXTRACT_IN_FLIGHT = 8
list_templates = app.Table("records-templates", **_TABLE_OPTIONS)
# Keyed by source; each item's time moved on while reads list it (agents.records.ChangeDetector).
known_items = timestamped(app.Table("records-known-items", **_TABLE_OPTIONS), "pages.fetched",
                          lambda key: site_of(key.partition("\x00")[0]), settings.known_items_keep_days * 86400)
first_crawls = app.Table("records-first-crawls", **_TABLE_OPTIONS)
site_witnesses = app.Table("records-site-witnesses", **_TABLE_OPTIONS)
held_outcomes = app.Table("records-held-outcomes", **_TABLE_OPTIONS)


def _item_time(page: PageFetched, listed: datetime | None) -> datetime | None:
    return published_time(parse_html(page.body), listed) if page.ok and is_html(page) else None


async def _send_outcomes(outcomes) -> None:
    for outcome in outcomes:
        await send("revisit.outcomes", outcome)


@app.agent(topic("pages.fetched"))
async def extract_records(stream):
    detector = ChangeDetector(known_items, first_crawls, timedelta(days=settings.known_items_keep_days / 4))
    templates = ListTemplates(list_templates)
    witnesses = SiteWitnesses(site_witnesses)
    held = HeldOutcomes(held_outcomes)
    loop = asyncio.get_running_loop()

    async def handle(event) -> None:
        async with kept_if_failed("extract_records", "pages.fetched", [event]):
            for page in await decode_events("pages.fetched", [event]):
                if page.reason == ITEM_TIME_REASON:
                    await _read_item_time(page, held, loop)
                    continue
                if page.reason == LIST_FEED_REASON:
                    await _read_list_feed(page, detector, held, loop)
                    continue
                if page.ok and is_html(page) and witnesses.wants(page):
                    witnesses.add(page, await loop.run_in_executor(None, witnesses.fingerprint, page))
                if page.reason not in RECORD_REASONS:
                    continue
                crawl = progress.of(page.crawl_id)
                new_items, records, reading_on, in_navigation, feeds = [], [], False, False, []
                if page.ok and is_html(page):
                    if page.truncated:
                        log.info("%s was cut at the size cap; its records are read from the part received", page.url)
                        metrics.count("truncated_pages_read", "extract_records")
                    source = source_of(page)
                    template = templates.for_read(source, page.reason)
                    witness = witnesses.of(page) if not template else frozenset()
                    read = await loop.run_in_executor(None, read_records, page, template, witness,
                                                      templates.wants_links(source, page.reason))
                    settled = templates.settle(source, page.reason, read.extraction, read.links)
                    if settled.reseed:
                        log.info("%s: its list chosen anew (%d records); those of its items the page showed before "
                                 "seed the source again", page.url, len(read.records))
                        metrics.count("lists_chosen_anew", "extract_records")
                    if read.extraction.from_hidden:
                        log.info("%s: its list read from elements the page hides for its script to show", page.url)
                        metrics.count("lists_read_from_hidden", "extract_records")
                    if no_list := read.extraction.no_list:
                        log.info("no list on %s: %s", page.final_url, NO_LIST_DESCRIPTIONS[no_list])
                        metrics.count("pages_without_records" if not read.records else "pages_read_as_their_menu",
                                      "extract_records", reason=no_list)
                    feeds = await loop.run_in_executor(None, list_feed_requests, page, read.extraction)
                    if page.url == source and not feeds:
                        # What the source's last read showed, for its page in the API and on the dashboard (where
                        # a feed holds its list, the feed's read tells: _read_list_feed).
                        metrics.gauge("list_shown", "extract_records", 0.0 if no_list else 1.0, source=source,
                                      no_list=no_list)
                    # A page whose list a feed holds lists what the feed lists, not its menu.
                    records = [] if feeds else read.records
                    in_navigation = read.extraction.in_navigation
                    overflow = page.reason == OVERFLOW_REASON
                    new_items = detector.new_items(records, source, page.crawl_id, settled.reseed, overflow,
                                                   later_page=page.reason in LATER_PAGE_REASONS,
                                                   list_top=shows_list_top(page.url, source),
                                                   read_at_ms=page.list_read_at_ms,
                                                   links_before=settled.links_before)
                    await _send_read(records, new_items, crawl, "next" if overflow else "first")
                    if page.reason in ("revisit", OVERFLOW_REASON) and overflowed(
                            records, new_items, detector.reached_known(records, source, page.list_read_at_ms),
                            overflow):
                        reading_on = await _read_on(page, records, loop)
                    for request in feeds:
                        log.info("%s shows no list of its own; reading its list's feed %s", page.url, request.url)
                        metrics.count("list_feeds_requested", "extract_records")
                        await send("crawl.requests", request)
                    metrics.count("records_extracted", "extract_records", len(records))
                    metrics.count("extraction_ms", "extract_records", read.extraction_ms)
                    metrics.count("pages_read", "extract_records")
                if page.reason == "revisit":
                    await _send_held(page, held.hold(page, revisit_outcome(page, new_items, records, in_navigation),
                                                     new_items, records, reading_on, feeds=len(feeds)))
                elif page.reason == OVERFLOW_REASON:
                    await _send_held(page, held.extend(page, new_items, reading_on))
                crawl.pages_extracted += 1

    ordered = KeyOrdered("extract_records", stream, handle, EXTRACT_IN_FLIGHT)
    try:
        async for event in stream.events():
            # How long the page waited in its partition: the fetch stage holds back its background fetches while
            # the pages wait long (agents.fetch).
            fetched_pages.observe(event.message.timestamp)
            await ordered.submit(event)
    finally:
        await ordered.close()


async def _send_read(records: Sequence[RecordExtracted], new_items: Sequence[ItemDiscovered],
                     crawl: progress.CrawlProgress, listed_on: str) -> None:
    """A read's new items, then its records: a read whose records reached their topic has sent its new items
    too. A worker stopped in the middle of a read (at the end of a soak's window, where no restart redoes it
    from its uncommitted offset) leaves no read whose records are stored and whose new items are not, and the
    soak's truth counts a page as read by its records (jobs.soak_truth.list_reads). `listed_on`: the new items'
    metric label — the list's first page, a next page or its feed."""
    for item in new_items:
        crawl.new_items_sent += 1
        metrics.count("new_items", "extract_records", page=listed_on)
        await send("changes.detected", item)
    for record in records:
        crawl.records_sent += 1
        await send("records.extracted", record)


async def _send_held(page: PageFetched, sending: Held) -> None:
    if sending.feed_overtaken:
        log.info("%s: an earlier revisit's list feed was not read before this revisit; that read counts as failed",
                 page.url)
        metrics.count("list_feeds_overtaken", "extract_records")
    elif sending.flushed:
        log.info("%s: an earlier revisit's outcome is sent without all its items' times or pages", page.url)
        metrics.count("outcomes_sent_without_item_times", "extract_records")
    await _send_outcomes(sending.outcomes)
    for request in sending.requests:
        await send("crawl.requests", request)
    metrics.count("item_pages_requested", "extract_records", len(sending.requests))


async def _read_on(page: PageFetched, records: Sequence[RecordExtracted], loop) -> bool:
    """A watched list's read found every item new: fetch its next page (agents.overflow); whether it is fetched."""
    url = await loop.run_in_executor(None, next_page_url, page, settings.pagination_model)
    budget = read_on_budget(page, records, settings.overflow_max_pages, settings.overflow_dated_max_pages)
    request = next_page_request(page, url, budget) if url else None
    if request is None:
        log.info("%s: every item new, and %s", page.url, "no next page shown" if not url else "its pages all read")
        metrics.count("overflows_unfollowed", "extract_records", reason="no next page" if not url else "budget")
        return False
    log.info("%s: every item new; reading on at %s", page.url, url)
    metrics.count("overflows_followed", "extract_records")
    if page.depth + 1 == settings.overflow_max_pages:
        log.info("%s: past the read-on's %d pages, its items all dated since the list's last read", page.url,
                 settings.overflow_max_pages)
        metrics.count("overflows_past_budget", "extract_records")
    await send("crawl.requests", request)
    return True


async def _read_list_feed(page: PageFetched, detector: ChangeDetector, held: HeldOutcomes, loop) -> None:
    """A feed that holds a source page's list (agents.list_feeds): its entries as the source's records, those it
    never listed before as new items, folded into a revisit's held outcome."""
    source = source_of(page)
    records, new_items, unread = [], [], ""
    if not page.ok:
        log.info("%s: its list's feed %s was not fetched (%s)", source, page.url, page.error.value)
        unread = page.error.value
    else:
        try:
            records = await loop.run_in_executor(None, list_feed_record_messages, page)
        except ValueError as error:  # CalendarUnreadable, FeedUnreadable (a feed without entries too)
            log.warning("%s: its list's feed %s cannot be read (%s)", source, page.url, error)
            unread = "unreadable"
        unread = unread or ("" if records else "no entries")  # a calendar with no event in its window
    if unread:
        metrics.count("list_feeds_unread", "extract_records", reason=unread)
    new_items = detector.new_items(records, source, page.crawl_id) if records else []
    crawl = progress.of(page.crawl_id)
    await _send_read(records, new_items, crawl, "feed")
    if records:
        metrics.count("records_extracted", "extract_records", len(records))
        metrics.count("list_feeds_read", "extract_records")
    # The source's list is its feed's: shown, or not read.
    metrics.gauge("list_shown", "extract_records", float(bool(records)), source=source,
                  no_list="" if records else FEED_UNREAD)
    crawl.pages_extracted += 1
    await _send_held(page, held.extend(page, new_items, reading_on=False, listed_instead=records, feed=True))


async def _read_item_time(page: PageFetched, held: HeldOutcomes, loop) -> None:
    """An item page fetched for its time: fold the time into its source's held outcome, sent once complete."""
    waited, listed = held.waits_for(page)
    if not waited:
        metrics.count("item_pages_not_waited_for", "extract_records")
        return
    moment = await loop.run_in_executor(None, _item_time, page, listed)
    if moment is None:
        log.info("%s gave no publication time (%s)", page.url, page.error.value if not page.ok else "none found")
    metrics.count("item_times", "extract_records", found=str(moment is not None).lower())
    await _send_outcomes([outcome] if (outcome := held.resolve(page, moment)) else [])
