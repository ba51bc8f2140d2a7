"""The record stage's core: records of a fetched page as messages, and new items once each."""

import asyncio
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

from agents import extract_records
from agents.pagination import shows_list_top
from agents.records import ChangeDetector, ListTemplates, _digest, read_records
from infra.simweb.generator import generate_site
from infra.simweb.server import SIM_START, FaultBoard, SimClock, SimSite
from models.records.extraction import record_key
from schemas.crawl import PageFetched
from schemas.records import ItemDiscovered, RecordExtracted
from streams import progress

SOURCE = "https://club.example.org/events/"
FETCHED_AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _listing(numbers: list[int]) -> str:
    items = "".join(f'<li><h3><a href="/events/{n}/">Meetup number {n}</a></h3><p>March {n}, 2026 in the hall</p></li>'
                    for n in numbers)
    return f"<html><body><main><ul>{items}</ul></main></body></html>"


def _page(numbers: list[int], crawl_id: str, url: str = SOURCE, reason: str = "source") -> PageFetched:
    # Each crawl an hour after the one before ("crawl-1" at FETCHED_AT), as revisits come; a next page of the
    # list a second after its first page.
    fetched = FETCHED_AT + timedelta(hours=int(re.search(r"\d+$", crawl_id)[0]) - 1, seconds=url != SOURCE)
    return PageFetched(site="example.org", crawl_id=crawl_id, url=url, final_url=url, reason=reason, status=200,
                       content_type="text/html", body=_listing(numbers), source_url=SOURCE,
                       fetched_at_ms=int(fetched.timestamp() * 1000))


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
    assert new[0].first_seen == revisit.records[0].seen_at == FETCHED_AT + timedelta(hours=1)
    assert new[0].source_url == SOURCE
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


def _young_page(numbers: list[int], crawl_id: str) -> PageFetched:
    """A listing whose list has a single item at first; beside it two links built alike (a 'follow us' pair)."""
    items = "".join(f'<li class="item"><h3><a href="/events/{n}/">Meetup number {n}</a></h3>'
                    f"<p>March {n}, 2026 in the hall</p></li>" for n in numbers)
    follow = '<div><a class="social" href="/rss">RSS</a><a class="social" href="/mail">Mail</a></div>'
    body = f"<html><body><main><ul>{items}</ul></main>{follow}</body></html>"
    return PageFetched(site="example.org", crawl_id=crawl_id, url=SOURCE, final_url=SOURCE, reason="revisit",
                       status=200, content_type="text/html", body=body, source_url=SOURCE,
                       fetched_at_ms=int(FETCHED_AT.timestamp() * 1000))


def test_a_list_chosen_on_too_few_records_is_chosen_again_and_then_kept():
    templates, detector = ListTemplates({}), ChangeDetector({}, {})

    def read(numbers: list[int], crawl_id: str) -> tuple[list[str], bool, list[str]]:
        page = _young_page(numbers, crawl_id)
        records = read_records(page, templates.for_read(SOURCE, page.reason),
                               with_links=templates.wants_links(SOURCE, page.reason))
        settled = templates.settle(SOURCE, page.reason, records.extraction, records.links)
        new = detector.new_items(records.records, SOURCE, crawl_id, settled.reseed,
                                 links_before=settled.links_before)
        return [r.item_url for r in records.records], settled.reseed, [item.item_url for item in new]

    first, _, _ = read([1], "c1")
    assert first == ["https://club.example.org/rss", "https://club.example.org/mail"]  # no list yet: the pair
    # The list grew: chosen afresh, its items seed the source — save those the page did not show at its first
    # read: they came since.
    second, reseed, new = read([3, 2, 1], "c2")
    assert reseed and second[0] == "https://club.example.org/events/3/"
    assert new == ["https://club.example.org/events/3/", "https://club.example.org/events/2/"]
    # Three records: the choice is kept, and the next item is new.
    third, reseed, new = read([4, 3, 2, 1], "c3")
    assert not reseed and new == ["https://club.example.org/events/4/"]
    assert templates.for_read(SOURCE, "revisit") == templates.table[SOURCE]["template"]


def test_a_one_item_lists_reading_is_not_kept_and_the_grown_lists_new_items_are_reported():
    templates, detector = ListTemplates({}), ChangeDetector({}, {})
    menu = "".join(f'<li><a href="/{name}/">{name.title()}</a></li>' for name in ("about", "events", "news", "contact"))

    def read(numbers: list[int], crawl_id: str) -> tuple[list[str], list[str]]:
        items = "".join(f'<li class="item"><a href="/events/{n}/">Meetup number {n}</a> March {n}, 2026</li>'
                        for n in numbers)
        page = _page([], crawl_id, reason="revisit").model_copy(update={
            "body": f"<html><body><nav><ul>{menu}</ul></nav><main><ul>{items}</ul></main></body></html>"})
        records = read_records(page, templates.for_read(SOURCE, page.reason))
        reseed = templates.settle(SOURCE, page.reason, records.extraction)
        new = detector.new_items(records.records, SOURCE, crawl_id, reseed)
        return [r.title for r in records.records], [item.item_url for item in new]

    # One item: the menu is the only repeated structure; the one page below the list's path that the content
    # links is read as the list's one record — not kept.
    assert read([1], "c1")[0] == ["Meetup number 1"]
    assert templates.for_read(SOURCE, "revisit") == ""
    # The list grew: chosen afresh; it holds the known item, so what precedes it is new. Then kept.
    assert read([3, 2, 1], "c2") == (["Meetup number 3", "Meetup number 2", "Meetup number 1"],
                                     ["https://club.example.org/events/3/", "https://club.example.org/events/2/"])
    assert read([4, 3, 2, 1], "c3")[1] == ["https://club.example.org/events/4/"]
    assert templates.for_read(SOURCE, "revisit") == templates.table[SOURCE]["template"]


def _read_young(templates: ListTemplates, detector: ChangeDetector, body: str, crawl_id: str) -> list[str]:
    page = _young_page([], crawl_id).model_copy(update={"body": body})
    read = read_records(page, templates.for_read(SOURCE, page.reason),
                        with_links=templates.wants_links(SOURCE, page.reason))
    settled = templates.settle(SOURCE, page.reason, read.extraction, read.links)
    return [item.item_url for item in detector.new_items(read.records, SOURCE, crawl_id, settled.reseed,
                                                         links_before=settled.links_before)]


_MENU = "".join(f'<li><a href="/{name}/">{name.title()}</a></li>' for name in ("about", "news", "join", "contact"))


def _club_page(items: str) -> str:
    return f"<html><body><nav><ul>{_MENU}</ul></nav><main>{items}</main></body></html>"


def test_a_page_read_without_a_list_reports_the_items_its_list_shows_once_it_has_one():
    templates, detector = ListTemplates({}), ChangeDetector({}, {})
    assert _read_young(templates, detector, _club_page("<p>No events yet: see you soon.</p>"), "c1") == []
    assert templates.table[SOURCE]["page_links"]  # its links kept while it has no list it keeps
    events = "".join(f'<li><h3><a href="/events/{n}/">Meetup number {n}</a></h3><p>March {n}, 2026</p></li>'
                     for n in (3, 2, 1))
    assert _read_young(templates, detector, _club_page(f"<ul>{events}</ul>"), "c2") == [
        f"https://club.example.org/events/{n}/" for n in (3, 2, 1)]
    assert "page_links" not in templates.table[SOURCE]  # kept: the links are let go of


def test_a_page_first_read_as_another_page_tells_nothing_of_what_is_new():
    templates, detector = ListTemplates({}), ChangeDetector({}, {})
    maintenance = '<html><body><p>Down for maintenance.</p><a href="/">Home</a></body></html>'
    assert _read_young(templates, detector, maintenance, "c1") == []
    events = "".join(f'<li><h3><a href="/events/{n}/">Meetup number {n}</a></h3><p>March {n}, 2026</p></li>'
                     for n in (3, 2, 1))
    # The page's menu was not on the page first read: not the same page grown — its list seeds.
    assert _read_young(templates, detector, _club_page(f"<ul>{events}</ul>"), "c2") == []


def test_an_item_an_earlier_provisional_choice_read_is_not_reported_when_the_list_is_chosen_anew():
    templates, detector = ListTemplates({}), ChangeDetector({}, {})
    # Two cards read as a list (too few to keep), their titles from their headings.
    cards = "".join(f'<div class="card"><h3>Talk {n}</h3><a href="/talks/{n}/">More</a></div>' for n in (1, 0))
    assert _read_young(templates, detector, _club_page(cards), "c1") == []
    # Talk 2 came, read by the provisional choice as new.
    cards = "".join(f'<div class="card"><h3>Talk {n}</h3><a href="/talks/{n}/">More</a></div>' for n in (2, 1))
    assert _read_young(templates, detector, _club_page(cards), "c2") == ["https://club.example.org/talks/2/"]
    # The page redone: the same talks in a table, read under other titles (no key in common) — chosen anew.
    rows = "".join(f'<tr><td>March {n}, 2026</td><td><a href="/talks/{n}/">Talk number {n}</a></td></tr>'
                   for n in (3, 2, 1))
    assert _read_young(templates, detector, _club_page(f"<table>{rows}</table>"), "c3") == [
        "https://club.example.org/talks/3/"]


def test_the_weeks_young_listing_read_first_as_its_one_events_fields_reports_the_two_events_since(data_dir):
    # The 5,000-site week's two lost items (seed 1, site-3922's /events/ on the real publication series): its
    # first read, one event old, took the event's date line and sentence for a list; at three events the list
    # was chosen anew and seeded, events 2 and 3 taken for old.
    spec = generate_site(1, 3922, data_dir / "revisit", SIM_START)
    source = next(source for source in spec.sources if source.path == "/events/")
    clock = SimClock(0)
    site = SimSite(spec, clock, FaultBoard())
    templates, detector = ListTemplates({}), ChangeDetector({}, {})
    url = "http://127.0.0.1:36079/events/"
    reads = []
    for crawl, hours in enumerate((source.items[0].hours + 0.1, source.items[2].hours + 2.9,
                                   source.items[3].hours + 0.5), start=1):
        clock.advance(hours - clock.hours())
        page = _young_page([], f"crawl-{crawl}").model_copy(update={
            "url": url, "final_url": url, "source_url": url, "body": site.respond(source.path, {})[1]})
        read = read_records(page, templates.for_read(url, page.reason),
                            with_links=templates.wants_links(url, page.reason))
        settled = templates.settle(url, page.reason, read.extraction, read.links)
        reads.append((len(site.visible(source)), [r.item_url for r in read.records][:1], [
            item.item_url for item in detector.new_items(read.records, url, page.crawl_id, settled.reseed,
                                                         links_before=settled.links_before)]))
    assert reads == [(1, [""], []),  # the event's fields, no link: no list yet
                     (3, [url + "item-3.html"], [url + "item-3.html", url + "item-2.html"]),
                     (4, [url + "item-4.html"], [url + "item-4.html"])]


def test_a_list_chosen_anew_that_holds_known_items_reports_what_precedes_them():
    detector = ChangeDetector({}, {})
    # The first read took two of a young list's items for the list (another structure than the whole list's).
    detector.new_items(read_records(_page([1, 0], "c1")).records, SOURCE, "c1")
    # A burst made the whole list choosable: chosen anew, it still holds the known items — what precedes them
    # is new, not seeded.
    grown = read_records(_page([4, 3, 2, 1, 0], "c2", reason="revisit")).records
    assert [item.item_url for item in detector.new_items(grown, SOURCE, "c2", reseed=True)] == [
        f"https://club.example.org/events/{n}/" for n in (4, 3, 2)]
    # A list chosen anew that shows older items after the known ones (the earlier choice was a widget of the
    # newest): those are older, seeded.
    longer = read_records(_page([4, 3, 2, 1, 0, -1, -2], "c3", reason="revisit")).records
    assert detector.new_items(longer, SOURCE, "c3", reseed=True) == []
    # Another list altogether, none of its items known: its novelty is unknown, it seeds.
    other = read_records(_page([10, 11], "c4", reason="revisit")).records
    assert detector.new_items(other, SOURCE, "c4", reseed=True) == []
    assert [item.item_url for item in detector.new_items(
        read_records(_page([12, 10, 11], "c5", reason="revisit")).records, SOURCE, "c5")] == [
        "https://club.example.org/events/12/"]


def test_a_template_kept_before_choices_could_be_provisional_stays_kept():
    templates = ListTemplates({SOURCE: "html/body/main/ul|li.item"})
    assert templates.for_read(SOURCE, "revisit") == "html/body/main/ul|li.item"


def test_an_item_read_with_another_date_is_not_new_but_a_series_meeting_is():
    detector = ChangeDetector({}, {})
    first = read_records(_page([3, 2, 1], "crawl-1")).records
    detector.new_items(first, SOURCE, "crawl-1")
    # The same items, their listed dates read a day later (a relative date, another day-first reading).
    redated = [record.model_copy(update={"date": record.date.replace(day=record.date.day + 1)}) for record in first]
    assert detector.new_items(redated, SOURCE, "crawl-2") == []
    # A series' meetings share a link and a title: the date tells a new one from the last.
    series = [first[0].model_copy(update={"item_url": SOURCE + "board/", "title": "Board meeting", "date": day})
              for day in (datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC))]
    assert len(detector.new_items(series, SOURCE, "crawl-2")) == 2
    later = [series[0].model_copy(update={"date": datetime(2026, 4, 1, tzinfo=UTC)}), *series]
    assert [item.date for item in detector.new_items(later, SOURCE, "crawl-3")] == [datetime(2026, 4, 1, tzinfo=UTC)]


def test_items_known_under_the_former_key_stay_known():
    records = read_records(_page([2, 1], "crawl-1")).records
    former = {f"{SOURCE}\x00{_digest(record_key(record))}": 1 for record in records}
    detector = ChangeDetector(former | {f"{SOURCE}\x00page\x00{_digest(SOURCE)}": 1}, {SOURCE: "crawl-1"})
    assert detector.new_items(records, SOURCE, "crawl-2") == []


def test_an_overflow_read_reports_the_items_pushed_off_the_first_page_and_seeds_the_older():
    detector = ChangeDetector({}, {})
    detector.new_items(read_records(_page([3, 2, 1], "crawl-1")).records, SOURCE, "crawl-1")
    # Four new items: the first page shows three, all new; 4 went to page two, ahead of 3 and 2 and of 0,
    # an older item no read ever showed.
    first = detector.new_items(read_records(_page([7, 6, 5], "crawl-2", reason="revisit")).records, SOURCE, "crawl-2")
    assert len(first) == 3
    page_two = read_records(_page([4, 3, 2, 0], "crawl-2", SOURCE + "?page=2", reason="overflow"))
    new = detector.new_items(page_two.records, SOURCE, "crawl-2", overflow=True)
    assert [item.item_url for item in new] == ["https://club.example.org/events/4/"]
    assert new[0].source_url == SOURCE
    # The older item is known now: a later read of page two reports nothing.
    again = read_records(_page([5, 4, 3, 2, 0], "crawl-3", SOURCE + "?page=2", reason="overflow"))
    assert detector.new_items(again.records, SOURCE, "crawl-3", overflow=True) == []


def test_an_overflow_read_reports_an_item_inserted_between_two_known_ones_below_the_first_page():
    detector = ChangeDetector({}, {})
    detector.new_items(read_records(_page([6, 5, 4, 3, 2], "crawl-1")).records, SOURCE, "crawl-1")
    # A list ordered by date: 9 and 8 are new at the top, and 35 — an event dated between 4 and 3 — was
    # inserted below the first page; 1 is older than anything read before.
    first = detector.new_items(read_records(_page([9, 8, 6], "crawl-2", reason="revisit")).records, SOURCE,
                               "crawl-2")
    assert [item.item_url for item in first] == ["https://club.example.org/events/9/",
                                                 "https://club.example.org/events/8/"]
    page_two = read_records(_page([5, 4, 35, 3, 2, 1], "crawl-2", SOURCE + "?page=2", reason="overflow"))
    new = detector.new_items(page_two.records, SOURCE, "crawl-2", overflow=True)
    assert [item.item_url for item in new] == ["https://club.example.org/events/35/"]


class _Writes(dict):
    """A table that counts its writes (each one a message on its changelog in the worker)."""

    writes = 0

    def __setitem__(self, key, value):
        self.writes += 1
        super().__setitem__(key, value)


def test_an_item_read_again_costs_no_write_until_it_is_marked_as_still_listed():
    known = _Writes()
    detector = ChangeDetector(known, {}, still_listed_every=timedelta(hours=2))
    detector.new_items(read_records(_page([3, 2, 1], "crawl-1")).records, SOURCE, "crawl-1")
    first_sight = {key: value for key, value in known.items()}
    item_keys = [key for key in known if "\x00page\x00" not in key and not key.endswith("\x00read")]
    assert len(item_keys) == 3
    # An hour later: the read's mark and the page's time, nothing for the three items it lists again.
    known.writes = 0
    detector.new_items(read_records(_page([3, 2, 1], "crawl-2", reason="revisit")).records, SOURCE, "crawl-2")
    assert known.writes == 2 and all(known[key] == first_sight[key] for key in item_keys)
    # Three hours after their first sight: each item marked as still listed, just before the read.
    detector.new_items(read_records(_page([4, 3, 2], "crawl-4", reason="revisit")).records, SOURCE, "crawl-4")
    read_at = known[f"{SOURCE}\x00read"]
    listed = [key for key in item_keys if known[key] != first_sight[key]]
    assert len(listed) == 2 and {known[key] for key in listed} == {read_at - 1}
    # Item 1, no longer listed, keeps its first sight: the table's retention lets it go first.
    assert [key for key in item_keys if key not in listed and known[key] == first_sight[key]]


def test_items_marked_as_still_listed_are_still_known_before_the_read_on_its_next_page():
    detector = ChangeDetector({}, {}, still_listed_every=timedelta(hours=2))
    detector.new_items(read_records(_page([3, 2, 1], "crawl-1")).records, SOURCE, "crawl-1")
    # Three hours later the same list: its items marked as still listed.
    assert detector.new_items(read_records(_page([3, 2, 1], "crawl-4", reason="revisit")).records, SOURCE,
                              "crawl-4") == []
    # Then four new items: 3 and 2, marked by the read before, are pushed to page two with 5 and 4.
    first = detector.new_items(read_records(_page([8, 7, 6], "crawl-5", reason="revisit")).records, SOURCE,
                               "crawl-5")
    assert len(first) == 3
    page_two = read_records(_page([5, 4, 3, 2], "crawl-5", SOURCE + "?page=2", reason="overflow"))
    new = detector.new_items(page_two.records, SOURCE, "crawl-5", overflow=True)
    assert [item.item_url for item in new] == ["https://club.example.org/events/5/",
                                               "https://club.example.org/events/4/"]


def test_a_source_whose_state_was_let_go_of_seeds_afresh_rather_than_reporting_its_list():
    known = {}
    detector = ChangeDetector(known, {})
    detector.new_items(read_records(_page([3, 2, 1], "crawl-1")).records, SOURCE, "crawl-1")
    # Not read for longer than the table keeps an item's time: its items and its page's time let go of.
    known.clear()
    later = read_records(_page([5, 4, 3], "crawl-9", reason="revisit"))
    assert detector.new_items(later.records, SOURCE, "crawl-9") == []
    assert [item.item_url for item in detector.new_items(
        read_records(_page([6, 5, 4], "crawl-10", reason="revisit")).records, SOURCE, "crawl-10")] == [
        "https://club.example.org/events/6/"]


def test_a_list_served_in_a_broken_encoding_reports_no_item_again():
    detector = ChangeDetector({}, {})
    first = read_records(_page([3, 2, 1], "crawl-1")).records
    accented = [record.model_copy(update={"title": f"Tag der offenen Tür {n}"}) for n, record in zip((3, 2, 1), first)]
    detector.new_items(accented, SOURCE, "crawl-1")
    # The same list a day later, its "ü" lost to a broken charset ("?"), or read as cp1252 ("Ã¼").
    for garbled in ("Tag der offenen T?r", "Tag der offenen TÃ¼r"):
        again = [record.model_copy(update={"title": f"{garbled} {n}"}) for n, record in zip((3, 2, 1), accented)]
        assert detector.new_items(again, SOURCE, "crawl-2") == []
    # Another title under the same link is still a new item.
    renamed = [accented[0].model_copy(update={"title": "Konzert 3"})]
    assert len(detector.new_items(renamed, SOURCE, "crawl-3")) == 1


def test_items_known_under_the_title_key_stay_known_and_take_the_new_key():
    records = read_records(_page([2, 1], "crawl-1")).records
    titled = {f"{SOURCE}\x00{_digest(record.item_url + chr(0) + record.title)}": 1 for record in records}
    known = titled | {f"{SOURCE}\x00page\x00{_digest(SOURCE)}": 1}
    detector = ChangeDetector(known, {SOURCE: "crawl-1"})
    assert detector.new_items(records, SOURCE, "crawl-2") == []
    # Each now known under its new key too: a garbled read of them later is no new item.
    garbled = [record.model_copy(update={"title": record.title + " ?"}) for record in records]
    assert detector.new_items(garbled, SOURCE, "crawl-3") == []


def test_a_later_page_of_the_first_read_reports_the_items_published_since_its_first_page():
    detector = ChangeDetector({}, {})
    assert detector.new_items(read_records(_page([5, 4, 3], "crawl-1")).records, SOURCE, "crawl-1") == []
    # The first read walks on to its pager's pages a second later: page two seeds; a page-size variant — the
    # first page's items and more — shows 6, published between the two fetches, above them.
    page_two = read_records(_page([2, 1], "crawl-1", SOURCE + "?page=2", reason="paginate"))
    assert detector.new_items(page_two.records, SOURCE, "crawl-1", later_page=True) == []
    variant = read_records(_page([6, 5, 4, 3, 2, 1, 0], "crawl-1", SOURCE + "?size=10", reason="paginate"))
    new = detector.new_items(variant.records, SOURCE, "crawl-1", later_page=True)
    assert [item.item_url for item in new] == ["https://club.example.org/events/6/"]
    # 0, below the first page's items, is older: seeded. The next read of the first page reports nothing again.
    revisit = read_records(_page([6, 5, 4], "crawl-2", reason="revisit"))
    assert detector.new_items(revisit.records, SOURCE, "crawl-2") == []
    assert detector.new_items(read_records(_page([1, 0, -1], "crawl-2", SOURCE + "?page=3", reason="overflow")
                                           ).records, SOURCE, "crawl-2", overflow=True) == []


def test_a_later_page_of_the_first_read_whose_top_items_no_first_page_showed_seeds_them():
    detector = ChangeDetector({}, {})
    detector.new_items(read_records(_page([5, 4, 3], "crawl-1")).records, SOURCE, "crawl-1")
    # Page three, read after page two: its first item was page two's (the list moved on by one), not the first
    # page's, and nothing above it is new.
    detector.new_items(read_records(_page([2, 1], "crawl-1", SOURCE + "?page=2", reason="paginate")).records,
                       SOURCE, "crawl-1", later_page=True)
    page_three = read_records(_page([0, 1, -1], "crawl-1", SOURCE + "?page=3", reason="paginate"))
    assert detector.new_items(page_three.records, SOURCE, "crawl-1", later_page=True) == []


def test_a_burst_between_the_first_page_and_its_page_size_variants_is_reported_once():
    # The 1,000-site soak's 13 lost items: a list of twenty, its pager beside "10 20 50 per page" links, got a
    # burst in the seconds between its first read and the walk on to those links; "?size=10" then showed none
    # of the first page's items, and they seeded.
    spec = generate_site(1, 977, None, SIM_START)
    source = next(source for source in spec.sources if source.path == "/events/")
    clock = SimClock(0)
    site = SimSite(spec, clock, FaultBoard())
    detector = ChangeDetector({}, {})
    url = "http://127.0.0.1:36079/events/"

    def read(query: str, reason: str, crawl: str) -> list[int]:
        page_url = url + query
        page = PageFetched(site="127.0.0.1:36079", crawl_id=crawl, url=page_url, final_url=page_url, reason=reason,
                           status=200, content_type="text/html", source_url=url,
                           body=site.respond(source.path, parse_qs(query.lstrip("?")))[1],
                           fetched_at_ms=int(clock.now().timestamp() * 1000))
        new = detector.new_items(read_records(page).records, url, crawl, later_page=reason == "paginate",
                                 list_top=shows_list_top(page_url, url))
        return [int(re.search(r"item-(\d+)", item.item_url)[1]) for item in new]

    clock.advance(898.0)
    first_read = site.respond(source.path, {})[1]
    assert read("", "source", "crawl-1") == []
    assert 'href="/events/?size=10"' in first_read and 'href="/events/?page=2"' in first_read
    burst = [item.number for item in source.items if 898.0 < item.hours <= 899.8]
    assert len(burst) == 12
    clock.advance(1.8)
    # Ten of the burst, none of the first page's items; then the other two above the first page's first item.
    assert read("?size=10", "paginate", "crawl-1") == burst[::-1][:10]
    assert read("?size=20", "paginate", "crawl-1") == burst[::-1][10:]
    # Page two (the first page's last items and older ones) and a next page in size 10 seed: nothing new.
    assert read("?page=2", "paginate", "crawl-1") == []
    assert read("?size=10&page=3", "paginate", "crawl-1") == []
    assert read("", "revisit", "crawl-2") == []


def test_only_a_page_size_link_shows_the_list_from_its_top():
    listing = "https://club.example.org/events/"
    assert shows_list_top(listing + "?size=10", listing)
    assert shows_list_top(listing + "?per_page=50", listing)
    assert shows_list_top("https://club.example.org/events/?cat=talks&limit=50",
                          "https://club.example.org/events/?cat=talks")
    assert not shows_list_top(listing, listing)
    assert not shows_list_top(listing + "?size=10&page=2", listing)
    assert not shows_list_top(listing + "?page=2", listing)
    assert not shows_list_top(listing + "?sort=oldest", listing)
    assert not shows_list_top("https://club.example.org/news/?size=10", listing)


def test_a_reads_new_items_go_out_before_its_records(monkeypatch):
    # Stored records then tell that the read's new items were sent (a worker stopped mid-read at a soak's end).
    sent: list[str] = []

    async def send(name: str, message) -> None:
        sent.append(name)

    monkeypatch.setattr(extract_records, "send", send)
    page = _page([1, 2], "crawl-1")
    records = [RecordExtracted(site=page.site, crawl_id=page.crawl_id, source_url=SOURCE, page_url=SOURCE,
                               item_url=f"{SOURCE}{n}/", title=f"Meetup number {n}", position=n,
                               seen_at=FETCHED_AT) for n in (1, 2)]
    new = [ItemDiscovered(site=page.site, crawl_id=page.crawl_id, source_url=SOURCE, page_url=SOURCE,
                          item_url=f"{SOURCE}2/", title="Meetup number 2", first_seen=FETCHED_AT)]
    asyncio.run(extract_records._send_read(records, new, progress.of("crawl-1"), "first"))
    assert sent == ["changes.detected", "records.extracted", "records.extracted"]
