"""The record stage's core: records of a fetched page as messages, and new items once each."""

from datetime import UTC, datetime

from agents.records import ChangeDetector, read_records
from schemas.crawl import PageFetched

SOURCE = "https://club.example.org/events/"
FETCHED_AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _listing(numbers: list[int]) -> str:
    items = "".join(f'<li><h3><a href="/events/{n}/">Meetup number {n}</a></h3><p>March {n}, 2026 in the hall</p></li>'
                    for n in numbers)
    return f"<html><body><main><ul>{items}</ul></main></body></html>"


def _page(numbers: list[int], crawl_id: str, url: str = SOURCE, reason: str = "source") -> PageFetched:
    return PageFetched(site="example.org", crawl_id=crawl_id, url=url, final_url=url, reason=reason, status=200,
                       content_type="text/html", body=_listing(numbers), source_url=SOURCE,
                       fetched_at_ms=int(FETCHED_AT.timestamp() * 1000))


def test_a_page_becomes_one_message_per_record_with_stable_ids():
    read = read_records(_page([3, 2, 1], "crawl-1"))
    assert [r.item_url for r in read.records] == [f"https://club.example.org/events/{n}/" for n in (3, 2, 1)]
    assert {r.source_url for r in read.records} == {SOURCE}
    assert read.records[0].title == "Meetup number 3"
    assert read.records[0].date == datetime(2026, 3, 3, tzinfo=UTC)
    assert read.records[0].seen_at == FETCHED_AT
    assert read.extraction.template
    again = read_records(_page([3, 2, 1], "crawl-1"))
    assert [r.event_id for r in again.records] != [r.event_id for r in read.records]  # another fetch, other ids
    same_event = _page([3, 2, 1], "crawl-1")
    assert [r.event_id for r in read_records(same_event).records] == \
        [r.event_id for r in read_records(same_event).records]  # a redelivered fetch: the same ids


def test_the_first_read_seeds_and_later_reads_emit_each_new_item_once():
    detector = ChangeDetector({}, {})
    first = read_records(_page([3, 2, 1], "crawl-1"))
    assert detector.new_items(first.records, SOURCE, "crawl-1") == []
    # The first crawl's second page of the list still seeds.
    page_two = read_records(_page([0, -1], "crawl-1", SOURCE + "page/2/", reason="paginate"))
    assert detector.new_items(page_two.records, SOURCE, "crawl-1") == []
    revisit = read_records(_page([4, 3, 2], "crawl-2", reason="revisit"))
    new = detector.new_items(revisit.records, SOURCE, "crawl-2")
    assert [item.item_url for item in new] == ["https://club.example.org/events/4/"]
    assert new[0].first_seen == FETCHED_AT and new[0].source_url == SOURCE
    # Read again (a later revisit, or the same page redelivered): nothing new.
    assert detector.new_items(revisit.records, SOURCE, "crawl-3") == []
    assert detector.new_items(read_records(_page([4, 3], "crawl-2")).records, SOURCE, "crawl-2") == []


def test_a_list_page_the_first_read_did_not_reach_seeds_rather_than_reports_old_items_as_new():
    detector = ChangeDetector({}, {})
    detector.new_items(read_records(_page([3, 2, 1], "crawl-1")).records, SOURCE, "crawl-1")
    page_two = read_records(_page([0, -1], "crawl-2", SOURCE + "page/2/", reason="paginate"))
    assert detector.new_items(page_two.records, SOURCE, "crawl-2") == []
    later = read_records(_page([-2, 0, -1], "crawl-3", SOURCE + "page/2/", reason="paginate"))
    assert [item.item_url for item in detector.new_items(later.records, SOURCE, "crawl-3")] == [
        "https://club.example.org/events/-2/"]


def test_sources_are_tracked_apart():
    detector = ChangeDetector({}, {})
    records = read_records(_page([2, 1], "crawl-1")).records
    detector.new_items(records, SOURCE, "crawl-1")
    assert detector.new_items(records, "https://club.example.org/news/", "crawl-1") == []  # seeds the other source
    assert detector.new_items(records, "https://club.example.org/news/", "crawl-2") == []


def test_a_page_without_records_sends_nothing():
    page = _page([], "crawl-1").model_copy(update={"body": "<html><body><p>Closed for the summer.</p></body></html>"})
    read = read_records(page)
    assert read.records == [] and read.extraction.template == ""
    assert ChangeDetector({}, {}).new_items(read.records, SOURCE, "crawl-1") == []
