"""A page's Google Calendar frame read through its public iCalendar feed (models.records.calendars)."""

import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from models.records.calendars import MAX_EVENTS, CalendarUnreadable, calendar_feeds, calendar_records
from tests.garbled_text import garbled

PAGE = "https://club.example/calendar/"
GOOGLE_FEED = "https://calendar.google.com/calendar/ical/{}/public/basic.ics"

# A feed as Google writes one: a zone, an event with an HTML description, a weekly series, an all-day event, an
# event long past, one without a start.
FEED = """BEGIN:VCALENDAR
PRODID:-//Google Inc//Google Calendar 70.9054//EN
VERSION:2.0
CALSCALE:GREGORIAN
METHOD:PUBLISH
X-WR-CALNAME:Club events
X-WR-TIMEZONE:America/Chicago
BEGIN:VTIMEZONE
TZID:America/Chicago
X-LIC-LOCATION:America/Chicago
BEGIN:DAYLIGHT
TZOFFSETFROM:-0600
TZOFFSETTO:-0500
TZNAME:CDT
DTSTART:19700308T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:-0500
TZOFFSETTO:-0600
TZNAME:CST
DTSTART:19701101T020000
RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
END:STANDARD
END:VTIMEZONE
BEGIN:VEVENT
DTSTART;TZID=America/Chicago:20261210T183000
DTEND;TZID=America/Chicago:20261210T200000
DTSTAMP:20261204T120000Z
UID:annual-meeting@google.com
CREATED:20261120T150405Z
DESCRIPTION:<p>Our <b>annual</b> meeting.</p><br>All members welcome.
LOCATION:Community Hall\\, 12 Main St
SUMMARY:Annual meeting
END:VEVENT
BEGIN:VEVENT
DTSTART;TZID=America/Chicago:20261202T190000
DTEND;TZID=America/Chicago:20261202T200000
RRULE:FREQ=WEEKLY;COUNT=4
DTSTAMP:20261204T120000Z
UID:practice@google.com
CREATED:20261101T090000Z
SUMMARY:Practice
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20261224
DTEND;VALUE=DATE:20261225
DTSTAMP:20261204T120000Z
UID:closed@google.com
SUMMARY:Office closed
END:VEVENT
BEGIN:VEVENT
DTSTART:20240105T180000Z
DTSTAMP:20261204T120000Z
UID:old@google.com
SUMMARY:Long past
END:VEVENT
END:VCALENDAR
"""


def test_a_google_calendar_frame_gives_its_feed_and_holidays_are_left_out() -> None:
    html = ('<html><body><h1>Calendar</h1><iframe src="https://calendar.google.com/calendar/embed?height=600&amp;'
            'src=club%40gmail.com&amp;src=en.usa%23holiday%40group.v.calendar.google.com&amp;ctz=America%2FChicago">'
            '</iframe><iframe src="https://www.youtube.com/embed/xyz"></iframe>'
            # an account-scoped embed naming its calendar in base64, lazily loaded
            '<iframe data-src="https://calendar.google.com/calendar/u/0/embed?src=c2Nob29sQGdyb3VwLmNhbGVuZGFyLmdvb2dsZS5jb20">'
            '</iframe></body></html>')
    assert calendar_feeds(html, PAGE) == [GOOGLE_FEED.format("club%40gmail.com"),
                                          GOOGLE_FEED.format("school%40group.calendar.google.com")]


def test_pages_without_a_calendar_frame_give_none() -> None:
    assert calendar_feeds("<html><body><iframe src='/map'></iframe><p>x</p></body></html>", PAGE) == []
    assert calendar_feeds("", PAGE) == []


def test_real_pages_embedding_calendars(data_dir: Path) -> None:
    sites = data_dir / "sites"
    feeds = calendar_feeds((sites / "sand-point-hoa/site/calendar/index.html").read_text(), PAGE)
    assert feeds == [GOOGLE_FEED.format("spcchoa%40gmail.com")]  # its US holidays calendar left out
    # Two room calendars named in base64; the Japanese holidays calendar beside them left out.
    rooms = calendar_feeds((sites / "harbors-omotesando/site/rooms/index.html").read_text(), PAGE)
    assert [feed.split("/")[5] for feed in rooms] == [
        "anti-pattern.co.jp_hq81gvfp32m1ai6gms6fp4jhq8%40group.calendar.google.com",
        "anti-pattern.co.jp_j37bm436mbtkm97f9jstbq5vj4%40group.calendar.google.com"]


def test_a_feed_read_as_records() -> None:
    records = calendar_records(FEED, PAGE, datetime(2026, 12, 4, 12, tzinfo=UTC))
    assert [(r.title, r.date.isoformat()) for r in records] == [
        ("Practice", "2026-12-03T01:00:00+00:00"),  # 19:00 in Chicago, the series' occurrences each a record
        ("Practice", "2026-12-10T01:00:00+00:00"),
        ("Annual meeting", "2026-12-11T00:30:00+00:00"),
        ("Practice", "2026-12-17T01:00:00+00:00"),
        ("Office closed", "2026-12-24T00:00:00+00:00"),  # all day: the day alone
        ("Practice", "2026-12-24T01:00:00+00:00"),
    ]  # "Long past" lies outside the window
    meeting = records[2]
    assert meeting.place == "Community Hall, 12 Main St"
    assert meeting.snippet == "Our annual meeting. All members welcome."
    assert meeting.published == datetime(2026, 11, 20, 15, 4, 5, tzinfo=UTC)
    assert meeting.event_start == meeting.date
    assert meeting.item_url == PAGE + "#event-annual-meeting@google.com"
    assert records[4].published is None  # no CREATED
    assert [r.position for r in records] == list(range(6))
    # Each occurrence of the series is its own item: same link and title, another date.
    assert len({(r.item_url, r.title, r.date) for r in records}) == 6


@pytest.mark.parametrize("feed", ["", "not a calendar", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026XX\n"])
def test_an_unreadable_feed_says_so(feed: str) -> None:
    with pytest.raises(CalendarUnreadable):
        calendar_records(feed, PAGE, datetime(2026, 12, 4, tzinfo=UTC))


def test_a_flooding_series_is_cut() -> None:
    """A series every minute would be half a million occurrences a year: its first only; an hourly one stops at
    the cap."""
    feed = ("BEGIN:VCALENDAR\nVERSION:2.0\n"
            "BEGIN:VEVENT\nDTSTART:20261201T000000Z\nRRULE:FREQ=MINUTELY\nUID:m\nSUMMARY:Every minute\nEND:VEVENT\n"
            "BEGIN:VEVENT\nDTSTART:20261201T000000Z\nRRULE:FREQ=HOURLY\nUID:h\nSUMMARY:Every hour\nEND:VEVENT\n"
            "END:VCALENDAR\n")
    records = calendar_records(feed, PAGE, datetime(2026, 12, 4, tzinfo=UTC))
    assert len(records) == MAX_EVENTS
    assert [r.title for r in records].count("Every minute") == 1


def test_a_feed_cut_short_gives_its_whole_events() -> None:
    cut = FEED[:FEED.index("UID:closed@google.com") + 10]  # inside the all-day event
    titles = {r.title for r in calendar_records(cut, PAGE, datetime(2026, 12, 4, 12, tzinfo=UTC))}
    assert titles == {"Annual meeting", "Practice"}


def test_hostile_feeds_give_records_or_say_they_are_unreadable() -> None:
    rng, read = random.Random(11), Counter()
    splices = ["\x00", "BEGIN:VEVENT\n", "END:VEVENT\n", "RRULE:FREQ=DAILY;COUNT=99999\n", "DTSTART:99999999T\n",
               "CREATED:2026X\n", ";TZID=Mars/Base:", "UNTIL=1\n", "é" * 50]
    for _ in range(300):
        try:
            records = calendar_records(garbled(FEED, rng, splices), PAGE, datetime(2026, 12, 4, tzinfo=UTC))
            read["records" if records else "none"] += 1
        except CalendarUnreadable:  # anything else raised fails the test
            read["unreadable"] += 1
    # Both ways taken: the garbling leaves some feeds readable and breaks others.
    assert read["records"] > 0 and read["unreadable"] > 0, read
