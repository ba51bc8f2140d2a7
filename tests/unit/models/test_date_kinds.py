"""Telling a record's publication date from its event's start (models.records.date_kinds), on the markup and
wording real event and news lists use; and what counts as an item's publication date downstream."""

from datetime import UTC, datetime

import lxml.html
import pytest

from models.records.date_kinds import RecordDates, record_date_kinds
from models.records.extraction import build_record, text_of
from schemas.records import publication_date


def _kinds(html: str) -> RecordDates:
    element = lxml.html.fromstring(html)
    return record_date_kinds([element], text_of([element]))


def _day(month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@pytest.mark.parametrize("html, published, event_start", [
    # Both written, each with its word.
    ("<li><a href='/e/1'>Concert</a> When: 12 April 2026 19:30. Published March 3, 2026</li>",
     _day(3, 3), _day(4, 12, 19, 30)),
    ("<li>Veröffentlicht am 3. März 2026, Beginn: 12. April 2026</li>", _day(3, 3), _day(4, 12)),
    ("<li>发布时间：2026年3月4日 活动开始：2026年4月1日</li>", _day(3, 4), _day(4, 1)),
    ("<li>Published by Ann Lee on 3 March 2026</li>", _day(3, 3), None),
    # One told: the other date is not guessed (an update's, a deadline's as often as the other kind's).
    ("<li><a href='/e/1'>Concert</a> Posted 3 March 2026 — 12 April 2026, 19:30</li>", _day(3, 3), None),
    ("<li>Story Published: 16 Dec 2003 - Updated: 11 Feb 2004</li>", datetime(2003, 12, 16, tzinfo=UTC), None),
    # Cue words are whole words ("Beginning", "Termine" are none).
    ("<li>Beginning the process, 6 February 2026</li>", None, None),
    # A number before a dash is no range's first day; an epoch timestamp is an unset one.
    ("<li>Meeting 53 - January 16th, 2026</li>", None, None),
    ("<li><time class='published' datetime='1970-01-01T00:00'>Jan 1</time> Fact check</li>", None, None),
    # Told by markup: schema.org, a blog theme's post date, a calendar theme's class on written text.
    ("<div><a href='/e'>Fair</a><meta itemprop='startDate' content='2026-05-01T10:00'>May 1</div>",
     None, _day(5, 1, 10)),
    ("<li><a href='/n/1'>News</a> <time class='entry-date published' datetime='2026-03-03T10:00'>3 March</time></li>",
     _day(3, 3, 10), None),
    ("<li><span class='tribe-event-date-start'>April 12, 2026 @ 7:00 pm</span> Fair</li>", None, _day(4, 12)),
    # A range of days is an event's, from its first day; the range's end is no date of its own.
    ("<li><a href='/e/1'>Fair</a> 12 – 14 April 2026</li>", None, _day(4, 12)),
    ("<li><a href='/e/1'>Fair</a> 12 April 2026 – 14 April</li>", None, _day(4, 12)),
    ("<li>Markt 14.4.2026 bis 16.4.</li>", None, _day(4, 14)),
    ("<li><a href='/e/1'>Fair</a> Apr 12-14, 2026 Lyon, France</li>", None, _day(4, 12)),
    ("<li><a href='/e/1'>Fair</a> 12 April 2026 to 14 April 2026. Posted 1 March 2026</li>", _day(3, 1), _day(4, 12)),
    # Not told: a lone date, an hour or a discount after a dash, a span of years.
    ("<li><a href='/e/1'>Board meeting</a> March 3, 2026</li>", None, None),
    ("<li>Fair April 12, 2026 - 7:00 pm</li>", None, None),
    ("<li>The Witcher 16 Sep, 2026 -85% CDN$ 10.99</li>", None, None),
    ("<li>Year 2025-2026 report, March 3, 2026</li>", None, None),
    ("<li>History 1999 10 Feb 2026 - 12 Jacques Santer calls for confidence</li>", None, None),
])
def test_a_records_dates_are_told_apart_only_where_the_page_tells(html, published, event_start):
    assert _kinds(html) == RecordDates(published, event_start)


def test_a_record_keeps_its_first_date_whatever_its_kind():
    """`date` is part of a record's identity (models.records.extraction.record_key): telling kinds apart
    must not change it, or every watched item would be reported new again."""
    element = lxml.html.fromstring("<li><a href='/e/1'>Concert</a> When: 12 April 2026. Published March 3, 2026</li>")
    record = build_record([element], "https://example.org/", 0)
    assert (record.date, record.published, record.event_start) == (_day(4, 12), _day(3, 3), _day(4, 12))


def test_an_items_publication_date_is_the_told_one_else_its_date_unless_that_is_its_events():
    assert publication_date(_day(4, 12), _day(3, 3), _day(4, 12)) == _day(3, 3)
    assert publication_date(_day(4, 12), None, None) == _day(4, 12)
    assert publication_date(_day(4, 14), None, _day(4, 12)) is None  # "12 – 14 April": the event's dates only
    assert publication_date(None, None, None) is None
