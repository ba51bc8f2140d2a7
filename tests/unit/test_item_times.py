"""A revisit's outcome held until the pages of its items dated without a time have told theirs."""

from datetime import UTC, datetime

from agents.item_times import FEED_OVERTAKEN, FIRST_READ_ITEMS, NEW_ITEMS, HeldOutcomes
from agents.records import revisit_outcome
from schemas.crawl import ITEM_TIME_REASON, OVERFLOW_REASON, FetchErrorKind, PageFetched
from schemas.records import ItemDiscovered, RecordExtracted

SOURCE = "https://club.example.org/news/"
TICK = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _revisit() -> PageFetched:
    return PageFetched(site="example.org", crawl_id="revisit-1", url=SOURCE, final_url=SOURCE, reason="revisit",
                       status=200, content_type="text/html", body="<html></html>", source_url=SOURCE, tick_at=TICK)


def _record(n: int, date: datetime | None) -> RecordExtracted:
    return RecordExtracted(site="example.org", crawl_id="revisit-1", source_url=SOURCE, page_url=SOURCE,
                           item_url=f"https://club.example.org/news/{n}.html", title=f"News {n}", date=date,
                           position=n, seen_at=TICK)


def _new(record: RecordExtracted) -> ItemDiscovered:
    return ItemDiscovered(site="example.org", crawl_id="revisit-1", source_url=SOURCE, page_url=SOURCE,
                          item_url=record.item_url, title=record.title, date=record.date, first_seen=TICK)


def _item_page(url: str, ok: bool = True) -> PageFetched:
    return PageFetched(site="example.org", crawl_id="revisit-1", url=url, final_url=url, reason=ITEM_TIME_REASON,
                       status=200 if ok else 503, error=FetchErrorKind.NONE if ok else FetchErrorKind.HTTP_ERROR,
                       source_url=SOURCE, body="<html></html>")


DAY = datetime(2026, 3, 10, tzinfo=UTC)


def test_a_first_read_is_held_for_its_newest_undated_items_and_sent_with_their_times():
    held = HeldOutcomes({})
    records = [_record(n, DAY) for n in range(8)]
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), [], records), [], records)
    assert sending.outcomes == []
    urls = [request.url for request in sending.requests]
    assert urls == [record.item_url for record in records[:FIRST_READ_ITEMS]]
    assert {request.reason for request in sending.requests} == {ITEM_TIME_REASON}
    assert held.waits_for(_item_page(urls[0])) == (True, DAY)
    for index, url in enumerate(urls[:-1]):
        assert held.resolve(_item_page(url), DAY.replace(hour=7, minute=index)) is None
    outcome = held.resolve(_item_page(urls[-1], ok=False), None)  # a failed item page tells nothing
    assert outcome is not None
    assert outcome.listed[:FIRST_READ_ITEMS - 1] == [DAY.replace(hour=7, minute=i) for i in range(FIRST_READ_ITEMS - 1)]
    assert outcome.listed[FIRST_READ_ITEMS - 1:] == [DAY] * (len(records) - FIRST_READ_ITEMS + 1)
    assert held.waits_for(_item_page(urls[0])) == (False, None)


def test_later_reads_time_only_their_new_items_and_timed_listings_are_sent_at_once():
    held = HeldOutcomes({})
    records = [_record(n, DAY) for n in range(3)]
    first = held.hold(_revisit(), revisit_outcome(_revisit(), [], records), [], records)
    for request in first.requests:
        held.resolve(_item_page(request.url), None)
    records = [_record(9, DAY), *records]
    new = [_new(records[0])]
    later = held.hold(_revisit(), revisit_outcome(_revisit(), new, records), new, records)
    assert [request.url for request in later.requests] == [records[0].item_url]
    outcome = held.resolve(_item_page(records[0].item_url), DAY.replace(hour=21))
    assert outcome.published == [DAY.replace(hour=21)]
    assert outcome.listed[0] == DAY.replace(hour=21)
    timed = [_record(10, DAY.replace(hour=9)), *records]
    new = [_new(timed[0])]
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), new, timed), new, timed)
    assert sending.requests == [] and len(sending.outcomes) == 1 and not sending.flushed


def test_an_outcome_still_waiting_is_sent_first_when_the_next_revisit_comes():
    held = HeldOutcomes({})
    records = [_record(n, None) for n in range(2)]
    waiting = held.hold(_revisit(), revisit_outcome(_revisit(), [], records), [], records)
    assert waiting.requests and not waiting.outcomes
    nothing_new = held.hold(_revisit(), revisit_outcome(_revisit(), [], records), [], records)
    assert nothing_new.flushed and len(nothing_new.outcomes) == 2 and nothing_new.requests == []
    assert held.resolve(_item_page(waiting.requests[0].url), DAY.replace(hour=3)) is None  # too late: sent already


def _next_page(offset: int, tick: datetime = TICK) -> PageFetched:
    url = f"{SOURCE}?offset={offset}"
    return PageFetched(site="example.org", crawl_id="revisit-1", url=url, final_url=url, reason=OVERFLOW_REASON,
                       status=200, content_type="text/html", body="<html></html>", source_url=SOURCE, tick_at=tick,
                       depth=offset // 5)


def test_a_revisit_that_reads_on_is_sent_once_its_last_page_is_read_with_every_page_new_items():
    held = HeldOutcomes({})
    timed = [_record(n, DAY.replace(hour=n + 1)) for n in range(5)]
    held.hold(_revisit(), revisit_outcome(_revisit(), [], timed), [], timed)  # the first read: timed, sent
    first_page = [_record(n, DAY.replace(hour=20, minute=n)) for n in range(20, 25)]
    new = [_new(record) for record in first_page]
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), new, first_page), new, first_page, reading_on=True)
    assert sending.outcomes == [] and sending.requests == []  # timed items, but its next page is being read
    second = [_new(_record(n, DAY)) for n in range(15, 20)]  # dated by day alone: their pages tell the hour
    sending = held.extend(_next_page(5), second, reading_on=True)
    assert sending.outcomes == [] and [r.url for r in sending.requests] == [item.item_url for item in second]
    third = [_new(_record(n, DAY.replace(hour=12))) for n in range(12, 15)]
    sending = held.extend(_next_page(10), third, reading_on=False)  # it met a known item: the list's last page
    assert sending.outcomes == [] and sending.requests == []  # still waiting for the second page's item pages
    outcome = None
    for index, item in enumerate(second):
        outcome = held.resolve(_item_page(item.item_url), DAY.replace(hour=15, minute=index))
        assert (outcome is None) == (index < len(second) - 1)
    assert outcome.new_items == 13
    assert outcome.published == ([item.date for item in new] + [DAY.replace(hour=15, minute=i) for i in range(5)]
                                 + [DAY.replace(hour=12)] * 3)


def test_a_next_page_of_a_revisit_already_sent_changes_nothing_and_item_pages_are_capped():
    held = HeldOutcomes({})
    timed = [_record(n, DAY.replace(hour=n + 1)) for n in range(5)]
    held.hold(_revisit(), revisit_outcome(_revisit(), [], timed), [], timed)
    first_page = [_record(n, DAY) for n in range(100, 105)]
    new = [_new(record) for record in first_page]
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), new, first_page), new, first_page, reading_on=True)
    assert len(sending.requests) == 5
    many = [_new(_record(n, DAY)) for n in range(200, 240)]
    sending = held.extend(_next_page(5), many, reading_on=True)
    assert len(sending.requests) == NEW_ITEMS - 5  # a burst of hundreds is one busy tick: NEW_ITEMS pages a revisit
    later = TICK.replace(hour=18)
    flushed = held.hold(_revisit(), revisit_outcome(_revisit(), [], first_page), [], first_page)
    assert flushed.flushed and flushed.outcomes[0].new_items == 45
    assert held.extend(_next_page(10), [_new(_record(300, DAY))], reading_on=False).outcomes == []
    assert held.extend(_next_page(10, later), [], reading_on=False).outcomes == []  # no revisit of that tick held


def _calendar_event(n: int, created: datetime | None) -> RecordExtracted:
    return RecordExtracted(site="example.org", crawl_id="revisit-1", source_url=SOURCE, page_url=SOURCE,
                           item_url=f"{SOURCE}#event-{n}@google.com", title=f"Evening {n}",
                           date=DAY.replace(day=20 + n), event_start=DAY.replace(day=20 + n), published=created,
                           position=n, seen_at=TICK)


def _feed(url: str = "https://calendar.example/basic.ics", tick: datetime = TICK) -> PageFetched:
    """A fetched feed that holds the source's list (agents.list_feeds), of the revisit at `tick`."""
    return PageFetched(site="example.org", crawl_id="revisit-1", url=url, final_url=url, reason="list_feed",
                       status=200, content_type="text/calendar", body="BEGIN:VCALENDAR", source_url=SOURCE,
                       tick_at=tick)


def test_a_calendar_the_page_embeds_is_its_list_in_the_outcome():
    held = HeldOutcomes({})
    # The page's own read found its menu; its list is the calendar being fetched (agents.list_feeds).
    menu = [_record(n, None) for n in range(4)]
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), [], menu, in_navigation=True), [], menu, feeds=1)
    assert sending.outcomes == []
    feed = _feed()
    events = [_calendar_event(1, DAY.replace(hour=9)), _calendar_event(2, None)]
    new = [_new(events[1])]  # no CREATED: untimed, but an event on its page is no page to fetch for a time
    sending = held.extend(feed, new, reading_on=False, listed_instead=events, feed=True)
    assert sending.requests == [] and len(sending.outcomes) == 1
    outcome = sending.outcomes[0]
    assert outcome.listed == [DAY.replace(hour=9), None] and outcome.linked == 2
    assert not outcome.in_navigation and outcome.new_items == 1
    # The menu's items waited for by the first read's timing are no longer waited for.
    assert held.waits_for(_item_page(menu[0].item_url)) == (False, None)


def test_a_page_embedding_two_calendars_waits_for_both():
    held = HeldOutcomes({})
    sending = held.hold(_revisit(), revisit_outcome(_revisit(), [], [], in_navigation=False), [], [], feeds=2)
    assert sending.outcomes == [] and sending.requests == []
    feed = _feed("https://calendar.example/a.ics")
    first, second = [_calendar_event(1, DAY.replace(hour=9))], [_calendar_event(2, DAY.replace(hour=10))]
    sending = held.extend(feed, [_new(first[0])], reading_on=False, listed_instead=first, feed=True)
    assert sending.outcomes == []  # the second calendar is still out
    sending = held.extend(feed, [_new(second[0])], reading_on=False, listed_instead=second, feed=True)
    assert len(sending.outcomes) == 1
    outcome = sending.outcomes[0]
    assert outcome.new_items == 2 and outcome.listed == [DAY.replace(hour=9), DAY.replace(hour=10)]
    assert outcome.linked == 2 and not outcome.in_navigation


def test_a_read_whose_calendar_a_later_revisit_overtakes_is_sent_as_not_read():
    held = HeldOutcomes({})
    menu = [_record(n, None) for n in range(4)]
    first = held.hold(_revisit(), revisit_outcome(_revisit(), [], menu, in_navigation=True), [], menu, feeds=1)
    assert first.outcomes == []
    later_tick = TICK.replace(hour=13)
    later = _revisit().model_copy(update={"tick_at": later_tick})
    sending = held.hold(later, revisit_outcome(later, [], menu, in_navigation=True), [], menu, feeds=1)
    # Without its calendar the first read saw no list: not a page that lists nothing (it would be withdrawn).
    assert sending.feed_overtaken and len(sending.outcomes) == 1
    overtaken = sending.outcomes[0]
    assert not overtaken.read and overtaken.error == FEED_OVERTAKEN and overtaken.tick_at == TICK
    assert overtaken.listed == [] and overtaken.linked == 0
    events = [_calendar_event(1, DAY.replace(hour=9)), _calendar_event(2, None)]

    # The first read's calendar, come in late, belongs to no held read; the later read's is its list.
    assert held.extend(_feed(), [_new(events[0])], reading_on=False, listed_instead=events, feed=True).outcomes == []
    sending = held.extend(_feed(tick=later_tick), [], reading_on=False, listed_instead=events, feed=True)
    assert [(outcome.read, outcome.tick_at, outcome.linked) for outcome in sending.outcomes] == [(True, later_tick, 2)]


def test_a_read_whose_first_calendar_came_in_keeps_its_list_when_overtaken():
    held = HeldOutcomes({})
    held.hold(_revisit(), revisit_outcome(_revisit(), [], [], in_navigation=False), [], [], feeds=2)
    feed = _feed("https://calendar.example/a.ics")
    events = [_calendar_event(1, DAY.replace(hour=9))]
    assert held.extend(feed, [_new(events[0])], reading_on=False, listed_instead=events, feed=True).outcomes == []
    later = _revisit().model_copy(update={"tick_at": TICK.replace(hour=13)})
    sending = held.hold(later, revisit_outcome(later, [], [], in_navigation=False), [], [], feeds=2)
    assert not sending.feed_overtaken and sending.flushed
    assert [(outcome.read, outcome.linked, outcome.new_items) for outcome in sending.outcomes] == [(True, 1, 1)]
