"""A revisit's outcome held until the pages of its items dated without a time have told theirs."""

from datetime import UTC, datetime

from agents.item_times import FIRST_READ_ITEMS, HeldOutcomes
from agents.records import revisit_outcome
from schemas.crawl import ITEM_TIME_REASON, FetchErrorKind, PageFetched
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
