"""Record extraction on the pages issue 17 calls bad input: each gives records or none, never an exception."""

from datetime import UTC, datetime

from models.records.main_list import extract_records
from models.records.no_list import (
    DESCRIPTIONS,
    FEED_UNREAD,
    IN_A_FRAME,
    MENU_ONLY,
    NO_DOCUMENT,
    NO_REPEATS,
    NO_TEXT,
    TOO_DEEP,
)
from models.web.dom import parse_html

URL = "https://example.org/events/"
MENU = "<nav><ul><li><a href='/'>Home</a></li><li><a href='/about/'>About</a></li>" \
       "<li><a href='/contact/'>Contact</a></li></ul></nav>"


def _read(body: str):
    return extract_records(parse_html(f"<html><body>{MENU}{body}</body></html>"), URL)


def test_hundreds_of_items_are_all_read():
    items = "".join(f"<li><a href='/events/{i}/'>Concert number {i}</a> <span>March {i % 28 + 1}, 2026</span></li>"
                    for i in range(600))
    read = _read(f"<main><ul>{items}</ul></main>")
    assert len(read.records) == 600 and read.records[599].title == "Concert number 599"


def test_a_list_split_across_tables_or_columns_is_read_whole():
    def table(month: str, prefix: str) -> str:
        return "<table>" + "".join(f"<tr><td>{month} {i}, 2026</td><td><a href='/m/{prefix}{i}/'>Board meeting "
                                   f"{prefix}{i}</a></td></tr>" for i in range(1, 6)) + "</table>"

    tables = _read(f"<main><h2>March</h2>{table('March', 'm')}<h2>April</h2>{table('April', 'a')}</main>")
    assert len(tables.records) == 10
    columns = "".join(f"<div class='col'><ul>{''.join(f'<li><a href=/n/{c}{i}/>News {c}{i}</a> March {i}, 2026</li>' for i in range(1, 4))}</ul></div>"
                      for c in "abc")
    assert sorted(r.title for r in _read(f"<main><div class='row'>{columns}</div></main>").records) == [
        f"News {c}{i}" for c in "abc" for i in range(1, 4)]


def test_mixed_languages_and_date_formats_are_read_with_their_dates():
    items = [("Konzert", "3. März 2026"), ("音乐会", "2026年3月4日"), ("Концерт", "6 марта 2026"), ("Fête", "7 mars 2026")]
    read = _read("<main><ul>" + "".join(f"<li><a href='/e/{i}/'>{title}</a> {day}</li>"
                                        for i, (title, day) in enumerate(items)) + "</ul></main>")
    assert [(r.title, r.date) for r in read.records] == [
        (title, datetime(2026, 3, day, tzinfo=UTC)) for (title, _), day in zip(items, (3, 4, 6, 7))]


def test_pages_whose_list_is_out_of_reach_give_the_menu_flagged_as_navigation_or_nothing_and_say_why():
    """A list inside an iframe (another document) or below libxml2's 255-level cut is not on the page read: what
    is read is the menu, marked as lying in navigation (the stream keeps no such choice), or nothing — and the
    reading says which of them kept the list out of reach."""
    items = "".join(f"<li><a href='/events/{i}/'>Concert number {i}</a></li>" for i in range(5))
    for body, reason in ((f"<main><iframe srcdoc=\"<ul>{items}</ul>\"></iframe></main>", IN_A_FRAME),
                         ("<div>" * 400 + f"<ul>{items}</ul>" + "</div>" * 400, TOO_DEEP)):
        read = _read(body)
        assert read.in_navigation and [r.title for r in read.records] == ["Home", "About", "Contact"]
        assert read.no_list == reason
    for html, reason in (("", NO_DOCUMENT), ("<html><head><title>Events</title></head></html>", NO_TEXT),
                         ("<html><body><script>drawCalendar()</script><div id='app'></div></body></html>", NO_TEXT),
                         ("\x00\x01<<<>>>", NO_TEXT)):
        read = extract_records(parse_html(html), URL)
        assert read.records == [] and read.no_list == reason, html


def test_a_page_without_a_list_says_why_and_one_with_a_list_says_nothing():
    assert _read("<main><h1>Events</h1><p>No events are planned at the moment.</p></main>").no_list == MENU_ONLY
    prose = "<html><body><h1>About us</h1><p>Since 1850, a parish of the valley.</p></body></html>"
    assert extract_records(parse_html(prose), URL).no_list == NO_REPEATS
    items = "".join(f"<li><a href='/events/{i}/'>Concert number {i}</a> March {i + 1}, 2026</li>" for i in range(4))
    assert _read(f"<main><ul>{items}</ul></main>").no_list == ""
    # The reasons a page's reading gives, and the stream's own where the feed holding a page's list is not read.
    assert set(DESCRIPTIONS) == {NO_DOCUMENT, TOO_DEEP, IN_A_FRAME, MENU_ONLY, NO_TEXT, NO_REPEATS, FEED_UNREAD}


def test_a_list_of_one_item_is_read_as_one_record_below_the_lists_heading():
    """No repeated structure but the menu's: the one page below the list's own path that the content links is
    the list's item, its record bounded by the list's heading."""
    read = _read("<main><h1>Events</h1><ul><li><a href='/events/1/'>Spring fair</a> March 3, 2026</li></ul></main>")
    assert not read.in_navigation
    assert [(r.title, r.item_url, r.date) for r in read.records] == [
        ("Spring fair", "https://example.org/events/1/", datetime(2026, 3, 3, tzinfo=UTC))]
    assert read.records[0].text == "Spring fair March 3, 2026"
    # A card whose link lies over it (an empty link beside the card's own heading), titled by that heading.
    read = _read("<main><header><h1>News</h1></header><article><header><h2>Latest notice</h2></header><p>A karaoke "
                 "evening for members, October 19, 2025.</p><a class='entry-link' aria-label='post link' "
                 "href='/events/karaoke/'></a></article></main>")
    assert [(r.title, r.item_url, r.date) for r in read.records] == [
        ("Latest notice", "https://example.org/events/karaoke/", datetime(2025, 10, 19, tzinfo=UTC))]
    # An item written as a run of siblings beside the list's heading: its heading, its text and a "Learn More"
    # link (ess-ucalgary's featured events), titled by its heading; and an item whose heading links, its details
    # in what follows it — never the page's introduction before the item's heading, nor what lies past the item's
    # container.
    read = _read("<main><div><h1>ESS Events</h1><p>We host events all year.</p><h2>Annual General Meeting</h2>"
                 "<p>Students vote on motions.</p><br><a class='btn' href='/events/agm/'>Learn More</a></div></main>")
    assert [(r.title, r.item_url) for r in read.records] == [("Annual General Meeting", "https://example.org/events/agm/")]
    assert read.records[0].text == "Annual General Meeting Students vote on motions. Learn More"
    read = _read("<main><div><h1>Events</h1><h3><a href='/events/fair/'>Spring fair</a></h3><div>March 3, 2026, at "
                 "the town hall</div></div><p>Write to us.</p></main>")
    assert [(r.title, r.date) for r in read.records] == [("Spring fair", datetime(2026, 3, 3, tzinfo=UTC))]
    assert read.records[0].text == "Spring fair March 3, 2026, at the town hall"
    # The row the list's heading stands in, read as a record beside the row of the list's one post
    # (clallam-lgbt), is the page's title, no item.
    read = _read("<main><section><div class='row'><div class='col'><h1>Events</h1></div></div><div class='row'><div "
                 "class='col posts'><article><h2><a href='/events/march/'>Sunday, June 5, 2022 - Pride March</a></h2>"
                 "<div>April 8, 2022 · One minute read</div></article></div></div></section></main>")
    assert [(r.title, r.item_url, r.position) for r in read.records] == [
        ("Sunday, June 5, 2022 - Pride March", "https://example.org/events/march/", 0)]
    # Two pages below the path are not one item (a list of two is the ranker's; a pager is no item), and a
    # link elsewhere on the site is none.
    for body in ("<main><h1>Events</h1><h2><a href='/events/1/'>Spring fair</a></h2><p>Then the <a href='/events/2/'>"
                 "Summer fair</a> in June.</p></main>", "<main><h1>Events</h1><p><a href='/about/'>About us</a> March 3, 2026</p></main>"):
        assert _read(body).in_navigation
